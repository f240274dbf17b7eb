"""Small HTML building blocks shared by the report's page and sections (escaping included)."""

from __future__ import annotations

import datetime as dt
from html import escape
from typing import Any

from creator_sync.models.coverage import fmt_utc as fmt_ts

__all__ = ["attrs", "empty", "esc", "figure", "fmt_date", "fmt_ts", "section", "unavailable"]


def esc(value: Any) -> str:
    """Text or attribute value, escaped: titles and ids come from the API, not from us."""
    return escape(str(value), quote=True)


def attrs(**values: Any) -> str:
    """`data_value=5` -> ` data-value="5"`, `class_="x"` -> ` class="x"`; None leaves the
    attribute out."""
    return "".join(
        f' {name.rstrip("_").replace("_", "-")}="{esc(v)}"'
        for name, v in values.items()
        if v is not None
    )


def fmt_date(value: dt.date | None) -> str:
    return value.isoformat() if value else "—"




def figure(testid: str, currency: str | None, caption: str, svg: str, **extra: Any) -> str:
    """A chart with its caption; `extra` are more data attributes (`data_site_id="…"`)."""
    return (
        f'<figure class="chart"{attrs(data_testid=testid, data_currency=currency, **extra)}>'
        f"<figcaption>{esc(caption)}</figcaption>{svg}</figure>"
    )


def section(testid: str, title: str, lead: str, body: str) -> str:
    return (
        f'<section data-testid="{testid}"><h2>{esc(title)}</h2>'
        f'<p class="lead">{esc(lead)}</p>{body}</section>'
    )


def empty(what: str) -> str:
    return f'<p class="empty">{esc(what)}</p>'


def unavailable(reason: str) -> str:
    """In place of a figure built on data that was not loaded: the reason, never a zero."""
    return f'<p class="alert" data-testid="unavailable">Not available: {esc(reason)}.</p>'
