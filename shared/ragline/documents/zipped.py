"""Members of a zip container (DOCX) read without trusting its headers.

Before any member is read, the declared sizes of all members, their sum and each member's
compression ratio are checked against :class:`ParseLimits`; members are then read as a stream of
slices (never whole), only stored or deflated (bzip2/LZMA can expand 64 KiB into gigabytes in
one call; zipfile's own ``read()`` would inflate all of a member's compressed bytes at once, however
much they expand, before cutting to the declared size), and the bytes actually read are counted
too, so no header can get more than the cap read.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterator

from ragline.documents.limits import ParseBudget
from ragline.documents.raw import short_error, unreadable
from ragline.errors import DocumentTooLarge

SLICE = 4 * 1024 * 1024
"""Bytes inflated per read: bounded, and large, because expat before 2.6 rescans an unfinished token
(a 60 MB attribute) from its start on every feed: feeding 64 KiB slices made that quadratic."""
_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})


class ZipContainer:
    """A checked zip archive; :meth:`stream` yields a member's bytes within the limits."""

    def __init__(self, budget: ParseBudget, data: bytes, *, what: str) -> None:
        self._budget = budget
        self._read = 0
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except (
            zipfile.BadZipFile,
            zipfile.LargeZipFile,
            NotImplementedError,  # a member needing a newer zip version than zipfile reads
            ValueError,
            EOFError,
            OSError,
            struct.error,
        ) as exc:
            raise unreadable(budget.filename, f"it is not a valid {what} ({short_error(exc)})") from exc
        self._members = {info.filename: info for info in infos}
        self._check_declared(infos)

    def _too_large(self, reason: str, **details: int) -> DocumentTooLarge:
        name = self._budget.filename
        return DocumentTooLarge(f"Cannot parse {name!r}: {reason}.", filename=name, reason=reason, **details)

    def _check_declared(self, infos: list[zipfile.ZipInfo]) -> None:
        limits = self._budget.limits
        total = sum(info.file_size for info in infos)
        if total > limits.max_unpacked_bytes:
            raise self._too_large(
                f"its {len(infos)} zip members unpack to {total} bytes, over the limit of "
                f"{limits.max_unpacked_bytes}",
                unpacked_bytes=total,
                max_unpacked_bytes=limits.max_unpacked_bytes,
            )
        for info in infos:
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > limits.ratio_free_bytes and ratio > limits.max_compression_ratio:
                raise self._too_large(
                    f"zip member {info.filename!r} expands {ratio:.0f}:1 to {info.file_size} bytes "
                    f"(over {limits.max_compression_ratio:g}:1: a zip bomb?)",
                    unpacked_bytes=info.file_size,
                    compressed_bytes=info.compress_size,
                )

    def has(self, name: str) -> bool:
        return name in self._members

    def stream(self, name: str) -> Iterator[bytes]:
        """The member's bytes, :data:`SLICE` by slice; refused past ``max_unpacked_bytes`` read in all."""
        info = self._members[name]
        if info.compress_type not in _METHODS:
            reason = f"zip member {name!r} uses compression method {info.compress_type} (not stored/deflate)"
            raise unreadable(self._budget.filename, reason)
        limit = self._budget.limits.max_unpacked_bytes
        try:
            with self._zip.open(info) as member:
                while chunk := member.read(SLICE):
                    self._read += len(chunk)
                    if self._read > limit:
                        raise self._too_large(
                            f"its zip members unpack to more than {limit} bytes (headers understate them)",
                            max_unpacked_bytes=limit,
                        )
                    yield chunk
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            RuntimeError,
            NotImplementedError,
            OSError,
            ValueError,  # a header offset seeking before the start; a local name not UTF-8 as flagged
            struct.error,
        ) as exc:
            reason = f"zip member {name!r} is corrupt or encrypted ({short_error(exc)})"
            raise unreadable(self._budget.filename, reason) from exc
