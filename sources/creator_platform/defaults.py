"""The source's defaults as its `def` writes them, for what runs outside the source.

`creator_platform_source` is the one place a default of the source is written (as dlt verified
sources do); nothing below it holds one: the API client and the listings take every knob from
their caller. What builds a client or lists pages without the source (`init`, `hooks`, the
webhook loader's listings, a test) reads the def's defaults here, from its signature.
"""

from __future__ import annotations

import types
from typing import Any

from creator_sync.common.settings import signature_defaults

from .auth import Secret
from .client import CreatorPlatformClient
from .config import SOURCE_SETTINGS
from .source import creator_platform_source

# each argument's default, by name (`DEFAULTS.page_size`); a required one (base_url, ...) absent
DEFAULTS = types.SimpleNamespace(**signature_defaults(creator_platform_source))
# the client's knobs that have a default (`Setting.client`): what `api_client` fills in
CLIENT_KNOBS = tuple(s.key for s in SOURCE_SETTINGS if s.client and hasattr(DEFAULTS, s.key))


def api_client(base_url: str, client_id: str, client_secret: Secret | str,
               **knobs: Any) -> CreatorPlatformClient:
    """A client as the source builds one: each knob not given at the source's default."""
    chosen = {key: getattr(DEFAULTS, key) for key in CLIENT_KNOBS} | knobs
    return CreatorPlatformClient(base_url, client_id, client_secret, **chosen)
