"""What one retrieval returns, and the evidence a run collects, under ids unique across namespaces.

A chunk id (``{document_id}#{seq}``) is unique only inside a namespace. A run may search several
namespaces, so everything a run keeps is keyed by :class:`ChunkKey` (namespace + document + sequence),
and the model is shown short *aliases* that :class:`EvidenceTable` keeps unique within the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ragline.domain.models import Chunk, RunUsage, SearchHit, SearchMode, TenantScope, chunk_id


@dataclass(frozen=True, order=True)
class ChunkKey:
    """A chunk's identity across the namespaces of a tenant."""

    namespace_id: str
    document_id: str
    sequence_number: int

    @classmethod
    def of(cls, scope: TenantScope, chunk: Chunk) -> ChunkKey:
        return cls(scope.namespace_id, chunk.document_id, chunk.sequence_number)

    def __str__(self) -> str:
        return f"{self.namespace_id}:{chunk_id(self.document_id, self.sequence_number)}"


@dataclass(frozen=True)
class Notice:
    """A warning for the response: the run went on, but not quite as asked."""

    code: str
    message: str


@dataclass(frozen=True)
class Reranked:
    """A reranker's answer: hits best first (``rerank_score`` set) and what the call cost."""

    hits: list[SearchHit]
    usage: RunUsage = field(default_factory=RunUsage)


def with_rerank_scores(hits: Sequence[SearchHit], scores: Sequence[float], top_n: int) -> list[SearchHit]:
    """Copies of ``hits`` (already in their new order) with ``rerank_score`` set, cut to ``top_n``."""
    return [
        hit.model_copy(update={"breakdown": hit.breakdown.model_copy(update={"rerank_score": score})})
        for hit, score in zip(hits[: max(top_n, 0)], scores, strict=False)
    ]


@dataclass(frozen=True)
class RerankReport:
    """How the rerank step went: which reranker, and whether it fell back to fused order."""

    reranker: str
    fell_back: bool = False
    error_code: str | None = None


@dataclass(frozen=True)
class RetrievedHit:
    scope: TenantScope
    hit: SearchHit

    @property
    def key(self) -> ChunkKey:
        return ChunkKey.of(self.scope, self.hit.chunk)


@dataclass
class RetrievalResult:
    """One query's hits over one or several namespaces, best first, deduplicated."""

    hits: list[RetrievedHit]
    mode: SearchMode
    """The mode that ran (a store without keyword search downgrades to semantic)."""
    usage: RunUsage = field(default_factory=RunUsage)
    notices: list[Notice] = field(default_factory=list)
    rerank: RerankReport | None = None


def normalise_text(text: str) -> str:
    """What two chunks must share to count as the same passage: case and spacing aside."""
    return " ".join(text.split()).casefold()


def deduplicate(hits: list[RetrievedHit]) -> list[RetrievedHit]:
    """Keep the first (best) of hits with the same chunk key or the same normalised text.

    The same passage often exists twice (a file uploaded under two names, a page repeated in a
    manual); showing it twice wastes the model's context and the user's attention.
    """
    keys: set[ChunkKey] = set()
    texts: set[str] = set()
    out: list[RetrievedHit] = []
    for h in hits:
        text = normalise_text(h.hit.chunk.text)
        if h.key in keys or text in texts:
            continue
        keys.add(h.key)
        texts.add(text)
        out.append(h)
    return out


@dataclass(frozen=True)
class Evidence:
    """One chunk a run retrieved: the alias the model sees and cites, and where it really lives."""

    alias: str
    key: ChunkKey
    scope: TenantScope
    chunk: Chunk
    hit: SearchHit | None


_UNSAFE_IN_ALIAS = re.compile(r'[\s,"<>]')
"""Characters a citation marker (``<citation ids="a,b"/>``) cannot carry inside one id."""


class EvidenceTable:
    """The chunks a run retrieved, each under an alias unique within the run.

    A document's alias is its id when no other namespace of the run claimed that id first, else
    ``{namespace}:{document_id}`` (then ``…~2``, ``…~3`` if even that is taken); a chunk's alias is
    ``{document alias}#{seq}``. So a single-namespace run shows plain chunk ids, and two namespaces
    holding ``guide.md`` give the model two different ids for two different documents.
    """

    def __init__(self) -> None:
        self._items: dict[str, Evidence] = {}
        self._by_key: dict[ChunkKey, str] = {}
        self._documents: dict[str, tuple[TenantScope, str]] = {}
        self._document_alias: dict[tuple[TenantScope, str], str] = {}

    def add(self, scope: TenantScope, chunk: Chunk, hit: SearchHit | None = None) -> Evidence:
        """Record a chunk (the first sighting wins; a later scored hit fills in a missing score)."""
        key = ChunkKey.of(scope, chunk)
        alias = self._by_key.get(key)
        if alias is not None:
            known = self._items[alias]
            if known.hit is None and hit is not None:
                known = self._items[alias] = Evidence(alias, key, scope, known.chunk, hit)
            return known
        alias = chunk_id(self.document_alias(scope, chunk.document_id), chunk.sequence_number)
        item = self._items[alias] = Evidence(alias, key, scope, chunk, hit)
        self._by_key[key] = alias
        return item

    def document_alias(self, scope: TenantScope, document_id: str) -> str:
        known = self._document_alias.get((scope, document_id))
        if known is not None:
            return known
        safe = _UNSAFE_IN_ALIAS.sub("_", document_id)
        candidates = [safe, f"{scope.namespace_id}:{safe}"]
        n = 2
        while True:
            alias = next((c for c in candidates if c not in self._documents), None)
            if alias is not None:
                break
            candidates = [f"{scope.namespace_id}:{safe}~{n}"]
            n += 1
        self._documents[alias] = (scope, document_id)
        self._document_alias[(scope, document_id)] = alias
        return alias

    def document(self, alias: str) -> tuple[TenantScope, str] | None:
        """The (scope, real document id) behind a document alias the model used."""
        return self._documents.get(alias)

    def get(self, alias: str) -> Evidence | None:
        return self._items.get(alias)

    def __contains__(self, alias: object) -> bool:
        return alias in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
