"""Two SnapStart "restores" of one initialised function process, run by python3.12 with the built
layer and function code on its path (tests/rehearsal/test_snapshot_safety.py starts it).

    python3.12 restore_driver.py PLAN.json REPORT.json [--skip HOOK ...]

PLAN holds the priming events and, per restore, the events to serve. The driver imports the handler
(the SnapStart init: ``AWS_LAMBDA_INITIALIZATION_TYPE`` is ``snap-start``), serves the priming events
(priming, as SnapStart guides recommend: it opens the connections a real snapshot would be tempted to
keep), runs the before-snapshot hooks with the runtime's own runner (awslambdaric's; with a hook
skipped by name, ``snapstart.run_before_snapshot``, which runs them in the same order), records the
sockets still open, then forks twice with the C library's ``fork`` — a restore copies memory and runs
no at-fork handler, so Python's own reseed of ``random`` after ``os.fork`` must not run either. Each
child takes fresh credentials (as Lambda gives a restored environment), runs the after-restore hooks
and serves its events; the parent writes one JSON report (stdout is the function's: its logs and
metrics) with the problems :func:`problems` finds (none: the snapshot was safe).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import json
import os
import random
import uuid
from pathlib import Path
from typing import Any


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
    """One invocation, with what Lambda gives per request: a request id, a context, a trace header."""
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
    result = handler(event, context)
    status = int(result.get("statusCode", 200)) if isinstance(result, dict) else 200
    body = result.get("body", "")[:300]
    return {"status": status, "body": body, "request_id": request_id, "trace_id": trace_id}


def restore(
    snapstart: Any, handler: Any, events: list[dict[str, Any]], skip: tuple[str, ...], n: int
) -> dict[str, Any]:
    os.environ["AWS_ACCESS_KEY_ID"] = f"AKIARESTORE{n}"  # Lambda's fresh credentials for this copy
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
        "pid": os.getpid(),
    }


def runtime_hooks() -> Any:
    """The runtime's own hook runner (awslambdaric's, as the managed runtime runs the hooks)."""
    from awslambdaric import lambda_runtime_hooks_runner

    return lambda_runtime_hooks_runner


def problems(report: dict[str, Any]) -> list[str]:
    """What makes the snapshot unsafe, each as one sentence."""
    out = []
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
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("plan", type=Path)
    parser.add_argument("report", type=Path)
    parser.add_argument("--skip", action="append", default=[], help="a hook to leave out, by name")
    args = parser.parse_args()
    plan = json.loads(args.plan.read_text())
    skip = tuple(args.skip)

    app = importlib.import_module("app")  # the init (the task folder is first on sys.path)
    from ragline import snapstart

    handler = app.lambda_handler
    primed = [invoke(handler, e) for e in plan["prime"]]
    if skip:  # the same order, minus the skipped hook
        snapstart.run_before_snapshot(skip)
    else:
        runtime_hooks().run_before_snapshot()
    open_after_hooks = socket_inodes()
    at_fork = socket_inodes()

    libc = ctypes.CDLL(None, use_errno=True)
    pipes, pids = [], []
    for n in range(2):
        read_end, write_end = os.pipe()
        pid = libc.fork()
        if pid == 0:
            os.close(read_end)
            try:
                result: dict[str, Any] = restore(snapstart, handler, plan["restores"][n], skip, n)
            except BaseException as exc:  # reported, never hidden
                result = {"error": f"{type(exc).__name__}: {exc}"}
            with os.fdopen(write_end, "w") as out:
                json.dump(result, out)
            os._exit(0)
        os.close(write_end)
        pipes.append(read_end)
        pids.append(pid)
    restores = []
    for read_end, pid in zip(pipes, pids, strict=True):
        with os.fdopen(read_end) as got:
            restores.append(json.loads(got.read() or '{"error": "no report"}'))
        os.waitpid(pid, 0)
    errors = [r["error"] for r in restores if "error" in r]
    report: dict[str, Any] = {
        "primed": primed,
        "open_after_hooks": open_after_hooks,
        "sockets_at_fork": at_fork,
        "restores": restores,
        "hooks": {
            "skipped": list(skip),
            "loaded_from": str(Path(snapstart.__file__).parent),
        },
    }
    report["problems"] = errors or problems(report)
    args.report.write_text(json.dumps(report))


if __name__ == "__main__":
    main()
