"""What chat runs leave behind: each run's event log, and the conversations the server keeps.

Part of :mod:`ragline.ports` (which re-exports every port); the docstrings are the contracts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    from ragline.domain.conversations import Conversation
    from ragline.domain.runs import LoggedEvent, RunHead, RunStatus


class RunLog(Protocol):
    """Each run's head and its events in order (see :mod:`ragline.domain.runs`). Every read and write
    is scoped by tenant: another tenant's run id is simply not there."""

    def start(self, head: RunHead) -> None:
        """Write ``head``, dropping any earlier log under its run id (a run that failed before doing
        any work may run again under its ``Idempotency-Key``: the ledger decides who may start)."""
        ...

    def head(self, tenant_id: str, run_id: str) -> RunHead | None: ...

    def append(self, tenant_id: str, run_id: str, events: Sequence[LoggedEvent]) -> None:
        """Record ``events`` (consecutive, after the last recorded) and move the head's ``last_seq``."""
        ...

    def events(self, tenant_id: str, run_id: str, after: int, limit: int) -> list[LoggedEvent]:
        """The recorded events with ``seq > after``, in order, at most about ``limit`` of them (whole
        stored batches: a read may return a few more)."""
        ...

    def set_status(
        self, tenant_id: str, run_id: str, status: RunStatus, *, expect: tuple[RunStatus, ...]
    ) -> bool:
        """Move the run to ``status`` if it is in one of ``expect`` (False otherwise, or no run): one of
        two workers handed the same queued run claims it."""
        ...

    def request_cancel(self, tenant_id: str, run_id: str) -> bool:
        """Ask a running or queued run to stop (False: no such run, or it has ended)."""
        ...

    def purge_tenant(self, tenant_id: str) -> int:
        """Delete every run of the tenant (heads and events); how many runs."""
        ...


class ConversationStore(Protocol):
    """Conversations the server keeps (see :mod:`ragline.domain.conversations`), scoped by tenant."""

    def get(self, tenant_id: str, conversation_id: str) -> Conversation | None: ...

    def save(self, conversation: Conversation, *, expect_version: int) -> bool:
        """Write ``conversation`` (its ``version`` one more than ``expect_version``) if the stored one
        still has ``expect_version`` (0: it must not exist yet); False when another write got there
        first (read again and retry)."""
        ...

    def list(self, tenant_id: str, owner: str | None, limit: int) -> list[Conversation]:
        """The tenant's conversations (``owner``'s only, unless None), most recently updated first."""
        ...

    def delete(self, tenant_id: str, conversation_id: str) -> bool:
        """False when there was none."""
        ...

    def purge_tenant(self, tenant_id: str) -> int: ...
