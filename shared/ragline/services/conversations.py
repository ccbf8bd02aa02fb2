"""Conversations the server keeps (``conversationId``): the earlier turns of a chat, re-checked.

A turn's answer goes back to the model only while every document the run drew on is still there,
unchanged since the run read it and readable by the user asking now (the replay rule of
:mod:`ragline.services.replays`); otherwise the model, and a reader of the conversation, see
:data:`~ragline.domain.conversations.WITHHELD` in its place. The newest
:data:`CONTEXT_TURNS` turns are what a new turn starts from (the chat service's pruning then fits them
to the model). Access is the runs' rule (:func:`ragline.services.runs.may_follow`): an end user
continues, lists, reads and deletes only their own conversations; an unrestricted key all of its
tenant's.
"""

from __future__ import annotations

import builtins
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from ragline import errors
from ragline.domain.access import may_read
from ragline.domain.api import Usage
from ragline.domain.chat import ChatMessage
from ragline.domain.conversation_api import ConversationList, ConversationSummary, ConversationView, TurnView
from ragline.domain.conversations import (
    MAX_CONVERSATIONS_LISTED,
    WITHHELD,
    Conversation,
    Turn,
)
from ragline.domain.documents import DocumentRecord
from ragline.domain.models import RunUsage
from ragline.domain.runs import RunHead, owner_of
from ragline.ports import ConversationStore, DocumentRegistry
from ragline.services.authentication import Principal
from ragline.services.read_views import readers_of
from ragline.services.replays import GONE, DocumentRef
from ragline.services.runs import may_follow

CONTEXT_TURNS = 20
"""The newest turns a new turn is given (each re-checked): older ones are kept for reading only."""
SAVE_ATTEMPTS = 8


class ConversationService:
    def __init__(
        self,
        store: ConversationStore,
        documents: DocumentRegistry,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._documents = documents
        self._clock = clock

    # -- the chat service's side ------------------------------------------------------------------
    def history(self, principal: Principal, conversation_id: str) -> builtins.list[ChatMessage]:
        """The messages of the conversation's newest turns, re-checked for ``principal`` now."""
        conversation = self._readable(principal, conversation_id)
        kept = self._kept(principal, conversation.turns[-CONTEXT_TURNS:])
        messages: builtins.list[ChatMessage] = []
        for turn, shown in kept:
            if not turn.answer:  # a turn that failed: its question was never answered
                continue
            messages.extend(ChatMessage.model_validate({"role": r, "content": c}) for r, c in turn.messages)
            messages.append(ChatMessage(role="assistant", content=turn.answer if shown else WITHHELD))
        return messages

    def new_id(self) -> str:
        return "conv_" + uuid.uuid4().hex

    def add_turn(self, principal: Principal, conversation_id: str, turn: Turn) -> None:
        """Add ``turn`` last (starting the conversation when it is new); a write that raced another
        turn's is retried on what that one wrote, so both land."""
        for _ in range(SAVE_ATTEMPTS):
            current = self._store.get(principal.tenant_id, conversation_id)
            if current is None:
                owner = owner_of(principal.user.user_id if principal.user is not None else None)
                current = Conversation(
                    principal.tenant_id, conversation_id, owner, principal.key_id, turn.at, turn.at
                )
            elif not self._may_read(principal, current):
                raise errors.ConversationNotFound(f"conversation {conversation_id!r} not found")
            if self._store.save(current.with_turn(turn), expect_version=current.version):
                return
        raise errors.Throttled("the conversation is being written by other turns; retry shortly")

    # -- the API's side -------------------------------------------------------------------------
    def get(self, principal: Principal, conversation_id: str) -> ConversationView:
        conversation = self._readable(principal, conversation_id)
        turns = [
            TurnView(
                run_id=t.run_id,
                messages=[{"role": r, "content": c} for r, c in t.messages],
                answer=t.answer if shown else WITHHELD,
                withheld=not shown,
                created_at=_iso(t.at),
                usage=Usage.of(RunUsage(**t.usage)),
            )
            for t, shown in self._kept(principal, conversation.turns)
        ]
        return ConversationView(
            conversation_id=conversation_id,
            created_at=_iso(conversation.created_at),
            updated_at=_iso(conversation.updated_at),
            turns=turns,
            turn_count=conversation.turn_count,
            usage=Usage.of(RunUsage(**conversation.usage)),
        )

    def list(self, principal: Principal) -> ConversationList:
        principal.require("chat")
        owner = self._listed_owner(principal)
        found = self._store.list(principal.tenant_id, owner, MAX_CONVERSATIONS_LISTED)
        now = self._clock()
        return ConversationList(
            conversations=[
                ConversationSummary(
                    conversation_id=c.conversation_id,
                    title=c.title,
                    created_at=_iso(c.created_at),
                    updated_at=_iso(c.updated_at),
                    turn_count=c.turn_count,
                )
                for c in found
                if self._may_read(principal, c) and c.expires_at > now
            ]
        )

    def delete(self, principal: Principal, conversation_id: str) -> None:
        self._readable(principal, conversation_id)
        self._store.delete(principal.tenant_id, conversation_id)

    # -- rules ------------------------------------------------------------------------------------
    def _readable(self, principal: Principal, conversation_id: str) -> Conversation:
        principal.require("chat")
        found = self._store.get(principal.tenant_id, conversation_id)
        if found is None or not self._may_read(principal, found) or found.expires_at <= self._clock():
            raise errors.ConversationNotFound(f"conversation {conversation_id!r} not found")
        return found

    @staticmethod
    def _may_read(principal: Principal, conversation: Conversation) -> bool:
        head = RunHead(
            conversation.tenant_id, conversation.conversation_id, conversation.owner, conversation.key_id,
            "completed", conversation.created_at, 0,
        )  # fmt: skip
        return may_follow(principal, head)

    @staticmethod
    def _listed_owner(principal: Principal) -> str | None:
        if principal.user is not None:
            return owner_of(principal.user.user_id)
        return None if principal.unrestricted else ""

    def _kept(self, principal: Principal, turns: Iterable[Turn]) -> builtins.list[tuple[Turn, bool]]:
        """Each turn, and whether its answer may be shown: every document it drew on unchanged since
        and readable by ``principal`` (each document read once)."""
        readers = readers_of(principal)
        records: dict[DocumentRef, DocumentRecord | None] = {}

        def ok(ref: DocumentRef, at: float) -> bool:
            if ref not in records:
                records[ref] = self._documents.get(principal.tenant_id, *ref)
            record = records[ref]
            return (
                record is not None
                and record.status not in GONE
                and record.updated_at <= datetime.fromtimestamp(at, UTC)
                and may_read(readers, record.readers)
            )

        return [(t, all(ok(ref, t.at) for ref in t.documents)) for t in turns]


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")
