"""The Microsoft Graph connector's cursor (:mod:`ragline.adapters.sources.graph`).

**Cursor**: ``g1:`` + base64url of zlib-compressed JSON: the settings' fingerprint, whether the listing
is full, the Graph link to ask next (a next or delta link), whether the delta pass is over, the scope
folder's id and the digests of the folders below it, and the folders still to read (with the
``children`` link being read). A cursor not of this shape, or made for other settings, raises
:class:`~ragline.errors.CursorExpired`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import zlib
from dataclasses import dataclass, field

from ragline import errors
from ragline.domain.sources import MAX_CURSOR_BYTES

CURSOR_PREFIX = "g1:"


def digest(item_id: str) -> str:
    """How the cursor names a folder below the scope folder (8 bytes of its id's hash)."""
    return hashlib.blake2b(item_id.encode(), digest_size=8).hexdigest()


@dataclass
class ListingState:
    """Where a listing stands (see the module docstring): what a cursor holds."""

    key: str
    full: bool
    link: str
    final: bool = False
    """``link`` is the delta link: the delta pass is over (only folders to read may remain)."""
    scope: str | None = None
    """The scope folder's id; ``""`` the whole drive; ``None`` not looked up yet."""
    inside: set[str] = field(default_factory=set)
    """The digests of the folders below the scope folder."""
    expand: list[list[str]] = field(default_factory=list)
    """Folders whose subtree is still to read: ``["u", id]`` (name its files again) or ``["d", id]``
    (delete them)."""
    children: str = ""
    """The ``children`` page being read, of a folder taken from ``expand``."""
    op: str = ""
    """What reading ``children`` does: ``"u"`` or ``"d"`` (as in ``expand``)."""

    def copy(self) -> ListingState:
        return ListingState(
            self.key, self.full, self.link, self.final, self.scope, set(self.inside),
            [list(e) for e in self.expand], self.children, self.op,
        )  # fmt: skip

    def pending(self) -> bool:
        return bool(self.expand or self.children)

    def encode(self) -> str:
        raw = json.dumps(
            {
                "k": self.key, "f": self.full, "l": self.link, "e": self.final, "s": self.scope,
                "i": sorted(self.inside), "x": self.expand, "c": self.children, "o": self.op,
            },
            separators=(",", ":"),
        ).encode()  # fmt: skip
        return CURSOR_PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 6)).decode()

    @classmethod
    def decode(cls, cursor: str) -> ListingState:
        if not cursor.startswith(CURSOR_PREFIX):
            raise errors.CursorExpired("not a Microsoft Graph cursor")
        try:
            value = json.loads(
                zlib.decompressobj().decompress(
                    base64.urlsafe_b64decode(cursor[len(CURSOR_PREFIX) :]), 8 * MAX_CURSOR_BYTES
                )
            )
            scope = value["s"]
            state = cls(
                key=str(value["k"]), full=bool(value["f"]), link=str(value["l"]), final=bool(value["e"]),
                scope=None if scope is None else str(scope), inside={str(d) for d in value["i"]},
                expand=[[str(op), str(i)] for op, i in value["x"]], children=str(value["c"]),
                op=str(value["o"]),
            )  # fmt: skip
        except (ValueError, KeyError, TypeError, zlib.error, binascii.Error) as exc:
            raise errors.CursorExpired("the Microsoft Graph cursor is unreadable") from exc
        if any(op not in ("u", "d") for op, _ in state.expand):
            raise errors.CursorExpired("the Microsoft Graph cursor is unreadable")
        return state
