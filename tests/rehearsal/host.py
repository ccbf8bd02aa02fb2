"""Runs one built function the way Lambda does: ``infra/rehearsal/lambda-sandbox`` (read-only
/var/task, layers merged on /opt, a fresh /tmp, Lambda's environment) around the real Runtime
Interface Emulator, with the python3.12 runtime stand-in (plus the call recorder) on /var/runtime.
The TCP tap and stream splitting come from ``infra/rehearsal/prove``, the toolchain's own proof."""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from tests.rehearsal.xray import new_trace_header

ROOT = Path(__file__).parents[2]
REHEARSAL = ROOT / "infra" / "rehearsal"
TOOLS = REHEARSAL / ".tools"
SANDBOX_BIN = "/var/rehearsal/bin"
SANDBOX_LOGS = "/var/rehearsal/logs"
"""Where the tools and the call logs appear inside each function's sandbox."""


def _prove() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("rehearsal_prove", str(REHEARSAL / "prove"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


PROVE = _prove()
Tap = PROVE.Tap
free_port = PROVE.free_port
split_stream = PROVE.split_stream


class TracingTap(Tap):  # type: ignore[misc,valid-type]
    """The Runtime API as Lambda serves it: the RIE takes an invocation's ``X-Amzn-Trace-Id`` but
    never passes it on (its tracer is a no-op), so this tap (between the runtime or the Web Adapter
    and the RIE) adds the ``Lambda-Runtime-Trace-Id`` header Lambda's Runtime API sends with each
    event, from ``trace_header``, set before each invocation. ``injected`` counts the events."""

    MARK = b"\r\nLambda-Runtime-Aws-Request-Id:"

    def __init__(self, upstream_port: int, port: int = 0) -> None:
        self.trace_header = ""
        self.injected = 0
        super().__init__(upstream_port, port)

    def rewrite(self, tag: str, data: bytes) -> bytes:
        if tag == "s2c" and self.trace_header and self.MARK in data:
            added = f"\r\nLambda-Runtime-Trace-Id: {self.trace_header}".encode()
            self.injected += 1
            return data.replace(self.MARK, added + self.MARK, 1)
        return data


def runtime_with_recorder(dest: Path) -> Path:
    """The python3.12 runtime stand-in with the botocore call recorder as its sitecustomize."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(REHEARSAL / "runtime" / "python3.12", dest)
    shutil.copy(Path(__file__).parent / "recorder" / "sitecustomize.py", dest / "sitecustomize.py")
    return dest


class LambdaFunction:
    """One function under lambda-sandbox + aws-lambda-rie, in its own process group."""

    def __init__(
        self,
        name: str,
        *,
        task: Path,
        layers: list[Path],
        handler: str,
        env: dict[str, str],
        runtime: Path,
        log: Path,
        tap: TracingTap,
        port: int | None = None,
    ) -> None:
        self.name = name
        self.last_invoked = 0.0
        """When it was last invoked (``time.monotonic``): whose log a failed assertion shows."""
        self.trace_ids: set[str] = set()
        self.tap = tap
        self.port, self.api_port = port or free_port(), tap.upstream
        self.log = log
        # The RIE and the log folder are reached through binds under /var: the sandbox's fresh /tmp
        # would hide them when the repository itself is under /tmp.
        cmd = [str(REHEARSAL / "lambda-sandbox"), "--task", str(task), "--runtime", str(runtime)]
        cmd += ["--bind", f"{TOOLS / 'bin'}:{SANDBOX_BIN}", "--rw-bind", f"{log.parent}:{SANDBOX_LOGS}"]
        for layer in layers:
            cmd += ["--layer", str(layer)]
        for k, v in {"AWS_LAMBDA_FUNCTION_NAME": name, **env}.items():
            cmd += ["-e", f"{k}={v}"]
        cmd += [
            "--",
            f"{SANDBOX_BIN}/aws-lambda-rie",
            "--runtime-interface-emulator-address",
            f"127.0.0.1:{self.port}",
            "--runtime-api-address",
            f"127.0.0.1:{self.api_port}",
            "/var/runtime/bootstrap",
            handler,
        ]
        self._logf = log.open("wb")
        self.proc = subprocess.Popen(cmd, stdout=self._logf, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            PROVE.wait_port(self.port, self.proc)
        except BaseException:
            self.stop()  # a function that never came up leaves nothing running either
            raise

    def invoke(self, event: dict[str, Any], timeout: float = 120) -> tuple[int, bytes]:
        """One invocation, in a new sampled X-Ray trace (its id kept in ``trace_ids``), as API Gateway
        or the event source mapping starts one."""
        data = json.dumps(event).encode()
        url = f"http://127.0.0.1:{self.port}/2015-03-31/functions/function/invocations"
        header, trace_id = new_trace_header()
        self.trace_ids.add(trace_id)
        self.last_invoked = time.monotonic()
        self.tap.trace_header = header
        request = urllib.request.Request(url, data=data, method="POST", headers={"X-Amzn-Trace-Id": header})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def invoke_json(self, event: dict[str, Any]) -> Any:
        """The handler's return value; a handler error (RIE answers 200 with errorType) fails loudly."""
        status, body = self.invoke(event)
        result = json.loads(body or b"null")
        if status != 200 or (isinstance(result, dict) and "errorType" in result):
            raise AssertionError(f"{self.name} failed: HTTP {status} {body[:500]!r}\n{self.log_tail()}")
        return result

    def log_tail(self, lines: int = 40) -> str:
        self._logf.flush()
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Stops the RIE and every process below it (the runtime, the Web Adapter and its app, what
        a handler spawned: the RIE starts the runtime in a process group of its own), also those that
        ignore SIGTERM; idempotent."""
        tree = {self.proc.pid} | descendants(self.proc.pid)
        _signal(tree, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        deadline = time.monotonic() + 5
        while (alive := tree & set(live_processes())) and time.monotonic() < deadline:
            _signal(alive, signal.SIGKILL)
            time.sleep(0.05)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._logf.close()


def _signal(pids: set[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def descendants(pid: int) -> set[int]:
    """The live processes below ``pid``: children, grandchildren…"""
    table = live_processes()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in table.items() if parent in frontier} - found
        found |= frontier
    return found


def live_processes() -> dict[int, int]:
    """pid → parent pid of every process but zombies, from /proc/<pid>/stat."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        state, parent = stat[stat.rindex(")") + 2 :].split()[:2]  # after "pid (comm) "
        if state != "Z":
            out[int(entry.name)] = int(parent)
    return out


class Logged(Protocol):
    name: str
    last_invoked: float

    def log_tail(self, lines: int = 40) -> str: ...


@contextlib.contextmanager
def blame(functions: Iterable[Logged]) -> Iterator[None]:
    """A failed assertion inside carries the log tail of the function that failed (:func:`blamed`): a
    ``run.sh`` or handler failure shows its cause, not only ``502 == 200``. ``functions`` is read when
    an assertion fails (a live view such as ``World.running.values()``)."""
    try:
        yield
    except AssertionError as exc:
        culprits = blamed(exc, list(functions))
        if not culprits:
            raise
        tails = "".join(f"\n--- {f.name}'s log, last lines ---\n{f.log_tail()}" for f in culprits)
        raise AssertionError(f"{exc}{tails}") from exc


def blamed(exc: BaseException, functions: list[Logged], most: int = 3) -> list[Logged]:
    """Whose logs explain ``exc``, among the functions invoked so far: those its message names, in the
    order named (a check after the scenario names what it caught: an action outside a role, a missing
    metric), at most ``most``; else the one the failing step checks (the innermost frame of the
    traceback with a local ``fn`` naming a function, as the steps name theirs); else the one invoked
    last (a step's assertion checks the answer it just got). Never the last one merely for running
    last: a later step's function must not hide the log of the one that failed."""
    invoked = {f.name: f for f in functions if f.last_invoked}
    message = str(exc)
    named = sorted(
        (found.start(), name)
        for name in invoked
        if (found := re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message))
    )
    if named:
        return [invoked[name] for _, name in named[:most]]
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        fn = frame.f_locals.get("fn")
        if isinstance(fn, str) and fn in invoked:
            return [invoked[fn]]
    return [max(invoked.values(), key=lambda f: f.last_invoked)] if invoked else []


def wait_until(predicate: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return predicate()
