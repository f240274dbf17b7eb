"""Word lists and enum labels the generator draws from (codes index into these tuples)."""

from __future__ import annotations

FIRST_NAMES = (
    "Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jamal", "Kira",
    "Liam", "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sam", "Tara", "Uma", "Victor",
    "Wen", "Xavier", "Yara", "Zoe", "Aiko", "Bruno", "Carmen", "Dmitri", "Esther", "Felix",
)
LAST_NAMES = (
    "Adams", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
    "Kowalski", "Lopez", "Mensah", "Nakamura", "Okafor", "Patel", "Quispe", "Rossi", "Silva",
    "Tanaka", "Umarov", "Varga", "Weber", "Xu", "Yilmaz", "Zhang", "Moreau", "Novak",
)
# (city, state, country, zip prefix)
PLACES = (
    ("Austin", "TX", "US", "787"), ("Portland", "OR", "US", "972"), ("Denver", "CO", "US", "802"),
    ("Boston", "MA", "US", "021"), ("Toronto", "ON", "CA", "M5V"), ("London", "", "GB", "EC1"),
    ("Manchester", "", "GB", "M1"), ("Berlin", "BE", "DE", "101"), ("Lyon", "ARA", "FR", "690"),
    ("Madrid", "MD", "ES", "280"), ("Dublin", "", "IE", "D02"), ("Sydney", "NSW", "AU", "200"),
)
COMPANIES = ("", "Acme Studio", "Bright Labs", "Cedar & Co", "Delta Coaching", "Evergreen")
ROLES = ("", "Founder", "Student", "Teacher", "Designer", "Engineer", "Marketer")
REFERRALS = ("", "podcast", "newsletter", "friend", "search", "youtube")

PRODUCT_WORDS = (
    "Photography", "Watercolor", "Python", "Sourdough", "Yoga", "Guitar", "Marketing",
    "Copywriting", "Spanish", "Pottery", "Investing", "Mindfulness", "Calligraphy", "Chess",
    "Drawing", "Podcasting", "Woodworking", "Data Science", "Negotiation", "Nutrition",
)
PRODUCT_KINDS = ("Masterclass", "Bootcamp", "Academy", "Essentials", "Lab", "Circle")
PRODUCT_TYPES = ("Course", "Coaching", "Community", "Podcast")  # product_type_id = index + 1
PRODUCT_STATUS = ("ready", "active")
PUBLISH_STATUS = ("published", "draft")

CURRENCIES = ("USD", "EUR", "GBP")
CURRENCY_SYMBOLS = ("$", "€", "£")
# settlement is in USD: fixed conversion rates, in parts per million
FX_TO_USD_PPM = (1_000_000, 1_080_000, 1_270_000)

PAYMENT_TYPES = ("one_time", "subscription_monthly", "subscription_annual", "free")
PERIOD_DAYS = (0, 30, 365, 0)

ACTIONS = (
    "charge", "refund", "subscribe", "subscription_charge", "free_purchase", "test", "dispute",
    "subscription_update",
)
LISTED_ACTIONS = (0, 1, 3, 6)  # charge, refund, subscription_charge, dispute
STATES = ("initialized", "succeeded", "failed")
PROVIDERS = ("platform_payments", "stripe", "paypal")
# payout lines write their values for people (A8): "<Brand> Payments", "Subscription", "Visa";
# transactions and purchases write the same things in lower case with underscores
PAYMENT_METHODS = ("Visa", "Mastercard", "American Express", "Apple Pay", "Google Pay")
LINE_PROVIDERS = ("{brand} Payments", "Stripe", "PayPal")  # by PROVIDERS index
LINE_PRICING_TYPES = ("One Time", "Subscription", "Subscription", "Free")  # by PAYMENT_TYPES
# payout line transaction_type by transaction action (charge, refund, subscription_charge,
# dispute); --quirks writes the sale as `Sales`, as the platform's own example does
LINE_TYPES = {0: "Sale", 1: "Refund", 3: "Sale", 6: "Adjustment"}

SOURCES = ("checkout", "api", "import", "upsell")
COUPONS = ("SPRING20", "WELCOME10", "VIP", "BLACKFRIDAY")
REFERRERS = (
    "https://www.google.com/", "https://www.youtube.com/", "https://newsletter.example.org/",
    "https://twitter.com/",
)
DEACTIVATION_REASONS = ("refunded", "canceled_by_customer", "payment_failed", "disputed")

FIELD_TYPES = (
    "TextField", "PhoneField", "EmailField", "TextAreaField", "CheckboxField", "SelectBoxField",
    "RadioButtonsField", "CountryField", "MobilePhoneField",
)
LESSON_STATUS = ("ready", "duplicating", "failed")
LESSON_PUBLISHING = ("draft", "published", "drip", "locked")
MODULE_PUBLISHING = ("published", "draft")
MEDIA_KINDS = ("video", "audio", "pdf", "quiz")

TAG_WORDS = (
    "lead", "customer", "vip", "webinar", "newsletter", "trial", "alumni", "affiliate", "beta",
    "churned", "podcast", "workshop", "ebook", "coaching", "event",
)
TIMEZONES = ("America/New_York", "Europe/London", "America/Los_Angeles", "Europe/Berlin")

ORDER_ITEM_TYPES = ("Product", "Offer")  # order_items.item_type; item_id names that record

PAYOUT_STATUS = ("pending", "in_transit", "paid", "failed", "canceled")

EVENTS = (
    "purchase", "payment_succeeded", "order_created", "form_submission", "tag_added",
    "tag_removed",
)
EVENT_SCOPES: dict[str, tuple[str, ...]] = {
    "purchase": ("view:purchases",),
    "payment_succeeded": ("view:transactions",),
    "order_created": ("view:transactions", "view:orders"),
    "form_submission": ("view:form_submissions",),
    "tag_added": ("view:contacts",),
    "tag_removed": ("view:contacts",),
}

# ---- the addendum's collections (A5) ------------------------------------------------------------
NOTE_TEXTS = (
    "Called about the {word} course; wants the payment plan.",
    "Asked for an invoice for the {word} order.",
    "Met at the {word} workshop; follow up next week.",
    "Prefers email over phone. Interested in {word}.",
    "Refund question about {word}, resolved.",
    "Referred a friend to the {word} programme.",
    "Wants a team licence for {word}.",
    "Left a great review of {word}.",
)
LANDING_KINDS = ("Waitlist", "Free Guide", "Webinar", "Launch", "Masterclass Signup", "Challenge")
PODCAST_FORMATS = ("The {word} Podcast", "{word} Weekly", "{word} Talks", "Inside {word}")
PODCAST_STATUS = ("ready", "importing", "failed")  # A8
PODCAST_SHOW_TYPES = ("episodic", "serial")
PODCAST_LANGUAGES = ("en", "es", "de", "fr")
PODCAST_CATEGORIES = ("Education", "Arts", "Business", "Health & Fitness", "Technology",
                      "Leisure", "Courses", "How To")
PODCAST_DIRECTORIES = ("Apple Podcasts", "Spotify", "Google Podcasts", "Amazon Music",
                       "Overcast")
