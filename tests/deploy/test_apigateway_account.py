"""The custom resource that sets API Gateway's CloudWatch Logs role, run as deployed: the inline code of
the translated template, its UpdateAccount calls made by real botocore to a local server that answers
as API Gateway does while IAM has not propagated the new role (400 ``BadRequestException``), and its
answer PUT to a local pre-signed ``ResponseURL`` in CloudFormation's documented shape."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.deploy

ROLE = "arn:aws:iam::123456789012:role/ragline-prod-ApiGatewayCloudWatchRole-1A2B3C"
NOT_YET = (400, "BadRequestException", "The role ARN does not have required permissions configured.")
SET = (200, "", "")


class Local:
    """API Gateway's ``PATCH /account`` answered from ``script`` (then 200), and the CloudFormation
    response bucket taking the ``PUT``: every request recorded as (method, path, headers, body)."""

    def __init__(self, script: list[tuple[int, str, str]]) -> None:
        self.script, self.requests = list(script), []  # type: list[tuple[str, str, dict[str, str], Any]]
        local = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                local.requests.append(
                    (self.command, self.path, dict(self.headers), json.loads(body or b"{}"))
                )

            def do_PATCH(self) -> None:
                self._record()
                status, code, message = local.script.pop(0) if local.script else SET
                payload = {"message": message} if code else {"cloudwatchRoleArn": ROLE}
                data = json.dumps(payload).encode()
                self.send_response(status)
                if code:
                    self.send_header("x-amzn-ErrorType", code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_PUT(self) -> None:
                self._record()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def calls(self, method: str) -> list[tuple[str, str, dict[str, str], Any]]:
        return [r for r in self.requests if r[0] == method]


class Context:
    """The Lambda context's one method the handler reads."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def get_remaining_time_in_millis(self) -> int:
        return int((self.deadline - time.monotonic()) * 1000)


@pytest.fixture
def handler(translated: dict[str, Any], tmp_path: Path) -> ModuleType:
    """The function's inline code, as the translated template deploys it (``index.handler``)."""
    props = translated["Resources"]["ApiGatewayAccountFunction"]["Properties"]
    assert props["Handler"] == "index.handler" and props["Runtime"] == "python3.12"
    source = tmp_path / "index.py"
    source.write_text(props["Code"]["ZipFile"])
    spec = importlib.util.spec_from_file_location("apigateway_account_index", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def local(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Local]:
    server = Local(getattr(request, "param", []))
    for name, value in {
        "AWS_ENDPOINT_URL_API_GATEWAY": server.url,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    yield server
    server.server.shutdown()


def event(local: Local, kind: str = "Create", **extra: Any) -> dict[str, Any]:
    return {
        "RequestType": kind,
        "ResponseURL": f"{local.url}/cfn-responses/abc?X-Amz-Signature=sig",
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/ragline-prod/6f1c2a30-1111",
        "RequestId": "7bfe2d54-request",
        "ResourceType": "Custom::ApiGatewayAccount",
        "LogicalResourceId": "ApiGatewayAccountSetting",
        "ResourceProperties": {"ServiceToken": "arn:aws:lambda:x", "CloudWatchRoleArn": ROLE},
        **extra,
    }


def answer(local: Local) -> dict[str, Any]:
    """CloudFormation's view: the one PUT to the pre-signed URL (no content type: it is not signed)."""
    ((_, path, headers, body),) = local.calls("PUT")
    assert path == "/cfn-responses/abc?X-Amz-Signature=sig"
    assert headers.get("Content-Type", "") == ""
    return dict(body)


@pytest.mark.parametrize("local", [[NOT_YET, NOT_YET]], indirect=True)
def test_the_role_is_set_once_iam_has_propagated_it(handler: ModuleType, local: Local) -> None:
    # Given API Gateway refusing the new role twice (IAM has not propagated it yet)
    handler.handler(event(local), Context(300))
    # Then the same UpdateAccount is retried until it is taken
    patches = local.calls("PATCH")
    assert [p[1] for p in patches] == ["/account"] * 3
    assert all(
        p[3] == {"patchOperations": [{"op": "replace", "path": "/cloudwatchRoleArn", "value": ROLE}]}
        for p in patches
    )
    assert all(p[2]["Authorization"].startswith("AWS4-HMAC-SHA256") for p in patches)  # signed by botocore
    # and CloudFormation is told it succeeded, in the documented shape
    body = answer(local)
    assert body["Status"] == "SUCCESS" and "attempt 3" in body["Reason"]
    assert {k: body[k] for k in ("StackId", "RequestId", "LogicalResourceId")} == {
        k: event(local)[k] for k in ("StackId", "RequestId", "LogicalResourceId")
    }
    assert body["PhysicalResourceId"] and body["Data"] == {"CloudWatchRoleArn": ROLE}


@pytest.mark.parametrize("local", [[NOT_YET] * 50], indirect=True)
def test_a_role_never_taken_fails_the_stack_with_api_gateways_reason_before_the_timeout(
    handler: ModuleType, local: Local
) -> None:
    # Given a role API Gateway keeps refusing, and 22 s left of the function's time
    started = time.monotonic()
    handler.handler(event(local), Context(22))
    # Then it gives up while it can still answer, and says why
    assert time.monotonic() - started < 5
    body = answer(local)
    assert body["Status"] == "FAILED" and "required permissions" in body["Reason"]
    assert 1 <= len(local.calls("PATCH")) <= 3


@pytest.mark.parametrize("local", [[(404, "NotFoundException", "no such role")]], indirect=True)
def test_an_error_iam_propagation_does_not_explain_fails_at_once(handler: ModuleType, local: Local) -> None:
    handler.handler(event(local), Context(300))
    assert len(local.calls("PATCH")) == 1
    assert answer(local)["Status"] == "FAILED"


def test_an_update_keeps_its_physical_id_and_a_delete_keeps_the_setting(
    handler: ModuleType, local: Local
) -> None:
    # An update with the same physical id (a new id would make CloudFormation delete the old one)
    handler.handler(event(local, "Update", PhysicalResourceId="kept-id"), Context(300))
    assert answer(local)["PhysicalResourceId"] == "kept-id"
    local.requests.clear()
    # A delete (the stack's, or a replacement's) leaves the account setting alone: other APIs use it
    handler.handler(event(local, "Delete", PhysicalResourceId="kept-id"), Context(300))
    assert not local.calls("PATCH")
    assert answer(local)["Status"] == "SUCCESS"


def test_a_malformed_request_is_still_answered(handler: ModuleType, local: Local) -> None:
    """An unanswered request holds the stack until the custom resource's ServiceTimeout."""
    broken = event(local)
    del broken["RequestType"]
    handler.handler(broken, Context(300))
    assert answer(local)["Status"] == "FAILED"
