"""Background runs (``"background": true``): queued at once, run to the end by a worker.

:meth:`BackgroundRuns.submit` checks the request as a streamed run would be checked (a bad request is
its 4xx now), writes the run's head ``queued`` and queues it with who asked (the caller as the
authorizer resolved it, re-checked by the worker's own run). :meth:`BackgroundRuns.work` claims the
run (``queued`` → ``running``: a redelivered message of a claimed run does nothing, so a run never
runs twice) and runs it through the chat service, recorded like any run; what it refuses when it
starts (the quota spent, the ``Idempotency-Key`` running elsewhere, no run slot free) is the run's
``error`` event. A background run holds a run slot of its tenant and key while it runs, as a streamed
one does.
The run announces ``run.completed``, ``run.failed`` or ``run.cancelled`` once it ends.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any, NoReturn

from ragline import errors
from ragline.agents.events import RunAccepted, RunEvent
from ragline.domain.access import UserContext
from ragline.domain.api import ChatRequest
from ragline.ports import RunQueue
from ragline.services.authentication import Principal
from ragline.services.chat import ChatService
from ragline.services.runs import RunService
from ragline.services.tenant_gate import TenantGate


def principal_json(principal: Principal) -> dict[str, Any]:
    p = principal
    return {
        "tenant": p.tenant_id,
        "scopes": sorted(p.scopes),
        "namespaces": sorted(p.namespaces),
        "keyId": p.key_id,
        "user": None if p.user is None else {"id": p.user.user_id, "groups": sorted(p.user.groups)},
        "mayAssertUser": p.may_assert_user,
        "requiresUser": p.requires_user,
        "expiresAt": p.expires_at,
    }


def principal_from(data: dict[str, Any]) -> Principal:
    user = data.get("user")
    return Principal(
        tenant_id=str(data["tenant"]),
        scopes=frozenset(data["scopes"]),
        namespaces=frozenset(data["namespaces"]),
        key_id=str(data["keyId"]),
        user=None if user is None else UserContext(str(user["id"]), frozenset(user["groups"])),
        may_assert_user=bool(data["mayAssertUser"]),
        requires_user=bool(data["requiresUser"]),
        expires_at=int(data["expiresAt"]),
    )


class BackgroundRuns:
    def __init__(
        self, chat: ChatService, runs: RunService, queue: RunQueue, gate: TenantGate | None = None
    ) -> None:
        """``gate``: the runs in flight a tenant and key may hold (fair sharing): a background run
        takes a slot like a streamed one — checked when it is queued, held while it runs."""
        self._chat = chat
        self._runs = runs
        self._queue = queue
        self._gate = gate

    def submit(self, principal: Principal, request: ChatRequest, run_id: str) -> RunAccepted:
        self._chat.check(principal, request)
        if self._gate is not None:  # at its limit now: 429 now (the slot is taken when it runs)
            self._gate.run_slot(principal).release()
        head = self._runs.new_head(principal, run_id, background=True, status="queued")
        self._runs.queue(head)
        message = {
            "principal": principal_json(principal),
            "request": request.model_dump(mode="json", by_alias=True, exclude_none=True),
        }
        self._queue.submit(principal.tenant_id, run_id, json.dumps(message))
        return RunAccepted(run_id=run_id, status="queued", events=f"/v1/runs/{run_id}/events")

    def work(self, tenant_id: str, run_id: str, message: str) -> bool:
        """Run the queued run to its end; False when it was not queued (already claimed or ended)."""
        head = self._runs.claim(tenant_id, run_id)
        if head is None:
            return False
        data = json.loads(message)
        principal = principal_from(data["principal"])
        if principal.tenant_id != tenant_id:
            raise errors.InvalidRequest("a background run's message names another tenant")
        try:
            request = ChatRequest.model_validate(data["request"])
            if self._gate is None:
                events = self._chat.answer_chat(principal, request, run_id=run_id, claimed=head)
            else:  # no slot free when it starts (too_many_runs): the run's error event
                slot = self._gate.run_slot(principal)
                try:
                    events = slot.around(
                        self._chat.answer_chat(principal, request, run_id=run_id, claimed=head)
                    )
                except BaseException:
                    slot.release()
                    raise
        except errors.RaglineError as exc:
            events = self._runs.recording(head, fresh=False).record(_refused(exc))
        try:
            for _ in events:  # recorded as they come; nobody is listening here
                pass
        except errors.RaglineError:  # recorded as the run's error event: the run is over, not retried
            pass
        return True


def _refused(exc: errors.RaglineError) -> Generator[RunEvent, None, NoReturn]:
    raise exc
    yield  # a generator: the recording turns the error into the run's ``error`` event
