"""SnapStart's safety, proved on the built artifacts for every SnapStart function of the template:
one initialised function process — inside ``infra/rehearsal/lambda-sandbox`` (the function's code from
``infra/sam/build`` on a read-only /var/task, its layers on a read-only /opt, python3.12 on /var/lang,
a fresh /tmp, every other folder read-only), the template's environment as the stack resolves it
(``RAGLINE_HOME`` is its ``/tmp/ragline``), the snap-start init — is primed, hooked and forked twice
(two restores of one memory image), and each restore serves real requests through the function's own
entry against moto, the local Bedrock server and the OpenSearch node (through the SigV4-checking
proxy). Each function's events are in ``snapstart_plans.py``, the driver is ``restore_driver.py``.

The rehearsal fails when the init (or a restore) writes outside ``/tmp``, when a before-snapshot hook
leaves a socket open, when the two restores draw the same random numbers or ids, reuse a socket
opened before the fork, or sign with the snapshot's credentials instead of the fresh ones a restore
gets, or when a restore's traces are lost; it is broken on purpose — a hook skipped by name, the
template's ``RAGLINE_HOME`` lost or moved off ``/tmp`` — to prove each check is live.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.rehearsal.api_calls import call, cli  # the rehearsal's, reused
from tests.rehearsal.host import REHEARSAL, ROOT
from tests.rehearsal.signed_proxy import SignedProxy
from tests.rehearsal.snapstart_plans import CTX, DOCS, HOOK, PLANS, TENANT, Plan, Scene
from tests.rehearsal.world import Artifacts, World
from tests.support.bedrock_server import BedrockServer
from tests.support.openai_replay import OpenAIReplay
from tests.support.webhook_receiver import Receiver

pytestmark = [pytest.mark.rehearsal, pytest.mark.opensearch]
DRIVER = "/var/rehearsal/driver/restore_driver.py"
IO = "/var/rehearsal/io"
"""Where the driver's folder (read-only) and the run's plan and report (writable) appear in the sandbox."""
INIT_KEY = "AKIASNAPSHOTINIT"
LAYER = "/opt/python/ragline"


@pytest.fixture(scope="module")
def scene(
    artifacts: Artifacts,
    moto_endpoint: str,
    opensearch_url: str,
    bedrock_server_session: BedrockServer,
    openai_replay_server: OpenAIReplay,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Scene]:
    """The tenant, its ``docs`` namespace holding one document (made through the stack's functions as
    the rehearsal runs them) and a webhook to a receiver on 127.0.0.1 (subscribed by the operator)."""
    proxy = SignedProxy(opensearch_url)
    w = World(
        artifacts, moto_endpoint, proxy.start(), bedrock_server_session, openai_replay_server, "bedrock"
    )
    receiver = Receiver()
    try:
        cli(w, "tenants", "create", TENANT, "--quota", "100")
        status, _ = call(w, "NamespacesFunction", "POST", "/v1/namespaces", "/v1/namespaces", CTX,
                         {"namespaceId": "docs"})  # fmt: skip
        assert status == 201
        faq = {"filename": "faq.txt", "text": (ROOT / "samples/northwind/faq.txt").read_text()}
        status, _ = call(w, "DocumentsFunction", "POST", "/v1/namespaces/docs/documents", DOCS, CTX, faq)
        assert status == 201
        loopback = {"RAGLINE_WEBHOOK_LOOPBACK_HTTP": "1"}
        made = cli(w, "webhooks", "add", receiver.url(HOOK), "--tenant", TENANT, env=loopback)
        receiver.secrets[HOOK] = json.loads(made)["secret"]
        yield Scene(w, proxy, tmp_path_factory.mktemp("snapstart"), receiver)
    finally:
        receiver.close()
        w.stop()
        proxy.stop()
        httpx.delete(f"{opensearch_url}/rh-{w.suffix}*", params={"expand_wildcards": "all"}, timeout=30)


def restore_twice(
    s: Scene, fn: str, plan: Plan, skip: tuple[str, ...] = (), env: dict[str, str | None] | None = None
) -> dict[str, Any]:
    """The driver's report for ``fn``: primed, hooked, forked, each restore serving its events — in
    the read-only sandbox, with ``fn``'s task folder and layers and its environment in the world
    (``env``: changed or, with None, removed variables: a fault injected)."""
    w = s.w
    run = s.io / f"{fn}-{uuid.uuid4().hex[:8]}"  # on the host; the sandbox's own /tmp is private
    run.mkdir()
    (run / "plan.json").write_text(json.dumps({"prime": plan.prime, "restores": plan.restores}))
    environment: dict[str, str | None] = {
        **w.environment(fn),
        **plan.env,
        "AWS_LAMBDA_FUNCTION_NAME": fn,
        "AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start",
        "AWS_ACCESS_KEY_ID": INIT_KEY,
        # The interpreter's own bytecode cache (which Python gives up on silently on a read-only folder,
        # as in Lambda) is not the function's write.
        "PYTHONDONTWRITEBYTECODE": "1",
        **(env or {}),
    }
    command = [str(REHEARSAL / "lambda-sandbox"), "--task", str(w.art.build / fn)]
    for layer in w.layers(w.stack.function(fn).layers):
        command += ["--layer", str(layer)]
    command += [
        "--bind",
        f"{ROOT / 'tests/rehearsal'}:{DRIVER.rsplit('/', 1)[0]}",
        "--rw-bind",
        f"{run}:{IO}",
    ]
    command += [arg for k, v in environment.items() if v is not None for arg in ("-e", f"{k}={v}")]
    command += ["--", "/var/lang/bin/python3.12", "-P", DRIVER, f"{IO}/plan.json", f"{IO}/report.json"]
    command += [f"--skip={h}" for h in skip]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads((run / "report.json").read_text())
    report["log"] = (done.stdout + done.stderr)[-4000:]
    assert report["hooks"].get("loaded_from", LAYER) == LAYER, "not the built layer's code on /opt"
    return report


@pytest.mark.parametrize("fn", list(PLANS))
def test_two_restores_of_one_snapshot_share_nothing(scene: Scene, fn: str) -> None:
    w, proxy = scene.w, scene.proxy
    plan = PLANS[fn](scene)
    signed_before, bedrock_before = len(proxy.calls), len(w.bedrock.requests)
    report = restore_twice(scene, fn, plan)
    assert report["problems"] == [], f"{report['problems']}\n--- {fn}'s log ---\n{report['log']}"
    plan.check(report)
    # What reached OpenSearch (SigV4 through the proxy) and Bedrock after the first restore's first
    # call was signed with a restore's own key, never the snapshot's; where the function calls them,
    # both restores did (the driver checks every signature of each restore's own process too).
    bedrock = [r.headers.get("authorization", "") for r in w.bedrock.requests[bedrock_before:]]
    wire = {
        "opensearch": [c.key for c in proxy.calls[signed_before:]],
        "bedrock": [signer(a) for a in bedrock],
    }
    for service, keys in wire.items():
        restored = [i for i, k in enumerate(keys) if k in ("AKIARESTORE0", "AKIARESTORE1")]
        if service in plan.reaches:
            assert {"AKIARESTORE0", "AKIARESTORE1"} <= set(keys), (service, keys)
        if restored:
            assert INIT_KEY not in keys[restored[0] :], f"a restore signed with the snapshot's key: {keys}"
    # Each restore's traces reached the X-Ray daemon (its emitter's socket is its own, not the closed one).
    for child in report["restores"]:
        assert traced(w, {s["trace_id"] for s in child["served"]}), "a restore's traces were lost"


def test_every_snapstart_function_is_rehearsed(artifacts: Artifacts) -> None:
    """The SnapStart functions of the translated template (``SnapStart.ApplyOn: PublishedVersions``,
    also under a condition) are the rehearsed ones: a function given SnapStart needs a plan."""
    resources = artifacts.translated["Resources"]
    snapstart = {
        name
        for name, r in resources.items()
        if r["Type"] == "AWS::Lambda::Function"
        and "PublishedVersions" in json.dumps(r["Properties"].get("SnapStart"))
    }
    assert snapstart - set(PLANS) == set(), "SnapStart functions without a snapshot rehearsal"
    assert set(PLANS) - snapstart == set(), "rehearsed as SnapStart functions, but not in the template"


def traced(w: World, trace_ids: set[str]) -> bool:
    """Whether the X-Ray daemon received documents of these traces (UDP: given a moment to arrive)."""
    for _ in range(50):
        if w.xray.of_trace(trace_ids):
            return True
        time.sleep(0.1)
    return False


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
def test_the_check_fails_when_a_hook_is_removed(scene: Scene, skipped: str, reason: str) -> None:
    report = restore_twice(scene, "SearchFunction", PLANS["SearchFunction"](scene), skip=(skipped,))
    assert [p for p in report["problems"] if p.startswith(reason)], report["problems"]
    assert not [p for p in report["problems"] if "failed requests" in p], report["problems"]


def test_the_check_fails_when_a_restore_keeps_the_snapshots_clients(scene: Scene) -> None:
    """Without both hooks that forget the clients, the restores sign with the credentials the init's
    clients were built with. (They share those clients' sockets too, which two restores at once may
    garble: only the credentials are asserted.)"""
    skip = ("close_connections", "drop_pools")
    report = restore_twice(scene, "KeysFunction", PLANS["KeysFunction"](scene), skip=skip)
    stale = [p for p in report["problems"] if "signed with the snapshot's credentials" in p]
    assert len(stale) == 2 and all(INIT_KEY in p for p in stale), report["problems"]


@pytest.mark.parametrize(
    ("fn", "fault", "written"),
    [
        # The template's RAGLINE_HOME lost: Ragline's default home is relative (.ragline), so the
        # caches would go to the task folder.
        ("SearchFunction", {"RAGLINE_HOME": None}, "/var/task/.ragline"),
        # A function's own RAGLINE_HOME off /tmp: on a layer's folder.
        ("IngestionFunction", {"RAGLINE_HOME": "/opt/ragline"}, "/opt/ragline"),
    ],
    ids=["SearchFunction-home-unset", "IngestionFunction-home-on-opt"],
)
def test_an_init_writing_outside_tmp_fails_the_rehearsal(
    scene: Scene, fn: str, fault: dict[str, str | None], written: str
) -> None:
    report = restore_twice(scene, fn, PLANS[fn](scene), env=fault)
    print("\nPROBLEMS", json.dumps(report["problems"], indent=1)[:3000])
    outside = [p for p in report["problems"] if p.startswith("the init wrote outside /tmp")]
    assert outside and written in outside[0] and "EROFS" in outside[0], report["problems"]
    # In the sandbox, as in Lambda, the write fails: the priming request with it.
    assert [p for p in report["problems"] if p.startswith("priming failed requests")], report["problems"]
