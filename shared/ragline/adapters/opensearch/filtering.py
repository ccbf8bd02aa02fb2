"""A :class:`~ragline.domain.filters.ReadView` as OpenSearch query clauses, and the fields they need.

Every chunk carries two ``keyword`` fields, written by ``requests.chunk_line``:
``attribute_terms`` (:func:`~ragline.domain.attributes.attribute_terms`: one term per attribute value,
whatever keys a tenant invents, so one field and never a mapping per key) and ``readers`` (the
document's reader terms, ``*`` for a document open to everyone). A filter's plan
(:func:`~ragline.domain.filters.plan`) becomes term / terms / prefix / range queries on the first and
``bool`` logic; the view's readers a ``terms`` query on the second. The clauses go *inside* the kNN
query's ``filter`` (efficient filtering: the graph search only considers admitted chunks, so k hits
come back when k exist) and into the BM25, neighbour and count queries' ``bool`` filters.

A chunk written before these fields existed has neither: it reads as open to everyone (no
``readers`` field) and as a document without attributes (so it matches only negations), exactly as
:meth:`ReadView.admits` reads its stored metadata.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from ragline.domain.access import stored_reader_terms
from ragline.domain.attributes import attribute_terms
from ragline.domain.filters import AllOf, AnyOf, Filter, Not, Plan, Prefix, Range, ReadView, Terms, plan
from ragline.domain.models import ChunkMetadata, SearchHit

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

ATTRIBUTES_FIELD = "attribute_terms"
READERS_FIELD = "readers"
FIELDS: dict[str, Any] = {
    # no ignore_above: a term is at most 64 + 2 + 1,024 characters (4,162 UTF-8 bytes), far under
    # Lucene's 32,766-byte term limit, and a term silently left unindexed would stop matching
    ATTRIBUTES_FIELD: {"type": "keyword"},
    READERS_FIELD: {"type": "keyword"},
}
"""The mapped fields, added to an existing index by ``put_mapping`` (``ensure_index``)."""


def ensure_fields(client: OpenSearch, index: str) -> None:
    """Add :data:`FIELDS` to an index made before chunks carried them (its mapping is ``strict``: a
    write of them would be refused). Read first, so the usual case is one ``GET``; a caller not
    allowed to change the mapping (an AOSS reader without ``aoss:UpdateIndex``) carries on: its
    queries read the old chunks right without the fields (no ``readers``: everyone's; no terms)."""
    from opensearchpy.exceptions import AuthorizationException

    mappings: dict[str, Any] = client.indices.get_mapping(index=index)
    found: dict[str, Any] = next(iter(mappings.values()), {})
    properties = found.get("mappings", {}).get("properties", {})
    if all(name in properties for name in FIELDS):
        return
    with contextlib.suppress(AuthorizationException):
        client.indices.put_mapping(index=index, body={"properties": FIELDS})


def chunk_fields(metadata: ChunkMetadata) -> dict[str, list[str]]:
    """What a chunk's source carries for filtering."""
    return {
        ATTRIBUTES_FIELD: attribute_terms(metadata.attributes),
        READERS_FIELD: stored_reader_terms(metadata.readers),
    }


def view_clauses(view: ReadView | None, where: Filter | None = None) -> list[dict[str, Any]]:
    """The ``bool.filter`` clauses admitting exactly what ``view``, narrowed by a query's own
    ``where``, admits (none for a view of everything)."""
    view = (view or ReadView()).narrowed(where)
    clauses: list[dict[str, Any]] = []
    if view.where is not None:
        clauses.append(compile_plan(plan(view.where)))
    if view.readers is not None:
        clauses.append(readers_clause(view.readers))
    return clauses


def readers_clause(readers: frozenset[str]) -> dict[str, Any]:
    """A chunk naming one of ``readers``, or one written before chunks carried readers (everyone's)."""
    return {
        "bool": {
            "should": [
                {"terms": {READERS_FIELD: sorted(readers)}},
                {"bool": {"must_not": [{"exists": {"field": READERS_FIELD}}]}},
            ],
            "minimum_should_match": 1,
        }
    }


def compile_plan(p: Plan) -> dict[str, Any]:
    """One plan node as a query on :data:`ATTRIBUTES_FIELD` (keyword order is UTF-8 byte order,
    the order :class:`~ragline.domain.filters.Range` means)."""
    if isinstance(p, AllOf):
        return {"bool": {"filter": [compile_plan(x) for x in p.parts]}}
    if isinstance(p, AnyOf):
        return {"bool": {"should": [compile_plan(x) for x in p.parts], "minimum_should_match": 1}}
    if isinstance(p, Not):
        return {"bool": {"must_not": [compile_plan(p.part)]}}
    if isinstance(p, Terms):
        return {"terms": {ATTRIBUTES_FIELD: list(p.terms)}}
    if isinstance(p, Prefix):
        return {"prefix": {ATTRIBUTES_FIELD: {"value": p.prefix}}}
    assert isinstance(p, Range)
    bounds = {
        "gte" if p.include_lower else "gt": p.lower,
        "lte" if p.include_upper else "lt": p.upper,
    }
    return {"range": {ATTRIBUTES_FIELD: bounds}}


def vetted(hits: list[SearchHit], view: ReadView | None, where: Filter | None) -> list[SearchHit]:
    """``hits`` whose chunk, as read, the view narrowed by ``where`` admits: the filter ran inside
    the search; this second look only matters when a chunk was rewritten at its generation between
    the search and the read of its source (a race may then drop a hit, never return an unreadable one)."""
    if view is None and where is None:
        return hits
    rule = (view or ReadView()).narrowed(where)
    return [h for h in hits if rule.admits(h.chunk.metadata.attributes, h.chunk.metadata.readers)]
