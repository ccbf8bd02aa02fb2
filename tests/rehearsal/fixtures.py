"""The rehearsal's fixtures: the built artifacts, and the worlds (the stack as deployed, one per chat
provider and OpenSearch mode) that :mod:`tests.rehearsal.world` builds on them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.rehearsal.cloudformation import REGION
from tests.rehearsal.host import ROOT, descendants, runtime_with_recorder, wait_until
from tests.rehearsal.signed_proxy import SignedProxy
from tests.rehearsal.world import ARCH, Artifacts, World
from tests.support.bedrock_server import BedrockServer
from tests.support.openai_replay import OpenAIReplay
from tests.support.textract_server import TextractServer


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


WORLDS = {"bedrock": ("bedrock", "domain"), "openai-serverless": ("openai", "serverless")}
"""Chat provider and OpenSearch mode of each run: the template's defaults (Bedrock, a domain), and the
other provider with the other store, so both of each are rehearsed in two runs, not four."""


@pytest.fixture(scope="module", params=list(WORLDS.values()), ids=list(WORLDS))
def world(
    request: pytest.FixtureRequest,
    artifacts: Artifacts,
    moto_endpoint: str,
    opensearch_url: str,
    bedrock_server_session: BedrockServer,
    openai_replay_server: OpenAIReplay,
    textract_server_session: TextractServer,
) -> Iterator[tuple[World, SignedProxy]]:
    """The stack as deployed with each chat provider: Bedrock (the template's default) and an
    OpenAI-compatible endpoint with its key in Secrets Manager; the first with a domain (its requests
    signed for ``es``), the second with a serverless collection (signed for ``aoss``, through the AOSS
    proxy, which refuses what a collection refuses and delays visibility as one does). The first reads
    scans with Textract (through its stand-in), the second leaves OCR off (the template's default)."""
    provider, mode = request.param
    before = descendants(os.getpid())
    front = None
    if mode == "serverless":
        from tests.support.aoss_proxy import AossProxy  # the store's stand-in for a collection

        front = AossProxy(opensearch_url).start()
    proxy = SignedProxy(front.url if front else opensearch_url, "aoss" if front else "es")
    textract = textract_server_session if provider == "bedrock" else None
    w = World(
        artifacts,
        moto_endpoint,
        proxy.start(),
        bedrock_server_session,
        openai_replay_server,
        provider,
        mode,
        textract=textract,
    )
    try:
        yield w, proxy
    finally:
        try:
            w.stop()
        finally:
            proxy.stop()
            if front:
                front.stop()
            httpx.delete(f"{opensearch_url}/rh-{w.suffix}*", params={"expand_wildcards": "all"}, timeout=30)
        # Processes stopped on every path: nothing the world started outlives it.
        gone = wait_until(lambda: not (descendants(os.getpid()) - before), timeout=5)
        assert gone, (
            f"processes left running after the world stopped: {commands(descendants(os.getpid()) - before)}"
        )


def commands(pids: set[int]) -> list[str]:
    out = []
    for pid in sorted(pids):
        try:
            out.append(f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            out.append(f"{pid}: (gone)")
    return out
