"""Embedded :class:`~ragline.ports.ObjectStore`: a local folder, keys as relative paths."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from ragline import errors

_TEMP_PREFIX = ".tmp-"


def _refuse_over(key: str, size: int, limit: int) -> None:
    if size > limit:
        raise errors.DocumentTooLarge(
            f"{key} is {size} bytes; the limit is {limit}", filename=key, size=size, limit=limit
        )


class LocalObjectStore:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        # One key, one file: an empty, "." or ".." segment would let a key alias another
        # (``globex/docs/../../acme/docs/x`` is acme's ``x``) or leave the root (``../x``, ``/x``).
        segments = key.split("/")
        path = (self.root / key).resolve()
        if any(s in ("", ".", "..") for s in segments) or not path.is_relative_to(self.root.resolve()):
            raise errors.InvalidRequest("object key escapes the store", key=key)
        return path

    def get(self, key: str, *, version_id: str = "", limit: int | None = None) -> bytes:
        """A folder keeps no versions: ``version_id`` names the one file there is. Its size is
        checked against ``limit`` before it is read, and no more than ``limit`` + 1 bytes are read."""
        path = self._path(key)
        try:
            with path.open("rb") as fh:
                if limit is None:
                    return fh.read()
                _refuse_over(key, os.fstat(fh.fileno()).st_size, limit)
                data = fh.read(limit + 1)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise errors.NotFound(f"no object {key!r}", key=key) from exc
        _refuse_over(key, len(data), limit)  # it grew between the check and the read
        return data

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Write then rename, so a reader never sees half a file.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_TEMP_PREFIX)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except (FileExistsError, NotADirectoryError, IsADirectoryError) as exc:
            # A folder cannot also be a file: ``t/a`` and ``t/a/b`` cannot both be objects here.
            raise errors.Conflict("object key clashes with another object's folder", key=key) from exc

    def delete(self, key: str) -> None:
        path = self._path(key)
        # A folder is no object: deleting one is a no-op, as for a missing key.
        with contextlib.suppress(IsADirectoryError, NotADirectoryError):
            path.unlink(missing_ok=True)

    def purge(self, prefix: str) -> int:
        folder = prefix.rstrip("/")
        if not folder:
            raise errors.InvalidRequest("refusing to purge the whole store")
        path = self._path(folder)
        if not path.is_dir():
            return 0
        removed = sum(1 for p in path.rglob("*") if p.is_file())
        shutil.rmtree(path)
        return removed

    def list(self, prefix: str) -> list[str]:
        if not self.root.exists():
            return []
        # The prefix names a folder: ``t/ns`` lists ``t/ns/…``, never a sibling ``t/ns2/…``. Only that
        # folder is walked (a document's originals are listed on every local write of it).
        folder = prefix if not prefix or prefix.endswith("/") else prefix + "/"
        if folder:
            self._path(folder.rstrip("/"))  # refuses a prefix that escapes the store
        base = self.root / folder.rstrip("/") if folder else self.root
        if not base.is_dir():
            return []
        keys = (p.relative_to(self.root).as_posix() for p in base.rglob("*") if p.is_file())
        return sorted(k for k in keys if k.startswith(folder) and not Path(k).name.startswith(_TEMP_PREFIX))
