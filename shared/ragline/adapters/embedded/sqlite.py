"""Every SQLite file of the embedded backend is opened alike, and fails alike: into the error tree.

``sqlite3`` errors never leave the embedded backend raw (an HTTP 500 with no code). :func:`translate`
maps one by SQLite's primary result code (the message only when the ``sqlite3`` module raised it
itself and there is no code); :func:`maps_sqlite_errors` applies it to every public method of an
adapter class; :func:`open_sqlite` applies it, and a path check, when a file is opened.

- ``BUSY``/``LOCKED`` ("database is locked", "database table is locked"): :class:`Throttled`;
  another connection or process held the lock past the busy timeout.
- ``FULL``, ``IOERR``, ``NOMEM``, ``PROTOCOL``, ``INTERRUPT``, ``SCHEMA``, ``READONLY_RECOVERY``:
  :class:`DependencyUnavailable`; a fault of the host, not of the request, so a retry later (on
  AWS often in a fresh execution environment, whose /tmp has room) can succeed.
- ``READONLY``, ``CANTOPEN``, ``PERM``, ``AUTH``: :class:`DependencyFailed`; the file or its folder
  cannot be written, and retrying on the same deployment fails the same way. While *opening*, these
  and ``NOTADB`` are a :class:`ConfigurationError` naming the path (a read-only folder, a file that
  is not SQLite: on AWS Lambda only /tmp is writable).
- ``CORRUPT``, ``NOTADB``: :class:`DependencyFailed`; the file is damaged.
- ``CONSTRAINT`` (``IntegrityError``), SQL errors, misuse, a closed connection:
  :class:`DependencyFailed`; a bug, since adapters catch the integrity errors they expect (as
  :class:`Conflict`) inside their methods, so one that reaches the decorator is unexpected.

Messages are Ragline's own; SQLite's text (which may name tables and columns) stays on the chained
``__cause__`` for the logs, and ``details`` carry only the result-code name (``SQLITE_BUSY``) and,
when opening, the path.
"""

from __future__ import annotations

import errno
import functools
import inspect
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

from ragline import errors

_C = TypeVar("_C", bound=type)
_P = ParamSpec("_P")
_R = TypeVar("_R")

_PRIMARY_MASK = 0xFF
"""An extended result code (``SQLITE_BUSY_TIMEOUT``) carries its primary code in the low byte."""

_BUSY = "The embedded database is busy: another connection holds its lock; retry shortly."
_UNAVAILABLE: dict[int, str] = {
    sqlite3.SQLITE_FULL: "The embedded database's disk is full; retry later.",
    sqlite3.SQLITE_IOERR: "The embedded database hit a disk I/O error; retry later.",
    sqlite3.SQLITE_NOMEM: "The embedded database ran out of memory; retry later.",
    sqlite3.SQLITE_PROTOCOL: "The embedded database lost a locking race; retry shortly.",
    sqlite3.SQLITE_INTERRUPT: "The embedded database was interrupted mid-operation; retry it.",
    sqlite3.SQLITE_SCHEMA: "The embedded database's schema changed during an operation; retry it.",
}
_UNWRITABLE: dict[int, str] = {
    sqlite3.SQLITE_READONLY: "The embedded database file cannot be written (read-only file or folder).",
    sqlite3.SQLITE_CANTOPEN: "The embedded database file cannot be opened.",
    sqlite3.SQLITE_PERM: "The embedded database file cannot be accessed (permission denied).",
    sqlite3.SQLITE_AUTH: "The embedded database refused access (authorization denied).",
    sqlite3.SQLITE_NOTADB: "The embedded database file is not an SQLite database.",
}
_DAMAGED = "The embedded database file is damaged (malformed database image)."
_REFUSED_WRITE = "The embedded database refused a write (a constraint failed unexpectedly)."
_FAILED = "The embedded database rejected an operation."

# The module's own errors carry no result code: these messages (SQLite's wording) stand in for one.
_CODE_BY_MESSAGE: tuple[tuple[str, int], ...] = (
    ("database is locked", sqlite3.SQLITE_BUSY),
    ("database table is locked", sqlite3.SQLITE_LOCKED),
    ("database schema is locked", sqlite3.SQLITE_LOCKED),
    ("disk is full", sqlite3.SQLITE_FULL),
    ("disk i/o error", sqlite3.SQLITE_IOERR),
    ("readonly database", sqlite3.SQLITE_READONLY),
    ("unable to open database file", sqlite3.SQLITE_CANTOPEN),
    ("file is not a database", sqlite3.SQLITE_NOTADB),
    ("malformed", sqlite3.SQLITE_CORRUPT),
)
_OPEN_CONFIGURATION = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_NOTADB}
)
"""Result codes that, while opening, mean the configured path is unusable (not a passing fault)."""
_PATH_ERRNOS = frozenset(
    {
        errno.EROFS, errno.EACCES, errno.ENOENT, errno.EPERM, errno.ENOTDIR, errno.EEXIST, errno.EISDIR,
        errno.ENAMETOOLONG, errno.ELOOP,
    }
)  # fmt: skip
"""``mkdir`` failures that a retry cannot fix: the path itself is wrong (a read-only file system, a
file where a folder should be, a parent that cannot hold folders). Others (``ENOSPC``, ``EIO``,
``ENOMEM``) are the host's: retryable."""
_WRITABLE_HINT = "check the data folder: on AWS Lambda only /tmp is writable"


def _result_code(exc: sqlite3.Error) -> int | None:
    """SQLite's extended result code, or one inferred from SQLite's message, or ``None``."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code
    text = str(exc).lower()
    return next((code for fragment, code in _CODE_BY_MESSAGE if fragment in text), None)


def translate(exc: sqlite3.Error) -> errors.RaglineError:
    """The Ragline error for a ``sqlite3`` error (see the module's table); the caller raises it
    ``from exc``. Never raises."""
    code = _result_code(exc)
    primary = None if code is None else code & _PRIMARY_MASK
    name = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    details: dict[str, Any] = {"sqlite_error": name}
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return errors.Throttled(_BUSY, **details)
    if code == sqlite3.SQLITE_READONLY_RECOVERY:
        return errors.DependencyUnavailable(
            "The embedded database is being recovered; retry shortly.", **details
        )
    if primary in _UNAVAILABLE:
        return errors.DependencyUnavailable(_UNAVAILABLE[primary], **details)
    if primary in _UNWRITABLE:
        return errors.DependencyFailed(_UNWRITABLE[primary], **details)
    if primary == sqlite3.SQLITE_CORRUPT:
        return errors.DependencyFailed(_DAMAGED, **details)
    if isinstance(exc, sqlite3.IntegrityError) or primary == sqlite3.SQLITE_CONSTRAINT:
        return errors.DependencyFailed(_REFUSED_WRITE, **details)
    return errors.DependencyFailed(_FAILED, **details)


def _translate_open(exc: sqlite3.Error, path: Path) -> errors.RaglineError:
    """:func:`translate`, except that an unusable path is a :class:`ConfigurationError`."""
    code = _result_code(exc)
    translated = translate(exc)
    if (
        code is not None
        and code & _PRIMARY_MASK in _OPEN_CONFIGURATION
        and code != sqlite3.SQLITE_READONLY_RECOVERY
    ):
        message = f"{translated.message.rstrip('.')}: {path} ({_WRITABLE_HINT})."
        return errors.ConfigurationError(message, path=str(path), **translated.details)
    translated.details["path"] = str(path)
    return translated


def _mkdir_error(exc: OSError, folder: Path) -> errors.RaglineError:
    reason = exc.strerror or type(exc).__name__
    if exc.errno in _PATH_ERRNOS:
        return errors.ConfigurationError(
            f"Cannot create the embedded database folder {folder}: {reason} ({_WRITABLE_HINT}).",
            path=str(folder),
            reason=reason,
        )
    return errors.DependencyUnavailable(
        f"Cannot create the embedded database folder {folder}: {reason}; retry later.",
        path=str(folder),
        reason=reason,
    )


def open_sqlite(path: Path, schema: str, *, timeout: float = 5.0) -> sqlite3.Connection:
    """A WAL-mode connection in autocommit mode (transactions are explicit), schema applied.

    Raises only Ragline errors: :class:`ConfigurationError` when the path cannot hold a database (a
    read-only or missing folder, a file that is not SQLite), :class:`Throttled` when another
    connection holds the lock past ``timeout`` seconds, otherwise as :func:`translate`.
    """
    if str(path) != ":memory:":
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _mkdir_error(exc, path.parent) from exc
    try:
        conn = sqlite3.connect(str(path), timeout=timeout, check_same_thread=False, isolation_level=None)
    except sqlite3.Error as exc:
        raise _translate_open(exc, path) from exc
    # Connections opening a fresh file at once race to switch it to WAL: SQLite answers the losers
    # "locked" at once, without its busy handler, so the setup is retried within ``timeout``.
    ends = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(schema)
            return conn
        except sqlite3.Error as exc:
            busy = isinstance(translate(exc), errors.Throttled)
            if busy and time.monotonic() < ends:
                time.sleep(0.02)
                continue
            conn.close()
            raise _translate_open(exc, path) from exc
        except BaseException:
            conn.close()
            raise


# -- the class decorator -----------------------------------------------------------------------------

_MAPPED = "__maps_sqlite_errors__"


def _mapped(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` with ``sqlite3.Error`` raised as its :func:`translate`\\ d error (``from`` it); generator
    and coroutine functions are mapped while they run, not just when called."""
    if getattr(fn, _MAPPED, False):
        return fn
    if inspect.isgeneratorfunction(fn):
        generator = cast(Callable[..., Iterator[Any]], fn)

        @functools.wraps(fn)
        def gen_wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                return (yield from generator(*args, **kwargs))
            except sqlite3.Error as exc:
                raise translate(exc) from exc

        wrapper = cast(Callable[_P, _R], gen_wrapper)
    elif inspect.isasyncgenfunction(fn):
        agen = cast(Callable[..., AsyncIterator[Any]], fn)

        @functools.wraps(fn)
        async def agen_wrapper(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            try:
                async for item in agen(*args, **kwargs):
                    yield item
            except sqlite3.Error as exc:
                raise translate(exc) from exc

        wrapper = cast(Callable[_P, _R], agen_wrapper)
    elif inspect.iscoroutinefunction(fn):
        coroutine = cast(Callable[..., Awaitable[Any]], fn)

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await coroutine(*args, **kwargs)
            except sqlite3.Error as exc:
                raise translate(exc) from exc

        wrapper = cast(Callable[_P, _R], async_wrapper)
    else:

        @functools.wraps(fn)
        def sync_wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return fn(*args, **kwargs)
            except sqlite3.Error as exc:
                raise translate(exc) from exc

        wrapper = sync_wrapper
    setattr(wrapper, _MAPPED, True)
    return wrapper


def _mapped_member(cls: type, name: str, member: object) -> object:
    """``member`` of ``cls`` with its code mapped, the same kind of attribute; ``member`` itself if it
    runs no code of its own (constants, nested classes, other descriptors)."""
    if isinstance(member, staticmethod):
        return staticmethod(_mapped(member.__func__))
    if isinstance(member, classmethod):
        return classmethod(_mapped(member.__func__))
    if isinstance(member, property):
        fget, fset, fdel = (
            _mapped(f) if f is not None else None for f in (member.fget, member.fset, member.fdel)
        )
        return type(member)(fget, fset, fdel, member.__doc__)
    if isinstance(member, functools.cached_property):
        cached = functools.cached_property(_mapped(member.func))
        cached.__set_name__(cls, name)  # setattr after class creation does not call it
        return cached
    if inspect.isfunction(member):
        return _mapped(member)
    return member


def maps_sqlite_errors(cls: _C) -> _C:
    """Class decorator: every public method (also static/class methods and properties) defined on
    ``cls`` raises :func:`translate`\\ d Ragline errors instead of ``sqlite3.Error``, chained ``from``
    the original; Ragline errors and all other exceptions pass through untouched. Inherited methods
    are left as their class defined them; applying it twice changes nothing."""
    for name, member in list(vars(cls).items()):
        if name.startswith("_"):
            continue
        replaced = _mapped_member(cls, name, member)
        if replaced is not member:
            setattr(cls, name, replaced)
    return cls
