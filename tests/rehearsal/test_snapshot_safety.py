"""SnapStart's safety, proved on the built artifacts: one initialised function process (the layer and
function code from ``infra/sam/build``, python3.12, the template's environment, the snap-start init)
is forked twice — two restores of one memory image — and each serves real requests against moto,
the local Bedrock server and the OpenSearch node (through the SigV4-checking proxy).

The rehearsal fails when a before-snapshot hook leaves a socket open, when the two restores draw the
same random numbers or ids, reuse a socket opened before the fork, or sign with the snapshot's
credentials instead of the fresh ones a restore gets; and it is broken on purpose (a hook skipped by
name) to prove each hook is what keeps it safe. The driver is ``restore_driver.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.rehearsal.api_calls import cli, rest_event  # the rehearsal's, reused
from tests.rehearsal.cloudformation import REGION
from tests.rehearsal.host import ROOT, TOOLS
from tests.rehearsal.signed_proxy import SignedProxy
from tests.rehearsal.world import Artifacts, World
from tests.support.bedrock_server import BedrockServer
from tests.support.openai_replay import OpenAIReplay

pytestmark = [pytest.mark.rehearsal, pytest.mark.opensearch]
DRIVER = Path(__file__).with_name("restore_driver.py")
INIT_KEY = "AKIASNAPSHOTINIT"
TENANT = f"snap{uuid.uuid4().hex[:8]}"
"""A tenant of its own (its indexes are its own too: the run's index prefix)."""
CTX = {"tenantId": TENANT, "scopes": "admin,chat,ingest,search", "namespaces": "", "keyId": "k-snap"}
"""The authorizer's context for the tenant's admin key (the authorizer itself has its own rehearsal)."""
SEARCH = "/v1/namespaces/{namespace}/search"
DOCS = "/v1/namespaces/{namespace}/documents"


@pytest.fixture(scope="module")
def world(
    artifacts: Artifacts,
    moto_endpoint: str,
    opensearch_url: str,
    bedrock_server_session: BedrockServer,
    openai_replay_server: OpenAIReplay,
) -> Iterator[tuple[World, SignedProxy]]:
    proxy = SignedProxy(opensearch_url)
    w = World(
        artifacts, moto_endpoint, proxy.start(), bedrock_server_session, openai_replay_server, "bedrock"
    )
    try:
        cli(w, "tenants", "create", TENANT, "--quota", "100")
        yield w, proxy
    finally:
        w.stop()
        proxy.stop()
        httpx.delete(f"{opensearch_url}/rh-{w.suffix}*", params={"expand_wildcards": "all"}, timeout=30)


def restore_twice(
    w: World, tmp: Path, fn: str, prime: list[dict[str, Any]], restores: list[list[dict[str, Any]]],
    skip: tuple[str, ...] = (),
) -> dict[str, Any]:  # fmt: skip
    """The driver's report for ``fn``: primed, hooked, forked, each restore serving its events."""
    spec = w.stack.function(fn)
    task = w.art.build / fn
    layers = [str(p / "python") for p in w.layers(spec.layers)]
    home = tmp / fn
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        **spec.environment,
        "RAGLINE_HOME": str(home),  # the function's /tmp: each rehearsal its own
        "PYTHONPATH": os.pathsep.join([str(task), *layers]),  # /var/task, then /opt/python
        "PYTHONDONTWRITEBYTECODE": "1",
        "LAMBDA_TASK_ROOT": str(task),
        "AWS_LAMBDA_FUNCTION_NAME": fn,
        "AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start",
        "RAGLINE_OPENSEARCH_INDEX_PREFIX": f"rh-{w.suffix}",  # this run's own indexes (as the rehearsal's)
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": INIT_KEY,
        "AWS_SECRET_ACCESS_KEY": "rehearsal",
        "AWS_ENDPOINT_URL": w.moto,
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": w.bedrock.url,
        "AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME": w.bedrock.url,
        "AWS_XRAY_DAEMON_ADDRESS": w.xray.address,
    }
    plan = tmp / f"{fn}-plan.json"
    plan.write_text(json.dumps({"prime": prime, "restores": restores}))
    python = TOOLS / "py312" / "bin" / "python"  # python3.12 with what the managed runtime carries
    out = tmp / f"{fn}-report.json"
    command = [str(python), str(DRIVER), str(plan), str(out), *(f"--skip={h}" for h in skip)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.read_text())
    assert report["hooks"]["loaded_from"].startswith(str(w.art.build)), "not the built layer's code"
    return report


def search(query: str) -> dict[str, Any]:
    body = {"query": query, "k": 3, "rerank": True}
    return rest_event("POST", "/v1/namespaces/docs/search", SEARCH, CTX, body)


@pytest.fixture(scope="module")
def namespace(world: tuple[World, SignedProxy], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``docs`` namespace (by the namespaces function's priming request) with one document."""
    w, _ = world
    tmp = tmp_path_factory.mktemp("snapstart")
    create = rest_event("POST", "/v1/namespaces", "/v1/namespaces", CTX, {"namespaceId": "docs"})
    listing = rest_event("GET", "/v1/namespaces", "/v1/namespaces", CTX)
    report = restore_twice(w, tmp, "NamespacesFunction", [create], [[listing, listing]] * 2)
    assert report["primed"][0]["status"] == 201, report["primed"]
    assert report["problems"] == [], report["problems"]
    return tmp


def test_two_restores_of_one_snapshot_share_nothing(
    world: tuple[World, SignedProxy], namespace: Path
) -> None:
    w, proxy = world
    faq = (ROOT / "samples/northwind/faq.txt").read_text()
    add = [rest_event("POST", "/v1/namespaces/docs/documents", DOCS, CTX, {"filename": f"faq-{n}.txt",
                      "text": faq}) for n in range(2)]  # fmt: skip
    listing = rest_event("GET", "/v1/namespaces/docs/documents", DOCS, CTX)
    docs = restore_twice(w, namespace, "DocumentsFunction", [listing], [[add[0], listing], [add[1], listing]])
    assert docs["problems"] == [], docs["problems"]

    signed_before, bedrock_before = len(proxy.calls), len(w.bedrock.requests)
    found = restore_twice(w, namespace, "SearchFunction", [search("warm-up")], [restore(0), restore(1)])
    assert found["problems"] == [], found["problems"]
    # Each restore charged its own two runs: four distinct runs besides the priming one.
    runs = [r for child in found["restores"] for r in child["run_ids"]]
    assert len(runs) == len(set(runs)) == 4
    # Both restores called OpenSearch (SigV4 through the proxy) and Bedrock (embeddings, rerank), each
    # signed with its own restore's credentials, never the snapshot's.
    bedrock = [r.headers.get("authorization", "") for r in w.bedrock.requests[bedrock_before:]]
    for keys in ([c.key for c in proxy.calls[signed_before:]], [signer(a) for a in bedrock]):
        assert {"AKIARESTORE0", "AKIARESTORE1"} <= set(keys), keys
        first_restore_call = min(keys.index("AKIARESTORE0"), keys.index("AKIARESTORE1"))
        assert INIT_KEY not in keys[first_restore_call:], f"a restore signed with the snapshot's key: {keys}"
    # Each restore's traces reached the X-Ray daemon (its emitter's socket is its own, not the closed one).
    for child in found["restores"]:
        assert traced(w, {s["trace_id"] for s in child["served"]}), "a restore's traces were lost"


def traced(w: World, trace_ids: set[str]) -> bool:
    """Whether the X-Ray daemon received documents of these traces (UDP: given a moment to arrive)."""
    for _ in range(50):
        if w.xray.of_trace(trace_ids):
            return True
        time.sleep(0.1)
    return False


def restore(n: int) -> list[dict[str, Any]]:
    """A restore's two searches, its own (the embedding cache would spare the second a Bedrock call)."""
    return [search(f"return a used bike {n}"), search(f"chain lubrication {n}")]


def signer(authorization: str) -> str:
    """The access key id of a SigV4 ``Authorization`` header."""
    return authorization.split("Credential=", 1)[-1].split("/", 1)[0]


@pytest.mark.parametrize(
    ("skipped", "reason"),
    [
        ("reseed_random", "the two restores share random"),
        ("close_connections", "a socket was open after the before-snapshot hooks"),
    ],
)
def test_the_check_fails_when_a_hook_is_removed(
    world: tuple[World, SignedProxy], namespace: Path, skipped: str, reason: str
) -> None:
    w, _ = world
    report = restore_twice(
        w, namespace, "SearchFunction", [search("warm-up")], [restore(0), restore(1)], skip=(skipped,)
    )
    assert [p for p in report["problems"] if p.startswith(reason)], report["problems"]
    assert not [p for p in report["problems"] if "failed requests" in p], report["problems"]
