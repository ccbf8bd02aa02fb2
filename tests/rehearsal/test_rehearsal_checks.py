"""The rehearsal's own checks, broken on purpose without a full run: the call recorder and the IAM
mapper on every call shape, the route table and the streaming check on a changed API, the created
domain's branch, the log tail in a failed check, and the sandbox (read-only but /tmp, every process
stopped)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from tests.rehearsal.cloudformation import ACCOUNT, REGION, AwsCall, Stack
from tests.rehearsal.host import (
    REHEARSAL,
    TOOLS,
    LambdaFunction,
    TracingTap,
    blame,
    descendants,
    free_port,
    live_processes,
)
from tests.rehearsal.iam import UnmappedCalls, calls_from_log, table_arn
from tests.rehearsal.stack_checks import api_routes, created_domain_stack, event_sources, uncovered

pytestmark = pytest.mark.unit
RECORDER = Path(__file__).with_name("recorder") / "sitecustomize.py"
BUCKET = "arn:aws:s3:::docs"


def recorder(log: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setenv("REHEARSAL_CALL_LOG", str(log))
    meta_path = list(sys.meta_path)
    loader = importlib.machinery.SourceFileLoader("rehearsal_recorder", str(RECORDER))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.meta_path[:] = meta_path  # its import hook is for the function's interpreter, not this one
    return module


def recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: str, op: str, **params: Any
) -> list[AwsCall]:
    """What the recorder writes for one botocore call, through the IAM mapper."""
    log = tmp_path / "calls.jsonl"
    model = SimpleNamespace(name=op, service_model=SimpleNamespace(service_name=service))
    recorder(log, monkeypatch)._record(model, params)
    return calls_from_log("F", log, {})


def test_batch_calls_are_recorded_and_mapped_to_each_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = {"Keys": [{"pk": {"S": "secret-ish"}}]}
    got = recorded(tmp_path, monkeypatch, "dynamodb", "BatchGetItem", RequestItems={"A": keys, "B": keys})
    assert got == [
        AwsCall("F", "dynamodb:BatchGetItem", table_arn("A")),
        AwsCall("F", "dynamodb:BatchGetItem", table_arn("B")),
    ]
    assert "secret-ish" not in (tmp_path / "calls.jsonl").read_text()  # table names only, never items
    (tmp_path / "calls.jsonl").unlink()
    got = recorded(
        tmp_path, monkeypatch, "dynamodb", "BatchWriteItem", RequestItems={"A": [{"PutRequest": {}}]}
    )
    assert got == [AwsCall("F", "dynamodb:BatchWriteItem", table_arn("A"))]


def test_transactions_need_each_item_operation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = [{"Get": {"TableName": "A", "Key": {}}}, {"Get": {"TableName": "B", "Key": {}}}]
    assert recorded(tmp_path, monkeypatch, "dynamodb", "TransactGetItems", TransactItems=items) == [
        AwsCall("F", "dynamodb:GetItem", table_arn("A")),
        AwsCall("F", "dynamodb:GetItem", table_arn("B")),
    ]
    (tmp_path / "calls.jsonl").unlink()
    items = [{"Put": {"TableName": "A", "Item": {}}}, {"ConditionCheck": {"TableName": "B", "Key": {}}}]
    assert recorded(tmp_path, monkeypatch, "dynamodb", "TransactWriteItems", TransactItems=items) == [
        AwsCall("F", "dynamodb:PutItem", table_arn("A")),
        AwsCall("F", "dynamodb:ConditionCheckItem", table_arn("B")),
    ]


def test_a_query_on_an_index_needs_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    got = recorded(tmp_path, monkeypatch, "dynamodb", "Query", TableName="A", IndexName="by-key")
    assert got == [
        AwsCall("F", "dynamodb:Query", f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/A/index/by-key")
    ]


@pytest.mark.parametrize(
    ("operation", "params", "expected"),
    [
        ("GetObject", {"Key": "k"}, [("s3:GetObject", f"{BUCKET}/k")]),
        ("GetObject", {"Key": "k", "VersionId": "v"}, [("s3:GetObjectVersion", f"{BUCKET}/k")]),
        ("HeadObject", {"Key": "k"}, [("s3:GetObject", f"{BUCKET}/k")]),
        ("ListObjectsV2", {}, [("s3:ListBucket", BUCKET)]),
        ("ListObjectVersions", {}, [("s3:ListBucketVersions", BUCKET)]),
        (
            "DeleteObjects",
            {"Delete": {"Objects": [{"Key": "a"}, {"Key": "b", "VersionId": "v"}]}},
            [("s3:DeleteObject", f"{BUCKET}/a"), ("s3:DeleteObjectVersion", f"{BUCKET}/b")],
        ),
    ],
)
def test_s3_calls_map_to_their_iam_actions(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    operation: str,
    params: dict[str, Any],
    expected: list[tuple[str, str]],
) -> None:
    got = recorded(tmp_path, monkeypatch, "s3", operation, Bucket="docs", **params)
    assert [(c.action, c.resource) for c in got] == expected


@pytest.mark.parametrize(
    ("service", "operation"), [("sqs", "SendMessage"), ("dynamodb", "ExecuteStatement"), ("s3", "CopyObject")]
)
def test_an_operation_the_mapper_does_not_know_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: str, operation: str
) -> None:
    with pytest.raises(UnmappedCalls, match=f"{service}:{operation}"):
        recorded(tmp_path, monkeypatch, service, operation, TableName="A", Bucket="docs", Key="k")


def api(**paths: dict[str, str]) -> dict[str, Any]:
    """A translated template whose API has these paths: method → the function's integration URI."""
    body = {
        path: {m: {"x-amazon-apigateway-integration": {"uri": {"Fn::Sub": uri}}} for m, uri in ops.items()}
        for path, ops in paths.items()
    }
    queue = {"Type": "AWS::SQS::Queue", "Properties": {}}
    mapping = {
        "Type": "AWS::Lambda::EventSourceMapping",
        "Properties": {
            "EventSourceArn": {"Fn::GetAtt": ["Q", "Arn"]},
            "FunctionName": {"Ref": "IngestFnAliaslive"},
        },
    }
    api_resource = {"Type": "AWS::ApiGateway::RestApi", "Properties": {"Body": {"paths": body}}}
    return {"Resources": {"RaglineApi": api_resource, "Q": queue, "M": mapping}}


LAMBDA = "arn:aws:apigateway:${AWS::Region}:lambda:path"
PLAIN = f"{LAMBDA}/2015-03-31/functions/${{SearchFnAliaslive}}/invocations"
STREAM = f"{LAMBDA}/2021-11-15/functions/${{ChatFn.Arn}}/response-streaming-invocations"


def test_routes_are_read_with_their_function_and_whether_they_stream() -> None:
    routes = api_routes(api(**{"/v1/chat": {"post": STREAM}, "/v1/search": {"post": PLAIN, "get": PLAIN}}))
    assert {k: (r.function, r.streams) for k, r in routes.items()} == {
        ("POST", "/v1/chat"): ("ChatFn", True),
        ("POST", "/v1/search"): ("SearchFn", False),
        ("GET", "/v1/search"): ("SearchFn", False),
    }
    # Streaming moved from chat to search: the whole-body substring still matches, the routes do not.
    moved = api_routes(
        api(**{"/v1/chat": {"post": PLAIN.replace("SearchFn", "ChatFn")}, "/v1/search": {"post": STREAM}})
    )
    assert "response-streaming-invocations" in json.dumps(api(**{"/v1/search": {"post": STREAM}}))
    assert {k: r.function for k, r in moved.items() if r.streams} == {("POST", "/v1/search"): "ChatFn"}


def test_a_route_or_source_without_a_rehearsal_step_is_listed() -> None:
    template = api(**{"/v1/chat": {"post": STREAM}, "/v1/new": {"delete": PLAIN}})
    table = {("POST", "/v1/chat"): "chat", ("GET", "/v1/gone"): "old step"}
    assert uncovered(table, api_routes(template)) == [
        "('DELETE', '/v1/new'): in the template, no rehearsal step calls it",
        "('GET', '/v1/gone'): in the rehearsal's table, not in the template",
    ]
    assert event_sources(template) == {"sqs:Q": "IngestFn"}
    assert uncovered({}, event_sources(template)) == ["sqs:Q: in the template, no rehearsal step calls it"]


def test_the_created_domain_branch_resolves_against_the_domain_it_creates() -> None:
    statement = {
        "Effect": "Allow",
        "Action": "es:ESHttpGet",
        "Resource": {
            "Fn::If": [
                "CreateOpenSearchDomain",
                {"Fn::Sub": "${OpenSearchDomain.Arn}/*"},
                {"Fn::Sub": "${ExistingOpenSearchDomainArn}/*"},
            ]
        },
    }
    url = {
        "Fn::If": [
            "CreateOpenSearchDomain",
            {"Fn::Sub": "https://${OpenSearchDomain.DomainEndpoint}"},
            {"Ref": "OpenSearchEndpoint"},
        ]
    }
    template = {
        "Parameters": {
            "OpenSearchEndpoint": {"Default": ""},
            "ExistingOpenSearchDomainArn": {"Default": ""},
            "Stage": {"Default": "dev"},
        },
        "Conditions": {"CreateOpenSearchDomain": {"Fn::Equals": [{"Ref": "OpenSearchEndpoint"}, ""]}},
        "Resources": {
            "OpenSearchDomain": {"Properties": {"DomainName": {"Fn::Sub": "ragline-${Stage}"}}},
            "Fn": {
                "Properties": {
                    "Handler": "app.h",
                    "Role": {"Fn::GetAtt": ["Role", "Arn"]},
                    "Environment": {"Variables": {"URL": url}},
                }
            },
            "Role": {"Properties": {"Policies": [{"PolicyDocument": {"Statement": [statement]}}]}},
        },
    }
    existing = Stack(
        template,
        {"OpenSearchEndpoint": "http://x", "ExistingOpenSearchDomainArn": "arn:aws:es:r:a:domain/old"},
        {},
    )
    assert existing.function("Fn").environment == {"URL": "http://x"}
    stack, arn = created_domain_stack(existing)
    assert arn == f"arn:aws:es:{REGION}:{ACCOUNT}:domain/ragline-dev"
    spec = stack.function("Fn")
    assert spec.environment == {"URL": f"https://search-ragline-dev-rehearsal.{REGION}.es.amazonaws.com"}
    assert spec.allows("es:ESHttpGet", f"{arn}/rh-chunks/_search")
    assert not spec.allows("es:ESHttpGet", "arn:aws:es:r:a:domain/old/rh-chunks/_search")


class Invoked:
    """A function as :func:`blame` sees it: a name, when it was last invoked, its log."""

    def __init__(self, name: str, at: float) -> None:
        self.name, self.last_invoked = name, at

    def log_tail(self, lines: int = 40) -> str:
        return f"{self.name}: run.sh: line 3: exec: uvicorn: not found"


def shown(failed: pytest.ExceptionInfo[AssertionError]) -> list[str]:
    """Whose logs a failed assertion carries, in order."""
    return re.findall(r"--- (\w+)'s log, last lines ---", str(failed.value))


FUNCTIONS = [Invoked("SearchFunction", 1.0), Invoked("NamespacesFunction", 2.0), Invoked("ChatFunction", 3.0)]


def test_a_failed_step_carries_the_log_of_the_function_invoked_last() -> None:
    with pytest.raises(AssertionError) as failed, blame(FUNCTIONS):
        status = 502
        assert status == 200
    assert shown(failed) == ["ChatFunction"] and "uvicorn: not found" in str(failed.value)


def test_a_failed_check_carries_the_log_of_the_function_it_names_not_the_last_one() -> None:
    # Given a check after the scenario that catches an earlier function (an action outside its role)
    denied = [("SearchFunction", "dynamodb:Scan", "arn:aws:dynamodb:us-east-1:1:table/t")]
    with pytest.raises(AssertionError) as failed, blame(FUNCTIONS):
        assert not denied, f"actions outside the roles: {denied}"
    # Then the log shown is the search function's, though chat ran last
    assert shown(failed) == ["SearchFunction"]


def test_a_failed_step_carries_the_log_of_the_function_the_step_checks() -> None:
    def reindex_step() -> None:  # a step that checks one function, though another ran after it
        fn = "NamespacesFunction"
        answers = {fn: {"state": "failed"}}  # then the ingestion function ran the steps
        assert answers[fn]["state"] == "done", answers[fn]

    with pytest.raises(AssertionError) as failed, blame(FUNCTIONS):
        reindex_step()
    assert shown(failed) == ["NamespacesFunction"]


def test_nothing_invoked_leaves_the_assertion_as_it_was() -> None:
    with pytest.raises(AssertionError) as failed, blame([Invoked("ChatFunction", 0.0)]):
        raise AssertionError("no route table")
    assert str(failed.value) == "no route table"


# -- the sandbox itself: root, the tools of infra/rehearsal/build-tools ----------------------------
@pytest.fixture(scope="module")
def sandbox_tools() -> None:
    """The rehearsal's tools, built once (cached) as the rehearsal builds them: these checks never skip."""
    assert os.geteuid() == 0, "the Lambda sandbox needs root (private mount namespaces)"
    subprocess.run([str(REHEARSAL / "build-tools")], check=True, capture_output=True)
    assert (TOOLS / "py312" / "bin" / "python3.12").exists() and (TOOLS / "bin" / "aws-lambda-rie").exists()


needs_sandbox = pytest.mark.usefixtures("sandbox_tools")
WRITES = """
import pathlib, sys
for path in sys.argv[1:]:
    try:
        pathlib.Path(path).write_text("x")
        print("wrote", path)
    except OSError as exc:
        print("refused", path, exc.strerror)
"""


@needs_sandbox
def test_only_tmp_is_writable_in_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "task").mkdir()
    (tmp_path / "logs").mkdir()
    paths = [
        "/tmp/x",
        "/var/rehearsal/logs/x",
        "/var/cache/x",
        "/var/ragline",
        "/var/task/x",
        "/opt/x",
        "/root/x",
        "/etc/x",
        "/usr/x",
        "/dev/shm/x",
        f"{REHEARSAL}/x",
    ]
    cmd = [
        str(REHEARSAL / "lambda-sandbox"),
        "--task",
        str(tmp_path / "task"),
        "--rw-bind",
        f"{tmp_path / 'logs'}:/var/rehearsal/logs",
    ]
    done = subprocess.run(
        [*cmd, "--", "python3.12", "-c", WRITES, *paths], capture_output=True, text=True, check=True
    )
    # A checkout under the host's /tmp is hidden by the sandbox's own /tmp (no such file): refused too.
    hidden = "No such file or directory" if str(REHEARSAL).startswith("/tmp/") else "Read-only file system"
    assert done.stdout.splitlines() == ["wrote /tmp/x", "wrote /var/rehearsal/logs/x"] + [
        f"refused {p} Read-only file system" for p in paths[2:-1]
    ] + [f"refused {paths[-1]} {hidden}"], done.stdout + done.stderr


SPAWNS = """
import signal, subprocess
def lambda_handler(event, context):
    ignore_term = lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "300"], preexec_fn=ignore_term)
    return {"child": child.pid}
"""


@needs_sandbox
def test_stopping_a_function_stops_every_process_it_started(tmp_path: Path) -> None:
    task = tmp_path / "task"
    task.mkdir()
    (task / "app.py").write_text(SPAWNS)
    before = descendants(os.getpid())
    runtime, tap = REHEARSAL / "runtime" / "python3.12", TracingTap(free_port())
    fn = LambdaFunction(
        "Spawner", task=task, layers=[], handler="app.lambda_handler", env={}, runtime=runtime,
        log=tmp_path / "Spawner.log", tap=tap,
    )  # fmt: skip
    try:
        child = fn.invoke_json({})["child"]
        assert child in descendants(fn.proc.pid), "the handler's child that ignores SIGTERM"
    finally:
        fn.stop()
        fn.tap.close()
    assert child not in live_processes() and fn.proc.pid not in live_processes()
    assert not descendants(os.getpid()) - before
