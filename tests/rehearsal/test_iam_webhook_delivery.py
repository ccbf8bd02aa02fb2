"""The rehearsal's IAM view of webhook delivery: every call the delivery function's once-marks make
(has, the "being sent" mark, its undo, the "delivered" mark) is granted by its ``DeliveryMarks``
statement — under ``ONCE#`` keys of the usage table only, never on the ledger's own items."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ragline.adapters.aws.webhooks import DynamoDbOnceMarks
from tests.rehearsal.cloudformation import FunctionSpec
from tests.rehearsal.iam import calls_from_log, iam_calls, table_arn
from tests.rehearsal.test_iam_fair_share import Recording
from tests.rehearsal.test_rehearsal_checks import recorder
from tests.support.cfn_tables import load_template

pytestmark = pytest.mark.unit
FUNCTION = "WebhookDeliveryFunction"


def marks_statement() -> dict[str, Any]:
    """The statement in the function's own role (it has one: SAM's would add receive/delete on every
    queue, for its SQS event source)."""
    resources = load_template()["Resources"]
    role = resources[resources[FUNCTION]["Properties"]["Role"]["Fn::GetAtt"][0]]["Properties"]
    for policy in role["Policies"]:
        for statement in policy["PolicyDocument"]["Statement"]:
            if statement.get("Sid") == "DeliveryMarks":
                return {**statement, "Resource": table_arn("usage")}
    raise AssertionError(f"{FUNCTION} has no DeliveryMarks statement")


def test_every_call_of_a_delivery_is_granted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = FunctionSpec(FUNCTION, "app.h", [], {}, [marks_statement()], 30, 1024, "Active")
    client = Recording()
    marks = DynamoDbOnceMarks("usage", client=client)
    marks.has("delivered#wh_1#evt_1")
    marks.mark("sending#wh_1#evt_1", ttl_seconds=60)
    marks.forget("sending#wh_1#evt_1")  # a failed POST
    marks.mark("delivered#wh_1#evt_1", ttl_seconds=60)
    assert {operation for operation, _ in client.calls} == {"get_item", "put_item", "delete_item"}
    log = tmp_path / "calls.jsonl"
    record = recorder(log, monkeypatch)._record
    for operation, params in client.calls:
        name = "".join(part.title() for part in operation.split("_"))
        record(SimpleNamespace(name=name, service_model=SimpleNamespace(service_name="dynamodb")), params)
    mapped = calls_from_log(FUNCTION, log, {})
    assert len(mapped) == len(client.calls)
    for call in mapped:
        assert spec.allows(call.action, call.resource, call.context), call


def test_the_statement_grants_nothing_on_the_ledgers_items() -> None:
    spec = FunctionSpec(FUNCTION, "app.h", [], {}, [marks_statement()], 30, 1024, "")
    ledger_item = {"TableName": "usage", "Key": {"pk": {"S": "TENANT#acme"}, "sk": {"S": "PERIOD#2026-12"}}}
    for action in ("DeleteItem", "PutItem"):
        (call,) = iam_calls(FUNCTION, "dynamodb", action, ledger_item, {})
        assert not spec.allows(call.action, call.resource, call.context), action
