"""Lambda SnapStart: the init that is worth snapshotting, and the runtime hooks that keep a snapshot
safe to resume many times (``snapshot-restore-py``, which the managed python3.12 runtime carries).

A snapshot is one memory image resumed by many execution environments. So init does the expensive
work once (imports, pydantic models, the settings, botocore's parsed service models) but builds no
AWS client — a client keeps the credentials it was built with, and Lambda gives a restored
environment fresh ones — and the hooks below make sure nothing that must be fresh or unique survives:

- before the snapshot, :func:`close_connections` closes every pooled connection (boto3's, opensearch-
  py's, httpx's) and forgets the clients;
- after a restore, :func:`reseed_random` reseeds ``random`` (a restore runs no at-fork handler),
  :func:`drop_pools` forgets anything that could still hold a pre-snapshot socket or client, and
  :func:`renew_process_identity` makes process-unique state unique again.

Outside Lambda (the CLI, ``ragline serve``) the library is absent and nothing is registered.
"""

from __future__ import annotations

import os
import random
import socket
import sys
from collections.abc import Callable
from typing import Any

from ragline import wiring
from ragline.environment import snapstart_init

Hook = Callable[[], None]


def close_connections() -> None:
    """Before the snapshot: no socket, client or credential goes into the image."""
    wiring.release_connections()
    emitter = _xray_emitter()
    if emitter is not None:  # its recorder opens a UDP socket when the X-Ray SDK is imported
        emitter._socket.close()


def reseed_random() -> None:
    """After a restore: every copy of the image would otherwise draw the same ``random`` numbers."""
    random.seed(os.urandom(32))
    numpy_random: Any = sys.modules.get("numpy.random")
    if numpy_random is not None:  # its legacy global generator, should anything use it
        numpy_random.seed(int.from_bytes(os.urandom(4), "little"))


def drop_pools() -> None:
    """After a restore: anything built since the snapshot hook (or missed by it) is rebuilt on use."""
    wiring.release_connections()


def renew_process_identity() -> None:
    """After a restore: the X-Ray emitter gets a socket of its own. Nothing else in Ragline caches a
    process-unique value: ids are ``uuid4`` (``os.urandom``), temporary files ``mkstemp``, run ids the
    gateway's, and the logger's debug sampling draws from ``random`` per invocation."""
    emitter = _xray_emitter()
    if emitter is not None:
        fresh = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        fresh.setblocking(False)  # as the emitter's own
        emitter._socket.close()
        emitter._socket = fresh


def _xray_emitter() -> Any:
    """The X-Ray SDK's UDP emitter, if a tracer loaded the SDK (never imported here)."""
    core = sys.modules.get("aws_xray_sdk.core")
    emitter = getattr(getattr(core, "xray_recorder", None), "emitter", None)
    return emitter if hasattr(emitter, "_socket") else None


BEFORE_SNAPSHOT: tuple[Hook, ...] = (close_connections,)
AFTER_RESTORE: tuple[Hook, ...] = (reseed_random, drop_pools, renew_process_identity)
_registered = False


def register() -> bool:
    """Register the hooks with ``snapshot_restore_py`` (once); False where the library is absent."""
    global _registered  # noqa: PLW0603 (one registration per process, as the runtime keeps one registry)
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:
        return False
    if not _registered:
        for hook in BEFORE_SNAPSHOT:
            register_before_snapshot(hook)
        for hook in AFTER_RESTORE:
            register_after_restore(hook)
        _registered = True
    return True


def prepare(*parts: str, container: bool = True) -> None:
    """The init of a SnapStart version; each handler calls it at import, and it does nothing unless
    Lambda is initialising for a snapshot (``AWS_LAMBDA_INITIALIZATION_TYPE=snap-start``, read through
    :func:`ragline.environment.snapstart_init` — the one environment read at import, documented so: a
    snapshot's init is the place for expensive work, an on-demand init is not).

    It registers the hooks, then warms: the settings, the modules of the container's ``parts`` (the
    services the handler uses, e.g. ``prepare("search")``; every service when none is named) and of
    the configured adapters, and their AWS service models. ``container=False`` (the authorizer, which
    never loads pydantic): only the key lookup's model. No request is sent, no client built, no
    credential resolved.
    """
    if not snapstart_init() or not register():
        return
    if container:
        wiring.container().warm(parts)
    else:
        wiring.warm_key_lookup()


def run_before_snapshot(skip: tuple[str, ...] = ()) -> None:
    """Run the registered before-snapshot hooks as the runtime does (last registered first, each
    once); ``skip`` names hooks to leave out (the fork test's deliberate breakage)."""
    from snapshot_restore_py import get_before_snapshot

    hooks = get_before_snapshot()
    while hooks:
        func, args, kwargs = hooks.pop()
        if func.__name__ not in skip:
            func(*args, **kwargs)


def run_after_restore(skip: tuple[str, ...] = ()) -> None:
    """Run the registered after-restore hooks as the runtime does (in registration order)."""
    from snapshot_restore_py import get_after_restore

    for func, args, kwargs in get_after_restore():
        if func.__name__ not in skip:
            func(*args, **kwargs)
