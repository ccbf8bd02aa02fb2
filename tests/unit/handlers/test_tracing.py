"""The handlers' X-Ray tracer, as it behaves inside Lambda: a fresh process with Lambda's tracing
environment (a task root, the daemon's address, the invocation's trace header) and a stand-in daemon
on a UDP socket. Each kind of call Ragline makes becomes one subsegment of the invocation's trace:
an AWS call once (not again as a bare urllib3 request), the OpenSearch client's urllib3 request and
an httpx2 request (the OpenAI SDK's transport) as remote calls."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from ragline import telemetry
from tests.rehearsal.xray import XRayDaemon, new_trace_header
from tests.support.moto_server import moto_endpoint  # noqa: F401  (fixture)


class Quiet(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def web() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


CALLS = textwrap.dedent(
    """
    import sys
    from ragline import telemetry

    tracer = telemetry.handler_tracer()
    assert not tracer.disabled
    import boto3, httpx2, urllib3

    @tracer.capture_lambda_handler(capture_response=False)
    def handler(event, context):
        s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                          aws_access_key_id="x", aws_secret_access_key="x")
        s3.list_buckets()
        urllib3.PoolManager().request("GET", sys.argv[2] + "/urllib3")
        with httpx2.Client() as client:
            client.get(sys.argv[2] + "/httpx2")
        return {"secret": "tenant text"}

    class Context:
        function_name = "fn"
        aws_request_id = "req"
    handler({}, Context())
    """
)


@pytest.mark.integration  # a moto server, a local web server, a child process
def test_each_call_is_one_subsegment_of_the_invocation_trace(moto_endpoint: str, web: str) -> None:  # noqa: F811
    daemon = XRayDaemon()
    header, trace_id = new_trace_header()
    env = {
        **os.environ,
        "LAMBDA_TASK_ROOT": os.getcwd(),
        "AWS_LAMBDA_FUNCTION_NAME": "fn",
        "AWS_XRAY_DAEMON_ADDRESS": daemon.address,
        "_X_AMZN_TRACE_ID": header,
        "POWERTOOLS_SERVICE_NAME": "ragline",
    }
    env.pop("POWERTOOLS_TRACE_DISABLED", None)
    try:
        done = subprocess.run([sys.executable, "-c", CALLS, moto_endpoint, web], env=env, capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        docs = telemetry_docs(daemon, trace_id)
    finally:
        daemon.close()
    names = sorted((d.get("namespace", "local"), d["name"]) for d in docs)
    assert names == [("aws", "s3"), ("local", "## handler"), ("remote", "127.0.0.1"), ("remote", "127.0.0.1")]
    urls = sorted(d["http"]["request"]["url"] for d in docs if d.get("namespace") == "remote")
    assert urls == [web + "/httpx2", web + "/urllib3"]
    assert "tenant text" not in str(docs), "a handler's response went into the trace"
    handler = next(d for d in docs if d["name"] == "## handler")
    assert handler["annotations"]["ColdStart"] is True


def telemetry_docs(daemon: XRayDaemon, trace_id: str) -> list[dict[str, Any]]:
    """What the daemon received for the trace, once the four documents are in (UDP gives no ack)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(daemon.of_trace({trace_id})) < 4:
        time.sleep(0.05)
    return daemon.of_trace({trace_id})


@pytest.mark.unit
def test_the_chat_app_takes_the_trace_header_the_web_adapter_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(telemetry.TRACE_HEADER_ENV, raising=False)

    async def seen(request: Request) -> PlainTextResponse:
        return PlainTextResponse(os.environ.get(telemetry.TRACE_HEADER_ENV, "-"))

    app = Starlette(routes=[Route("/", seen)], middleware=[Middleware(telemetry.TraceHeaderFromRequest)])
    client = TestClient(app)
    assert client.get("/").text == "-"
    first, _ = new_trace_header()
    second, _ = new_trace_header()
    assert client.get("/", headers={"X-Amzn-Trace-Id": first}).text == first
    assert client.get("/", headers={"x-amzn-trace-id": second}).text == second  # each invocation its own


@pytest.mark.unit
def test_outside_lambda_the_tracer_is_off_and_annotations_are_no_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAMBDA_TASK_ROOT", raising=False)
    tracer = telemetry.handler_tracer()
    assert tracer.disabled
    logger = telemetry.handler_logger()
    telemetry.correlate("run-1", logger, tracer)
    assert logger.get_current_keys()["run_id"] == "run-1"
