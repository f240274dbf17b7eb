"""The Creator Platform dlt source (see `source.py`) and its public surface.

    import dlt
    from creator_sync.sources.creator_platform import creator_platform_source

    source = creator_platform_source()  # settings from [sources.creator_platform] / env
    dlt.pipeline("creator_platform", destination="duckdb").run(source)

Everything another package uses is exported here, and only from here (tests/test_layers.py
forbids `creator_sync.pipelines` to import a module of this package by name): the source and
the run it hands back, the bookkeeping tables it writes, its own settings (`config.SOURCE_SETTINGS`; the app's are
`common.settings`), the client and its errors, the endpoints table, and the normalisation shared
with the webhook loader.
"""

from .arrow_tables import rows_to_arrow
from .auth import Secret, TokenManager
from .bookkeeping import (
    API_TOTALS,
    API_TOTALS_COLUMNS,
    REJECTED_RECORDS,
    REJECTED_RECORDS_COLUMNS,
    SYNC_RESOURCES,
    SYNC_RESOURCES_COLUMNS,
)
from .bookkeeping import TABLES as BOOKKEEPING_NAMES
from .checkpoint import is_done, place_of
from .client import CreatorPlatformClient, api_root, is_loopback
from .config import (
    SOURCE_SECTION,
    SOURCE_SETTINGS,
    lookback_days,
    source_known_keys,
)
from .defaults import DEFAULTS, api_client
from .destination import PUSHED_LOAD_ID_PREFIX, pushed_keys
from .dlt_logs import quiet_hint_merge_warnings
from .endpoints import RESOURCES, SOURCE_NAME, TYPES, type_info
from .errors import (
    ApiError,
    AuthError,
    BadResponseError,
    ConfigurationError,
    CreatorPlatformError,
    NormalizationError,
    PaginationError,
)
from .hints import declared_columns, is_link_table, link_columns, table_hints
from .pagination import iter_pages
from .pii import (
    PERSON_EMAILS,
    PERSON_KEYS,
    PiiMode,
    apply_pii,
    personal_columns,
    personal_held,
)
from .ratelimit import LimiterClosed, RateLimiter
from .redact import redact_target_url
from .rows import LINK_MARKER, child_marker, normalize_resources
from .run import Outcome, RunReport, Runtime, SourceOptions, SyncRun
from .source import creator_platform_source, sync_run
from .stats import RunStats

__all__ = [
    "API_TOTALS",
    "API_TOTALS_COLUMNS",
    "BOOKKEEPING_NAMES",
    "DEFAULTS",
    "LINK_MARKER",
    "PERSON_EMAILS",
    "PERSON_KEYS",
    "PUSHED_LOAD_ID_PREFIX",
    "REJECTED_RECORDS",
    "REJECTED_RECORDS_COLUMNS",
    "RESOURCES",
    "SOURCE_NAME",
    "SOURCE_SECTION",
    "SOURCE_SETTINGS",
    "SYNC_RESOURCES",
    "SYNC_RESOURCES_COLUMNS",
    "TYPES",
    "ApiError",
    "AuthError",
    "BadResponseError",
    "ConfigurationError",
    "CreatorPlatformClient",
    "CreatorPlatformError",
    "LimiterClosed",
    "NormalizationError",
    "Outcome",
    "PaginationError",
    "PiiMode",
    "RateLimiter",
    "RunReport",
    "RunStats",
    "Runtime",
    "Secret",
    "SourceOptions",
    "SyncRun",
    "TokenManager",
    "api_client",
    "api_root",
    "apply_pii",
    "child_marker",
    "creator_platform_source",
    "declared_columns",
    "is_done",
    "is_link_table",
    "is_loopback",
    "iter_pages",
    "link_columns",
    "lookback_days",
    "normalize_resources",
    "personal_columns",
    "personal_held",
    "place_of",
    "pushed_keys",
    "quiet_hint_merge_warnings",
    "redact_target_url",
    "rows_to_arrow",
    "source_known_keys",
    "sync_run",
    "table_hints",
    "type_info",
]
