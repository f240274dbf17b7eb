"""The section 7 error object, raised anywhere and rendered once by the app."""

from __future__ import annotations

from http import HTTPStatus

import orjson


class ApiError(Exception):
    """An error response: status, title, detail and where the bad input was."""

    def __init__(self, status: int, detail: str, *, pointer: str | None = None,
                 parameter: str | None = None, title: str | None = None,
                 headers: dict[str, str] | None = None, oauth_error: str | None = None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.pointer = pointer if pointer is not None else parameter
        self.parameter = parameter
        self.title = title or HTTPStatus(status).phrase
        self.headers = headers or {}
        self.oauth_error = oauth_error

    def body(self) -> bytes:
        item: dict = {"status": str(self.status), "title": self.title, "detail": self.detail}
        source: dict = {}
        if self.pointer is not None:
            source["pointer"] = self.pointer
        if self.parameter is not None:
            source["parameter"] = self.parameter
        if source:
            item["source"] = source
        doc: dict = {"errors": [item]}
        if self.oauth_error:
            doc["error"] = self.oauth_error
            doc["error_description"] = self.detail
        return orjson.dumps(doc)


def bad_param(parameter: str, detail: str) -> ApiError:
    return ApiError(400, detail, parameter=parameter, title="Invalid query parameter")
