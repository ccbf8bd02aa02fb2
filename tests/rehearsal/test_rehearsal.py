"""The deploy rehearsal: the built artifacts (``infra/sam/build`` for this host's architecture) run as
Lambda runs them, configured exactly as the translated template says, driven like a user.

Every zip function runs under the real Runtime Interface Emulator with awslambdaric on python3.12 in a
read-only task directory with the layer on /opt; chat runs under the real Lambda Web Adapter started
through ``run.sh``. AWS calls go to moto, Bedrock calls to the local Bedrock server, OpenSearch calls —
only if SigV4-signed — through a recording proxy to the local node. The whole scenario runs once per
chat provider: Bedrock (Converse, the template's default; a cross-Region inference profile) and an
OpenAI-compatible endpoint (the replay server, its key in Secrets Manager). Then every AWS action
each function performed is checked against its role in the template.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import boto3
import httpx
import pytest

from tests.rehearsal.cloudformation import ACCOUNT, REGION, AwsCall, Stack
from tests.rehearsal.host import (
    ROOT,
    SANDBOX_LOGS,
    TOOLS,
    LambdaFunction,
    TracingTap,
    blame_last,
    descendants,
    free_port,
    runtime_with_recorder,
    split_stream,
    wait_until,
)
from tests.rehearsal.iam import calls_from_log, opensearch_call
from tests.rehearsal.s3_gate import S3Gate
from tests.rehearsal.signed_proxy import SignedProxy
from tests.rehearsal.stack_checks import api_routes, created_domain_stack, event_sources, uncovered
from tests.rehearsal.xray import XRayDaemon
from tests.support.bedrock_server import BedrockServer
from tests.support.cfn_tables import create_table_from_template
from tests.support.lambda_harness import path_parameters
from tests.support.model_endpoints import converse_turn
from tests.support.openai_replay import OpenAIReplay, Turn, text, tool_call

pytestmark = [pytest.mark.rehearsal, pytest.mark.opensearch]
ARCH = {"x86_64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
DOMAIN_ARN = f"arn:aws:es:{REGION}:{ACCOUNT}:domain/rehearsal"
FUNCTIONS = (
    "AuthorizerFunction",
    "NamespacesFunction",
    "KeysFunction",
    "SearchFunction",
    "HostingSearchFunction",
    "DocumentsFunction",
    "IngestionFunction",
    "ChatFunction",
)
TRACED = tuple(fn for fn in FUNCTIONS if fn != "AuthorizerFunction")
"""The functions with Powertools Tracer; the authorizer has the platform's segments alone (cold start)."""
BEDROCK_CHAT_MODEL = "us.amazon.nova-pro-v1:0"
HOSTING_EXITS = {"can_answer", "token_budget", "max_evals", "no_new_queries", "error"}
NS = "/v1/namespaces/{namespace}"
DOCS = f"{NS}/documents"
DOC = f"{DOCS}/{{document_id}}"
ROUTES = {
    ("POST", "/v1/namespaces"): "the scenario's start",
    ("GET", "/v1/namespaces"): "namespace_lifecycle",
    ("GET", NS): "namespace_lifecycle",
    ("PATCH", NS): "namespace_lifecycle",
    ("DELETE", NS): "namespace_lifecycle",
    ("GET", "/v1/keys"): "key_lifecycle",
    ("POST", "/v1/keys"): "key_lifecycle",
    ("DELETE", "/v1/keys/{key_id}"): "key_lifecycle",
    ("GET", "/v1/usage"): "runs_charged",
    ("POST", "/v1/namespaces/{namespace}/search"): "the scenario's search",
    ("POST", "/v1/hosting-search"): "hosting_search",
    ("GET", DOCS): "ingest_from_s3",
    ("POST", DOCS): "document_writes",
    ("GET", DOC): "document_writes",
    ("DELETE", DOC): "document_writes",
    ("POST", "/v1/chat"): "chat_streams, chat_agents",
}
"""Every API route → the scenario step that calls it through the built stack; checked against the
translated template both ways (a new route without a step fails), and every route is called in
each provider's run."""
EVENT_SOURCES = {"sqs:IngestQueue": "ingest_from_s3"}
"""Every event source mapping → the step that delivers its events."""


@dataclass
class Artifacts:
    build: Path
    translated: dict[str, Any]
    runtime: Path
    logs: Path


@pytest.fixture(scope="module")
def artifacts() -> Artifacts:
    subprocess.run([str(ROOT / "infra" / "rehearsal" / "build-tools")], check=True, capture_output=True)
    out = subprocess.run(
        ["infra/sam/build", ARCH], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    build = ROOT / out
    translated_path = build / "translated.json"
    env = {**os.environ, "AWS_DEFAULT_REGION": REGION, "HOME": str(ROOT / "infra/sam/.venv/sam-home")}
    subprocess.run(
        [
            str(ROOT / "infra/sam/.venv/bin/python"),
            str(ROOT / "infra/sam/translate_check.py"),
            str(build / "template.yaml"),
            "--emit",
            str(translated_path),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env=env,
    )
    logs = ROOT / ".aws-sam" / "rehearsal-logs"  # on the host's disk: /tmp is private to each function
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    runtime = runtime_with_recorder(ROOT / ".aws-sam" / "rehearsal-runtime")
    return Artifacts(build, json.loads(translated_path.read_text()), runtime, logs)


class ChatScript:
    """The chat model's scripted turns, written once in the replay's terms and played by the model the
    stack is deployed with: the Bedrock server (Converse, the template's default) or the replay server."""

    def __init__(self, provider: str, bedrock: BedrockServer, llm: OpenAIReplay) -> None:
        self.provider, self.bedrock, self.llm = provider, bedrock, llm

    def script(self, turns: list[Turn]) -> None:
        if self.provider == "bedrock":
            self.bedrock.script_converse([c for t in turns for c in converse_turn(t)])
        else:
            self.llm.script(turns)

    @property
    def remaining(self) -> list[Any]:
        return self.bedrock.converse_remaining if self.provider == "bedrock" else self.llm.remaining


class World:
    """The stand-ins for the stack's AWS resources, and the functions running against them."""

    def __init__(
        self,
        art: Artifacts,
        moto: str,
        proxy_url: str,
        bedrock: BedrockServer,
        llm: OpenAIReplay,
        provider: str,
    ) -> None:
        self.art, self.moto, self.proxy_url, self.provider = art, moto, proxy_url, provider
        for log in art.logs.iterdir():  # another world's calls and logs are not this stack's
            log.unlink()
        self.model = ChatScript(provider, bedrock, llm)
        session = boto3.session.Session(region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
        self.s3, self.sqs = session.client("s3", endpoint_url=moto), session.client("sqs", endpoint_url=moto)
        ddb = session.client("dynamodb", endpoint_url=moto)
        secrets = session.client("secretsmanager", endpoint_url=moto)
        self.suffix = suffix = uuid.uuid4().hex[:8]
        tables = {t: f"rh-{t.lower()}-{suffix}" for t in ("TenantsTable", "UsageTable", "DocumentsTable")}
        for logical, name in tables.items():
            create_table_from_template(ddb, logical, name)
        self.bucket = f"rh-docs-{suffix}"
        self.s3.create_bucket(Bucket=self.bucket)
        self.queue_url = self.sqs.create_queue(QueueName=f"rh-ingest-{suffix}")["QueueUrl"]
        queue_arn = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])
        self.s3.put_bucket_notification_configuration(
            Bucket=self.bucket,
            NotificationConfiguration={
                "QueueConfigurations": [
                    {
                        "QueueArn": queue_arn["Attributes"]["QueueArn"],
                        "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"],  # as the template's
                    }
                ]
            },
        )
        self.secret_arn = secrets.create_secret(Name=f"ragline/rh-{suffix}", SecretString="sk-rehearsal")[
            "ARN"
        ]
        layer = next(k for k in art.translated["Resources"] if k.startswith("RaglineLayer"))
        refs = {**tables, "DocumentsBucket": self.bucket, "LlmApiKeySecret": self.secret_arn, layer: layer}
        attrs = {f"{t}.Arn": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{n}" for t, n in tables.items()}
        params = {
            "OpenSearchEndpoint": proxy_url,
            "ExistingOpenSearchDomainArn": DOMAIN_ARN,
            "LlmBaseUrl": llm.base_url,
            "ChatProvider": provider,
            # a cross-Region profile: the roles must allow it and the models it routes to
            "BedrockChatModel": BEDROCK_CHAT_MODEL,
        }
        self.stack = Stack(art.translated, params, refs, attrs)
        self.layer_logical = layer
        self.tables, self.bedrock, self.llm = tables, bedrock, llm
        self.running: dict[str, LambdaFunction] = {}
        self.routes = api_routes(art.translated)
        self.sources = event_sources(art.translated)
        self.called: set[tuple[str, str]] = set()
        """The API routes (METHOD, resource) invoked through the stack."""
        self.delivered: set[str] = set()
        """The event sources whose events the stack's functions were given."""
        self.keys = {fn: f"AKIARH{i:02d}{suffix.upper()}" for i, fn in enumerate(FUNCTIONS)}
        self.taps: dict[str, TracingTap] = {}
        self.xray = XRayDaemon()
        self.s3_gate = S3Gate(moto, self.may_list)  # S3's 403 for a missing key, which moto never gives
        self.s3_url = self.s3_gate.start()

    def may_list(self, access_key: str, bucket: str) -> bool:
        fn = next((f for f, key in self.keys.items() if key == access_key), None)
        return fn is None or self.stack.function(fn).allows("s3:ListBucket", f"arn:aws:s3:::{bucket}")

    def layers(self, spec_layers: list[str]) -> list[Path]:
        out = []
        for ref in spec_layers:
            if ref == self.layer_logical:
                out.append(self.art.build / "RaglineLayer")
            elif re.search(r":layer:LambdaAdapterLayer(Arm64|X86)?:\d+$", ref) and f":{REGION}:" in ref:
                out.append(TOOLS / "lwa-layer")  # the crate built by build-tools, laid out as AWS's layer
            else:
                raise AssertionError(f"the rehearsal has no stand-in for layer {ref}")
        return out

    def start(self, fn: str) -> LambdaFunction:
        """The function's running instance (a warm one, as Lambda reuses it), started if need be."""
        if fn in self.running:
            return self.running[fn]
        spec = self.stack.function(fn)
        env = {
            **spec.environment,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ACCESS_KEY_ID": self.keys[fn],
            "AWS_SECRET_ACCESS_KEY": "rehearsal",
            "AWS_ENDPOINT_URL": self.moto,
            "AWS_ENDPOINT_URL_S3": self.s3_url,
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.bedrock.url,
            "AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME": self.bedrock.url,
            "AWS_LAMBDA_FUNCTION_TIMEOUT": str(spec.timeout),
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory),
            "AWS_XRAY_DAEMON_ADDRESS": self.xray.address,  # Lambda's own variable, for active tracing
            "REHEARSAL_CALL_LOG": f"{SANDBOX_LOGS}/{fn}.jsonl",
            # The one setting not from the template: this run's own indexes on the shared local node,
            # so another test's documents never rank in its searches (nor its in theirs).
            "RAGLINE_OPENSEARCH_INDEX_PREFIX": f"rh-{self.suffix}",
        }
        tap = self.taps[fn] = TracingTap(free_port())  # the runtime's way to the RIE's Runtime API
        if spec.handler == "run.sh":
            port = str(free_port())  # the template's 8080, but rehearsals may run side by side
            env.update(PORT=port, AWS_LWA_PORT=port)
            env["AWS_LWA_LAMBDA_RUNTIME_API_PROXY"] = f"127.0.0.1:{tap.port}"
        else:
            env["REHEARSAL_RUNTIME_API"] = f"127.0.0.1:{tap.port}"  # read by the recorder's sitecustomize
        task = self.art.build / fn
        self.running[fn] = LambdaFunction(
            fn,
            task=task,
            layers=self.layers(spec.layers),
            handler=spec.handler,
            env=env,
            runtime=self.art.runtime,
            log=self.art.logs / f"{fn}.log",
            tap=tap,
        )
        return self.running[fn]

    def aws_calls(self, proxy: SignedProxy) -> list[AwsCall]:
        by_key = {key: fn for fn, key in self.keys.items()}
        out = [
            c
            for fn in self.running
            for c in calls_from_log(fn, self.art.logs / f"{fn}.jsonl", {self.secret_arn: self.secret_arn})
        ]
        out += [opensearch_call(by_key[key], m, p, DOMAIN_ARN) for key, m, p in proxy.calls if key in by_key]
        return out

    def api(self, fn: str, event: dict[str, Any]) -> tuple[int, bytes]:
        """API Gateway's invocation of ``fn`` for the REST ``event``: the route must be the template's
        and reach ``fn`` there (the rehearsal cannot call a route through a function it is not wired to)."""
        route = (event["httpMethod"], event["resource"])
        assert route in self.routes, f"{route}: no such route in the translated template"
        assert self.routes[route].function == fn, f"{route} reaches {self.routes[route].function}, not {fn}"
        self.called.add(route)
        return self.start(fn).invoke(event)

    def deliver(self, source: str, event: dict[str, Any]) -> Any:
        """The event source mapping's invocation of its function (the template's) with ``event``."""
        assert source in self.sources, f"{source}: no such event source in the translated template"
        self.delivered.add(source)
        return self.start(self.sources[source]).invoke_json(event)

    def stop(self) -> None:
        """Stops every function, tap and the daemon, also when one of them fails to stop."""
        failures = []
        for closable in [*(f.stop for f in self.running.values()), *(t.close for t in self.taps.values())]:
            try:
                closable()
            except Exception as exc:  # the others must still stop; the first failure is raised below
                failures.append(exc)
        self.xray.close()
        self.s3_gate.stop()
        if failures:
            raise failures[0]


@pytest.fixture(scope="module", params=["bedrock", "openai"])
def world(
    request: pytest.FixtureRequest,
    artifacts: Artifacts,
    moto_endpoint: str,
    opensearch_url: str,
    bedrock_server_session: BedrockServer,
    openai_replay_server: OpenAIReplay,
) -> Iterator[tuple[World, SignedProxy]]:
    """The stack as deployed with each chat provider: Bedrock (the template's default) and an
    OpenAI-compatible endpoint with its key in Secrets Manager."""
    before = descendants(os.getpid())
    proxy = SignedProxy(opensearch_url)
    w = World(
        artifacts, moto_endpoint, proxy.start(), bedrock_server_session, openai_replay_server, request.param
    )
    try:
        yield w, proxy
    finally:
        try:
            w.stop()
        finally:
            proxy.stop()
            httpx.delete(f"{opensearch_url}/rh-{w.suffix}*", params={"expand_wildcards": "all"}, timeout=30)
        # Processes stopped on every path: nothing the world started outlives it.
        gone = wait_until(lambda: not (descendants(os.getpid()) - before), timeout=5)
        assert gone, (
            f"processes left running after the world stopped: {commands(descendants(os.getpid()) - before)}"
        )


def rest_event(
    method: str,
    path: str,
    resource: str,
    context: dict[str, Any],
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    params = path_parameters(resource, path)
    sent = {"Content-Type": "application/json", "Host": "api.rehearsal.test", **(headers or {})}
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": sent,
        "multiValueHeaders": {k: [v] for k, v in sent.items()},
        "queryStringParameters": None,
        "pathParameters": params or None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": method,
            "path": f"/dev{path}",
            "stage": "dev",
            "requestId": uuid.uuid4().hex,
            "accountId": ACCOUNT,
            "authorizer": context,
            "identity": {"sourceIp": "127.0.0.1"},
            "requestTimeEpoch": int(time.time() * 1000),
        },
        "body": None if body is None else json.dumps(body),
        "isBase64Encoded": False,
    }


def answer(result: dict[str, Any]) -> tuple[int, Any]:
    return result["statusCode"], json.loads(result.get("body") or "null")


def cli(world: World, *args: str) -> str:
    env = {
        **os.environ,
        "RAGLINE_BACKEND": "aws",
        "AWS_ENDPOINT_URL": world.moto,
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "operator",
        "AWS_SECRET_ACCESS_KEY": "operator",
        "RAGLINE_TENANTS_TABLE": world.tables["TenantsTable"],
        "RAGLINE_USAGE_TABLE": world.tables["UsageTable"],
        "RAGLINE_DOCUMENTS_TABLE": world.tables["DocumentsTable"],
        "RAGLINE_DOCUMENTS_BUCKET": world.bucket,
    }
    done = subprocess.run(
        [str(ROOT / ".venv/bin/ragline"), *args], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def commands(pids: set[int]) -> list[str]:
    out = []
    for pid in sorted(pids):
        try:
            out.append(f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            out.append(f"{pid}: (gone)")
    return out


def call(
    w: World,
    fn: str,
    method: str,
    path: str,
    resource: str,
    ctx: dict[str, Any],
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """One API request through the function the template routes it to: (status, JSON body)."""
    status, raw = w.api(fn, rest_event(method, path, resource, ctx, body, headers))
    result = json.loads(raw or b"null")
    if status != 200 or (isinstance(result, dict) and "errorType" in result):
        raise AssertionError(f"{fn} failed: HTTP {status} {raw[:500]!r}")
    return result["statusCode"], json.loads(result.get("body") or "null")


def bootstrap_tenant(w: World) -> dict[str, Any]:
    """The operator's CLI makes a tenant and its admin key; the authorizer turns the key into a context."""
    cli(w, "tenants", "create", "acme", "--quota", "50")
    return key_context(w, "chat,search,ingest,admin", "POST/v1/namespaces")


def key_context(w: World, scopes: str, route: str) -> dict[str, Any]:
    """A new key of the tenant with these scopes, as the authorizer's context for ``route``."""
    created = cli(w, "keys", "create", "--tenant", "acme", "--scopes", scopes)
    key = re.search(r"rl_[A-Za-z0-9_-]{40,}", created)
    assert key, created
    arn = f"arn:aws:execute-api:{REGION}:{ACCOUNT}:api/dev/{route}"
    event = {"type": "REQUEST", "methodArn": arn, "headers": {"Authorization": f"Bearer {key.group(0)}"}}
    policy = w.start("AuthorizerFunction").invoke_json(event)
    assert policy["context"]["tenantId"] == "acme"
    assert policy["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    return dict(policy["context"])


def deliver_s3_events(w: World) -> None:
    """S3's messages on the queue, as the ingestion function's SQS event: none may fail."""
    messages: list[dict[str, Any]] = []
    for _ in range(20):
        got = w.sqs.receive_message(QueueUrl=w.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        messages += [m for m in got.get("Messages", []) if "Records" in json.loads(m["Body"])]
        if messages:
            break
    assert messages, "S3 sent no notification to the queue"
    source = {"eventSource": "aws:sqs", "eventSourceARN": f"arn:aws:sqs:{REGION}:{ACCOUNT}:ingest"}
    records = [
        {"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
         "attributes": {}, "messageAttributes": {}, "md5OfBody": m["MD5OfBody"], **source}
        for m in messages
    ]  # fmt: skip
    assert w.deliver("sqs:IngestQueue", {"Records": records}) == {"batchItemFailures": []}


def ingest_from_s3(w: World, ctx: dict[str, Any]) -> None:
    """A file lands in S3; S3's message on the queue is the ingestion function's SQS event."""
    faq = (ROOT / "samples/northwind/faq.txt").read_bytes()
    w.s3.put_object(Bucket=w.bucket, Key="acme/docs/faq.txt", Body=faq)
    deliver_s3_events(w)
    docs = "/v1/namespaces/{namespace}/documents"
    status, listing = call(w, "DocumentsFunction", "GET", "/v1/namespaces/docs/documents", docs, ctx)
    assert status == 200
    assert [(d["documentId"], d["status"]) for d in listing["documents"]] == [("faq.txt", "ready")]


def delete_from_s3(w: World, ctx: dict[str, Any]) -> None:
    """A file deleted through the API: its object goes, and S3's ObjectRemoved event finds the key gone
    (S3 says 404 only to a role that may list the bucket; 403 would fail the message to the DLQ)."""
    w.s3.put_object(Bucket=w.bucket, Key="acme/docs/gone.txt", Body=b"Gift cards never expire.")
    deliver_s3_events(w)
    route, path = (
        "/v1/namespaces/{namespace}/documents/{document_id}",
        "/v1/namespaces/docs/documents/gone.txt",
    )
    status, body = call(w, "DocumentsFunction", "DELETE", path, route, ctx)
    assert (status, body["status"]) == (202, "deleting"), body
    deliver_s3_events(w)
    status, body = call(w, "DocumentsFunction", "GET", path, route, ctx)
    assert status == 200 and body["status"] == "deleted", body


def chat_streams(w: World, ctx: dict[str, Any]) -> None:
    """Chat through the real Web Adapter: the answer leaves the app while the run goes on."""
    w.model.script(
        [
            tool_call("search", {"query": "return a used bike"}),
            text("Used bikes ", "can be returned ", '<citation ids="faq.txt#0"/>', delay_s=0.4),
        ]
    )
    question = {
        "messages": [{"role": "user", "content": "Can I return a used bike?"}],
        "namespaces": ["docs"],
    }
    status_code, raw = w.api("ChatFunction", rest_event("POST", "/v1/chat", "/v1/chat", ctx, question))
    prelude, payload = split_stream(raw)
    assert status_code == 200 and prelude and prelude.get("statusCode") == 200, raw[:300]
    events = [block for block in payload.decode().split("\n\n") if block.strip()]
    kinds = [block.split("\n", 1)[0].removeprefix("event: ") for block in events]
    assert kinds[-1] == "final" and "text" in kinds and "sources" in kinds, kinds
    final = json.loads(events[-1].split("data: ", 1)[1])
    assert final["exitReason"] == "answered" and "faq.txt#0" in final["answer"]
    posts = w.taps["ChatFunction"].response_posts()
    assert posts, "the adapter never posted a response"
    first_text = next(t for t, data in posts[-1] if b"event: text" in data)
    final_at = next(t for t, data in posts[-1] if b"event: final" in data)
    assert final_at - first_text >= 0.3, "the first text event did not leave before the run ended"


def chat_agents(w: World, ctx: dict[str, Any]) -> None:
    """``agent: auto`` with no namespaces, as JSON: the collection router takes the tenant's only
    namespace without a model call, the RAG router (the chat model) picks ``deep_search``, which
    decomposes, searches, filters, reflects and answers with a verified citation; charged once."""
    before = runs_charged(w, ctx)
    w.model.script(
        [
            text("<think>two parts</think>2"),
            text(json.dumps({"subQueries": ["return a used bike"]})),
            text(json.dumps({"relevant": ["faq.txt#0"]})),
            text(json.dumps({"gapQueries": []})),
            text('Used bikes can be returned <citation ids="faq.txt#0"/>.'),
        ]
    )
    question = {"messages": [{"role": "user", "content": "Can I return a used bike?"}], "agent": "auto",
                "stream": False}  # fmt: skip
    status_code, raw = w.api("ChatFunction", rest_event("POST", "/v1/chat", "/v1/chat", ctx, question))
    prelude, payload = split_stream(raw)
    assert status_code == 200 and prelude and prelude.get("statusCode") == 200, raw[:300]
    body = json.loads(payload)
    assert body["collections"]["namespaces"] == ["docs"], body
    assert body["route"] == {"type": "route", "agent": "deep_search", "reason": ANY, "fallback": False}, body
    assert body["exitReason"] == "answered" and [s["id"] for s in body["sources"]] == ["faq.txt#0"], body
    assert [s["label"] for s in body["steps"] if s["type"] == "tool_start"] == ["return a used bike"], body
    assert not w.model.remaining, "the router and deep_search did not make their five model calls"
    assert runs_charged(w, ctx) == before + 1


def runs_charged(w: World, ctx: dict[str, Any]) -> int:
    status, usage = call(w, "KeysFunction", "GET", "/v1/usage", "/v1/usage", ctx)
    assert status == 200, usage
    return int(usage["runs"])


def hosting_search(w: World, admin: dict[str, Any]) -> None:
    """Hosting search with a search-only key: the planner (the chat model) proposes a query and judges
    the pool, Bedrock reranks it; charged once, also when retried with its Idempotency-Key; a body
    with an unknown field is a 400 in the one error shape, before any work."""
    ctx = key_context(w, "search", "POST/v1/hosting-search")
    before = runs_charged(w, admin)
    w.model.script(
        [
            text(json.dumps({"queries": [{"type": "keyword", "query": "return used bike refund"}]})),
            text(json.dumps({"canAnswer": True})),
        ]
    )
    route = "/v1/hosting-search"
    body = {
        "messages": [{"role": "user", "content": "Can I return a used bike?"}],
        "namespaces": ["docs"],
        "topK": 3,
    }
    retry = {"Idempotency-Key": f"rehearsal-{uuid.uuid4().hex}"}
    status, found = call(w, "HostingSearchFunction", "POST", route, route, ctx, body, retry)
    assert status == 200, found
    assert found["exitReason"] in HOSTING_EXITS, found
    assert found["exitReason"] == "can_answer", found  # the scripted verdict of round 1
    assert found["chunks"] and {c["namespace"] for c in found["chunks"]} == {"docs"}, found
    assert found["chunks"][0]["documentId"] == "faq.txt" and len(found["chunks"]) <= 3, found
    assert [(q["round"], q["type"]) for q in found["queries"]] == [(1, "hybrid"), (1, "keyword")], found
    assert found["totalQueries"] == 2 and found["rounds"][0]["canAnswer"] is True, found
    assert found["rerank"] == {"reranker": "bedrock:cohere.rerank-v3-5:0", "fellBack": False}, found
    assert found["usage"]["llmInputTokens"] == 200 and found["usage"]["llmOutputTokens"] == 20, found
    assert not w.model.remaining, "the planner did not ask for its query generation and its verdict"

    status, again = call(w, "HostingSearchFunction", "POST", route, route, ctx, body, retry)
    assert status == 200 and again["replayed"] is True and again["runId"] == found["runId"], again

    status, refused = call(w, "HostingSearchFunction", "POST", route, route, ctx, {**body, "colour": "red"})
    assert status == 400, refused
    assert set(refused) == {"error"} and refused["error"]["code"] == "invalid_request", refused
    assert set(refused["error"]) == {"code", "message", "details"}, refused
    assert runs_charged(w, admin) == before + 1


def namespace_lifecycle(w: World, ctx: dict[str, Any]) -> None:
    """An admin key creates, lists, reads, changes and deletes a namespace; a namespace that still
    holds documents cannot be deleted."""
    fn = "NamespacesFunction"
    status, made = call(w, fn, "POST", "/v1/namespaces", "/v1/namespaces", ctx,
                        {"namespaceId": "scratch", "description": "for a while"})  # fmt: skip
    assert status == 201 and made["namespaceId"] == "scratch" and made["default"] is False, made
    status, listed = call(w, fn, "GET", "/v1/namespaces", "/v1/namespaces", ctx)
    assert status == 200 and {n["namespaceId"] for n in listed["namespaces"]} == {"docs", "scratch"}, listed
    status, changed = call(w, fn, "PATCH", "/v1/namespaces/scratch", NS, ctx, {"description": "renamed"})
    assert status == 200 and changed["description"] == "renamed", changed
    status, gone = call(w, fn, "DELETE", "/v1/namespaces/scratch", NS, ctx)
    assert status == 200 and gone == {"namespaceId": "scratch", "deleted": True}, gone
    status, missing = call(w, fn, "GET", "/v1/namespaces/scratch", NS, ctx)
    assert status == 404 and missing["error"]["code"] == "namespace_not_found", missing
    status, held = call(w, fn, "DELETE", "/v1/namespaces/docs", NS, ctx)
    assert status == 409 and held["error"]["code"] == "conflict", held


def key_lifecycle(w: World, ctx: dict[str, Any]) -> None:
    """An admin key issues a search key (its plaintext once), lists it, revokes it."""
    fn = "KeysFunction"
    status, made = call(w, fn, "POST", "/v1/keys", "/v1/keys", ctx, {"name": "ci", "scopes": ["search"]})
    assert status == 201 and made["apiKey"].startswith("rl_") and made["scopes"] == ["search"], made
    status, listed = call(w, fn, "GET", "/v1/keys", "/v1/keys", ctx)
    mine = [k for k in listed["keys"] if k["keyId"] == made["keyId"]]
    assert status == 200 and len(mine) == 1 and "apiKey" not in mine[0] and not mine[0]["revoked"], listed
    route = "/v1/keys/{key_id}"
    status, revoked = call(w, fn, "DELETE", f"/v1/keys/{made['keyId']}", route, ctx)
    assert status == 200 and revoked["keyId"] == made["keyId"] and revoked["revoked"] is True, revoked


def document_writes(w: World, ctx: dict[str, Any]) -> None:
    """Text added through the API is indexed at once (embedded, metered) and deleted with its chunks
    (200); deleting the S3-sourced document deletes its object, and the chunks follow its event (202)."""
    fn = "DocumentsFunction"
    added_text = {"filename": "notes.md", "text": "Helmets are sold at the front desk of every store."}
    status, added = call(w, fn, "POST", "/v1/namespaces/docs/documents", DOCS, ctx, added_text)
    assert status == 201 and (added["documentId"], added["status"]) == ("notes.md", "ready"), added
    status, got = call(w, fn, "GET", "/v1/namespaces/docs/documents/notes.md", DOC, ctx)
    assert status == 200 and got["documentId"] == "notes.md" and got["status"] == "ready", got
    status, deleted = call(w, fn, "DELETE", "/v1/namespaces/docs/documents/notes.md", DOC, ctx)
    assert status == 200 and (deleted["documentId"], deleted["status"]) == ("notes.md", "deleted"), deleted
    status, deleting = call(w, fn, "DELETE", "/v1/namespaces/docs/documents/faq.txt", DOC, ctx)
    assert status == 202 and (deleting["documentId"], deleting["status"]) == ("faq.txt", "deleting"), deleting
    remaining = w.s3.list_objects_v2(Bucket=w.bucket, Prefix="acme/docs/").get("Contents", [])
    assert not remaining, remaining


def check_routes(w: World) -> None:
    """Every route of the API and every event source is in the rehearsal's table (and nothing else
    is), and this run called each one through the function the template wires it to."""
    lines = uncovered(ROUTES, w.routes) + uncovered(EVENT_SOURCES, w.sources)
    assert not lines, "the rehearsal's tables and the template differ:\n" + "\n".join(lines)
    assert not set(w.routes) - w.called, f"routes never called: {sorted(set(w.routes) - w.called)}"
    assert not set(w.sources) - w.delivered, f"event sources never invoked: {set(w.sources) - w.delivered}"


def check_streaming(w: World) -> None:
    """Exactly the chat route streams (API Gateway is not emulated: its integration is read), and it
    streams from the chat function."""
    streaming = {key: route.function for key, route in w.routes.items() if route.streams}
    assert streaming == {("POST", "/v1/chat"): "ChatFunction"}, f"streaming routes: {streaming}"


def check_created_domain(w: World, calls: list[AwsCall]) -> None:
    """The template's other branch, resolved without running anything again: no ``OpenSearchEndpoint``
    (the template creates the domain): every function's environment and role resolve, the functions
    that use OpenSearch are pointed at the created domain, and the calls this run made would be
    allowed against the created domain's ARN."""
    stack, domain_arn = created_domain_stack(w.stack)
    specs = {fn: stack.function(fn) for fn in FUNCTIONS}
    endpoint = f"https://{stack.attributes['OpenSearchDomain.DomainEndpoint']}"
    urls = {
        fn: s.environment["RAGLINE_OPENSEARCH_URL"]
        for fn, s in specs.items()
        if "RAGLINE_OPENSEARCH_URL" in s.environment
    }
    assert urls and set(urls.values()) == {endpoint}, urls
    moved = [replace(c, resource=c.resource.replace(DOMAIN_ARN, domain_arn)) for c in calls]
    assert any(c.action.startswith("es:") and c.resource.startswith(domain_arn) for c in moved)
    denied = sorted(
        {
            (c.function, c.action, c.resource)
            for c in moved
            if not specs[c.function].allows(c.action, c.resource, c.context)
        }
    )
    assert not denied, "with a created domain, actions outside the roles:\n" + "\n".join(map(str, denied))


def check_iam(w: World, proxy: SignedProxy) -> list[AwsCall]:
    """Every AWS action each function performed is allowed by its role in the translated template."""
    calls = w.aws_calls(proxy)
    assert not proxy.refused, f"unsigned OpenSearch requests: {proxy.refused}"
    signed_os = {c.function for c in calls if c.action.startswith("es:")}
    assert signed_os >= {"SearchFunction", "HostingSearchFunction", "IngestionFunction", "ChatFunction"}, (
        signed_os
    )
    denied = sorted(
        {
            (c.function, c.action, c.resource)
            for c in calls
            if not w.stack.function(c.function).allows(c.action, c.resource, c.context)
        }
    )
    assert not denied, "actions outside the functions' roles:\n" + "\n".join(map(str, denied))
    performed = {c.action for c in calls}
    assert {"dynamodb:PutItem", "bedrock:InvokeModel", "bedrock:Rerank"} <= performed
    if w.provider == "bedrock":  # chat streamed through ConverseStream; no key to read
        assert "bedrock:InvokeModelWithResponseStream" in performed
        assert "secretsmanager:GetSecretValue" not in performed
        models = {c.resource for c in calls if c.action == "bedrock:InvokeModelWithResponseStream"}
        assert f"arn:aws:bedrock:{REGION}:{ACCOUNT}:inference-profile/{BEDROCK_CHAT_MODEL}" in models, models
    else:
        assert "secretsmanager:GetSecretValue" in performed
    return calls


def check_traces(w: World) -> None:
    """Each traced function's calls joined the X-Ray trace of the invocation that made them: the
    handler's own subsegment (zip functions), its AWS calls, and its OpenSearch and model requests as
    remote calls, each to the endpoint the template gives it; and no document text in any of it."""
    assert not w.xray.malformed, w.xray.malformed[:3]
    model = [w.llm.base_url] if w.provider == "openai" else []  # Bedrock's calls are AWS calls
    talks_to = {
        "SearchFunction": [w.proxy_url],
        "HostingSearchFunction": [w.proxy_url, *model],
        "IngestionFunction": [w.proxy_url],
        "ChatFunction": [w.proxy_url, *model],
    }
    for fn in TRACED:
        assert w.stack.function(fn).tracing == "Active", f"{fn}: X-Ray tracing is not Active in the template"
        assert w.taps[fn].injected, f"{fn}: no event carried a trace header (Runtime API proxy bypassed?)"
        docs = w.xray.of_trace(w.running[fn].trace_ids)
        assert docs, f"{fn} sent nothing to the X-Ray daemon (no tracer?)\n{w.running[fn].log_tail()}"
        if fn != "ChatFunction":  # chat is a web app: its calls join the trace without a handler subsegment
            assert "## lambda_handler" in {d.get("name") for d in docs}, (fn, docs)
        assert any(d.get("namespace") == "aws" and d.get("name") == "dynamodb" for d in docs), (fn, docs)
        remote = [d for d in docs if d.get("namespace") == "remote"]
        urls = [d.get("http", {}).get("request", {}).get("url", "") for d in remote]
        for endpoint in talks_to.get(fn, []):
            assert any(u.startswith(endpoint) for u in urls), f"{fn}: no traced call to {endpoint}: {urls}"
    assert "Northwind Cycles frequently asked questions" not in w.xray.raw(), "document text in a trace"


def test_the_built_stack_serves_a_tenant_end_to_end(world: tuple[World, SignedProxy]) -> None:
    w, proxy = world
    with blame_last(w.running.values()):  # a failed check shows the log of the function it checks
        scenario(w, proxy)


def scenario(w: World, proxy: SignedProxy) -> None:
    check_streaming(w)
    ctx = bootstrap_tenant(w)
    status, body = call(w, "NamespacesFunction", "POST", "/v1/namespaces", "/v1/namespaces", ctx,
                        {"namespaceId": "docs", "default": True})  # fmt: skip
    assert status == 201 and body["namespaceId"] == "docs", body
    ingest_from_s3(w, ctx)

    # Search (reranked by Bedrock) finds it.
    status, found = call(w, "SearchFunction", "POST", "/v1/namespaces/docs/search",
                         "/v1/namespaces/{namespace}/search", ctx,
                         {"query": "Can I return a used bike?", "k": 3, "rerank": True})  # fmt: skip
    assert status == 200 and found["hits"] and found["hits"][0]["documentId"] == "faq.txt", found
    assert found["rerank"] == {"reranker": "bedrock:cohere.rerank-v3-5:0", "fellBack": False}

    chat_streams(w, ctx)

    # Usage: the search and the chat, each charged once.
    status, usage = call(w, "KeysFunction", "GET", "/v1/usage", "/v1/usage", ctx)
    assert status == 200 and usage["runs"] == 2, usage
    chat_agents(w, ctx)
    hosting_search(w, ctx)
    delete_from_s3(w, ctx)
    namespace_lifecycle(w, ctx)
    key_lifecycle(w, ctx)
    document_writes(w, ctx)
    check_routes(w)
    calls = check_iam(w, proxy)
    check_created_domain(w, calls)
    check_traces(w)
    # Metrics left in each function's log as CloudWatch EMF lines.
    for fn, metric in (("SearchFunction", "LatencyMs"), ("ChatFunction", "Exit_answered"),
                       ("HostingSearchFunction", "Exit_can_answer"),
                       ("IngestionFunction", "IngestChunks")):  # fmt: skip
        log = (w.art.logs / f"{fn}.log").read_text(errors="replace")
        assert "CloudWatchMetrics" in log and f'"{metric}"' in log, f"{fn} wrote no {metric} metric"
