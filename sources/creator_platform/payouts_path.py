"""The payouts path found, not asked for (addendum A1): `/v1/<brand>_payments_payouts`.

The live platform serves payouts under its brand word and tells nobody which it is. The word is
looked for where the platform shows it, in this order:

1. the base URL's host (`api.acme.com` -> `acme`);
2. the processor the platform names in its transactions (`acme_payments`, `Acme Payments`);
3. `platform`, the base spec's word.

Each candidate costs one request (the payouts list of one site); the first that answers is the
path. Used by `init` (which writes it to `.dlt/config.toml`) and by the payouts resource when
no `payouts_path` is set (which remembers it in its state).
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .client import CreatorPlatformClient
from .endpoints import PAYOUTS_SUFFIX, PAYOUTS_TYPE, Resource
from .errors import ApiError

if TYPE_CHECKING:
    from .run import RunReport

log = logging.getLogger("creator_sync.payouts_path")

PROCESSOR_SUFFIX = "_payments"  # a platform's own processor: `<brand>_payments`
DEFAULT_BRAND = PAYOUTS_TYPE[: -len(PAYOUTS_SUFFIX)]  # "platform"
# host labels that are never a brand word: service prefixes and common second-level names
GENERIC_LABELS = frozenset({
    "api", "apis", "app", "apps", "www", "rest", "v1", "gateway", "public", "sandbox", "staging",
    "dev", "test", "prod", "localhost", "localdomain", "example", "co", "com", "net", "org",
})
_WORD = re.compile(r"^[a-z][a-z0-9]*$")
TRANSACTIONS_SAMPLE = 100  # one page of transactions names the processors in use


@dataclass(frozen=True)
class Candidate:
    path: str  # under /v1
    source: str  # where it came from, in words


def of_brand(word: str, source: str) -> Candidate:
    return Candidate(f"/{word}{PAYOUTS_SUFFIX}", source)


def host_words(base_url: str) -> list[str]:
    """Brand words a host name may carry: its labels but the top-level one and generic ones
    (`api.acme.com` -> acme; `api.my-school.example` -> myschool, my, school)."""
    host = (urlsplit(base_url.strip()).hostname or "").lower()
    try:
        ipaddress.ip_address(host.strip("[]"))
        return []  # an address names no brand
    except ValueError:
        pass
    labels = host.split(".")
    words: list[str] = []
    for label in labels[:-1] if len(labels) > 1 else labels:
        parts = [p for p in re.split(r"[^a-z0-9]+", label) if p]
        for word in ["".join(parts), *parts] if len(parts) > 1 else parts:
            if _WORD.match(word) and word not in GENERIC_LABELS:
                words.append(word)
    return list(dict.fromkeys(words))


def processor_words(providers: Iterable[object]) -> list[str]:
    """Brand words of the processors transactions name (`acme_payments`, `Acme Payments`,
    compared normalised as A8 says: lower case, spaces and underscores alike)."""
    words = []
    for value in providers:
        if not isinstance(value, str):
            continue
        name = re.sub(r"[\s_-]+", "_", value.strip().lower())
        if name.endswith(PROCESSOR_SUFFIX):
            word = name[: -len(PROCESSOR_SUFFIX)].replace("_", "")
            if _WORD.match(word):
                words.append(word)
    return list(dict.fromkeys(words))


def transaction_providers(client: CreatorPlatformClient, site_id: str) -> list[object]:
    """The `provider` of one page of a site's transactions (nothing when they cannot be read)."""
    try:
        doc = client.get("/transactions", {"filter[site_id]": site_id,
                                           "page[size]": TRANSACTIONS_SAMPLE},
                         resource="transactions")
    except ApiError as exc:  # no scope, no such list: the other sources remain
        log.info("payouts path: transactions not readable for the processor names: %s", exc)
        return []
    data = doc.get("data") if isinstance(doc, dict) else None
    return [((item.get("attributes") or {}).get("provider")) for item in data or []
            if isinstance(item, dict)]


def answers(client: CreatorPlatformClient, path: str, site_id: str) -> bool:
    """One request: does the platform serve a payouts list at `path`? (404: no; another error
    is raised, it says nothing about the word)."""
    try:
        client.get(path, {"filter[site_id]": site_id}, resource="payouts")
    except ApiError as exc:
        if exc.status == 404:
            return False
        raise
    return True


@dataclass(frozen=True)
class Found:
    path: str | None  # None: every candidate answered 404
    source: str  # where the word came from, in words ("" when not found)
    tried: tuple[str, ...]


def find_payouts_path(
    client: CreatorPlatformClient, site_id: str, *, first: Iterable[Candidate] = (),
) -> Found:
    """The first candidate path whose payouts list answers for `site_id`. The transactions are
    read only when the host's words all fail. `first`: candidates to try before them (a path
    configured earlier, which `init` checks again)."""
    tried: list[str] = []

    def attempt(candidates: Iterable[Candidate]) -> Candidate | None:
        for candidate in candidates:
            if candidate.path in tried:
                continue
            tried.append(candidate.path)
            if answers(client, candidate.path, site_id):
                return candidate
        return None

    hit = attempt(first) or attempt(
        of_brand(w, "the API host name") for w in host_words(client.api_url))
    if hit is None:
        providers = transaction_providers(client, site_id)
        hit = attempt(of_brand(w, "the processor named in transactions")
                      for w in processor_words(providers))
    if hit is None:
        hit = attempt([of_brand(DEFAULT_BRAND, "the base spec's word")])
    if hit is None:
        return Found(None, "", tuple(tried))
    log.info("payouts path %s (from %s)", hit.path, hit.source)
    return Found(hit.path, hit.source, tuple(tried))


FOUND_STATE = "_path_found"  # the payouts resource's state: the path found by an earlier run


def path_for_run(
    client: CreatorPlatformClient, resource: Resource, configured: str | None,
    report: RunReport, sites: list[str], state: dict[str, Any],
) -> Resource:
    """The payouts resource with the path this run reads: the `payouts_path` setting when set
    (an override), else the one an earlier run found (resource state), else one found now and
    remembered. When every candidate answers 404 the resource keeps the default path, whose
    404 fails payouts alone with the line that says to set `payouts_path`.
    """
    if resource.path_setting != "payouts_path" or configured or not sites:
        return resource
    remembered = state.get(FOUND_STATE)
    if isinstance(remembered, str) and remembered:
        report.add_notice(f"payouts: reading {remembered} (found by an earlier sync; "
                          "set payouts_path to override)")
        return replace(resource, path=remembered)
    found = find_payouts_path(client, sites[0])
    if found.path is None:
        log.warning("payouts: no payouts path answered (tried %s)", ", ".join(found.tried))
        return resource
    state[FOUND_STATE] = found.path
    report.add_notice(f"payouts: reading {found.path} (brand word from {found.source}; "
                      "remembered, set payouts_path to override)")
    return replace(resource, path=found.path)


def forget_if_gone(resource: Resource, exc: BaseException, state: dict[str, Any]) -> None:
    """A remembered path that answers 404 now (another platform behind the same warehouse, a
    renamed brand) is forgotten: the next sync looks for the word again."""
    if (resource.path_setting == "payouts_path" and state.get(FOUND_STATE) == resource.path
            and isinstance(exc, ApiError) and exc.status == 404):
        del state[FOUND_STATE]


__all__ = ["Candidate", "Found", "find_payouts_path", "forget_if_gone", "host_words",
           "of_brand", "path_for_run", "processor_words"]
