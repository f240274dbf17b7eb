"""Spec-level helpers for the sandbox contract suite.

They speak plain HTTP through httpx, never through the project's client, so that the suite judges
the sandbox against the API spec independently of the pipeline.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

SANDBOX_CLIENT_ID = "sandbox"
SANDBOX_CLIENT_SECRET = "sandbox-secret"
LIMITED_CLIENT_ID = "limited"
LIMITED_CLIENT_SECRET = "limited-secret"
OWNER_USERNAME = "owner@example.com"
OWNER_PASSWORD = "sandbox-password"

# ISO 8601 with an explicit UTC designator or offset (the spec's timestamps are UTC).
ISO_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
ID_FLOOR = 2**31

# Collections of section 4.2 (and of the addendum) whose listing is scoped by site
# (filter[site_id]).
SITE_COLLECTIONS = [
    "contacts",
    "customers",
    "products",
    "offers",
    "custom_fields",
    "forms",
    "form_submissions",
    "transactions",
    "purchases",
    "orders",
    "order_items",  # addendum A2
    "contact_tags",
    "blog_posts",
    "website_pages",
    "platform_payments_payouts",
    "contact_notes",  # addendum A5
    "landing_pages",
    "podcasts",
]
# Meta shape of each collection (section 1.1).
META_SHAPE = {name: "default" for name in SITE_COLLECTIONS}
META_SHAPE["purchases"] = "purchases"
META_SHAPE["platform_payments_payouts"] = "payouts"


def loads(text: str | bytes) -> Any:
    """Parse JSON keeping non-integers as Decimal, because money must never pass through float."""
    return json.loads(text, parse_float=Decimal)


def parse_ts(value: str) -> datetime:
    """Parse an API timestamp; fails loudly when it is not ISO 8601 with a UTC designator/offset."""
    assert isinstance(value, str) and ISO_TS.match(value), f"not ISO 8601 with offset: {value!r}"
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert parsed.tzinfo is not None
    return parsed.astimezone(UTC)


def utc_date(value: str) -> date:
    return parse_ts(value).date()


class ApiError(AssertionError):
    """An unexpected status; carries the body so the failure explains itself."""


class Api:
    """A bearer-authenticated httpx client for one sandbox and one credential."""

    def __init__(
        self,
        base_url: str,
        client_id: str = SANDBOX_CLIENT_ID,
        client_secret: str = SANDBOX_CLIENT_SECRET,
        timeout: float = 30.0,
        authenticate: bool = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_url = self.base_url + "/v1"
        self.http = httpx.Client(timeout=timeout)
        self.client_id = client_id
        self.client_secret = client_secret
        self.tokens: dict[str, Any] = {}
        if authenticate:
            self.login()

    def close(self) -> None:
        self.http.close()

    def url(self, path: str) -> str:
        return path if path.startswith("http") else self.api_url + "/" + path.lstrip("/")

    def token(self, **form: str) -> httpx.Response:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        return self.http.post(self.url("oauth/token"), data=form, headers=headers)

    def login(self) -> dict[str, Any]:
        response = self.token(
            client_id=self.client_id,
            client_secret=self.client_secret,
            grant_type="client_credentials",
        )
        assert response.status_code == 200, response.text
        self.tokens = response.json()
        return self.tokens

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens['access_token']}"}

    def raw_get(self, path: str, params: Any = None, **kwargs: Any) -> httpx.Response:
        kwargs.setdefault("headers", self.headers)
        return self.http.get(self.url(path), params=params, **kwargs)

    def get(self, path: str, params: Any = None, status: int = 200) -> Any:
        """GET and parse; assert the status so that a failure shows the body."""
        response = self.raw_get(path, params)
        if response.status_code != status:
            raise ApiError(f"GET {response.request.url} -> {response.status_code}: {response.text[:500]}")
        return loads(response.content)

    def post_json(self, path: str, body: Any, **kwargs: Any) -> httpx.Response:
        headers = {**self.headers, "Content-Type": "application/vnd.api+json"}
        headers.update(kwargs.pop("headers", {}))
        return self.http.post(self.url(path), content=json.dumps(body), headers=headers, **kwargs)

    def pages(self, path: str, params: dict[str, Any] | None = None) -> Iterator[Any]:
        """Yield every page by following `links.next` (exercises the links as a client would)."""
        body = self.get(path, params)
        yield body
        seen = 1
        while body["links"].get("next"):
            body = self.get(self.local(body["links"]["next"]))
            seen += 1
            assert seen < 10_000, "pagination does not end"
            yield body

    def local(self, link: str) -> str:
        """A response link as a URL of this sandbox: `--quirks` links name another host and an
        `/api/v1` prefix (documented), which a client rebuilds from its base URL."""
        if link.startswith(self.api_url):
            return link
        parts = urlsplit(link)
        return f"{self.api_url}/{re.sub(r'^/(api/)?v1/', '', parts.path)}?{parts.query}"

    def all(self, path: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Every record of a collection; uses the maximum page size where allowed."""
        params = dict(params or {})
        if "payouts" not in path:
            params.setdefault("page[size]", 100)
        records: list[dict[str, Any]] = []
        for body in self.pages(path, params):
            records.extend(body["data"])
        return records

    def ids(self, path: str, params: dict[str, Any] | None = None) -> list[str]:
        return [r["id"] for r in self.all(path, params)]

    def server_now(self) -> datetime:
        """The sandbox clock, read from the HTTP Date header as the architecture prescribes."""
        response = self.raw_get("sites")
        return parsedate_to_datetime(response.headers["date"]).astimezone(UTC)


def assert_error(
    response: httpx.Response, status: int, pointer_contains: str | Iterable[str] | None = None
) -> dict[str, Any]:
    """Check a section 7 error object and return its first error."""
    assert response.status_code == status, (
        f"{response.request.method} {response.request.url}: expected {status}, "
        f"got {response.status_code}: {response.text[:500]}"
    )
    body = loads(response.content)
    assert isinstance(body, dict) and isinstance(body.get("errors"), list), body
    assert body["errors"], body
    for error in body["errors"]:
        assert error["status"] == str(status), error
        assert isinstance(error["title"], str) and error["title"], error
        assert isinstance(error["detail"], str) and error["detail"], error
        assert isinstance(error["source"]["pointer"], str), error
    first = body["errors"][0]
    if pointer_contains is not None:
        needles = [pointer_contains] if isinstance(pointer_contains, str) else list(pointer_contains)
        pointer = first["source"]["pointer"]
        assert any(n in pointer for n in needles), f"pointer {pointer!r} does not name {needles}"
    return first


def normal(value: str) -> str:
    """A provider, type or status as compared (A8): lower case, spaces and underscores alike."""
    return "_".join(value.strip().lower().replace("_", " ").split())


def rel_ids(resource: dict[str, Any], name: str) -> list[str]:
    """Ids of a relationship, whether to-one or to-many (empty when data is null)."""
    data = resource["relationships"][name]["data"]
    if data is None:
        return []
    if isinstance(data, dict):
        return [data["id"]]
    return [item["id"] for item in data]


def rel_id(resource: dict[str, Any], name: str) -> str | None:
    ids = rel_ids(resource, name)
    assert len(ids) <= 1
    return ids[0] if ids else None


def sort_key(value: Any) -> Any:
    """Comparable form of an attribute: timestamps as instants, net_revenue strings as decimals."""
    if isinstance(value, str) and ISO_TS.match(value):
        return parse_ts(value)
    return value


def assert_sorted(records: list[dict[str, Any]], attribute: str, descending: bool) -> None:
    """Order by `attribute`; ties by ascending id; nulls last ascending and first descending
    (PostgreSQL's default; the sandbox's documented choice where the spec is silent)."""
    values = [r["attributes"][attribute] for r in records]
    nulls = [i for i, v in enumerate(values) if v is None]
    if nulls:
        count = len(nulls)
        at_start = nulls == list(range(count))
        at_end = nulls == list(range(len(values) - count, len(values)))
        assert at_start or at_end, f"nulls of {attribute} are not grouped at one end"
        assert at_start if descending else at_end, f"nulls of {attribute} on the wrong end"
        null_ids = [int(records[i]["id"]) for i in nulls]
        assert null_ids == sorted(null_ids), f"null {attribute} ties are not in id order"
    present = [(r, v) for r, v in zip(records, values, strict=True) if v is not None]
    keys = [
        Decimal(v) if attribute == "net_revenue" else sort_key(v) for _, v in present
    ]
    for a, b in itertools.pairwise(keys):
        assert (a >= b) if descending else (a <= b), f"{attribute} out of order: {a!r} then {b!r}"
    for i in range(len(present) - 1):
        if keys[i] == keys[i + 1]:
            left, right = int(present[i][0]["id"]), int(present[i + 1][0]["id"])
            assert left < right, f"ties on {attribute} are not in ascending id order"


# Section 6 payload types in order; `None` marks events whose shape the spec does not show, for
# which the sandbox's documented choice applies (see SAMPLE_MUST_HOLD).
SAMPLE_TYPES: dict[str, list[str] | None] = {
    # the platform's own published sample payloads (addendum A8)
    "payment_succeeded": ["transactions", "customers"],
    "order_created": ["transactions", "customers", "orders"],  # then its order_items
    "purchase": ["purchases", "offers", "customers"],  # no transaction
    "form_submission": ["form_submissions", "forms"],
    "tag_added": ["contacts", "contact_tags"],
    "tag_removed": ["contacts", "contact_tags"],
}
def check_sample_shape(event: str, payload: list[dict[str, Any]]) -> None:
    """A payload (sample or delivery) is an array of well-formed resources in the section 6 order."""
    assert isinstance(payload, list) and payload, f"{event}: empty payload"
    for item in payload:
        assert set(item) >= {"id", "type", "attributes"}, item
        assert isinstance(item["id"], str) and item["id"].isdigit() and int(item["id"]) > ID_FLOOR
    types = [item["type"] for item in payload]
    expected = SAMPLE_TYPES[event]
    assert expected is not None
    assert types[: len(expected)] == expected, f"{event}: {types}"
    if event == "purchase":
        assert len(payload) == 3, types
        purchase, offer, customer = payload
        assert purchase["relationships"]["customer"]["data"]["id"] == customer["id"]
        assert purchase["relationships"]["offer"]["data"]["id"] == offer["id"]
        return
    if event == "form_submission":
        assert len(payload) == 2, types
        assert payload[0]["relationships"]["form"]["data"]["id"] == payload[1]["id"]
        return
    if event in ("tag_added", "tag_removed"):
        assert len(payload) == 2
        return
    transaction, customer = payload[0], payload[1]
    listed = {
        "action", "state", "payment_type", "amount_in_cents", "sales_tax_in_cents", "currency",
        "currency_symbol", "formatted_amount", "created_at",
    }
    assert set(transaction["attributes"]) >= listed
    if event == "payment_succeeded":  # section 6 lists exactly these attributes
        assert set(transaction["attributes"]) == listed, sorted(transaction["attributes"])
    assert {"customer", "offer"} <= set(transaction["relationships"])
    assert transaction["relationships"]["customer"]["data"]["id"] == customer["id"]
    assert "contact" in customer["links"]
    assert {"contact", "site", "offers", "products"} <= set(customer["relationships"])
    if event == "order_created":
        order = payload[2]
        items = payload[3:]
        assert items and all(i["type"] == "order_items" for i in items), types
        item_ids = {i["id"] for i in order["relationships"]["order_items"]["data"]}
        assert item_ids == {i["id"] for i in items}
        assert transaction["id"] in {
            t["id"] for t in order["relationships"]["payment_transactions"]["data"]
        }
        for item in items:
            assert item["relationships"]["order"]["data"]["id"] == order["id"]


class Receiver:
    """A loopback HTTP endpoint that records every POSTed JSON body, for webhook deliveries."""

    def __init__(self, fail_first: int = 0) -> None:
        """`fail_first`: answer 500 to the first N attempts of each delivery (by the
        X-Sandbox-Delivery header), to exercise retries."""
        import threading
        from collections import Counter
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        received: list[dict[str, Any]] = []
        self.received = received
        attempts: Counter[str] = Counter()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                received.append({"path": self.path, "headers": headers, "body": loads(raw)})
                key = headers.get("x-sandbox-delivery", "")
                attempts[key] += 1
                self.send_response(500 if attempts[key] <= fail_first else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # deliveries may arrive in bursts
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, predicate: Any, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Poll until `predicate(received)` holds; deliveries may be asynchronous."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.received):
                return self.received
            time.sleep(0.05)
        return self.received

    def settle(self, quiet: float = 0.6, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Wait until nothing new has arrived for `quiet` seconds (deliveries run in the
        background, possibly with retries)."""
        import time

        deadline = time.monotonic() + timeout
        count, since = len(self.received), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            if len(self.received) != count:
                count, since = len(self.received), time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
        return self.received

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---- filter checking ------------------------------------------------------------------------

Record = dict[str, Any]


def pick_needle(values: list[str | None]) -> str:
    """A substring of some value whose matches are the same case-sensitively and not, so that
    the test does not depend on the (unspecified) case rule of `cont`."""
    candidates = []
    for size in (3, 2):
        for value in values:
            for start in range(0, max(0, len(value or "") - size + 1)):
                needle = value[start : start + size]
                if needle.strip() == needle:
                    candidates.append(needle)
    candidates += [v for v in values if v]
    assert candidates, "no value to build a needle from"
    present = [v for v in values if v]
    for needle in dict.fromkeys(candidates):  # first-seen order, deterministic
        cs = [v for v in present if needle in v]
        ci = [v for v in present if needle.lower() in v.lower()]
        if cs == ci and 0 < len(cs) < len(present):
            return needle
    return candidates[0]


def check_filter(
    api, records: list[Record], collection: str, site_id: str, params: dict[str, Any],
    predicate: Callable[[Record], bool | None],
) -> set[str]:
    """`predicate` returns True/False, or None when either answer is acceptable (nulls in SQL)."""
    got = set(api.ids(collection, {"filter[site_id]": site_id, **params}))
    must = {r["id"] for r in records if predicate(r) is True}
    may = {r["id"] for r in records if predicate(r) is None}
    assert must, f"test data gives no match for {params}; pick another value"
    assert must <= got, f"{collection} {params}: missing {sorted(must - got)[:5]}"
    assert got <= must | may, f"{collection} {params}: unexpected {sorted(got - must - may)[:5]}"
    return got


def contains(field: str, needle: str) -> Callable[[Record], bool | None]:
    def predicate(r: Record) -> bool | None:
        value = r["attributes"][field]
        return None if value is None else needle.lower() in value.lower()

    return predicate


# ---- the payout rule ------------------------------------------------------------------------

SETTLEMENT_DELAY_DAYS = 2
ARRIVAL_DAYS = 2


def cents(amount: Any) -> int:
    """Major units (JSON number parsed as Decimal) to integer cents; sub-cent digits fail,
    but float noise (`3.3000000000000003`, --quirks) reads as the client reads it: the cent."""
    value = Decimal(amount) * 100
    whole = value.to_integral_value()
    assert abs(value - whole) < Decimal("1e-9"), f"amount {amount} has sub-cent digits"
    return int(whole)


def check_payout_rule(
    transactions: list[Record], payouts: list[Record], now: datetime,
    delay_days: int = SETTLEMENT_DELAY_DAYS,
) -> dict[str, int]:
    """Recompute a site's payouts from its listed transactions (issue 2, "Payout rule") and
    return the count per status. Independent of the sandbox's own code on purpose."""
    from collections import defaultdict
    from datetime import timedelta

    payable: dict[str, dict[date, int]] = defaultdict(lambda: defaultdict(int))
    for tx in transactions:
        a = tx["attributes"]
        if a["provider"] != "platform_payments":
            continue
        day = utc_date(a["created_at"]) + timedelta(days=delay_days)
        payable[a["settlement_currency"]][day] += (
            a["settlement_amount_in_cents"] - a["settlement_fee_amount_in_cents"]
        )
    assert payouts, "no payouts"
    today = now.date()
    by_currency: dict[str, list[Record]] = defaultdict(list)
    for payout in payouts:
        by_currency[payout["attributes"]["currency"]].append(payout)
    statuses: dict[str, int] = defaultdict(int)
    for currency, items in by_currency.items():
        items.sort(key=lambda p: parse_ts(p["attributes"]["initiated_date"]))
        days = [utc_date(p["attributes"]["initiated_date"]) for p in items]
        assert len(days) == len(set(days)), f"two {currency} payouts on one day"
        carried = 0
        for payout, day in zip(items, days, strict=True):
            a = payout["attributes"]
            assert day <= today, f"payout {payout['id']} in the future"
            balance = sum(v for d, v in payable[currency].items() if d <= day) - carried
            assert balance > 0, f"payout {payout['id']} made on a non-positive balance"
            assert cents(a["amount"]) == balance, f"payout {payout['id']} on {day}"
            arrival = parse_ts(a["estimated_arrival_date"])
            assert arrival.date() == day + timedelta(days=ARRIVAL_DAYS), payout["id"]
            status = a["status"]
            statuses[status] += 1
            if status in ("failed", "canceled"):
                continue  # its funds roll into the next payout
            carried += balance
            if day == today:
                assert status == "pending", payout["id"]
            elif arrival <= now:
                assert status == "paid", payout["id"]
            else:
                assert status == "in_transit", payout["id"]
    return statuses


# ---- payout lines (addendum A3, contracts C3) -------------------------------------------------

LINE_FIELDS = {
    "transaction_type": str, "pricing_type": (str, type(None)), "amount": Decimal,
    "sales_tax": Decimal, "fee": Decimal, "net": Decimal, "currency": str,
    "presented_amount": Decimal, "presented_currency": str, "exchange_rate": Decimal,
    "customer_id": (int, type(None)), "customer_name": (str, type(None)),
    "customer_email": (str, type(None)), "offer_ids": list, "offer_titles": list,
    "provider": str, "payment_method": (str, type(None)), "created_at": str,
    "coupon_used": (str, type(None)), "quantity": int, "order_number": (str, type(None)),
}
# C3: charge and subscription_charge are sales, refunds refunds, disputes adjustments
LINE_TYPE_OF_ACTION = {"charge": "sale", "subscription_charge": "sale", "refund": "refund",
                       "dispute": "adjustment"}


def line_type(value: str) -> str:
    """`Sale`, `Sales`, `sale` -> `sale` (the addendum: compare case-insensitively, accept the
    plural)."""
    word = value.lower()
    return "sale" if word == "sales" else word


def number(value: Any) -> Decimal:
    """A JSON number parsed by `loads`: Decimal, or int for whole numbers written without '.'."""
    assert isinstance(value, (int, Decimal)) and not isinstance(value, bool), value
    return Decimal(value)


def round_half_away(value: Decimal) -> Decimal:
    from decimal import ROUND_HALF_UP

    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def check_line_shape(line: dict[str, Any]) -> None:
    """One payout line has every field of the A3 table with its type and `net = amount - fee`."""
    assert set(line) == set(LINE_FIELDS), sorted(set(line) ^ set(LINE_FIELDS))
    for name, kind in LINE_FIELDS.items():
        value = line[name]
        if kind is Decimal:
            number(value)
        else:
            assert isinstance(value, kind) and not isinstance(value, bool), (name, value)
    assert line_type(line["transaction_type"]) in ("sale", "refund", "adjustment"), line
    for name in ("amount", "sales_tax", "fee", "net", "presented_amount"):
        cents(line[name])  # at most two decimals: money in decimal major units
    # at the cent: --quirks writes some amounts with float noise (`3.3000000000000003`)
    assert cents(line["net"]) == cents(line["amount"]) - cents(line["fee"]), line
    assert re.fullmatch(r"[A-Z]{3}", line["currency"]), line
    assert re.fullmatch(r"[A-Z]{3}", line["presented_currency"]), line
    rate = number(line["exchange_rate"])
    assert rate > 0
    if line["presented_currency"] == line["currency"]:
        assert rate == 1, line
    assert round_half_away(number(line["presented_amount"]) * rate) * 100 == cents(line["amount"]), line
    assert len(line["offer_ids"]) == len(line["offer_titles"]), line
    assert all(isinstance(i, int) for i in line["offer_ids"]), line
    parse_ts(line["created_at"])
    assert line["quantity"] >= 1
    if line["order_number"] is not None:
        assert re.fullmatch(r"(ORD-)?\d+", line["order_number"]), line


def line_key(line: dict[str, Any]) -> tuple:
    """What ties a line to a transaction: lines carry no transaction id (A3)."""
    return (str(line["customer_id"]), parse_ts(line["created_at"]), cents(line["amount"]),
            cents(line["fee"]), cents(line["presented_amount"]), line["presented_currency"],
            line_type(line["transaction_type"]))


def transaction_key(tx: dict[str, Any]) -> tuple:
    a = tx["attributes"]
    return (rel_id(tx, "customer"), parse_ts(a["created_at"]), a["settlement_amount_in_cents"],
            a["settlement_fee_amount_in_cents"], a["amount_in_cents"], a["currency"],
            LINE_TYPE_OF_ACTION[a["action"]])


def expected_payout_lines(
    transactions: list[Record], payouts: list[Record], delay_days: int = SETTLEMENT_DELAY_DAYS,
) -> dict[str, list[Record]]:
    """Payout id -> the transactions the settlement rule assigns to it (C3): those payable
    after the day of the site's previous payout that was not failed or canceled, and on or
    before its own day. A failed or canceled payout lists what it would have carried; those
    transactions come again on the next payout."""
    from datetime import timedelta

    payable = [(utc_date(t["attributes"]["created_at"]) + timedelta(days=delay_days), t)
               for t in transactions if t["attributes"]["provider"] == "platform_payments"]
    out: dict[str, list[Record]] = {}
    carried_day: date | None = None
    for payout in sorted(payouts, key=lambda p: parse_ts(p["attributes"]["initiated_date"])):
        day = utc_date(payout["attributes"]["initiated_date"])
        out[payout["id"]] = [t for d, t in payable
                             if d <= day and (carried_day is None or d > carried_day)]
        if payout["attributes"]["status"].lower() not in ("failed", "canceled"):
            carried_day = day
    return out


def payout_details(api: Api, path: str, payouts: list[Record]) -> dict[str, dict[str, Any]]:
    """Payout id -> attributes of its detail read (with its site, as A8 requires)."""
    out = {}
    for payout in payouts:
        site = payout["relationships"]["site"]["data"]["id"]
        body = api.get(f"{path}/{payout['id']}", {"filter[site_id]": site})
        assert body["data"]["id"] == payout["id"]
        out[payout["id"]] = body["data"]["attributes"]
    return out


def check_payout_lines(
    api: Api, site_id: str, path: str = "platform_payments_payouts",
    delay_days: int = SETTLEMENT_DELAY_DAYS, quirks: bool = False,
) -> dict[str, Any]:
    """Every payout of a site: lines well formed, Σ net == amount to the cent, and the lines are
    exactly the transactions the rule assigns (plus, with quirks, correction adjustments no
    transaction stands behind, which are then the whole residual). Returns counts."""
    transactions = api.all("transactions", {"filter[site_id]": site_id})
    payouts = api.all(path, {"filter[site_id]": site_id})
    from collections import Counter

    details = payout_details(api, path, payouts)
    expected = expected_payout_lines(transactions, payouts, delay_days)
    stats = {"payouts": len(payouts), "lines": 0, "corrections": 0, "rolled": 0}
    for payout in payouts:
        attrs = details[payout["id"]]
        lines = attrs.pop("transactions")
        assert attrs == payout["attributes"], "the detail shows the list attributes"
        for line in lines:
            check_line_shape(line)
        total = sum((number(line["net"]) for line in lines), Decimal(0))
        assert total == number(attrs["amount"]), f"payout {payout['id']}: Σ net {total}"
        want = Counter(transaction_key(t) for t in expected[payout["id"]])
        got = Counter(line_key(line) for line in lines)
        assert not want - got, f"payout {payout['id']}: transactions without a line"
        extra = got - want  # lines no transaction stands behind
        free = [line for line in lines if extra[line_key(line)]]
        residual = cents(attrs["amount"]) - sum((k[2] - k[3]) * n for k, n in want.items())
        assert residual == sum(cents(line["net"]) for line in free), payout["id"]
        if free:
            assert quirks, "without quirks every line is a transaction"
            assert all(line_type(f["transaction_type"]) == "adjustment" for f in free), free
            stats["corrections"] += 1
        if attrs["status"].lower() in ("failed", "canceled"):
            stats["rolled"] += 1
        stats["lines"] += len(lines)
    return stats
