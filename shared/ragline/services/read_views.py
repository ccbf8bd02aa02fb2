"""What one request may read: its filter and its end user, fixed before any retrieval (issue 29).

Every route that retrieves (search, chat, hosting search, the MCP tools) builds a :class:`RequestAccess`
from the authorised principal and the request's ``filter`` — never from a model — and binds the
:class:`~ragline.domain.filters.ReadView` it gives for each namespace into that namespace's store.
An agent's tool may only narrow it (:meth:`RequestAccess.narrowing`): the store's view is ANDed with
the tool's filter, so nothing a model writes reaches a chunk the request could not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragline import errors
from ragline.domain.access import may_read
from ragline.domain.attributes import Schema
from ragline.domain.filters import Filter, Narrowed, ReadView, parse_filter, typed
from ragline.domain.tenancy import Namespace
from ragline.services.authentication import Principal


def readers_of(principal: Principal) -> frozenset[str] | None:
    """The reader terms ``principal`` holds; None: no user context, every document its key reaches."""
    return principal.user.reader_terms() if principal.user is not None else None


def may_see(principal: Principal, document_readers: Sequence[str]) -> bool:
    """Whether ``principal`` may read a document naming ``document_readers`` (the stores' rule)."""
    return may_read(readers_of(principal), document_readers)


def schema_of(ns: Namespace) -> Schema:
    """The namespace's declared or inferred metadata schema (none before any document typed a key)."""
    return ns.settings.metadata_schema


@dataclass(frozen=True)
class RequestAccess:
    """A request's parsed filter (None: all) and its user's reader terms (None: every document)."""

    where: Filter | None = None
    readers: frozenset[str] | None = None

    @classmethod
    def of(cls, principal: Principal, raw_filter: Mapping[str, Any] | None) -> RequestAccess:
        """Bounded and parsed now: a malformed filter is a 400 before any work or charge."""
        where = parse_filter(raw_filter) if raw_filter is not None else None
        return cls(where, readers_of(principal))

    def check(self, spaces: Iterable[Namespace]) -> None:
        """A filter whose value clashes with a key's type in any of ``spaces`` is a 409 up front."""
        if self.where is not None:
            for ns in spaces:
                typed(self.where, schema_of(ns))

    def view(self, ns: Namespace) -> ReadView:
        """The view bound into ``ns``'s store: the filter typed by its schema, and the readers."""
        where = typed(self.where, schema_of(ns)) if self.where is not None else None
        return ReadView(where, self.readers)

    def views(self, spaces: Iterable[Namespace]) -> dict[str, ReadView]:
        return {ns.namespace_id: self.view(ns) for ns in spaces}

    def narrowing(self, spaces: Sequence[Namespace]) -> Narrowing:
        return Narrowing({ns.namespace_id: schema_of(ns) for ns in spaces})

    def reach(self) -> dict[str, list[str]]:
        """What the run's fingerprint adds for the user: a replay under another user is another run
        (the filter is part of the body, already in the fingerprint)."""
        if self.readers is None:
            return {}
        return {"readers": sorted(self.readers)}


@dataclass(frozen=True)
class Narrowing:
    """Turns a tool's ``filter`` argument into the extra filter its search is narrowed by (ANDed with
    the store's view there): parsed, then typed against each of the run's namespaces on its own (a key
    may be a date in one and a string in the next); a bad one is the model's to fix
    (``InvalidRequest``, a tool error), never something that ends the run or widens it."""

    schemas: Mapping[str, Schema] = field(default_factory=dict)

    def __call__(self, raw: object) -> Narrowed | None:
        if raw is None:
            return None
        parsed = parse_filter(raw)
        if not self.schemas:  # no namespace to type it for: the parsed filter, for any store
            return parsed
        try:
            return {namespace_id: typed(parsed, schema) for namespace_id, schema in self.schemas.items()}
        except errors.MetadataTypeClash as exc:
            raise errors.InvalidRequest(exc.message) from exc
