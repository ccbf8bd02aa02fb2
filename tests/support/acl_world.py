"""A namespace of documents with different readers, the users who read them, and a hostile model.

The world for the permission probe (issue 29): one tenant, two namespaces, documents open to everyone
and documents naming users and groups; each chunk carries a *marker* (a token no attacker knows) in
its text, its filename and its metadata, so a test can look for any trace of a document a user may
not read in everything a route returns and everything the model was shown.

Chunks are written straight through the store (``upsert`` + ``publish``) and records through the
document registry (``claim`` + ``complete``), so the probe tests the read paths whatever ingestion
stamps.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragline.domain.access import UserContext, document_readers
from ragline.domain.chat import (
    ChatMessage,
    ChatOptions,
    ModelEvent,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallsReady,
    ToolSpec,
    TurnEnd,
)
from ragline.domain.models import Chunk, ChunkMetadata, TenantScope
from ragline.domain.tenancy import ALL_SCOPES
from ragline.services.authentication import Principal
from ragline.services.namespaces import claim_embedding_space, new_namespace
from ragline.wiring import Container
from tests.support.vectors import bow_vector

TENANT = "acme"


@dataclass(frozen=True)
class Doc:
    namespace: str
    document_id: str
    users: tuple[str, ...]
    groups: tuple[str, ...]
    attributes: Mapping[str, Any]
    texts: tuple[str, ...]
    marker: str
    """A token no attacker knows, in every chunk's text, the filename and an attribute."""

    @property
    def readers(self) -> tuple[str, ...]:
        return document_readers(self.users, self.groups)

    @property
    def filename(self) -> str:
        return f"{self.document_id}-{self.marker}.txt"

    def chunks(self) -> list[Chunk]:
        attributes = {**self.attributes, "code": f"code{self.marker}"}
        return [
            Chunk(
                document_id=self.document_id,
                sequence_number=i,
                text=f"{text} {self.marker}",
                metadata=ChunkMetadata(
                    filename=self.filename,
                    source="api:",
                    wider_text=f"{text} {self.marker}",
                    attributes=attributes,
                    readers=self.readers,
                ),
                embedding=bow_vector(f"{text} {self.marker}"),
            )
            for i, text in enumerate(self.texts)
        ]


def _doc(
    ns: str, doc: str, users: tuple[str, ...], groups: tuple[str, ...], attrs: dict[str, Any], n: int
) -> Doc:
    topic = "kettle payroll salary plan notes"
    texts = tuple(f"Part {i} of {doc.replace('-', ' ')}: {topic} number {i}." for i in range(3))
    return Doc(ns, doc, users, groups, attrs, texts, marker=f"mk{n:02d}zq{(n * 7919) % 10007:05d}")


DOCS: tuple[Doc, ...] = (
    _doc("docs", "open-handbook", (), (), {"team": "all", "year": 2023, "tags": ["public"]}, 1),
    _doc("docs", "hr-salaries", (), ("hr",), {"team": "hr", "year": 2024, "tags": ["salary"]}, 2),
    _doc("docs", "alice-notes", ("alice",), (), {"team": "eng", "year": 2025}, 3),
    _doc("docs", "exec-plan", ("carol",), ("exec",), {"team": "exec", "year": 2024}, 4),
    _doc("docs", "user-hr-memo", ("hr",), (), {"team": "hr", "year": 2022}, 5),
    _doc("docs", "star-group", (), ("*",), {"team": "ops", "year": 2021}, 6),
    _doc("more", "more-open", (), (), {"team": "all", "year": 2024}, 7),
    _doc("more", "more-hr", (), ("hr",), {"team": "hr", "year": 2025}, 8),
)
NAMESPACES = ("docs", "more")

USERS: dict[str, UserContext | None] = {
    "service": None,  # a key acting for the SaaS itself: reads everything
    "alice": UserContext.of("alice", ["eng"]),
    "bob": UserContext.of("bob", ["hr"]),
    "carol": UserContext.of("carol", []),
    "hr": UserContext.of("hr", []),  # a user named like a group reads u:hr, never g:hr
    "mallory": UserContext.of("mallory", ["g:hr", "*", "u:alice", "u:carol"]),  # terms, not groups
    "nobody": UserContext.of("nobody", ["sales"]),
}


def readable(user: UserContext | None, doc: Doc) -> bool:
    """The ACL rule written out from the document's own lists (not the production ``may_read``, so a
    bug there cannot hide itself): no user context reads all; a document naming no one is everyone's;
    else the user must be named, or be in a named group."""
    if user is None or not (doc.users or doc.groups):
        return True
    return user.user_id in doc.users or bool(set(user.groups) & set(doc.groups))


def hidden_from(user: UserContext | None) -> list[Doc]:
    return [d for d in DOCS if not readable(user, d)]


def principal(user: UserContext | None) -> Principal:
    return Principal(tenant_id=TENANT, scopes=frozenset(ALL_SCOPES), user=user)


def build(c: Container) -> None:
    """The tenant, its namespaces and every document (records and published chunks)."""
    c.tenancy.create_tenant(TENANT)
    for ns in NAMESPACES:
        space = c.registry.create_namespace(new_namespace(TENANT, ns, default=ns == "docs"))
        claim_embedding_space(c.registry, space, c.embedder)
    for doc in DOCS:
        claim = c.documents.claim(TENANT, doc.namespace, doc.document_id, None, source="api:")
        generation = claim.record.generation
        store = c.stores.scoped(TenantScope(tenant_id=TENANT, namespace_id=doc.namespace))
        chunks = doc.chunks()
        store.upsert(chunks, generation=generation)
        store.publish(doc.document_id, generation=generation)
        record = claim.record.model_copy(
            update={
                "status": "ready",
                "chunk_count": len(chunks),
                "indexed_generation": generation,
                "readers": doc.readers,
                "attributes": dict(chunks[0].metadata.attributes),
            }
        )
        assert c.documents.complete(record)


def leaks(user: UserContext | None, text: str) -> list[str]:
    """The markers of documents ``user`` may not read that ``text`` carries."""
    return [d.marker for d in hidden_from(user) if d.marker in text]


# -- the hostile model ---------------------------------------------------------------------------

WIDENING_FILTERS: tuple[dict[str, Any], ...] = (
    {"orAll": [{"exists": {"key": "team"}}, {"not": {"exists": {"key": "team"}}}]},
    {"not": {"equals": {"key": "team", "value": "nothing"}}},
    {"notIn": {"key": "team", "value": ["nothing"]}},
    {"equals": {"key": "team", "value": "hr"}},
    {"equals": {"key": "readers", "value": "g:hr"}},
    {"orAll": [{"equals": {"key": "team", "value": "exec"}}, {"not": {"exists": {"key": "nope"}}}]},
    {"greaterThanOrEquals": {"key": "year", "value": 0}},
    {"startsWith": {"key": "code", "value": "code"}},
    {"listContains": {"key": "tags", "value": "salary"}},
    {"not": {"not": {"exists": {"key": "code"}}}},
)
GUESSED_IDS = (*(d.document_id for d in DOCS), "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8")


def hostile_calls() -> list[tuple[str, dict[str, Any]]]:
    """Every hostile tool call the probe knows: searches by text (every mode), searches through
    filters that try to widen, and ``expand`` on guessed document ids and aliases."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for doc in DOCS:
        words = doc.document_id.replace("-", " ")
        calls.append(("search", {"query": f"{words} payroll salary", "mode": "keyword"}))
        calls.append(("search", {"query": f"{words} plan notes", "mode": "semantic"}))
    calls += [("search", {"query": "payroll salary kettle", "filter": f}) for f in WIDENING_FILTERS]
    calls += [("expand", {"documentId": g, "sequenceNumber": 1}) for g in GUESSED_IDS]
    return calls


PLANNER_REPLY = json.dumps(
    {
        "queries": [{"type": "keyword", "query": f"{d.document_id} payroll"} for d in DOCS[:5]],
        "canAnswer": False,
        "subQueries": [f"{d.document_id} salary" for d in DOCS[:4]],
        "relevant": [f"{d.document_id}#0" for d in DOCS] + [f"d{i}#0" for i in range(1, 9)],
        "gapQueries": ["hr salaries payroll", "exec plan"],
        "query": "hr salaries payroll",
        "answer": "see hr-salaries",
        "supportingIds": [f"d{i}#1" for i in range(1, 9)],
        "questionAnswered": False,
        "agent": "agentic",
        "namespaces": list(NAMESPACES),
    }
)


@dataclass
class HostileModel:
    """A chat model that tries to read what it may not: each tool turn makes the next ``batch`` of
    ``script`` calls, then it answers citing every id it can think of. A request without tools (a
    router, a planner) gets a reply full of guessed ids and queries. Everything it is shown is kept
    in ``shown`` (the probe checks it too: what the model sees, a hostile model can write out)."""

    script: Sequence[tuple[str, dict[str, Any]]]
    batch: int = 3
    name: str = "hostile"
    shown: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        with self._lock:
            self.shown.extend(m.content for m in messages)
        turn = sum(1 for m in messages if m.role == "assistant")
        calls = list(self.script[turn * self.batch : (turn + 1) * self.batch]) if tools else []
        if calls:
            yield ToolCallsReady(
                calls=tuple(
                    ToolCall(id=f"h{turn}_{i}", name=name, arguments=json.dumps(args))
                    for i, (name, args) in enumerate(calls)
                )
            )
        else:
            cited = ",".join([f"{g}#0" for g in GUESSED_IDS] + [f"{g}#1" for g in GUESSED_IDS])
            reply = PLANNER_REPLY if not tools else f'The secrets are here. <citation ids="{cited}"/>'
            yield TextDelta(text=reply)
        yield TokenUsage(input_tokens=10, output_tokens=10)
        yield TurnEnd(finish_reason="tool_calls" if calls else "stop")
