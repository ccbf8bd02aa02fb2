"""A replay is an authorised read of a recorded result (issue 25).

Two checks make it one. Before: the run id's fingerprint covers the caller's *reach* for the run
(:func:`reach_of`: the route's scope it holds, its namespace allow-list and the namespaces the run
resolved), so a key that may reach something else under the same ``Idempotency-Key`` is another
request (``IdempotencyKeyReused``) and never gets the result. After: a result is recorded with the
documents it quotes and the time it read them (:func:`sealed`), and a replay re-reads those documents
(:func:`opened`) — one deleted, being deleted or changed since is masked out of the replay, and a
result older than :data:`RESULT_RETENTION` (or recorded before this rule) is not served at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from ragline.domain.access import may_read
from ragline.domain.tenancy import Scope
from ragline.ports import DocumentRegistry
from ragline.services.authentication import Principal

DocumentRef = tuple[str, str]
"""``(namespace, document_id)`` of a document a recorded result quotes."""
GONE = frozenset({"deleting", "deleted"})
RESULT_RETENTION = timedelta(hours=24)
"""How long a replay serves a recorded result (from when its run read the documents): later, a
replay gets the run's charge without its result (a client retries in minutes, not days)."""

MASKED = "replay_masked"
"""The warning code of a replay that left out what quoted a document deleted or changed since."""
MASKED_MESSAGE = (
    "parts of this replay's recorded result quoted documents deleted or changed since the run;"
    " they were left out — send a new Idempotency-Key to search again"
)


def reach_of(principal: Principal, need: Scope, namespaces: Iterable[str]) -> dict[str, list[str]]:
    """What decides what ``principal`` may see in a run needing ``need`` over ``namespaces`` (the
    ones it resolved): part of the run's fingerprint. The end user it acts for too (their documents'
    readers differ), so one user's ``Idempotency-Key`` never replays another's result; a run with no
    user keeps the fingerprint it always had."""
    reach = {
        "scopes": sorted(principal.scopes & {need}),
        "allowed": sorted(principal.namespaces),
        "namespaces": sorted(namespaces),
    }
    if principal.user is not None:
        reach["user"] = [principal.user.user_id, *sorted(principal.user.groups)]
    return reach


class Recording(BaseModel):
    """What a ledger keeps as a run's result: the response, the documents it quotes, when read."""

    read_at: datetime
    documents: list[DocumentRef]
    result: dict[str, Any]


def sealed(result: BaseModel, documents: Iterable[DocumentRef], read_at: datetime) -> str:
    """``result`` as a recorded result, with the documents it quotes and when the run read them."""
    recording = Recording(
        read_at=read_at, documents=sorted(set(documents)), result=result.model_dump(mode="json")
    )
    return recording.model_dump_json()


@dataclass(frozen=True)
class Opened:
    """A recorded result as a replay may show it: ``kept`` are the quoted documents still unchanged."""

    result: dict[str, Any]
    quoted: frozenset[DocumentRef]
    kept: frozenset[DocumentRef]

    @property
    def masked(self) -> bool:
        return self.kept != self.quoted


def opened(
    documents: DocumentRegistry,
    tenant_id: str,
    text: str | None,
    now: datetime,
    readers: frozenset[str] | None = None,
) -> Opened | None:
    """The recorded ``text`` re-checked now; None when there is nothing to serve: no result, one
    recorded before documents were kept with it (nothing to check it by), or one past retention.
    ``readers`` (the replaying user's reader terms; None: no user) must still admit each quoted
    document: one whose access changed since is masked like one rewritten."""
    if text is None:
        return None
    try:
        recording = Recording.model_validate_json(text)
    except ValidationError:
        return None
    if now - recording.read_at >= RESULT_RETENTION:
        return None
    quoted = frozenset(recording.documents)
    kept = frozenset(
        ref for ref in quoted if unchanged(documents, tenant_id, ref, recording.read_at, readers)
    )
    return Opened(result=recording.result, quoted=quoted, kept=kept)


def unchanged(
    documents: DocumentRegistry,
    tenant_id: str,
    ref: DocumentRef,
    since: datetime,
    readers: frozenset[str] | None = None,
) -> bool:
    """The document still exists, is not being deleted, was not rewritten after ``since``, and its
    readers still admit ``readers``."""
    record = documents.get(tenant_id, *ref)
    return (
        record is not None
        and record.status not in GONE
        and record.updated_at <= since
        and may_read(readers, record.readers)
    )
