"""Account and service endpoints (addendum A4): `GET /v1/me` and `GET /v1/version`.

`/v1/me` answers the user behind the credential: the `limited` client is an administrator; the
`sandbox` client, the owner login and any other client registered with the sandbox (the owner
creates API clients) are the account owner. `/v1/version` needs no token.
"""

from __future__ import annotations

from dataclasses import dataclass

from creator_sync.sandbox.dataset import TYPES
from creator_sync.sandbox.store import type_base

API_TITLE = "Creator Platform API"
API_VERSION = "1.1.0"  # the live platform's OpenAPI document version (addendum)
JSONAPI_VERSION = "1.0"
DOCUMENTATION = "https://developers.creator-platform.example/docs/api"
USER_TYPE = "users"


@dataclass(frozen=True)
class User:
    number: int  # fixes the id
    name: str
    email: str
    role_level: str

    @property
    def initials(self) -> str:
        return "".join(word[0] for word in self.name.split()).upper()


OWNER = User(0, "Olivia Bennett", "owner@example.com", "OWNER")
# credential subject (client id, or the login of a user-login grant) -> its user
USERS: dict[str, User] = {
    "sandbox": OWNER,
    "owner@example.com": OWNER,
    "limited": User(1, "Sam Ortiz", "assistant@example.com", "ADMINISTRATOR"),
}


def me(subject: str, api_url: str) -> dict:
    user = USERS.get(subject, OWNER)  # a credential the sandbox issued always has a user
    user_id = str(type_base(TYPES.index(USER_TYPE)) + user.number)
    return {"data": {
        "id": user_id, "type": USER_TYPE,
        "attributes": {"name": user.name, "email": user.email, "initials": user.initials,
                       "role_level": user.role_level},
        "relationships": {},
        "links": {"self": f"{api_url}/me"},
    }, "links": {"self": f"{api_url}/me"}}


def version() -> dict:
    return {"meta": {"title": API_TITLE, "version": API_VERSION},
            "links": {"documentation": DOCUMENTATION},
            "jsonapi": {"version": JSONAPI_VERSION}}
