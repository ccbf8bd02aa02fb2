"""The TypeScript client (clients/typescript) under Node: its types are generated fresh from
docs/openapi.json, and its node:test suite passes against a real ``ragline serve --api-keys``.

``npm ci`` runs here when the installed packages are not those of package-lock.json, so ``make test``
needs nothing more than Node 20 on a fresh machine. A Node test that fails, or no test at all, fails here.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.config import Settings
from ragline.wiring import Container

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "clients" / "typescript"
STAMP = PACKAGE / "node_modules" / ".ragline-lock-sha256"
# Every suite of clients/typescript/test: each must have run and passed (a file not loaded fails).
SUITES = {
    "documents",
    "runs",
    "errors in the one shape",
    "end users",
    "retries",
    "parseSse",
    "runEvents",
    "bodyChunks",
    "RaglineError.fromResponse",
    "retryAfterSeconds",
    "transport",
}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=PACKAGE, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def npm() -> str:
    """npm, with the locked packages installed (``npm ci`` when package-lock.json changed) and the
    client and its tests compiled."""
    found = shutil.which("npm")
    if found is None or shutil.which("node") is None:
        pytest.fail("Node 20 and npm are needed for the TypeScript client's tests")
    lock = hashlib.sha256((PACKAGE / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text() != lock:
        installed = run(found, "ci", "--no-audit", "--no-fund", "--loglevel=error")
        assert installed.returncode == 0, installed.stdout + installed.stderr
        STAMP.write_text(lock)
    built = run(found, "run", "build:test")
    assert built.returncode == 0, built.stdout + built.stderr
    return found


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """``ragline serve --api-keys`` on a free port (its URL and an admin key of tenant ``acme``)."""
    home = tmp_path_factory.mktemp("home")
    # The server's settings are the defaults (the embedded backend, the offline models): nothing in
    # this process's environment (a RAGLINE_* or OPENAI_* variable) may point it elsewhere.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGLINE_", "OPENAI_"))}
    # but one: the Node suite's data source names a loopback site (its sync stays on this machine)
    env["RAGLINE_SOURCE_LOOPBACK_HTTP"] = "1"
    container = Container(Settings.from_env(env, home=home))
    container.tenancy.create_tenant("acme")
    key, _ = container.tenancy.create_key("acme", scopes=["chat", "search", "ingest", "admin"])
    container.close()
    log = home / "serve.log"
    command = [sys.executable, "-c", "from ragline.cli.app import main; main()", "serve", "--api-keys"]
    command += ["--tenant", "acme", "--port", "0", "--home", str(home)]
    command += ["--functions", str(ROOT / "functions")]
    with log.open("w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    try:
        url = None
        for _ in range(1200):  # the app imports its models first: up to two minutes
            found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", log.read_text())
            if found or server.poll() is not None:
                url = found and found.group(1)
                break
            time.sleep(0.1)
        assert url, f"ragline serve did not start:\n{log.read_text()}"
        yield url, key
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_committed_types_are_generated_from_the_committed_document(npm: str) -> None:
    checked = run(npm, "run", "--silent", "check-generated")
    assert checked.returncode == 0, checked.stderr + "\n(regenerate with `make ts-client`)"


CONSUMER = """
import { RaglineClient, RaglineError } from "@ragline/client";
import type { RunEventOf, SearchResponse } from "@ragline/client";

const rl = new RaglineClient({ baseUrl: "http://127.0.0.1:1", apiKey: "rl_x" });
export async function answer(): Promise<string> {
  for await (const event of rl.chat("q", { namespaces: ["docs"] })) {
    if (event.type === "final") return (event satisfies RunEventOf<"final">).answer;
  }
  return "";
}
export const hits = (r: SearchResponse): number => r.hits.length;
// @ts-expect-error: k is a number in the generated SearchRequest
export const wrong = () => rl.search("docs", "q", { k: "ten" });
console.log(typeof RaglineClient, new RaglineError({ status: 404, code: "not_found", message: "m" }).status);
"""


def test_the_packed_package_imports_and_types_in_a_consumer_project(npm: str, tmp_path: Path) -> None:
    """What ``npm publish`` would ship (``npm pack``), installed into a project of its own: its ESM
    entry point loads under Node and its declarations type a consumer's code (a wrong field fails)."""
    packed = run(npm, "pack", "--silent", "--pack-destination", str(tmp_path))
    assert packed.returncode == 0, packed.stderr
    tarball = tmp_path / packed.stdout.strip().splitlines()[-1]
    files = subprocess.run(["tar", "-tzf", str(tarball)], capture_output=True, text=True, check=True)
    assert {"package/dist/index.js", "package/dist/index.d.ts", "package/README.md"} <= set(
        files.stdout.split()
    )
    assert not [f for f in files.stdout.split() if f.startswith(("package/test/", "package/build/"))]
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text('{"name": "app", "private": true, "type": "module"}')
    (app / "main.ts").write_text(CONSUMER)
    (app / "tsconfig.json").write_text(
        '{"compilerOptions": {"strict": true, "module": "NodeNext", "moduleResolution": "NodeNext",'
        ' "target": "ES2022", "lib": ["ES2022", "DOM"], "types": [], "outDir": "out"}, "files": ["main.ts"]}'
    )
    installed = subprocess.run(
        [npm, "install", "--offline", "--no-audit", "--no-fund", str(tarball)],
        cwd=app, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    compiled = subprocess.run(
        [str(PACKAGE / "node_modules" / ".bin" / "tsc"), "-p", "tsconfig.json"],
        cwd=app, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stdout
    ran = subprocess.run(["node", "out/main.js"], cwd=app, capture_output=True, text=True, check=False)
    assert (ran.returncode, ran.stdout) == (0, "function 404\n"), ran.stderr


def test_the_node_suite_passes_against_ragline_serve(npm: str, serve: tuple[str, str]) -> None:
    url, key = serve
    env = {**os.environ, "RAGLINE_TEST_URL": url, "RAGLINE_TEST_API_KEY": key}
    node = shutil.which("node") or "node"
    result = run(node, "--test", "--test-reporter=tap", "build/test/", env=env)
    output = result.stdout + result.stderr
    counts = {k: int(v) for k, v in re.findall(r"^# (tests|pass|fail) (\d+)$", output, re.MULTILINE)}
    passed = set(re.findall(r"^ok \d+ - (.+)$", output, re.MULTILINE))
    assert result.returncode == 0 and counts.get("fail") == 0, output
    assert counts.get("tests", 0) > 0 and counts.get("pass") == counts["tests"], output
    assert passed >= SUITES, f"suites that did not pass: {sorted(SUITES - passed)}\n{output}"
