"""Hook subscriptions through the API client (spec 4.5, 4.6), with one-line, scope-aware errors."""

from __future__ import annotations

import re
from typing import Any

from creator_sync.pipelines.webhooks.events import event_spec
from creator_sync.sources.creator_platform import (
    DEFAULTS,
    RESOURCES,
    ApiError,
    CreatorPlatformClient,
    iter_pages,
)

SCOPE_RE = re.compile(r"\b[a-z]+:[a-z_]+\b")


class HookError(RuntimeError):
    """A hooks command failed; the message is the one line the CLI prints after `error:`."""


def explain(exc: ApiError, action: str, event: str | None, client_id: str) -> HookError:
    """Turn an API error into one line: a 403 names the scope(s) the credential lacks."""
    if exc.status == 403 and event is not None:
        # the API's detail may name exactly the missing scope(s); else the event's, from spec 6
        named = [s for s in SCOPE_RE.findall(exc.detail or "") if s in event_spec(event).scopes]
        missing = list(dict.fromkeys(named)) or list(event_spec(event).scopes)
        noun = "scopes" if len(missing) > 1 else "scope"
        return HookError(
            f"{action} needs {noun} {' and '.join(missing)}, which client {client_id!r} lacks"
        )
    if exc.status == 403:
        return HookError(f"{action} is forbidden for client {client_id!r}: {exc.detail or exc}")
    if exc.status == 422:
        where = f" at {exc.pointer}" if exc.pointer else ""
        return HookError(f"{action} was rejected as invalid{where}: {exc.detail or exc.message}")
    if exc.status == 404:
        return HookError(f"{action}: not found ({exc.url})")
    return HookError(f"{action} failed: {exc}")


def create_hook(
    api: CreatorPlatformClient,
    *,
    event: str,
    target_url: str,
    site_id: str,
    resource_id: str | None = None,
    client_id: str = "",
) -> tuple[dict[str, Any], bool]:
    """(hook, created): an identical existing hook is returned instead of a duplicate."""
    try:
        event_spec(event)
    except ValueError as exc:
        raise HookError(str(exc)) from None
    attributes: dict[str, Any] = {"event": event, "target_url": target_url}
    if resource_id is not None:
        attributes["resource_id"] = resource_id
    body = {
        "data": {
            "type": "hooks",
            "attributes": attributes,
            "relationships": {"site": {"data": {"id": site_id, "type": "sites"}}},
        }
    }
    existing = find_hook(api, event=event, target_url=target_url, site_id=site_id,
                         resource_id=resource_id)
    if existing is not None:
        return existing, False
    try:
        doc = api.post("/hooks", json=body, resource="hooks")
    except ApiError as exc:
        raise explain(exc, f"creating a {event!r} hook", event, client_id) from None
    return doc["data"], True


def site_ids(api: CreatorPlatformClient, *, client_id: str = "") -> list[str]:
    """Every site the credential sees (a hook belongs to one site)."""
    try:
        pages = iter_pages(api, RESOURCES["sites"], {}, page_size=DEFAULTS.page_size)
        return [str(site["id"]) for page in pages
                for site in page.data if isinstance(site, dict) and site.get("id") is not None]
    except ApiError as exc:
        raise explain(exc, "listing the sites", None, client_id) from None


def create_hooks(
    api: CreatorPlatformClient,
    *,
    events: list[str],
    target_url: str,
    sites: list[str],
    resource_id: str | None = None,
    client_id: str = "",
    on_hook: Any = None,
) -> list[tuple[dict[str, Any], bool, str, str]]:
    """`create_hook` for every (event, site): [(hook, created, event, site)]. Each identical
    hook already there is kept, not doubled, so a rerun creates only what is missing.
    `on_hook(hook, created, event, site)` is called as each one is done (the CLI prints it)."""
    out = []
    for site in sites:
        for event in events:
            hook, created = create_hook(api, event=event, target_url=target_url, site_id=site,
                                        resource_id=resource_id, client_id=client_id)
            out.append((hook, created, event, site))
            if on_hook is not None:
                on_hook(hook, created, event, site)
    return out


def find_hook(
    api: CreatorPlatformClient,
    *,
    event: str,
    target_url: str,
    site_id: str,
    resource_id: str | None,
) -> dict[str, Any] | None:
    """An identical live hook, so that `hooks create` can be re-run safely (a second identical
    hook would only double every delivery). Listing problems never block a create."""
    try:
        hooks = list_hooks(api, site_id=site_id)
    except HookError:
        return None
    for hook in hooks:
        attrs = hook.get("attributes") or {}
        site = (((hook.get("relationships") or {}).get("site") or {}).get("data") or {}).get("id")
        same_resource = str(attrs.get("resource_id")) == str(resource_id) if resource_id else (
            attrs.get("resource_id") in (None, "")
        )
        if (
            attrs.get("event") == event
            and attrs.get("target_url") == target_url
            and str(site) == str(site_id)
            and same_resource
        ):
            return hook
    return None


def list_hooks(
    api: CreatorPlatformClient, *, site_id: str | None = None, client_id: str = ""
) -> list[dict[str, Any]]:
    params = {"filter[site_id]": site_id} if site_id else {}
    try:
        return [
            hook for page in iter_pages(api, RESOURCES["hooks"], params, page_size=DEFAULTS.page_size) for hook in page.data
        ]
    except ApiError as exc:
        raise explain(exc, "listing hooks", None, client_id) from None


def delete_hook(api: CreatorPlatformClient, hook_id: str, *, client_id: str = "") -> None:
    try:
        api.delete(f"/hooks/{hook_id}", resource="hooks")
    except ApiError as exc:
        raise explain(exc, f"deleting hook {hook_id}", None, client_id) from None


def sample(api: CreatorPlatformClient, event: str, *, client_id: str = "") -> Any:
    try:
        event_spec(event)
    except ValueError as exc:
        raise HookError(str(exc)) from None
    try:
        return api.get(f"/hooks/{event}_sample", resource="hooks")
    except ApiError as exc:
        raise explain(exc, f"reading the {event!r} sample", event, client_id) from None
