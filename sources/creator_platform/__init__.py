"""The Creator Platform dlt source (see `source.py`) and its public surface.

    import dlt
    from creator_sync.sources.creator_platform import creator_platform_source

    source = creator_platform_source()  # settings from [sources.creator_platform] / env
    dlt.pipeline("creator_platform", destination="duckdb").run(source)

Everything another package uses is exported here, and only from here (tests/test_layers.py
forbids `creator_sync.pipelines` to import a module of this package by name): the source and
the run it hands back, every setting (`config.SETTINGS`, its resolver and click options), the
client and its errors, the facts table, and the normalisation shared with the webhook loader.
"""

from .arrow_tables import rows_to_arrow
from .auth import Secret, TokenManager
from .checkpoint import is_done, place_of
from .client import CreatorPlatformClient, api_root, is_loopback
from .config import (
    DEFAULT_DATASET,
    DEFAULTS,
    SETTINGS,
    SOURCE_SECTION,
    SOURCE_SETTINGS,
    SYNC_SECTION,
    BadSetting,
    Setting,
    Settings,
    by_key,
    lookback_days,
    option,
    setting,
    settings_class,
    warn_unknown_keys,
)
from .dlt_logs import quiet_hint_merge_warnings
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
from .pii import PERSON_EMAILS, PERSON_KEYS, PiiMode, apply_pii, personal_columns
from .ratelimit import LimiterClosed, RateLimiter
from .redact import redact_target_url
from .rows import LINK_MARKER, child_marker, normalize_resources
from .run import Outcome, RunReport, Runtime, SourceOptions, SyncRun
from .settings import RESOURCES, SOURCE_NAME, TYPES, type_info
from .source import creator_platform_source, sync_run
from .stats import RunStats
from .tuning import (
    ARROW_POOL,
    FILE_MAX_ITEMS,
    FRESH_LOAD_VACUUM_TASKS,
    GC_YOUNG_THRESHOLD,
    HOLD_OPEN_MAX_BYTES,
    MALLOC_ARENAS,
    REPAIR_MEMORY_LIMIT,
    SCAN_MEMORY_LIMIT,
    TRIM_EVERY_S,
    WAL_CHECKPOINT,
)

__all__ = [
    "ARROW_POOL",
    "DEFAULTS",
    "DEFAULT_DATASET",
    "FILE_MAX_ITEMS",
    "FRESH_LOAD_VACUUM_TASKS",
    "GC_YOUNG_THRESHOLD",
    "HOLD_OPEN_MAX_BYTES",
    "LINK_MARKER",
    "MALLOC_ARENAS",
    "PERSON_EMAILS",
    "PERSON_KEYS",
    "REPAIR_MEMORY_LIMIT",
    "RESOURCES",
    "SCAN_MEMORY_LIMIT",
    "SETTINGS",
    "SOURCE_NAME",
    "SOURCE_SECTION",
    "SOURCE_SETTINGS",
    "SYNC_SECTION",
    "TRIM_EVERY_S",
    "TYPES",
    "WAL_CHECKPOINT",
    "ApiError",
    "AuthError",
    "BadResponseError",
    "BadSetting",
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
    "Setting",
    "Settings",
    "SourceOptions",
    "SyncRun",
    "TokenManager",
    "api_root",
    "apply_pii",
    "by_key",
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
    "option",
    "personal_columns",
    "place_of",
    "quiet_hint_merge_warnings",
    "redact_target_url",
    "rows_to_arrow",
    "setting",
    "settings_class",
    "sync_run",
    "table_hints",
    "type_info",
    "warn_unknown_keys",
]
