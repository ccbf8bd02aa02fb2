"""Runs that survive their client: each run's events recorded in order, read again from any point.

:class:`RunRecording` records a chat run's events as they are produced — the SSE ``id`` a client sees
is the event's sequence number — and ends the run's head in its status. Events of one kind stream
word by word (``text``), so they are written in small batches (at most :data:`FLUSH_SECONDS` late);
every other event is written before it is sent, the final one included. :meth:`RunRecording.stop`
is how a run learns it was cancelled (its head, read at most every :data:`CANCEL_POLL_SECONDS`).

:class:`RunService` serves ``GET /v1/runs/{id}``, ``GET /v1/runs/{id}/events`` (the events after the
client's ``Last-Event-ID``, then the live tail until the run ends) and ``POST /v1/runs/{id}/cancel``
to the run's owner only: an end user reads their own runs, a key limited to some namespaces the runs
it started, an unrestricted key every run of its tenant.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field

from ragline import errors
from ragline.agents.events import RunError, RunEvent, RunFinished, RunView, Warning
from ragline.domain.api import Usage
from ragline.domain.events import run_ended
from ragline.domain.runs import (
    MAX_RUN_EVENTS,
    MAX_RUN_LOG_BYTES,
    NOT_KEPT,
    RUN_LOG_TTL_SECONDS,
    LoggedEvent,
    RunHead,
    RunStatus,
    owner_of,
)
from ragline.ports import RunLog
from ragline.services.authentication import Principal
from ragline.services.events import Announcer

logger = logging.getLogger(__name__)

FLUSH_SECONDS = 0.25
"""How late a ``text`` event may reach the log (others are written before they are sent)."""
CANCEL_POLL_SECONDS = 0.5
"""How often a running run reads its head for a cancel request."""
TAIL_POLL_SECONDS = 0.2
"""How often a client following a live run's tail reads the log for new events."""
MAX_FOLLOW_SECONDS = 900.0
"""A follow ends after this long (the client reconnects with its ``Last-Event-ID``); on AWS the chat
function's timeout ends it first."""
READ_BATCH = 500


def ended_status(final: RunFinished) -> RunStatus:
    if final.exit_reason == "cancelled":
        return "cancelled"
    return "failed" if final.exit_reason == "error" else "completed"


def failure_event(exc: BaseException) -> RunError:
    """An error the run did not report itself, as its ``error`` event (an unexpected one never shows
    its text)."""
    if isinstance(exc, errors.RaglineError):
        return RunError(code=exc.code, message=exc.message)
    return RunError(code="internal_error", message="internal error")


@dataclass
class RunRecording:
    log: RunLog
    head: RunHead
    announcer: Announcer | None = None
    clock: Callable[[], float] = time.time
    _checked_at: float = 0.0
    _cancelled: bool = False
    _kept_bytes: int = 0
    _buffer: list[LoggedEvent] = field(default_factory=list)

    def stop(self) -> bool:
        """Whether the run was asked to stop (read from its head at most every CANCEL_POLL_SECONDS)."""
        now = time.monotonic()
        if not self._cancelled and now - self._checked_at >= CANCEL_POLL_SECONDS:
            self._checked_at = now
            head = self.log.head(self.head.tenant_id, self.head.run_id)
            self._cancelled = head is None or head.cancel_requested
        return self._cancelled

    def record(self, events: Iterator[RunEvent]) -> Generator[RunEvent, None, None]:
        """``events``, each recorded under the next sequence number before (``text``: at most
        FLUSH_SECONDS after) it is passed on; an error they raise is recorded as the run's last
        (``error``) event, then raised on.
        The head ends ``completed``, ``failed`` or ``cancelled`` once the last event is written."""
        seq, flushed = 0, time.monotonic()
        status: RunStatus = "failed"
        final: RunFinished | None = None
        try:
            try:
                for event in events:
                    seq += 1
                    self._keep(seq, event)
                    if isinstance(event, RunFinished):
                        status, final = ended_status(event), event
                    if event.type != "text" or time.monotonic() - flushed >= FLUSH_SECONDS:
                        self._flush()
                        flushed = time.monotonic()
                    yield event
            except Exception as exc:  # the run failed outside its own events: still an event of it
                if isinstance(exc, errors.RaglineError):
                    logger.warning("run failed: %s", exc.code, extra={"run_id": self.head.run_id})
                else:
                    logger.exception("run failed", extra={"run_id": self.head.run_id})
                self._keep(seq + 1, failure_event(exc))
                self._flush()
                raise  # the edge answers it as before (a 500 for a JSON body, an ``error`` event)
        finally:
            self._flush()
            self.log.set_status(self.head.tenant_id, self.head.run_id, status, expect=("running",))
            if self.head.background:
                announce_end(self.announcer, self.head, status, final, self.clock())

    def _keep(self, seq: int, event: RunEvent) -> None:
        data = event.model_dump_json()
        self._kept_bytes += len(data.encode())
        within = seq <= MAX_RUN_EVENTS and self._kept_bytes <= MAX_RUN_LOG_BYTES
        if within or isinstance(event, RunFinished | RunError):
            self._buffer.append(LoggedEvent(seq, event.type, data))

    def _flush(self) -> None:
        if self._buffer:
            batch, self._buffer = self._buffer, []
            self.log.append(self.head.tenant_id, self.head.run_id, batch)


def announce_end(
    announcer: Announcer | None, head: RunHead, status: RunStatus, final: RunFinished | None, now: float
) -> None:
    """``run.completed``, ``run.failed`` or ``run.cancelled`` for a background run that ended (its id
    is the run's: announced again, it is the same event); a failed announcement is logged, the run stands."""
    if announcer is None or not announcer.enabled:
        return
    exit_reason = final.exit_reason if final is not None else "error"
    event = run_ended(
        tenant_id=head.tenant_id, run_id=head.run_id, status=status, exit_reason=exit_reason, time=now
    )
    try:
        announcer.publish([event])
    except errors.RaglineError:
        logger.warning("run.%s not announced", status, extra={"run_id": head.run_id})


class RunService:
    def __init__(
        self,
        log: RunLog,
        *,
        announcer: Announcer | None = None,
        clock: Callable[[], float] = time.time,
        poll_seconds: float = TAIL_POLL_SECONDS,
    ) -> None:
        self._log = log
        self._announcer = announcer
        self._clock = clock
        self._poll = poll_seconds

    # -- recording ------------------------------------------------------------------------------
    def new_head(self, principal: Principal, run_id: str, *, background: bool, status: RunStatus) -> RunHead:
        now = self._clock()
        user = principal.user.user_id if principal.user is not None else None
        return RunHead(
            tenant_id=principal.tenant_id,
            run_id=run_id,
            owner=owner_of(user),
            key_id=principal.key_id,
            status=status,
            created_at=now,
            expires_at=int(now) + RUN_LOG_TTL_SECONDS,
            background=background,
        )

    def recording(self, head: RunHead, *, fresh: bool = True) -> RunRecording:
        """A recording of the run ``head`` names; ``fresh``: its head is written now (a background run's
        was written when it was queued, and claimed by its worker)."""
        if fresh:
            self._log.start(head)
        return RunRecording(self._log, head, self._announcer, self._clock)

    def queue(self, head: RunHead) -> None:
        self._log.start(head)

    def claim(self, tenant_id: str, run_id: str) -> RunHead | None:
        """The queued run, now ``running``; None when it is not queued (a redelivered message of a run
        that started or ended: never run twice)."""
        if not self._log.set_status(tenant_id, run_id, "running", expect=("queued",)):
            return None
        return self._log.head(tenant_id, run_id)

    # -- reading --------------------------------------------------------------------------------
    def get(self, principal: Principal, run_id: str) -> RunView:
        head = self._readable(principal, run_id)
        result = None
        if head.ended:
            tail = self._log.events(head.tenant_id, run_id, max(0, head.last_seq - 1), 2)
            finals = [e for e in tail if e.type == "final"]
            result = RunFinished.model_validate_json(finals[-1].data) if finals else None
        return RunView(
            run_id=run_id,
            status=head.status,
            background=head.background,
            created_at=head.created_at,
            last_event_id=head.last_seq,
            result=result,
        )

    def follow(self, principal: Principal, run_id: str, after: int = 0) -> Iterator[LoggedEvent]:
        """Authorised now (errors raise here); then the events after ``after`` and the live tail."""
        head = self._readable(principal, run_id)
        return self._tail(head, max(0, after))

    def _tail(self, head: RunHead, after: int) -> Generator[LoggedEvent, None, None]:
        ends = time.monotonic() + MAX_FOLLOW_SECONDS
        while time.monotonic() < ends:
            batch = self._log.events(head.tenant_id, head.run_id, after, READ_BATCH)
            for event in batch:
                if event.seq > after + 1:  # the run's bounds kept these from its log
                    gap = Warning(code=NOT_KEPT, message=f"events {after + 1}–{event.seq - 1} were not kept")
                    yield LoggedEvent(event.seq - 1, gap.type, gap.model_dump_json())
                yield event
                after = event.seq
            if batch:
                continue
            current = self._log.head(head.tenant_id, head.run_id)
            if current is None or (current.ended and current.last_seq <= after):
                return
            time.sleep(self._poll)

    def cancel(self, principal: Principal, run_id: str) -> RunView:
        """Ask the run to stop: it ends ``cancelled`` at its next event, charged for what it spent. A
        run that already ended is answered as it stands (cancelling is idempotent)."""
        head = self._readable(principal, run_id)
        if not head.ended:
            self._log.request_cancel(head.tenant_id, run_id)
            if head.status == "queued" and self._log.set_status(
                head.tenant_id, run_id, "cancelled", expect=("queued",)
            ):  # never started: nothing spent, nothing to charge; its worker will find it ended
                final = RunFinished(run_id=run_id, exit_reason="cancelled", answer="", usage=Usage())
                self._log.append(
                    head.tenant_id, run_id, [LoggedEvent(1, final.type, final.model_dump_json())]
                )
                announce_end(self._announcer, head, "cancelled", final, self._clock())
        return self.get(principal, run_id)

    def _readable(self, principal: Principal, run_id: str) -> RunHead:
        principal.require("chat")
        head = self._log.head(principal.tenant_id, run_id)
        if head is None or not may_follow(principal, head) or head.expires_at <= self._clock():
            raise errors.RunNotFound(f"run {run_id!r} not found")
        return head


def may_follow(principal: Principal, head: RunHead) -> bool:
    """Whether ``principal`` may read the run (see :func:`may_read_owned`)."""
    return may_read_owned(principal, head.owner, head.key_id)


def may_read_owned(principal: Principal, owner: str, key_id: str) -> bool:
    """Whether ``principal`` may read what ``owner`` (:func:`~ragline.domain.runs.owner_of`) started
    with ``key_id`` — a run, an evaluation job: its end user only theirs; a key limited to some
    namespaces only what it started with no end user; an unrestricted key all of its tenant's."""
    if principal.user is not None:
        return owner == owner_of(principal.user.user_id)
    if principal.acts_for_user:
        return False
    if not principal.unrestricted:
        return owner == "" and key_id == principal.key_id
    return True
