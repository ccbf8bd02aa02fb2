"""The web crawler: a website as a :class:`~ragline.ports.Source` (every crawl is a full listing).

A crawl starts from the seeds and the sitemaps (those configured and those ``robots.txt`` names) and
follows links breadth-first on the seeds' own hosts, within the depth and page limits and the
include/exclude patterns, obeying ``robots.txt`` for :data:`~ragline.domain.source_settings.CRAWLER_NAME`
(its ``Crawl-delay`` too, up to :data:`MAX_CRAWL_DELAY`). Each page is one item named by its URL:

- **Only what changed is read.** A page whose sitemap ``lastmod`` is what the last crawl saw is not
  requested at all; any other is asked with ``If-None-Match``/``If-Modified-Since`` from the last
  crawl, and a ``304`` is the page as it was (its links remembered in the item's memo).
- **One page, one item.** A redirect is followed as a link to its target (in scope only); a page whose
  ``<link rel=canonical>`` names another URL yields to it; a page whose body is byte-identical to one
  already named in this crawl is a duplicate and not named; ``noindex`` pages are followed, not named.
- **What a crawl does not name is gone** (a removed page, one now excluded or disallowed): the sync
  deletes it. A page that failed this time (5xx after retries, a timeout) is ``failed``, and whatever
  the namespace held of it stays; so are a host's pages while its ``robots.txt`` cannot be read.
- HTML, PDF and DOCX are items (parsed by the ingest pipeline); other content types are not.

Every request goes through :func:`ragline.outbound.request`: public addresses only (loopback only when
the deployment allows it: tests, a local server), bounded bytes and time, redirects never followed
blindly, with the retries of :mod:`ragline.adapters.sources.http`: ``429`` and ``503`` with
``Retry-After`` are waited out within the step's time; past it the page ends early with ``retry_after``
and the cursor resumes at the URL that was refused (``fetch`` raises :class:`~ragline.errors.Throttled`:
that page fails alone).

The cursor is the crawl's state (:mod:`.web_crawl`): the queue of URLs still to visit and digests of
every URL queued and every body named in this crawl.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from ragline import errors, outbound
from ragline.adapters.sources import http
from ragline.adapters.sources.web_crawl import QUEUED_PER_PAGE, Crawl
from ragline.adapters.sources.web_pages import (
    matches,
    normalize_url,
    origin_of,
    page_links,
    parse_sitemap,
)
from ragline.domain.source_settings import CRAWLER_AGENT, CRAWLER_NAME, WebSettings
from ragline.domain.sources import (
    EVERYONE,
    MAX_MEMO_BYTES,
    Change,
    ChangePage,
    ItemAccess,
    SourceItem,
)
from ragline.ports import KnownItems

_log = logging.getLogger(__name__)
PAGE_CHANGES = 50
"""Items named per page (one page is applied, then the cursor moves)."""
PAGE_VISITS = 150
"""Requests per page at most (redirects, missing pages and robots files name nothing)."""
RETRIES = http.Retries(min_seconds=1.0, last_wait=http.MAX_WAIT)
"""An attempt has a second at least; a ``429`` left after the last attempt waits ``Retry-After``, else
:data:`~ragline.adapters.sources.http.MAX_WAIT`."""
MAX_CRAWL_DELAY = 5.0
MAX_SITEMAPS = 20
SITEMAP = -1
"""The depth a sitemap's own URL is queued at (its pages are queued at depth 0 when it is read)."""
ROBOTS_BYTES = 512 * 1024
SITEMAP_BYTES = 10 * 1024 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_REMEMBERED = frozenset({"ok", "skipped", "unreadable"})
"""Inventory states whose memo a crawl trusts (a failed page is asked afresh)."""
_TYPES = {
    "text/html": "page.html",
    "application/xhtml+xml": "page.html",
    "application/pdf": "document.pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "document.docx",
}
_EXTENSIONS = {".pdf": "document.pdf", ".docx": "document.docx", ".html": "page.html", ".htm": "page.html"}


class WebSource:
    def __init__(
        self,
        settings: WebSettings,
        *,
        allow_loopback: bool = False,
        fetch: http.Fetch = outbound.request,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._s = settings
        self._scope = frozenset(origin_of(u) for u in (normalize_url(s) for s in settings.seeds) if u)
        self._fetch = fetch
        self._sleep = sleep
        self._monotonic = monotonic
        self._http = http.Requester(
            self._timed_fetch, RETRIES, allow_loopback=allow_loopback, sleep=sleep, monotonic=monotonic
        )
        self.page_changes = PAGE_CHANGES
        self._robots: dict[str, RobotFileParser | None] = {}
        self._last_request: dict[str, float] = {}

    # -- the port ---------------------------------------------------------------------------------
    def changes(self, cursor: str | None, known: KnownItems, *, until: float) -> ChangePage:
        crawl = Crawl.decode(cursor) if cursor else self._start(until)
        changes: list[Change] = []
        visits = 0
        retry_after = 0.0
        while crawl.queue and len(changes) < self.page_changes and visits < PAGE_VISITS:
            if (changes or visits) and self._monotonic() >= until:
                break  # a call always makes progress: one visit at least
            url, depth, lastmod = crawl.queue.pop(0)
            if depth == SITEMAP:
                try:
                    visits += self._sitemap(crawl, url, until)
                except http.Throttled as wait:
                    crawl.push(url, depth, lastmod, front=True)
                    retry_after = wait.seconds
                    break
                continue
            if known.seen(url) or any(c.item_id == url for c in changes):
                continue
            if crawl.named >= self._s.max_pages:
                crawl.queue.clear()
                break
            try:
                change, visited = self._visit(crawl, url, depth, lastmod, known, until)
            except http.Throttled as wait:
                crawl.push(url, depth, lastmod, front=True)
                retry_after = wait.seconds
                break
            visits += visited
            if change is not None:
                changes.append(change)
                crawl.named += change.kind in ("upsert", "keep", "failed", "skip")
        done = not crawl.queue
        cursor = "" if done else crawl.encode()
        return ChangePage(changes, cursor, done=done, full=not crawl.incomplete, retry_after=retry_after)

    def fetch(self, item: SourceItem) -> bytes:
        try:
            response = self._get(item.id, {}, self._monotonic() + http.ITEM_SECONDS)
        except http.Throttled as wait:  # the page fails alone: the next sync reads it again
            raise errors.Throttled(
                f"{item.id} asked to wait {wait.seconds:g} s", url=item.id, retry_after=wait.seconds
            ) from None
        if response.status in (404, 410):
            raise errors.NotFound(f"{item.id} is gone", url=item.id)
        if response.status != 200:
            raise errors.DependencyFailed(f"{item.id} answered {response.status}", url=item.id)
        return response.body

    def permissions(self, item: SourceItem) -> ItemAccess:
        return EVERYONE  # a crawled page is public: everyone in the namespace may read it

    # -- a crawl ----------------------------------------------------------------------------------
    def _start(self, until: float) -> Crawl:
        """A new crawl's queue: the sitemaps (read as the queue reaches them: their pages come first,
        in the site's own order), then the seeds."""
        crawl = Crawl(limit=QUEUED_PER_PAGE * self._s.max_pages)
        sitemaps = [u for u in (normalize_url(s) for s in self._s.sitemaps) if u]
        for origin in sorted(self._scope):
            robots = self._robots_for(origin, until)
            for declared in (robots.site_maps() or []) if robots else []:
                url = normalize_url(declared)
                if url and origin_of(url) in self._scope:
                    sitemaps.append(url)
        for url in sitemaps:
            crawl.push(url, SITEMAP)
        for seed in self._s.seeds:
            url = normalize_url(seed)
            if url:
                crawl.push(url, 0)
        return crawl

    def _sitemap(self, crawl: Crawl, url: str, until: float) -> int:
        """Queue a sitemap's pages (and an index's sitemaps); the requests it took."""
        crawl.sitemaps += 1
        if crawl.sitemaps > MAX_SITEMAPS:
            return 0
        try:
            response = self._get(url, {}, until, max_bytes=SITEMAP_BYTES)
        except errors.RaglineError:
            _log.info("sitemap unreadable", extra={"url": url})
            crawl.incomplete = True  # its pages may be missed: none may be deleted for it
            return 1
        if response.status != 200:
            crawl.incomplete |= response.status >= 500
            return 1
        found = parse_sitemap(response.body, limit=2 * self._s.max_pages)
        entries = [(child, SITEMAP, "") for child in found.sitemaps if origin_of(child) in self._scope]
        entries += [(loc, 0, lastmod) for loc, lastmod in found.pages if self._in_scope(loc)]
        crawl.push_front(entries)
        return 1

    def _in_scope(self, url: str) -> bool:
        if origin_of(url) not in self._scope:
            return False
        if self._s.include and not matches(self._s.include, url):
            return False
        return not matches(self._s.exclude, url)

    def _visit(
        self, crawl: Crawl, url: str, depth: int, lastmod: str, known: KnownItems, until: float
    ) -> tuple[Change | None, int]:
        """The change ``url`` makes (None: it names nothing) and the requests it took."""
        if not self._in_scope(url):
            return None, 0
        robots = self._robots_for(origin_of(url), until)
        before = known.get(url)
        if robots is None:  # robots.txt unreadable: touch nothing of this host
            crawl.incomplete = True
            return (Change("keep", url) if before is not None else None), 0
        if not robots.can_fetch(CRAWLER_NAME, url):
            return None, 0
        memo: dict[str, Any] = (
            _memo(before.memo) if before is not None and before.state in _REMEMBERED else {}
        )
        if lastmod and memo.get("lastmod") == lastmod and before is not None and before.version:
            return self._unchanged(crawl, url, depth, before.version, memo), 0
        headers = {}
        if memo.get("etag"):
            headers["if-none-match"] = str(memo["etag"])
        if memo.get("modified"):
            headers["if-modified-since"] = str(memo["modified"])
        self._pace(origin_of(url), robots)
        try:
            response = self._get(url, headers, until, max_bytes=self._s.max_page_bytes)
        except errors.RaglineError as exc:
            crawl.incomplete = True  # its links are unknown this time
            return Change("failed", url, error=exc.message), 1
        if response.status == 304 and before is not None and before.version:
            return self._unchanged(crawl, url, depth, before.version, {**memo, "lastmod": lastmod}), 1
        if response.status in _REDIRECTS:
            target = normalize_url(response.headers.get("location", ""), url)
            if target and self._in_scope(target):
                crawl.push(target, depth, "")
            return None, 1
        if response.status != 200:
            if response.status >= 500:
                crawl.incomplete = True
                return Change("failed", url, error=f"the page answered {response.status}"), 1
            return None, 1  # 404, 410, 401, 403…: not a page of this crawl (gone if it was)
        filename = _filename(url, response.headers.get("content-type", ""))
        if filename is None:
            return None, 1
        memo = {
            "etag": response.headers.get("etag", "")[:200],
            "modified": response.headers.get("last-modified", "")[:100],
            "lastmod": lastmod,
            "filename": filename,
        }
        if filename == "page.html":
            found = page_links(response.body, url)
            links = [u for u in found.links if self._in_scope(u)] if not found.nofollow else []
            canonical = found.canonical
            memo["links"] = links
            memo["noindex"] = found.noindex
            if canonical and canonical != url and self._in_scope(canonical):
                memo["canonical"] = canonical
        version = hashlib.sha256(response.body).hexdigest()[:32]
        return self._named(crawl, url, depth, version, memo, response.body), 1

    def _unchanged(self, crawl: Crawl, url: str, depth: int, version: str, memo: dict[str, Any]) -> Change:
        """The page as the last crawl read it (its links, canonical and directives from the memo)."""
        return self._named(crawl, url, depth, version, memo, None)

    def _named(
        self, crawl: Crawl, url: str, depth: int, version: str, memo: dict[str, Any], body: bytes | None
    ) -> Change:
        """What a page read (``body``) or known unchanged (``None``) names: its links are queued; it is
        an item unless it stands for another page (canonical elsewhere, ``noindex``, a duplicate)."""
        if depth < self._s.max_depth:
            for link in memo.get("links", []):
                if isinstance(link, str) and self._in_scope(link):
                    crawl.push(link, depth + 1)
        canonical = memo.get("canonical")
        if isinstance(canonical, str):
            crawl.push(canonical, depth)
        alias = isinstance(canonical, str) or bool(memo.get("noindex")) or not crawl.first_body(version)
        item = SourceItem(
            id=url, name=url, filename=str(memo.get("filename", "page.html")), version=version,
            access=EVERYONE, content=body, memo=_memo_text(memo),
        )  # fmt: skip
        return Change("skip" if alias else "upsert", url, item)

    # -- requests ---------------------------------------------------------------------------------
    def _robots_for(self, origin: str, until: float) -> RobotFileParser | None:
        """``origin``'s rules, read once per listing call (None: unreadable, so nothing is decided)."""
        if origin in self._robots:
            return self._robots[origin]
        parser: RobotFileParser | None = RobotFileParser()
        try:
            response = self._get(f"{origin}/robots.txt", {}, until, max_bytes=ROBOTS_BYTES)
        except (errors.RaglineError, http.Throttled):
            parser = None
        else:
            assert parser is not None
            if response.status >= 500:
                parser = None
            elif response.status >= 400:
                parser.parse([])  # no robots.txt: everything is allowed
            else:
                parser.parse(response.body.decode("utf-8", "replace").splitlines())
        self._robots[origin] = parser
        return parser

    def _pace(self, origin: str, robots: RobotFileParser) -> None:
        delay = robots.crawl_delay(CRAWLER_NAME)
        if not delay:
            return
        wait = self._last_request.get(origin, 0.0) + min(float(delay), MAX_CRAWL_DELAY) - self._monotonic()
        if wait > 0:
            self._sleep(wait)

    def _get(
        self, url: str, headers: dict[str, str], until: float, *, max_bytes: int = outbound.MAX_RESPONSE_BYTES
    ) -> outbound.Response:
        """GET as the crawler, with the shared retries (:class:`~ragline.adapters.sources.http.Throttled`
        when a wait cannot be made)."""
        return self._http.send(
            "GET", url, until, headers={"user-agent": CRAWLER_AGENT, **headers}, max_bytes=max_bytes
        )

    def _timed_fetch(self, method: str, url: str, **kwargs: Any) -> outbound.Response:
        """``fetch``, noting when each attempt went to its host (``Crawl-delay`` counts from it)."""
        self._last_request[origin_of(url)] = self._monotonic()
        return self._fetch(method, url, **kwargs)


def _filename(url: str, content_type: str) -> str | None:
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind in _TYPES:
        return _TYPES[kind]
    if kind in ("", "application/octet-stream"):
        path = urlsplit(url).path.lower()
        return next((name for ext, name in _EXTENSIONS.items() if path.endswith(ext)), None)
    return None


def _memo(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _memo_text(memo: dict[str, Any]) -> str:
    text = json.dumps(memo, separators=(",", ":"))
    while len(text) > MAX_MEMO_BYTES and memo.get("links"):
        memo = {**memo, "links": memo["links"][: len(memo["links"]) // 2]}
        text = json.dumps(memo, separators=(",", ":"))
    return text
