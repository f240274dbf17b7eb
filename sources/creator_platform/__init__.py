"""The Creator Platform dlt source (see `source.py`) and its reusable parts.

    import dlt
    from creator_sync.sources.creator_platform import creator_platform_source

    source = creator_platform_source()  # settings from [sources.creator_platform] / env
    dlt.pipeline("creator_platform", destination="duckdb").run(source)

Other areas import from here: `CreatorPlatformClient`, `Secret`, the error types, and the
normalisation functions (`normalize_resources`, `rows_to_arrow`, `table_hints`).
"""

from .arrow_tables import rows_to_arrow
from .auth import Secret, TokenManager
from .client import CreatorPlatformClient
from .errors import (
    ApiError,
    AuthError,
    BadResponseError,
    CreatorPlatformError,
    NormalizationError,
    PaginationError,
)
from .hints import table_hints
from .rows import normalize_resources
from .run import Outcome, RunReport, Runtime, SourceOptions, SyncRun
from .settings import RESOURCES, TYPES
from .source import creator_platform_source, sync_run

__all__ = [
    "RESOURCES",
    "TYPES",
    "ApiError",
    "AuthError",
    "BadResponseError",
    "CreatorPlatformClient",
    "CreatorPlatformError",
    "NormalizationError",
    "Outcome",
    "PaginationError",
    "RunReport",
    "Runtime",
    "Secret",
    "SourceOptions",
    "SyncRun",
    "TokenManager",
    "creator_platform_source",
    "normalize_resources",
    "rows_to_arrow",
    "sync_run",
    "table_hints",
]
