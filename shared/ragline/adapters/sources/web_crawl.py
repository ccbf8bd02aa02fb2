"""A crawl's state, as its cursor carries it between listing calls (see :mod:`.web`): the queue of
URLs still to visit and 48-bit digests of every URL queued and every body named, compressed; bounded
so that the largest crawl fits :data:`~ragline.domain.sources.MAX_CURSOR_BYTES`."""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from ragline import errors
from ragline.domain.sources import MAX_CURSOR_BYTES

DIGEST_BYTES = 6
"""A URL's (or a body's) digest in a crawl's state: 48 bits; among the 10,000 URLs a crawl may queue
at most, a collision (a page not crawled) is about a one in 5,000,000 chance."""
QUEUED_PER_PAGE = 2
"""A crawl queues at most this many URLs per page it may name (``maxPages``): links past that are not
followed (a site's reach, like ``maxPages``, is bounded; the cursor holds every URL queued)."""


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES).digest()


def _pack(digests: set[bytes]) -> str:
    return base64.b64encode(b"".join(sorted(digests))).decode()


def _unpack(text: str) -> set[bytes]:
    raw = base64.b64decode(text, validate=True)
    if len(raw) % DIGEST_BYTES:
        raise ValueError("not a list of digests")
    return {raw[i : i + DIGEST_BYTES] for i in range(0, len(raw), DIGEST_BYTES)}


@dataclass
class Crawl:
    """The cursor: URLs to visit (``url, depth, lastmod``), every URL queued so far and every body
    named so far (digests: a URL is queued once, a body is one page's), and the items named."""

    queue: list[list[Any]] = field(default_factory=list)
    queued: set[bytes] = field(default_factory=set)
    named: int = 0
    bodies: set[bytes] = field(default_factory=set)
    sitemaps: int = 0
    limit: int = 0
    """URLs this crawl may queue at most (0: no bound, as in a state decoded without one)."""
    incomplete: bool = False
    """Something that may hide pages could not be read (a page, a sitemap, a ``robots.txt``): the
    crawl ends not ``full``, so the sync deletes nothing it did not name this time."""

    def push(self, url: str, depth: int, lastmod: str = "", *, front: bool = False) -> bool:
        key = _digest(url)
        if key in self.queued and not front:
            return False
        if key not in self.queued and self.limit and len(self.queued) >= self.limit:
            return False  # the crawl's reach is spent: this link is not followed
        self.queued.add(key)
        (self.queue.insert(0, [url, depth, lastmod]) if front else self.queue.append([url, depth, lastmod]))
        return True

    def push_front(self, entries: list[tuple[str, int, str]]) -> None:
        """Queue ``entries`` (not queued before) ahead of everything else, in their order."""
        fresh = []
        for url, depth, lastmod in entries:
            key = _digest(url)
            if key not in self.queued and not (self.limit and len(self.queued) >= self.limit):
                self.queued.add(key)
                fresh.append([url, depth, lastmod])
        self.queue[:0] = fresh

    def first_body(self, version: str) -> bool:
        """Whether no page named in this crawl had this body yet (then this one stands for it). A page
        is visited once per crawl, so the first to ask is the first named."""
        key = _digest(version)
        if key in self.bodies:
            return False
        self.bodies.add(key)
        return True

    def encode(self) -> str:
        state = {
            "q": self.queue, "s": _pack(self.queued), "n": self.named, "b": _pack(self.bodies),
            "m": self.sitemaps, "l": self.limit, "i": self.incomplete,
        }  # fmt: skip
        raw = json.dumps(state, separators=(",", ":")).encode()
        text = "z2:" + base64.b64encode(zlib.compress(raw, 9)).decode()
        if len(text) > MAX_CURSOR_BYTES:
            raise errors.DependencyFailed(
                "the crawl's state outgrew its cursor: lower maxPages", bytes=len(text)
            )
        return text

    @classmethod
    def decode(cls, cursor: str) -> Crawl:
        if not cursor.startswith("z2:"):
            raise errors.CursorExpired("not a crawl cursor")
        try:
            value = json.loads(
                zlib.decompressobj().decompress(base64.b64decode(cursor[3:]), 8 * MAX_CURSOR_BYTES)
            )
            return cls(
                queue=[[str(u), int(d), str(m)] for u, d, m in value["q"]],
                queued=_unpack(value["s"]),
                named=int(value["n"]),
                bodies=_unpack(value["b"]),
                sitemaps=int(value["m"]),
                limit=int(value["l"]),
                incomplete=bool(value["i"]),
            )
        except (ValueError, KeyError, TypeError, zlib.error) as exc:
            raise errors.CursorExpired("the crawl cursor is unreadable") from exc
