"""Virtual (derived) string columns: computed for the rows asked for, never stored per record.

Names, emails, addresses, URLs and labels are pure functions of small stored codes, so `large`
needs no per-record Python strings and every view of a record agrees (a customer's email is its
contact's email by construction).
"""

from __future__ import annotations

import hashlib

import numpy as np

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.store import NULL, Table

CDN = "https://cdn.creator-platform.example"


def money(cents: int, currency: int) -> str:
    """Human-readable amount, e.g. `-€12.50`."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{V.CURRENCY_SYMBOLS[currency]}{abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def cents_text(cents: int) -> str:
    """Decimal major units with two places, exact: 123450 -> '1234.50'."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def _token(kind: str, row: int) -> str:
    return hashlib.blake2b(f"{kind}:{row}".encode(), digest_size=6).hexdigest()


def _subdomain(site: int) -> str:
    return f"studio{site + 1}"


def _host(site: int) -> str:
    return f"https://{_subdomain(site)}.creator-platform.example"


def install(store: Store) -> None:
    """Attach the virtual columns of every table (they read columns at call time)."""
    t = store.tables
    _people(t["contacts"], t["customers"], t["form_submissions"], t["purchases"])
    _catalogue(t["products"], t["offers"], t["courses"], t["modules"], t["lessons"], t["media"])
    _forms(t["forms"], t["fields"], t["custom_fields"], t["contact_tags"])
    _money(t["purchases"], t["orders"], t["order_items"], t["transactions"], t["products"],
           t["offers"])
    _content(t["sites"], t["blogs"], t["blog_posts"], t["website_pages"], t["products"])
    _payouts(t["payouts"])
    _live(t["contact_notes"], t["landing_pages"], t["podcasts"])


def _people(contacts: Table, customers: Table, submissions: Table, purchases: Table) -> None:
    c = contacts.cols

    def first(rows):
        return [V.FIRST_NAMES[i] for i in c["first"][rows].tolist()]

    def name(rows):
        return [f"{V.FIRST_NAMES[f]} {V.LAST_NAMES[la]}"
                for f, la in zip(c["first"][rows].tolist(), c["last"][rows].tolist(), strict=True)]

    def email(rows):
        return [f"{V.FIRST_NAMES[f].lower()}.{V.LAST_NAMES[la].lower()}{r}@example.com"
                for f, la, r in zip(c["first"][rows].tolist(), c["last"][rows].tolist(),
                                    np.asarray(rows).tolist(), strict=True)]

    def phone(rows):
        return [f"+1 555 {(r * 7919) % 10_000_000:07d}" if h else None
                for r, h in zip(np.asarray(rows).tolist(), c["has_phone"][rows].tolist(),
                                strict=True)]

    def business(rows):
        return [f"+1 555 {(r * 104729) % 10_000_000:07d}" if h else None
                for r, h in zip(np.asarray(rows).tolist(), c["has_business"][rows].tolist(),
                                strict=True)]

    def place(index: int):
        def get(rows):
            return [V.PLACES[p][index] or None for p in c["place"][rows].tolist()]
        return get

    def line1(rows):
        return [f"{(r * 37) % 900 + 100} {V.LAST_NAMES[r % len(V.LAST_NAMES)]} Street"
                for r in np.asarray(rows).tolist()]

    def line2(rows):
        return [f"Apt {r % 40 + 1}" if r % 4 == 0 else None for r in np.asarray(rows).tolist()]

    def zipcode(rows):
        return [f"{V.PLACES[p][3]}{(r * 13) % 100:02d}"
                for p, r in zip(c["place"][rows].tolist(), np.asarray(rows).tolist(),
                                strict=True)]

    def external(rows):
        out = []
        cust_cols = customers.cols
        for r, cu in zip(np.asarray(rows).tolist(), c["customer"][rows].tolist(), strict=True):
            out.append(f"usr_{r:08d}" if cu != NULL and cust_cols["has_ext"][cu] else None)
        return out

    def custom(col: str, words: tuple[str, ...]):
        def get(rows):
            return [words[i] or None for i in c[col][rows].tolist()]
        return get

    contacts.virtual.update({
        "first_name": first, "name": name, "email": email, "phone_number": phone,
        "business_number": business, "address_line_1": line1, "address_line_2": line2,
        "address_city": place(0), "address_state": place(1), "address_country": place(2),
        "address_zip": zipcode, "external_user_id": external,
        "custom_1": custom("c1", V.COMPANIES), "custom_2": custom("c2", V.ROLES),
        "custom_3": custom("c3", V.REFERRALS),
    })

    def via_contact(attr: str, table: Table):
        def get(rows):
            return contacts.virtual[attr](table.cols["contact"][rows])
        return get

    u = customers.cols

    def avatar(rows):
        return [f"{CDN}/avatars/{_token('avatar', r)}.png" if h else None
                for r, h in zip(np.asarray(rows).tolist(), u["has_avatar"][rows].tolist(),
                                strict=True)]

    def socials(rows):
        out = []
        for r, h in zip(np.asarray(rows).tolist(), u["has_socials"][rows].tolist(), strict=True):
            if not h:
                out.append(None)
                continue
            handle = f"user{r}"
            item = {"twitter": f"https://twitter.com/{handle}",
                    "instagram": f"https://instagram.com/{handle}"}
            if r % 3 == 0:
                item["facebook"] = f"https://facebook.com/{handle}"
            if r % 7 == 0:
                item["linkedin"] = f"https://linkedin.com/in/{handle}"
            out.append(item)
        return out

    def bio(kind: str):
        def get(rows):
            contact_rows = u["contact"][rows]
            vals = []
            for r, h, cr in zip(np.asarray(rows).tolist(), u["has_bio"][rows].tolist(),
                                contact_rows.tolist(), strict=True):
                if not h:
                    vals.append(None)
                elif kind == "bio":
                    vals.append(f"{V.ROLES[1 + r % (len(V.ROLES) - 1)]} and lifelong learner.")
                elif kind == "location":
                    vals.append(V.PLACES[int(c["place"][cr])][0])
                else:
                    vals.append(f"https://{V.LAST_NAMES[r % len(V.LAST_NAMES)].lower()}{r}.example.com/")
            return vals
        return get

    customers.virtual.update({
        "name": via_contact("name", customers), "email": via_contact("email", customers),
        "external_user_id": via_contact("external_user_id", customers), "avatar": avatar,
        "socials": socials, "public_bio": bio("bio"), "public_location": bio("location"),
        "public_website": bio("website"),
    })
    for attr in ("name", "email", "phone_number", "business_number", "address_line_1",
                 "address_line_2", "address_city", "address_state", "address_country",
                 "address_zip", "custom_1", "custom_2", "custom_3"):
        submissions.virtual[attr] = via_contact(attr, submissions)

    def cardholder(rows):
        return customers.virtual["name"](purchases.cols["customer"][rows])

    purchases.virtual["cardholder_name"] = cardholder

    # "First Last" sorts like (first, last): the space sorts below every letter of the names
    first_rank = _ranks(V.FIRST_NAMES)
    last_rank = _ranks(V.LAST_NAMES)

    def name_key(contact_rows: np.ndarray) -> np.ndarray:
        return (first_rank[c["first"][contact_rows]] * len(V.LAST_NAMES)
                + last_rank[c["last"][contact_rows]])

    first_lower = _ranks(tuple(w.lower() for w in V.FIRST_NAMES))
    last_lower = _ranks(tuple(w.lower() for w in V.LAST_NAMES))

    def email_key(contact_rows: np.ndarray) -> np.ndarray:
        # "first.last<row>@example.com": '.' and the digits sort below letters, so the order is
        # (first, last, digits of row) where a shorter digit string sorts *after* its extensions
        # ('@' is above '9'); padding with an 11th digit value reproduces that numerically
        pair = first_lower[c["first"][contact_rows]] * len(V.LAST_NAMES) \
            + last_lower[c["last"][contact_rows]]
        return pair * 11**DIGITS + _digits_key(contact_rows)

    contacts.sort_keys["email"] = lambda: email_key(np.arange(contacts.n))
    customers.sort_keys["email"] = lambda: email_key(u["contact"])
    submissions.sort_keys["email"] = lambda: email_key(submissions.cols["contact"])
    contacts.sort_keys["name"] = lambda: name_key(np.arange(contacts.n))
    customers.sort_keys["name"] = lambda: name_key(u["contact"])
    submissions.sort_keys["name"] = lambda: name_key(submissions.cols["contact"])
    purchases.sort_keys["cardholder_name"] = lambda: name_key(
        u["contact"][purchases.cols["customer"]])


DIGITS = 9  # row numbers below 10^9


def _digits_key(rows: np.ndarray) -> np.ndarray:
    """Order of str(row) + '@' as a base-11 number: each digit, then 10 for 'past the end'."""
    rows = np.asarray(rows, dtype=np.int64)
    width = np.ones(len(rows), np.int64)
    for k in range(1, DIGITS):
        width += rows >= 10**k
    key = np.zeros(len(rows), np.int64)
    for pos in range(DIGITS):  # pos 0 is the most significant digit of str(row)
        digit = (rows // 10 ** np.maximum(width - 1 - pos, 0)) % 10
        key = key * 11 + np.where(pos < width, digit, 10)
    return key


def _ranks(words: tuple[str, ...]) -> np.ndarray:
    """Rank of each word in code-point order, indexed by code."""
    order = sorted(range(len(words)), key=lambda k: words[k])
    ranks = np.empty(len(words), np.int64)
    ranks[order] = np.arange(len(words))
    return ranks


def _catalogue(products: Table, offers: Table, courses: Table, modules: Table, lessons: Table,
               media: Table) -> None:
    p = products.cols

    def product_url(rows):
        return [f"{_host(s)}/products/{_token('product', r)}"
                for r, s in zip(np.asarray(rows).tolist(), p["site"][rows].tolist(), strict=True)]

    def product_image(rows):
        return [f"{CDN}/products/{_token('product', r)}.jpg" for r in np.asarray(rows).tolist()]

    def product_thumb(rows):
        return [f"{CDN}/products/{_token('product', r)}-thumb.jpg" if h else None
                for r, h in zip(np.asarray(rows).tolist(), p["thumb"][rows].tolist(), strict=True)]

    def product_description(rows):
        return [f"Everything you need to master {t.split(' ')[0].lower()}."
                for t in p["title"][rows].tolist()]

    products.virtual.update({
        "url": product_url, "image_url": product_image, "thumbnail_url": product_thumb,
        "description": product_description,
        "product_type_id": lambda rows: (p["ptype"][rows].astype(np.int64) + 1).tolist(),
    })

    o = offers.cols

    def offer_flag(kinds: tuple[int, ...]):
        return lambda rows: np.isin(o["ptype"][rows], kinds).tolist()

    def price_description(rows):
        out = []
        for price, cur, pt in zip(o["price_in_cents"][rows].tolist(), o["currency"][rows].tolist(),
                                  o["ptype"][rows].tolist(), strict=True):
            if pt == 3:
                out.append("Free")
            else:
                out.append(money(price, cur) + ("", " / month", " / year")[pt])
        return out

    offers.virtual.update({
        "description": lambda rows: [f"Get instant access to {t}." for t in o["title"][rows].tolist()],
        "token": lambda rows: [_token("offer", r) for r in np.asarray(rows).tolist()],
        "checkout_url": lambda rows: [
            f"{_host(s)}/offers/{_token('offer', r)}/checkout"
            for r, s in zip(np.asarray(rows).tolist(), o["site"][rows].tolist(), strict=True)],
        "image_url": lambda rows: [
            f"{CDN}/offers/{_token('offer', r)}.jpg" if h else None
            for r, h in zip(np.asarray(rows).tolist(), o["image"][rows].tolist(), strict=True)],
        "price_description": price_description,
        "recurring_offer": offer_flag((1, 2)), "subscription": offer_flag((1, 2)),
        "one_time": offer_flag((0,)), "single": offer_flag((0,)), "free": offer_flag((3,)),
    })

    def course_title(rows):
        return p["title"][courses.cols["product"][rows]].tolist()

    courses.virtual.update({
        "title": course_title,
        "description": lambda rows: [f"The complete {t} course." for t in course_title(rows)],
        "thumbnail_url": lambda rows: [f"{CDN}/courses/{_token('course', r)}.jpg"
                                       for r in np.asarray(rows).tolist()],
    })
    modules.virtual.update({
        "title": lambda rows: [f"Module {n}" for n in modules.cols["position"][rows].tolist()],
        "description": lambda rows: [f"Part {n} of the course."
                                     for n in modules.cols["position"][rows].tolist()],
        "poster_image_url": lambda rows: [f"{CDN}/modules/{_token('module', r)}.jpg"
                                          for r in np.asarray(rows).tolist()],
    })
    lessons.virtual["title"] = lambda rows: [
        f"Lesson {m + 1}.{n}" for m, n in zip(
            (lessons.cols["module"][rows] - 0).tolist(), lessons.cols["position"][rows].tolist(),
            strict=True)]
    media.virtual["title"] = lambda rows: [f"Media {r}" for r in np.asarray(rows).tolist()]


def _forms(forms: Table, fields: Table, custom_fields: Table, tags: Table) -> None:
    f = forms.cols

    def form_title(rows):
        return ["Newsletter signup" if d else f"Lead magnet {n}"
                for d, n in zip(f["default"][rows].tolist(), f["number"][rows].tolist(),
                                strict=True)]

    forms.virtual.update({
        "title": form_title,
        "url": lambda rows: [f"{_host(s)}/forms/{_token('form', r)}" for r, s in zip(
            np.asarray(rows).tolist(), f["site"][rows].tolist(), strict=True)],
        "webhook_url": lambda rows: [
            f"https://hooks.example.org/forms/{_token('form', r)}" if h else None
            for r, h in zip(np.asarray(rows).tolist(), f["hook"][rows].tolist(), strict=True)],
    })
    d = fields.cols
    field_titles = ("Name", "Phone", "Email", "Message", "I agree", "Plan", "Level", "Country",
                    "Mobile phone")
    field_handles = ("name", "phone", "email", "message", "agree", "plan", "level", "country",
                     "mobile")

    def handle(rows):
        return [field_handles[k] + (f"_{n}" if n else "")
                for k, n in zip(d["kind"][rows].tolist(), d["handle_no"][rows].tolist(),
                                strict=True)]

    def options(rows):
        return ["Basic\nPro\nTeam" if k in (5, 6) else None for k in d["kind"][rows].tolist()]

    fields.virtual.update({
        "title": lambda rows: [field_titles[k] for k in d["kind"][rows].tolist()],
        "handle": handle, "select_options": options,
    })
    cf = custom_fields.cols
    custom_fields.virtual.update({
        "title": lambda rows: [("Company", "Role", "Referral source")[s]
                               for s in cf["slot"][rows].tolist()],
        "handle": lambda rows: [f"custom_{s + 1}" for s in cf["slot"][rows].tolist()],
    })
    tags.virtual["name"] = lambda rows: [V.TAG_WORDS[w % len(V.TAG_WORDS)]
                                         + (f"-{w // len(V.TAG_WORDS) + 1}"
                                            if w >= len(V.TAG_WORDS) else "")
                                         for w in tags.cols["word"][rows].tolist()]


def _money(purchases: Table, orders: Table, items: Table, txn: Table, products: Table,
           offers: Table) -> None:
    pu = purchases.cols
    purchases.virtual.update({
        "raw_extra_contact_information": lambda rows: [
            {"company": V.COMPANIES[1 + r % (len(V.COMPANIES) - 1)]} if h else {}
            for r, h in zip(np.asarray(rows).tolist(), pu["extra"][rows].tolist(), strict=True)],
        "billing_address_zip": lambda rows: [f"{z:05d}" for z in pu["zip"][rows].tolist()],
    })
    o = orders.cols
    orders.virtual.update({
        "formatted_total_price": lambda rows: [money(a, c) for a, c in zip(
            o["total"][rows].tolist(), o["currency"][rows].tolist(), strict=True)],
        "formatted_subtotal": lambda rows: [money(a, c) for a, c in zip(
            o["subtotal"][rows].tolist(), o["currency"][rows].tolist(), strict=True)],
    })
    i = items.cols
    items.virtual.update({
        "formatted_total_price": lambda rows: [money(a, c) for a, c in zip(
            i["total"][rows].tolist(), i["currency"][rows].tolist(), strict=True)],
        "formatted_subtotal": lambda rows: [money(a, c) for a, c in zip(
            i["subtotal"][rows].tolist(), i["currency"][rows].tolist(), strict=True)],
        "item_type": lambda rows: [V.ORDER_ITEM_TYPES[k] for k in i["item_kind"][rows].tolist()],
        "item_id": lambda rows: np.where(i["item_kind"][rows] == 0,
                                         i["item"][rows] + products.id_base,
                                         i["item"][rows] + offers.id_base).tolist(),
        "title": lambda rows: [(products if k == 0 else offers).cols["title"][r] for k, r in zip(
            i["item_kind"][rows].tolist(), i["item"][rows].tolist(), strict=True)],
    })
    t = txn.cols
    txn.virtual.update({
        "formatted_amount": lambda rows: [money(a, c) for a, c in zip(
            t["amount_in_cents"][rows].tolist(), t["currency"][rows].tolist(), strict=True)],
        "settlement_currency": lambda rows: [
            "USD" if p == 0 and listed else None
            for p, listed in zip(t["provider"][rows].tolist(), t["listed"][rows].tolist(),
                                 strict=True)],
    })


def _content(sites: Table, blogs: Table, posts: Table, pages: Table, products: Table) -> None:
    sites.virtual.update({
        "name": lambda rows: [f"Studio {r + 1}" for r in np.asarray(rows).tolist()],
        "title": lambda rows: [f"Studio {r + 1}" for r in np.asarray(rows).tolist()],
        "subdomain": lambda rows: [_subdomain(r) for r in np.asarray(rows).tolist()],
        "currency": lambda rows: ["USD"] * len(rows),
    })
    blogs.virtual["title"] = lambda rows: [f"Studio {s + 1} Blog"
                                           for s in blogs.cols["site"][rows].tolist()]
    b = posts.cols

    def post_title(rows):
        return [f"{n + 1} lessons from {V.PRODUCT_WORDS[t].lower()}" for t, n in zip(
            b["topic"][rows].tolist(), b["number"][rows].tolist(), strict=True)]

    def slug(rows):
        return [title.replace(" ", "-") for title in post_title(rows)]

    posts.virtual.update({
        "title": post_title, "slug": slug,
        "url": lambda rows: [f"{_host(s)}/blog/{sl}" for s, sl in zip(
            b["blog"][rows].tolist(), slug(rows), strict=True)],
        "content": lambda rows: [f"<p>What {title} taught me.</p>" for title in post_title(rows)],
        "page_title": lambda rows: [title.capitalize() for title in post_title(rows)],
        "page_description": lambda rows: [f"Read about {title}." for title in post_title(rows)],
        "image_url": lambda rows: [f"{CDN}/blog/{_token('post', r)}.jpg"
                                   for r in np.asarray(rows).tolist()],
        "image_alt_text": lambda rows: [f"Cover for {title}" for title in post_title(rows)],
        "tags": lambda rows: [f"{V.PRODUCT_WORDS[t].lower()},tips" for t in b["topic"][rows].tolist()],
    })
    w = pages.cols
    page_names = ("Home", "About", "Contact", "Pricing", "FAQ", "Terms", "Privacy", "Blog")
    pages.virtual.update({
        "title": lambda rows: [page_names[n % len(page_names)] + (f" {n // 8 + 1}" if n >= 8 else "")
                               for n in w["number"][rows].tolist()],
        "url": lambda rows: [f"{_host(s)}/pages/{n}" for s, n in zip(
            w["site"][rows].tolist(), w["number"][rows].tolist(), strict=True)],
    })


def _payouts(payouts: Table) -> None:
    payouts.virtual.update({
        "currency": lambda rows: ["USD"] * len(rows),
        "bank_account": lambda rows: [f"Checking ****{(s * 3571 + 4242) % 10000:04d}"
                                      for s in payouts.cols["site"][rows].tolist()],
    })


def _live(notes: Table, pages: Table, podcasts: Table) -> None:
    """The addendum's collections (A5)."""
    n = notes.cols
    notes.virtual["body"] = lambda rows: [
        V.NOTE_TEXTS[t].format(word=V.PRODUCT_WORDS[w]) for t, w in zip(
            n["text"][rows].tolist(), n["word"][rows].tolist(), strict=True)]
    lp = pages.cols
    pages.virtual["url"] = lambda rows: [
        f"{_host(s)}/lp/{title.lower().replace(' ', '-')}" for s, title in zip(
            lp["site"][rows].tolist(), lp["title"][rows].tolist(), strict=True)]
    pc = podcasts.cols

    def rows_of(rows) -> list[int]:
        return np.asarray(rows).tolist()

    def categories(rows):
        return [[c for k, c in enumerate(V.PODCAST_CATEGORIES) if mask >> k & 1]
                for mask in pc["category_mask"][rows].tolist()]

    def listed(row: int) -> bool:
        return bool(pc["status"][row] == 0 and pc["public"][row] and pc["ready"][row])

    def directories(rows):
        out = []
        for r in rows_of(rows):
            if not listed(r):
                out.append([])
                continue
            count = 1 + r % len(V.PODCAST_DIRECTORIES)
            # A8: `{id, url, config}`
            out.append([{"id": name.lower().replace(" ", "_"),
                         "url": f"https://directory.example/{_token('pod', r)}/"
                                f"{name.lower().replace(' ', '-')}",
                         "config": {"name": name, "status": "listed"}}
                        for name in V.PODCAST_DIRECTORIES[:count]])
        return out

    podcasts.virtual.update({
        "description": lambda rows: [f"Conversations about {V.PRODUCT_WORDS[w].lower()} for "
                                     "curious learners." for w in pc["word"][rows].tolist()],
        "owner_email": lambda rows: [f"podcasts@{_subdomain(s)}.example.com"
                                     for s in pc["site"][rows].tolist()],
        "author": lambda rows: [f"Studio {s + 1}" for s in pc["site"][rows].tolist()],
        "thumbnail_url": lambda rows: [f"{CDN}/podcasts/{_token('pod', r)}-thumb.jpg"
                                       for r in rows_of(rows)],
        "cover_art_url": lambda rows: [f"{CDN}/podcasts/{_token('pod', r)}.jpg"
                                       for r in rows_of(rows)],
        "categories": categories,
        "directories": directories,
        "migrated_to_url": lambda rows: [
            f"https://feeds.example.net/{_token('pod', r)}.xml" if m else None
            for r, m in zip(rows_of(rows), pc["migrated"][rows].tolist(), strict=True)],
        "distribution_ready": lambda rows: [listed(r) for r in rows_of(rows)],
        "url": lambda rows: [f"{_host(s)}/podcasts/{_token('pod', r)}" for r, s in zip(
            rows_of(rows), pc["site"][rows].tolist(), strict=True)],
    })
