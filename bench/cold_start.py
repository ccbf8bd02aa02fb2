"""Cold starts from the built layer: each handler imported by python3.12, as Lambda imports it.

Each function's folder of the sam build is the task root (the working directory, first on the path)
and the built layer's ``python/`` folder stands for /opt/python: its wheels are the Lambda target's,
its bytecode precompiled for 3.12 (unchecked-hash, as the deploy ships it). Every measurement is a
fresh process, and the rounds are interleaved so machine noise hits every handler alike.

- **import**: ``python3.12 -S -c "import app"`` minus ``python3.12 -S -c pass``, median of the runs,
  CPU time (user + system, what the process itself spent) and wall-clock time. ``-S`` in both: this
  machine's interpreter has a ``.pth`` file in its site-packages that imports certifi at start-up,
  which Lambda's has not.
- **first request**: in another fresh process, after the import, one request through the handler
  costs this much more than the same request again (lazy imports, model schemas, the container and
  its adapters, SQLite connections). The embedded backend on a seeded copy of a home folder, with a
  hashed bag-of-words embedder injected through the container as the tests do (the layer has no
  offline models); the authorizer builds its own dependencies, as in AWS.
- **SnapStart** (the functions the template gives it): in another fresh process, Lambda's snapshot
  init as the runtime runs it — ``AWS_LAMBDA_INITIALIZATION_TYPE=snap-start``, the handler imported
  (its :func:`ragline.snapstart.prepare` warm-up), the before-snapshot hooks — is **init** (paid once
  per published version; over a bare interpreter). The process then forks (a child's CPU counters start
  at zero, as a restored environment's do) and the child runs the after-restore hooks and serves the
  first request with the process's container (built at init, its parts released by the hooks):
  **after restore + first request**, over the same request again, is what a SnapStart cold start
  costs in CPU. Not in it: the restore itself (Lambda maps the
  snapshot's memory; page faults then) and the AWS clients, which the embedded backend never builds;
  **AWS clients** is what building the function's boto3 clients costs in that child afterwards (their
  service models parsed at init, as ``prepare()`` does with the aws backend; nothing sent).
- ``--compare``: another build (say, of the tree before a change) measured in the same rounds, its
  figures in parentheses.

.venv/bin/python bench/cold_start.py                       # builds for this host (infra/sam/build)
.venv/bin/python bench/cold_start.py --build .aws-sam/build-x86_64 --compare OTHER_BUILD --runs 10
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ARCH = {"x86_64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
TENANT, NAMESPACE = "acme", "docs"
CALLER = {"tenantId": TENANT, "scopes": "admin,chat,ingest,search", "namespaces": "", "keyId": "key_bench"}
ARN = "arn:aws:execute-api:us-east-1:123456789012:abc123/dev/POST/v1/namespaces/docs/search"
TEXT = (
    "Lubricate the chain every 300 kilometres, and after every ride in the rain. "
    "Returns of used bikes are accepted within thirty days with the receipt."
)


@dataclass(frozen=True)
class Handler:
    name: str
    function: str
    target_ms: int | None
    services: tuple[str, ...] = ()
    """The AWS services its deployed container calls; empty: no SnapStart (on-demand)."""


SNAPSTART_TARGET_MS = 150
"""After restore + first request, CPU, for every REST function and ingestion (issue 26)."""
BEDROCK = ("dynamodb", "bedrock-runtime", "bedrock-agent-runtime")
HANDLERS = (
    Handler("authorizer", "AuthorizerFunction", 100),
    Handler("search", "SearchFunction", 250, BEDROCK),
    Handler("hosting_search", "HostingSearchFunction", 250, BEDROCK),
    Handler("documents", "DocumentsFunction", 250, ("dynamodb", "s3", "bedrock-runtime")),
    Handler("chat", "ChatFunction", 250),
    Handler("ingestion", "IngestionFunction", 300, ("dynamodb", "s3", "bedrock-runtime")),
    Handler("namespaces", "NamespacesFunction", None, ("dynamodb",)),
    Handler("keys", "KeysFunction", None, ("dynamodb",)),
)

# Run by python3.12 from the layer: a real (if tiny) embedder, since the layer has no offline models.
STUB_EMBEDDER = """
import hashlib

class BagOfWords:
    model_id = "bench-bow"
    dimension = 64

    def _vector(self, text):
        v = [0.0] * self.dimension
        for word in text.lower().split():
            v[int(hashlib.sha1(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
        norm = sum(x * x for x in v) ** 0.5 or 1.0
        return [x / norm for x in v]

    def embed_query(self, text):
        import numpy as np
        return np.asarray(self._vector(text), dtype=np.float32)

    def embed_documents(self, texts):
        import numpy as np
        return np.asarray([self._vector(t) for t in texts], dtype=np.float32).reshape(len(texts), 64)

    def count_tokens(self, text):
        return len(text.split())

    def count_many(self, texts):
        return [len(t.split()) for t in texts]

def stub_container():
    from ragline.config import load_settings
    from ragline.wiring import Container
    bow = BagOfWords()
    return Container(load_settings(), embedder=bow, tokenizer=bow)
"""

SEED = (
    STUB_EMBEDDER
    + """
import sys
from pathlib import Path
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace

c = stub_container()
c.tenancy.create_tenant("acme")
c.registry.create_namespace(new_namespace("acme", "docs", default=True))
key, _ = c.tenancy.create_key("acme", scopes=["chat", "search", "ingest", "admin"])
text = sys.argv[1].encode()
c.ingest.ingest(TenantScope(tenant_id="acme", namespace_id="docs"), filename="care.txt", data=text)
for n in (1, 2):
    c.objects.put(f"acme/docs/new-{n}.txt", text)
c.close()
(Path(c.settings.home) / "key.txt").write_text(key)
"""
)

# After the import: the first request and the same request again, each timed in CPU and wall clock.
REQUEST = (
    STUB_EMBEDDER
    + """
import asyncio, json, sys, time
import app

kind, events = sys.argv[1], json.loads(sys.argv[2])

def lambda_context():
    class Context:
        function_name = "bench"
        memory_limit_in_mb = 1024
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
        aws_request_id = "bench"
        def get_remaining_time_in_millis(self):
            return 30_000
    return Context()

async def asgi(application, request):
    body = json.dumps(request["body"]).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": request["path"], "raw_path": request["path"].encode(),
             "query_string": b"", "root_path": "", "server": ("127.0.0.1", 8080),
             "client": ("127.0.0.1", 1),
             "headers": [(k.encode(), v.encode()) for k, v in request["headers"].items()]}
    sent, status = [{"type": "http.request", "body": body, "more_body": False}], []
    async def receive():
        return sent.pop() if sent else {"type": "http.disconnect"}
    async def send(message):
        if message["type"] == "http.response.start":
            status.append(message["status"])
    await application(scope, receive, send)
    return status[0]

def call(event, container):
    if kind == "authorizer":
        return app.lambda_handler(event, lambda_context())["principalId"]
    if kind == "chat":
        return asyncio.run(asgi(app.create_app(container), event))
    result = app.lambda_handler(event, lambda_context(), container=container)
    return result.get("statusCode", result)

times, container = [], None
for event in events:
    wall, cpu = time.perf_counter(), time.process_time()
    if kind != "authorizer" and container is None:
        container = stub_container()  # what resolve() would build: the process's one container
    outcome = call(event, container)
    times.append(((time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000, outcome))
print("BENCH " + json.dumps(times))
"""
)


# A SnapStart version's init, then a restore: the runtime's order, one fork standing in for the restore.
SNAPSHOT = (
    REQUEST.split("times, container = [], None")[0].replace("import app\n", "")
    + """
import os, resource

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000

import functools
from ragline import snapstart, wiring

process_container = None if kind == "authorizer" else stub_container()
wiring.container = functools.cache(lambda: process_container)  # the process's one, as resolve() uses
import app  # the init: the handler's snapstart.prepare() warms that container, registers the hooks
from ragline.adapters.boto import warm_models
warm_models(tuple(json.loads(sys.argv[3])))  # what prepare() warms with the aws backend
snapstart.run_before_snapshot()
init = cpu()
read, write = os.pipe()
if os.fork() == 0:  # the restored environment: its CPU counters start at zero
    os.close(read)
    times = []
    for n, event in enumerate(events):
        start = cpu()
        if n == 0:
            snapstart.run_after_restore()
        outcome = call(event, process_container)
        times.append((cpu() - start, outcome))
    start = cpu()
    import boto3
    for service in json.loads(sys.argv[3]):
        boto3.client(service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    times.append((cpu() - start, None))
    os.write(write, json.dumps(times).encode())
    os._exit(0)
os.close(write)
child = b"".join(iter(lambda: os.read(read, 65536), b""))
os.wait()
print("BENCH " + json.dumps({"init": init, "child": json.loads(child)}))
"""
)


def python312() -> str:
    """The Lambda runtime's Python, found as the Makefile finds it."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(pyenv.glob("3.12*/bin/python3.12")) or [Path(p) for p in [shutil.which("python3.12")] if p]
    if not found:
        sys.exit("cold_start: python3.12 is needed (the Lambda runtime's version)")
    return str(found[-1])


def child_env(layer: Path, home: Path, task_root: Path | None = None) -> dict[str, str]:
    """What the functions' environment sets that the import path reads (template.yaml's Globals), and
    what Lambda adds with active tracing: the task root (Powertools Tracer is on only inside Lambda), a
    sampled trace header, the daemon's address (nothing listens there: a UDP send needs no reply)."""
    lambda_env = {
        "LAMBDA_TASK_ROOT": str(task_root),
        "_X_AMZN_TRACE_ID": "Root=1-6b0e0000-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=1",
        "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:2000",
    }
    return {
        **(lambda_env if task_root else {}),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(layer),
        "PYTHONDONTWRITEBYTECODE": "1",  # the task root is read-only in Lambda: app.py is never cached
        "RAGLINE_HOME": str(home),
        "POWERTOOLS_SERVICE_NAME": "ragline",
        "POWERTOOLS_METRICS_NAMESPACE": "Ragline",
        "PYDANTIC_DISABLE_PLUGINS": "__all__",
        "AWS_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": "bench",
    }


def runtime_library(scratch: Path) -> Path:
    """A folder holding ``snapshot_restore_py`` as the managed python3.12 runtime carries it (the
    layer does not ship it: it would shadow the runtime's); copied from this project's environment."""
    import snapshot_restore_py

    folder = scratch / "runtime"
    folder.mkdir(exist_ok=True)
    shutil.copy(snapshot_restore_py.__file__, folder / "snapshot_restore_py.py")
    return folder


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """CPU ms (user + system of the child alone), wall ms and stdout of one fresh process."""
    with tempfile.TemporaryFile() as out:
        wall = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall_ms = (time.perf_counter() - wall) * 1000
        err = proc.stderr.read().decode() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} in {cwd.name} failed:\n{err[-3000:]}")
    return (usage.ru_utime + usage.ru_stime) * 1000, wall_ms, text


def gateway(
    method: str, path: str, resource: str, params: dict[str, str], body: Any = None
) -> dict[str, Any]:
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": {"content-type": "application/json"},
        "queryStringParameters": None,
        "pathParameters": params or None,
        "requestContext": {
            "requestId": uuid.uuid4().hex,
            "authorizer": CALLER,
            "resourcePath": resource,
            "httpMethod": method,
        },
        "body": None if body is None else json.dumps(body),
        "isBase64Encoded": False,
    }


def sqs(key: str) -> dict[str, Any]:
    notification = {
        "Records": [
            {
                "eventSource": "aws:s3",
                "eventName": "ObjectCreated:Put",
                "s3": {
                    "bucket": {"name": "bench-docs"},
                    "object": {"key": key, "size": len(TEXT), "sequencer": f"{time.time_ns():032X}"},
                },
            }
        ]
    }
    return {
        "Records": [
            {
                "messageId": str(uuid.uuid4()),
                "receiptHandle": "bench",
                "body": json.dumps(notification),
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:ingest",
                "awsRegion": "us-east-1",
            }
        ]
    }


def request(name: str, n: int, key: str) -> dict[str, Any]:
    """The ``n``-th (1 or 2) request of a handler: the same request each time, with its own ids."""
    ns = f"/v1/namespaces/{NAMESPACE}"
    question = "How often should I lubricate the chain?"
    if name == "authorizer":
        return {"type": "REQUEST", "methodArn": ARN, "headers": {"Authorization": f"Bearer {key}"}}
    if name == "search":
        return gateway("POST", ns + "/search", "/v1/namespaces/{namespace}/search", {"namespace": NAMESPACE},
                       {"query": question})  # fmt: skip
    if name == "hosting_search":
        return gateway("POST", "/v1/hosting-search", "/v1/hosting-search", {}, {"query": question})
    if name == "documents":
        resource = "/v1/namespaces/{namespace}/documents"
        return gateway("GET", ns + "/documents", resource, {"namespace": NAMESPACE})
    if name == "namespaces":
        return gateway("GET", "/v1/namespaces", "/v1/namespaces", {})
    if name == "keys":
        return gateway("GET", "/v1/keys", "/v1/keys", {})
    if name == "ingestion":
        return sqs(f"{TENANT}/{NAMESPACE}/new-{n}.txt")
    context = json.dumps({"requestId": uuid.uuid4().hex, "authorizer": CALLER})
    headers = {"content-type": "application/json", "x-amzn-request-context": context}
    body = {"messages": [{"role": "user", "content": question}], "namespaces": [NAMESPACE], "stream": False}
    return {"path": "/v1/chat", "headers": headers, "body": body}


def succeeded(outcome: Any) -> bool:
    """A 2xx status, the authorizer's tenant, or an SQS batch with no failed message."""
    if isinstance(outcome, int):
        return 200 <= outcome < 300
    return outcome in (TENANT, {"batchItemFailures": []})


def build_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg).resolve()
    out = subprocess.run(["infra/sam/build", ARCH], cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True)
    return ROOT / out.stdout.strip()


@dataclass
class Measured:
    """One build's samples: (CPU ms, wall ms) per run."""

    build: Path
    key: str = ""
    imports: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    extra: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    snap: dict[str, list[tuple[float, float, float]]] = field(default_factory=dict)
    """SnapStart: (init CPU, after restore + first request extra CPU, AWS clients CPU) per run."""


def median(rows: list[tuple[float, float]], i: int) -> float:
    return statistics.median(r[i] for r in rows)


def measure(
    builds: list[Path], handlers: list[Handler], runs: int
) -> tuple[list[tuple[float, float]], list[Measured]]:
    py = python312()
    bare: list[tuple[float, float]] = []
    measured = [
        Measured(
            b,
            imports={h.name: [] for h in handlers},
            extra={h.name: [] for h in handlers},
            snap={h.name: [] for h in handlers},
        )
        for b in builds
    ]
    with tempfile.TemporaryDirectory(prefix="cold-start-") as scratch:
        library = runtime_library(Path(scratch))
        for i, m in enumerate(measured):
            seeded = Path(scratch) / f"seeded-{i}"
            run([py, "-S", "-c", SEED, TEXT], m.build, child_env(m.build / "RaglineLayer/python", seeded))
            m.key = (seeded / "key.txt").read_text()

        def home_copy(i: int) -> Path:
            home = Path(tempfile.mkdtemp(dir=scratch))
            shutil.copytree(Path(scratch) / f"seeded-{i}", home, dirs_exist_ok=True)
            return home

        for _ in range(runs):  # interleaved rounds: machine noise hits every handler and build alike
            bare.append(
                run([py, "-S", "-c", "pass"], Path(scratch), child_env(Path(scratch), Path(scratch)))[:2]
            )
            for h in handlers:
                for i, m in enumerate(measured):
                    task_root, layer = m.build / h.function, m.build / "RaglineLayer/python"
                    env = child_env(layer, Path(scratch) / f"seeded-{i}", task_root)
                    m.imports[h.name].append(run([py, "-S", "-c", "import app"], task_root, env)[:2])
                    events = json.dumps([request(h.name, n, m.key) for n in (1, 2)])
                    request_env = child_env(layer, home_copy(i), task_root)
                    *_, out = run([py, "-S", "-c", REQUEST, h.name, events], task_root, request_env)
                    (first_cpu, first_wall, got), (again_cpu, again_wall, again) = json.loads(
                        next(line for line in out.splitlines() if line.startswith("BENCH "))[6:]
                    )
                    if not (succeeded(got) and succeeded(again)):
                        raise RuntimeError(f"{h.name}: the requests answered {got!r}, {again!r}")
                    m.extra[h.name].append((first_cpu - again_cpu, first_wall - again_wall))
                    if h.services:
                        m.snap[h.name].append(
                            snapshot(py, h, events, task_root, layer, library, home_copy(i))
                        )
    return bare, measured


def snapshot(
    py: str, h: Handler, events: str, task_root: Path, layer: Path, library: Path, home: Path
) -> tuple[float, float, float]:
    """One SnapStart init and restore: (init CPU, after restore + first request extra, AWS clients)."""
    env = child_env(layer, home, task_root)
    env["PYTHONPATH"] = f"{layer}:{library}"
    env["AWS_LAMBDA_INITIALIZATION_TYPE"] = "snap-start"
    *_, out = run([py, "-S", "-c", SNAPSHOT, h.name, events, json.dumps(h.services)], task_root, env)
    got = json.loads(next(line for line in out.splitlines() if line.startswith("BENCH "))[6:])
    (first, first_outcome), (again, again_outcome), (clients, _) = got["child"]
    if not (succeeded(first_outcome) and succeeded(again_outcome)):
        raise RuntimeError(f"{h.name} after a restore answered {first_outcome!r}, {again_outcome!r}")
    return got["init"], first - again, clients


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", help="an existing sam build for this host (default: build one now)")
    parser.add_argument("--compare", help="another sam build, measured in the same rounds (in parentheses)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--only", nargs="*", help="handlers to measure (default: all)")
    args = parser.parse_args()
    builds = [build_dir(args.build)] + ([Path(args.compare).resolve()] if args.compare else [])
    handlers = [h for h in HANDLERS if not args.only or h.name in args.only]
    bare, measured = measure(builds, handlers, args.runs)
    base_cpu, base_wall = median(bare, 0), median(bare, 1)

    def cell(value: float, other: float | None) -> str:
        return f"{value:.0f}" if other is None else f"{value:.0f} ({other:.0f})"

    print(f"python3.12 -S; {args.runs} interleaved runs; median ms over a bare interpreter")
    print(f"bare interpreter: {base_cpu:.0f} ms CPU, {base_wall:.0f} ms wall")
    for m in measured:
        print(f"build: {m.build}")
    print()
    print(
        "| handler | import ms CPU | import ms wall | target (import CPU) "
        "| first request extra ms CPU | import + first request ms CPU |"
    )
    print("|---|---:|---:|---|---:|---:|")
    for h in handlers:
        rows = []
        for m in measured:
            cpu = median(m.imports[h.name], 0) - base_cpu
            wall = median(m.imports[h.name], 1) - base_wall
            first = median(m.extra[h.name], 0)
            rows.append((cpu, wall, first, cpu + first))
        now, before = rows[0], (rows[1] if len(rows) > 1 else None)
        cells = [cell(v, before[i] if before else None) for i, v in enumerate(now)]
        target = f"≤ {h.target_ms} {'✔' if now[0] <= h.target_ms else '✘'}" if h.target_ms else ""
        print(f"| {h.name} | {cells[0]} | {cells[1]} | {target} | {cells[2]} | {cells[3]} |")

    print()
    print(
        "| handler | on demand: import + first request ms CPU | SnapStart init ms CPU (once per version) "
        f"| SnapStart: after restore + first request ms CPU | target ≤ {SNAPSTART_TARGET_MS} "
        "| AWS clients after restore ms CPU |"
    )
    print("|---|---:|---:|---:|---|---:|")
    for h in handlers:
        rows = []
        for m in measured:
            on_demand = median(m.imports[h.name], 0) - base_cpu + median(m.extra[h.name], 0)
            snap = m.snap[h.name]
            if not snap:
                rows.append((on_demand, None, None, None))
                continue
            init = statistics.median(r[0] for r in snap) - base_cpu
            rows.append(
                (
                    on_demand,
                    init,
                    statistics.median(r[1] for r in snap),
                    statistics.median(r[2] for r in snap),
                )
            )
        now, before = rows[0], (rows[1] if len(rows) > 1 else None)
        if now[1] is None:
            demand = cell(now[0], before[0] if before else None)
            print(f"| {h.name} | {demand} | on demand (no SnapStart) | | | |")
            continue
        cells = [cell(v, before[i] if before and before[i] is not None else None) for i, v in enumerate(now)]
        met = "✔" if now[2] <= SNAPSTART_TARGET_MS else "✘"
        print(f"| {h.name} | {cells[0]} | {cells[1]} | {cells[2]} | {met} | {cells[3]} |")


if __name__ == "__main__":
    main()
