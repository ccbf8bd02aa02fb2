"""Two SnapStart "restores" of one initialised function process, run by python3.12 inside
``infra/rehearsal/lambda-sandbox`` (the built function on a read-only /var/task, its layers on a
read-only /opt, a fresh /tmp, the whole file system read-only besides; tests/rehearsal/
test_snapshot_safety.py starts it).

    python3.12 -P restore_driver.py PLAN.json REPORT.json [--skip HOOK ...]

PLAN holds the priming events and, per restore, the events to serve; REPORT is written to a folder
the sandbox leaves writable for it (``--rw-bind``). The driver puts the task root and the layer paths
first on ``sys.path`` as the runtime's bootstrap does, imports the handler (the SnapStart init:
``AWS_LAMBDA_INITIALIZATION_TYPE`` is ``snap-start``), serves the priming events (priming, as
SnapStart guides recommend: it opens the connections a real snapshot would be tempted to keep), runs
the before-snapshot hooks with the runtime's own runner (awslambdaric's; with a hook skipped by name,
``snapstart.run_before_snapshot``, which runs them in the same order), records the sockets still
open, then forks twice with the C library's ``fork`` — a restore copies memory and runs no at-fork
handler, so Python's own reseed of ``random`` after ``os.fork`` must not run either. Each child takes
fresh credentials (as Lambda gives a restored environment), runs the after-restore hooks and serves
its events; the parent writes one JSON report (stdout is the function's: its logs and metrics) with
the problems :func:`problems` finds (none: the snapshot was safe).

Two records make the report's other problems: every file-system write the process attempts outside
``/tmp`` (an audit hook: Lambda's file system is read-only there, so such a write fails with EROFS,
or is swallowed and silently lost) and the access key of every SigV4 signature it makes (botocore's
signer, which opensearch-py's uses too: a restore must sign with its own fresh credentials only).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import json
import os
import random
import sys
import uuid
from pathlib import Path
from typing import Any

WRITABLE = ("/tmp", "/dev/null")
"""What a Lambda function may write: ``/tmp`` (and the null device)."""
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
WRITE_EVENTS = {
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.replace": (0, 1),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
    "sqlite3.connect": (0,),
}
"""Audit events that write to the file system → which of their arguments are the paths written."""


class Writes:
    """An audit hook (``sys.addaudithook``): every path this process opens for writing, creates,
    renames, removes or changes outside :data:`WRITABLE`, while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.outside: list[str] = []

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.on:
            return
        if event == "open":
            path, mode, flags = args
            writing = bool(set(mode) & set("wax+")) if isinstance(mode, str) else bool(flags & WRITE_FLAGS)
            paths = [path] if writing else []
        elif event in WRITE_EVENTS:
            paths = [args[i] for i in WRITE_EVENTS[event]]
        else:
            return
        for path in paths:
            if isinstance(path, int) or path in (None, "", ":memory:"):  # a descriptor, an in-memory db
                continue
            text = os.path.abspath(os.fsdecode(path).removeprefix("file:").split("?", 1)[0])
            if not any(text == w or text.startswith(w + "/") for w in WRITABLE):
                self.outside.append(f"{event} {text}")


WRITES = Writes()
SIGNED: list[str] = []
"""The access key id of every SigV4 signature made, in order."""


def record_signatures() -> None:
    """Every SigV4 signature botocore makes (its AWS clients', and opensearch-py's signer) is recorded
    in :data:`SIGNED` by the access key it signs with."""
    from botocore.auth import SigV4Auth

    add_auth = SigV4Auth.add_auth

    def recorded(self: Any, request: Any) -> Any:
        SIGNED.append(self.credentials.access_key)
        return add_auth(self, request)

    SigV4Auth.add_auth = recorded  # type: ignore[method-assign]


def socket_inodes() -> list[str]:
    """The ``socket:[inode]`` of every open descriptor of this process."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed meanwhile
            continue
        if target.startswith("socket:"):
            out.append(target)
    return sorted(out)


def invoke(handler: Any, event: dict[str, Any]) -> dict[str, Any]:
    """One invocation, with what Lambda gives per request: a request id, a context, a trace header.
    A handler's exception is the invocation's error (status 500 and the error, as Lambda reports
    it); an SQS batch with failed items is a failure too."""
    event = json.loads(json.dumps(event))
    request_id = uuid.uuid4().hex  # the gateway's request id: the run id of a metered request
    if "requestContext" in event:
        event["requestContext"]["requestId"] = request_id
    context = type(
        "Context",
        (),
        {
            "aws_request_id": uuid.uuid4().hex,
            "function_name": os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "fn"),
            "function_version": "1",
            "invoked_function_arn": "arn:aws:lambda:us-east-1:123456789012:function:fn:live",
            "memory_limit_in_mb": 1024,
            "get_remaining_time_in_millis": staticmethod(lambda: 60_000),
        },
    )()
    trace_id = f"1-{uuid.uuid4().hex[:8]}-{uuid.uuid4().hex[:24]}"
    os.environ["_X_AMZN_TRACE_ID"] = f"Root={trace_id};Parent={uuid.uuid4().hex[:16]};Sampled=1"
    served = {"request_id": request_id, "trace_id": trace_id}
    try:
        result = handler(event, context)
    except Exception as exc:  # the invocation's error, as Lambda reports it
        return {**served, "status": 500, "body": f"{type(exc).__name__}: {exc}"[:600]}
    if isinstance(result, dict) and result.get("batchItemFailures"):
        return {**served, "status": 500, "body": json.dumps(result)[:600]}
    status = int(result.get("statusCode", 200)) if isinstance(result, dict) else 200
    body = result.get("body", "")[:300] if isinstance(result, dict) and "statusCode" in result else ""
    return {**served, "status": status, "body": body}


def restore(
    snapstart: Any, handler: Any, events: list[dict[str, Any]], skip: tuple[str, ...], n: int
) -> dict[str, Any]:
    os.environ["AWS_ACCESS_KEY_ID"] = f"AKIARESTORE{n}"  # Lambda's fresh credentials for this copy
    SIGNED.clear()
    WRITES.outside.clear()
    if skip:
        snapstart.run_after_restore(skip)
    else:
        runtime_hooks().run_after_restore()
    # Drawn as the restore begins: what serving consumes of ``random`` varies between the two copies
    # (a conditional write one of them loses takes another path), so only the state the hooks left
    # tells whether they share it.
    drawn = [random.random() for _ in range(4)]
    served = [invoke(handler, e) for e in events]
    return {
        "served": served,
        "run_ids": [s["request_id"] for s in served if s["status"] < 300],
        "random": drawn,
        "uuids": [uuid.uuid4().hex for _ in range(2)],
        "sockets": socket_inodes(),
        "signed": list(SIGNED),
        "key": os.environ["AWS_ACCESS_KEY_ID"],
        "writes_outside_tmp": list(WRITES.outside),
        "pid": os.getpid(),
    }


def runtime_hooks() -> Any:
    """The runtime's own hook runner (awslambdaric's, as the managed runtime runs the hooks)."""
    from awslambdaric import lambda_runtime_hooks_runner

    return lambda_runtime_hooks_runner


def read_only(path: str) -> bool:
    """Whether ``path`` (or the nearest folder of it that exists) is on a read-only mount."""
    while not os.path.exists(path):
        path = os.path.dirname(path)
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


def outside_tmp(phase: str, writes: list[str]) -> list[str]:
    if not writes:
        return []
    distinct = sorted(set(writes))
    erofs = [w for w in distinct if read_only(w.split(" ", 1)[1])]
    why = f" ({len(erofs)} on a read-only file system: EROFS in Lambda)" if erofs else ""
    return [f"{phase} wrote outside /tmp{why}: {distinct}"]


def problems(report: dict[str, Any]) -> list[str]:
    """What makes the snapshot unsafe, each as one sentence."""
    out = outside_tmp("the init", report["init_writes_outside_tmp"])
    failed = [s for s in report["primed"] if s["status"] >= 300]
    if failed:
        out.append(f"priming failed requests: {failed}")
    if report["open_after_hooks"]:
        out.append(f"a socket was open after the before-snapshot hooks: {report['open_after_hooks']}")
    a, b = report["restores"]
    for name in ("run_ids", "random", "uuids"):
        if set(a[name]) & set(b[name]):
            out.append(f"the two restores share {name}: {sorted(set(a[name]) & set(b[name]))}")
    for n, child in enumerate(report["restores"]):
        failed = [s for s in child["served"] if s["status"] >= 300]
        if failed:
            out.append(f"restore {n} failed requests: {failed}")
        reused = set(child["sockets"]) & set(report["sockets_at_fork"])
        if reused:
            out.append(f"restore {n} used a socket opened before the fork: {sorted(reused)}")
        if not child["signed"]:
            out.append(f"restore {n} signed no AWS request: its fresh credentials are unproved")
        elif set(child["signed"]) != {child["key"]}:
            stale = sorted(set(child["signed"]) - {child["key"]})
            out.append(f"restore {n} signed with the snapshot's credentials: {stale}")
        out += outside_tmp(f"restore {n}", child["writes_outside_tmp"])
    return out


def init_path() -> None:
    """``sys.path`` as the python3.12 runtime's bootstrap builds it (infra/rehearsal/runtime): the task
    root, then the layer paths, before the runtime's own packages."""
    task_root = os.environ.get("LAMBDA_TASK_ROOT", "/var/task")
    sys.path[0:0] = [task_root, "/opt/python/lib/python3.12/site-packages", "/opt/python"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("plan", type=Path)
    parser.add_argument("report", type=Path)
    parser.add_argument("--skip", action="append", default=[], help="a hook to leave out, by name")
    args = parser.parse_args()
    plan = json.loads(args.plan.read_text())
    init_path()
    sys.addaudithook(WRITES)
    WRITES.on = True
    try:
        app = importlib.import_module("app")  # the init
    except Exception as exc:  # the init failed: nothing to snapshot
        failed = [f"the init failed: {type(exc).__name__}: {exc}", *outside_tmp("the init", WRITES.outside)]
        report: dict[str, Any] = {"init_writes_outside_tmp": WRITES.outside, "hooks": {}, "problems": failed}
    else:
        report = snapshot(app.lambda_handler, plan, tuple(args.skip))
    WRITES.on = False
    args.report.write_text(json.dumps(report))


def snapshot(handler: Any, plan: dict[str, Any], skip: tuple[str, ...]) -> dict[str, Any]:
    """The report of the init that imported ``handler``: primed, hooked, forked into two restores."""
    from ragline import snapstart

    record_signatures()
    primed = [invoke(handler, e) for e in plan["prime"]]
    if skip:  # the same order, minus the skipped hook
        snapstart.run_before_snapshot(skip)
    else:
        runtime_hooks().run_before_snapshot()
    open_after_hooks = socket_inodes()
    at_fork = socket_inodes()
    init_writes = list(WRITES.outside)
    restores = fork([lambda n=n: restore(snapstart, handler, plan["restores"][n], skip, n) for n in (0, 1)])
    errors = [r["error"] for r in restores if "error" in r]
    report = {
        "primed": primed,
        "init_writes_outside_tmp": init_writes,
        "open_after_hooks": open_after_hooks,
        "sockets_at_fork": at_fork,
        "restores": restores,
        "hooks": {
            "skipped": list(skip),
            "loaded_from": str(Path(snapstart.__file__).parent),
        },
    }
    report["problems"] = errors or problems(report)
    return report


def fork(children: list[Any]) -> list[dict[str, Any]]:
    """Each of ``children`` run in a copy of this process made by the C library's ``fork`` (all at
    once, as restored environments run): what each returned, or its error."""
    libc = ctypes.CDLL(None, use_errno=True)
    pipes, pids = [], []
    for child in children:
        read_end, write_end = os.pipe()
        pid = libc.fork()
        if pid == 0:
            os.close(read_end)
            try:
                result: dict[str, Any] = child()
            except BaseException as exc:  # reported, never hidden
                result = {"error": f"{type(exc).__name__}: {exc}"}
            with os.fdopen(write_end, "w") as out:
                json.dump(result, out)
            os._exit(0)
        os.close(write_end)
        pipes.append(read_end)
        pids.append(pid)
    results = []
    for read_end, pid in zip(pipes, pids, strict=True):
        with os.fdopen(read_end) as got:
            results.append(json.loads(got.read() or '{"error": "no report"}'))
        os.waitpid(pid, 0)
    return results


if __name__ == "__main__":
    main()
