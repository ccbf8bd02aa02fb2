"""Background runs without a server: queued, claimed once, cancelled before they start (never run,
nothing charged, announced once), refused when they start (their error event, announced failed), and
a message that names another tenant is refused; the principal crosses the queue intact."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.config import Settings
from ragline.domain.access import UserContext
from ragline.domain.api import ChatRequest
from ragline.domain.billing import current_period
from ragline.domain.events import Event
from ragline.domain.models import TenantScope
from ragline.errors import InvalidRequest
from ragline.services.authentication import Principal
from ragline.services.background import principal_from, principal_json
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder, ScriptedChatModel
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
ASK = ChatRequest.model_validate(
    {
        "messages": [{"role": "user", "content": "When do rockets launch?"}],
        "namespaces": ["docs"],
        "background": True,
    }
)


class HeldQueue:
    """A runs queue that runs nothing until the test hands a message over."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str, str]] = []

    def submit(self, tenant_id: str, run_id: str, message: str) -> None:
        self.messages.append((tenant_id, run_id, message))


class Announced:
    """The run events published (document events are not this test's)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish(self, events: Sequence[Event]) -> None:
        self.events.extend(e for e in events if e.type.startswith("run."))


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Container, HeldQueue, Announced, ScriptedChatModel]]:
    queue, announced = HeldQueue(), Announced()
    model = ScriptedChatModel([[("search", {"query": "rockets"})], ["At dawn."]])
    c = Container(
        Settings(home=tmp_path), stores=SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM),
        embedder=BowEmbedder(), tokenizer=BowEmbedder(), chat_model=model, run_queue=queue,
        event_publisher=announced,
    )  # fmt: skip
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    c.ingest.ingest(
        TenantScope(tenant_id="acme", namespace_id="docs"), filename="r.txt", data=b"Rockets at dawn."
    )
    yield c, queue, announced, model
    c.close()


def runs_of(c: Container) -> int:
    return c.ledger.period_runs("acme", current_period())


def test_a_queued_run_is_claimed_once_and_runs_once(
    world: tuple[Container, HeldQueue, Announced, ScriptedChatModel],
) -> None:
    c, queue, announced, model = world
    accepted = c.background.submit(Principal.operator("acme"), ASK, "run-1")
    assert (accepted.run_id, accepted.status) == ("run-1", "queued") and len(queue.messages) == 1
    assert c.run_log.head("acme", "run-1").status == "queued"  # type: ignore[union-attr]
    message = queue.messages[0]
    assert c.background.work(*message) is True
    assert c.background.work(*message) is False  # redelivered: claimed already, nothing runs again
    assert len(model.seen) == 2 and runs_of(c) == 1
    assert [(e.type, e.detail["run_id"]) for e in announced.events] == [("run.completed", "run-1")]


def test_a_run_cancelled_while_queued_never_runs(
    world: tuple[Container, HeldQueue, Announced, ScriptedChatModel],
) -> None:
    c, queue, announced, model = world
    caller = Principal.operator("acme")
    c.background.submit(caller, ASK, "run-2")
    view = c.runs.cancel(caller, "run-2")
    assert view.status == "cancelled" and view.result is not None and view.result.exit_reason == "cancelled"
    assert c.background.work(*queue.messages[0]) is False
    assert model.seen == [] and runs_of(c) == 0
    assert [e.type for e in announced.events] == ["run.cancelled"]
    assert c.runs.cancel(caller, "run-2").status == "cancelled" and len(announced.events) == 1


def test_a_message_naming_another_tenant_is_refused(
    world: tuple[Container, HeldQueue, Announced, ScriptedChatModel],
) -> None:
    c, queue, _, model = world
    c.background.submit(Principal.operator("acme"), ASK, "run-3")
    tenant, run_id, message = queue.messages[0]
    forged = json.loads(message)
    forged["principal"]["tenant"] = "globex"
    with pytest.raises(InvalidRequest):
        c.background.work(tenant, run_id, json.dumps(forged))
    assert model.seen == []


def test_the_principal_crosses_the_queue_intact() -> None:
    caller = Principal(
        tenant_id="acme", scopes=frozenset({"chat", "search"}), namespaces=frozenset({"docs"}), key_id="k1",
        user=UserContext("alice", frozenset({"hr", "eng"})), may_assert_user=True, requires_user=True,
        expires_at=1_900_000_000,
    )  # fmt: skip
    assert principal_from(json.loads(json.dumps(principal_json(caller)))) == caller


def test_the_chat_functions_worker_path_runs_a_queued_run_and_refuses_api_requests(
    world: tuple[Container, HeldQueue, Announced, ScriptedChatModel],
) -> None:
    from starlette.testclient import TestClient

    from ragline.adapters.aws.run_queue import SqsRunQueue
    from tests.support.lambda_harness import load_handler

    c, queue, announced, _ = world
    c.background.submit(Principal.operator("acme"), ASK, "run-4")
    tenant, run_id, message = queue.messages[0]
    sent = SentMessages()  # the body the AWS queue sends for the run, as the worker receives it
    SqsRunQueue("https://sqs.example/q", client=sent).submit(tenant, run_id, message)
    record = {"messageId": "m-1", "body": sent.bodies[0], "eventSource": "aws:sqs"}
    with TestClient(load_handler("chat").create_app(c)) as client:
        # An API request (it carries API Gateway's context) never reaches the worker
        api = json.dumps({"requestId": "r-1", "authorizer": {"tenantId": "acme"}})
        refused = client.post("/events", json={"Records": [record]}, headers={"x-amzn-request-context": api})
        assert refused.status_code == 404 and c.run_log.head("acme", "run-4").status == "queued"  # type: ignore[union-attr]
        # The adapter's pass-through does (its context is "PassThrough"): the run runs once, a second
        # delivery does nothing
        passed = {"x-amzn-request-context": '"PassThrough"'}
        ran = client.post("/events", json={"Records": [record]}, headers=passed)
        assert ran.json() == {"ran": ["run-4"], "failed": []}
        assert client.post("/events", json={"Records": [record]}).json() == {"ran": [], "failed": []}
        broken = {**record, "body": "{}"}
        assert client.post("/events", json={"Records": [broken]}).json() == {"ran": [], "failed": ["m-1"]}
    assert [e.type for e in announced.events] == ["run.completed"]


class SentMessages:
    """An SQS client that keeps what it is asked to send."""

    def __init__(self) -> None:
        self.bodies: list[str] = []

    def send_message(self, **request: str) -> None:
        self.bodies.append(request["MessageBody"])


def test_a_background_run_holds_a_run_slot_like_a_streamed_one(
    world: tuple[Container, HeldQueue, Announced, ScriptedChatModel],
) -> None:
    from ragline.domain.limits import Limits
    from ragline.domain.tenancy import Tenant
    from ragline.errors import TooManyRuns

    c, queue, announced, model = world
    c.registry.create_tenant(Tenant(tenant_id="acme", limits=Limits(max_concurrent_runs=1)))
    caller = Principal.operator("acme")
    # At its limit when asked: a 429 at once, nothing queued
    held = c.tenant_gate.run_slot(caller)
    with pytest.raises(TooManyRuns):
        c.background.submit(caller, ASK, "run-5")
    assert queue.messages == [] and c.run_log.head("acme", "run-5") is None
    held.release()
    # At its limit when it starts: the run fails with too_many_runs, announced, nothing run or charged
    c.background.submit(caller, ASK, "run-6")
    held = c.tenant_gate.run_slot(caller)
    assert c.background.work(*queue.messages[0]) is True
    held.release()
    log = c.run_log.events("acme", "run-6", 0, 10)
    assert [e.type for e in log] == ["error"] and json.loads(log[0].data)["code"] == "too_many_runs"
    assert [e.type for e in announced.events] == ["run.failed"] and model.seen == [] and runs_of(c) == 0
    # While it runs, it holds the slot (a streamed run would be refused), and frees it at its end
    c.background.submit(caller, ASK, "run-7")
    refused: list[bool] = []
    inner = model.stream

    def stream(*args: object) -> object:
        try:
            c.tenant_gate.run_slot(caller).release()
            refused.append(False)
        except TooManyRuns:
            refused.append(True)
        return inner(*args)  # type: ignore[arg-type]

    model.stream = stream  # type: ignore[method-assign]
    assert c.background.work(*queue.messages[1]) is True
    assert refused and all(refused) and runs_of(c) == 1
    c.tenant_gate.run_slot(caller).release()  # free again once the run ended
