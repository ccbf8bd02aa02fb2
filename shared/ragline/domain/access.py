"""Who inside a tenant may read a document: the end user a request acts for, and a document's readers.

A document may name the users and groups that may read it; a document that names none is readable
by every user of its namespace. A request acts for an end user (:class:`UserContext`) when a key
with the right asserts one or when the tenant's identity provider signed the caller's token; a
request without a user context (a server key acting for the SaaS itself) reads every document its
key reaches.

Stores index a chunk's readers as terms (``u:<user>``, ``g:<group>``, ``*`` for everyone) and keep a
chunk iff its terms meet :meth:`UserContext.reader_terms` — a user and a group of the same name never
alias. Standard library only: the authorizer imports this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ragline import errors

EVERYONE = "*"
MAX_PRINCIPAL_LENGTH = 256
MAX_GROUPS = 100
"""Groups one user context may carry (and users, and groups, one document may name)."""
_PRINCIPAL = re.compile(rf"[^\x00-\x1f\x7f,]{{1,{MAX_PRINCIPAL_LENGTH}}}")
"""A user id or group name: 1-256 characters, no control character and no comma (headers list
groups comma-separated)."""


def check_principal(value: object, what: str) -> str:
    if not isinstance(value, str) or not _PRINCIPAL.fullmatch(value) or value != value.strip():
        raise errors.InvalidRequest(
            f"{what} must be 1-{MAX_PRINCIPAL_LENGTH} characters without commas, control characters"
            " or surrounding spaces",
            field=what,
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.InvalidRequest(f"{what} is not valid Unicode", field=what) from None
    return value


def check_principals(values: Iterable[object], what: str) -> tuple[str, ...]:
    items = list(values)
    if len(items) > MAX_GROUPS:
        raise errors.InvalidRequest(f"at most {MAX_GROUPS} {what}s", field=what, count=len(items))
    return tuple(sorted({check_principal(v, what) for v in items}))


class UserContext(NamedTuple):
    """The end user a request acts for (a named tuple: the authorizer's import path)."""

    user_id: str
    groups: frozenset[str] = frozenset()

    @classmethod
    def of(cls, user_id: object, groups: Iterable[object] = ()) -> UserContext:
        """Validated: a bad id or group is a 400, never a context that reads more than it should."""
        return cls(check_principal(user_id, "user id"), frozenset(check_principals(groups, "group")))

    def reader_terms(self) -> frozenset[str]:
        """The reader terms this user holds: everyone's, its own and its groups'."""
        return frozenset({EVERYONE, f"u:{self.user_id}", *(f"g:{g}" for g in self.groups)})


def document_readers(users: Sequence[str] = (), groups: Sequence[str] = ()) -> tuple[str, ...]:
    """A document's reader terms as its chunks carry them; ``()`` (no one named) is everyone."""
    return tuple(sorted({*(f"u:{u}" for u in users), *(f"g:{g}" for g in groups)}))


def stored_reader_terms(readers: Sequence[str]) -> list[str]:
    """What a store indexes for a chunk's ``readers``: ``["*"]`` for a document open to everyone."""
    return list(readers) or [EVERYONE]


def may_read(allowed: frozenset[str] | None, readers: Sequence[str]) -> bool:
    """Whether a reader holding ``allowed`` terms (None: no user context, reads all) may read a chunk
    whose document names ``readers`` — the rule every store's pushed-down filter must equal."""
    return allowed is None or not readers or not allowed.isdisjoint(readers)
