"""The rehearsal's IAM view of fair sharing: every call the DynamoDB limiter makes for a function is
granted by that function's statements on the usage table in template.yaml — only under ``LIMIT#`` keys
(``dynamodb:LeadingKeys``), never on the ledger's own items. Each function is granted what its own
uses of the limiter need: a request's token and a refusal's count (every API function), a run's slot
(the functions that run searches and chats), the refusals' count read back (the usage view)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ragline.adapters.aws.limits import DynamoDbRateLimiter
from ragline.domain.limits import Bucket, Rate
from tests.rehearsal.cloudformation import FunctionSpec
from tests.rehearsal.iam import calls_from_log, iam_calls, table_arn
from tests.rehearsal.test_rehearsal_checks import recorder
from tests.support.cfn_tables import load_template

pytestmark = pytest.mark.unit
RATE = ("take", "count_refusal")
RUNS = (*RATE, "lease", "release")
USES = {
    "NamespacesFunction": RATE,
    "KeysFunction": (*RATE, "refusals"),
    "SearchFunction": RUNS,
    "HostingSearchFunction": RUNS,
    "DocumentsFunction": RATE,
    "ChatFunction": RUNS,
}
"""Each API function's uses of the limiter (``ragline.services.limits``): which of its calls it makes."""


class Recording:
    """A DynamoDB client that records each call and answers as an empty table would."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, operation: str) -> Any:
        def call(**params: Any) -> dict[str, Any]:
            self.calls.append((operation, params))
            return {"Items": []} if operation == "query" else {}

        return call


def usage_statements(function: str) -> list[dict[str, Any]]:
    """The function's statements on the usage table (``usage`` standing in for its ARN)."""
    policies = load_template()["Resources"][function]["Properties"]["Policies"]
    return [
        {**statement, "Resource": table_arn("usage")}
        for policy in policies
        for statement in (policy.get("Statement", []) if isinstance(policy, dict) else [])
        if statement.get("Resource") == {"Fn::GetAtt": ["UsageTable", "Arn"]}
    ]


def fair_share_statement(function: str) -> dict[str, Any]:
    for statement in usage_statements(function):
        if statement.get("Sid") == "FairShare":
            return statement
    raise AssertionError(f"{function} has no FairShare statement")


def limiter_calls(uses: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
    client = Recording()
    limiter = DynamoDbRateLimiter("usage", client=client)
    bucket = Bucket("acme", "key_1")
    limiter.take(bucket, Rate.of(1, 1))
    if "lease" in uses:
        lease = limiter.lease(bucket, 2, 60)
        assert lease is not None
        limiter.release(bucket, lease)
    limiter.count_refusal("acme", "2026-12")
    if "refusals" in uses:
        limiter.refusals("acme", "2026-12")
    return client.calls


@pytest.mark.parametrize("function", list(USES))
def test_every_call_of_the_limiter_is_granted_to_each_api_function(
    function: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = FunctionSpec(function, "app.h", [], {}, usage_statements(function), 30, 1024, "Active")
    calls = limiter_calls(USES[function])
    log = tmp_path / "calls.jsonl"
    record = recorder(log, monkeypatch)._record  # what the rehearsal's recorder keeps of each call
    for operation, params in calls:
        name = "".join(part.title() for part in operation.split("_"))
        record(SimpleNamespace(name=name, service_model=SimpleNamespace(service_name="dynamodb")), params)
    mapped = calls_from_log(function, log, {})
    assert len(mapped) == len(calls)
    for call in mapped:
        assert spec.allows(call.action, call.resource, call.context), call
        assert dict(call.context)["dynamodb:LeadingKeys"].startswith("LIMIT#"), call


def test_the_limiter_makes_every_call_some_function_is_granted_for() -> None:
    operations = {operation for operation, _ in limiter_calls(("lease", "refusals"))}
    assert operations == {"update_item", "query", "put_item", "delete_item", "get_item"}


def test_the_statement_grants_nothing_on_the_ledgers_items() -> None:
    spec = FunctionSpec(
        "SearchFunction", "app.h", [], {}, [fair_share_statement("SearchFunction")], 30, 1024, ""
    )
    ledger_item = {"TableName": "usage", "Key": {"pk": {"S": "TENANT#acme"}, "sk": {"S": "PERIOD#2026-12"}}}
    (call,) = iam_calls("SearchFunction", "dynamodb", "DeleteItem", ledger_item, {})
    assert not spec.allows(call.action, call.resource, call.context)
    scan = {"TableName": "usage"}  # no partition key named: the condition cannot hold
    (call,) = iam_calls("SearchFunction", "dynamodb", "Scan", scan, {})
    assert not spec.allows("dynamodb:Query", call.resource, call.context)
