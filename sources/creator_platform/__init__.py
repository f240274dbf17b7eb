"""The Creator Platform dlt source (see `source.py`) and its reusable parts.

Other areas import from here: `CreatorPlatformClient`, `Secret`, the error types, and the
normalisation functions (`normalize_resources`, `rows_to_arrow`, `table_hints`).
"""

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
from .normalize import normalize_resources, rows_to_arrow, table_hints
from .settings import RESOURCES, TYPES
from .source import RunReport, SourceOptions, creator_platform_source

__all__ = [
    "RESOURCES",
    "TYPES",
    "ApiError",
    "AuthError",
    "BadResponseError",
    "CreatorPlatformClient",
    "CreatorPlatformError",
    "NormalizationError",
    "PaginationError",
    "RunReport",
    "Secret",
    "SourceOptions",
    "TokenManager",
    "creator_platform_source",
    "normalize_resources",
    "rows_to_arrow",
    "table_hints",
]
