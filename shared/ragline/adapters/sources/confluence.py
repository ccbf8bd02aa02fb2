"""Confluence Cloud: the pages of a site's spaces as a :class:`~ragline.ports.Source`.

**Every sync is a full listing of page metadata** — ids, version numbers, titles and read
restrictions, never bodies — because CQL's ``lastmodified`` reports neither deletions nor restriction
changes (a page restricted, or moved under a restricted parent, keeps its version). What the listing
does not name is swept by the sync; a page whose version and readers are what the namespace holds is
not fetched again, and one whose readers alone changed is re-labelled without a fetch. Every page
says ``full``; the ``done`` page's cursor is ``""`` (the next sync lists afresh).

Endpoints (Confluence Cloud REST API, confirmed from Atlassian's reference pages on
developer.atlassian.com: *Advanced searching using CQL*, *Search content by CQL* (v1 content group),
the v1 *Content restrictions* group, and the v2 *Page* group):

- **Listing**: ``GET /wiki/rest/api/content/search?cql=…&expand=…&limit=…`` (v1: CQL exists only
  there), ``cql`` = ``type = page [AND space in ("A","B")] order by created asc`` (all spaces the
  account can read when none is configured). Only ``current`` content comes back (drafts and trashed
  pages are not searched); anything else is skipped. The answer is ``{"results": [content…],
  "_links": {"next": "/rest/api/content/search?…&cursor=…"}}``: ``next`` is relative to the ``/wiki``
  context and carries Confluence's own cursor. ``expand`` asks for ``version``, the page's
  ``restrictions.read.restrictions.user``/``.group`` and the same of its ``ancestors`` (root first;
  the nested expansion follows the documented dot notation but is not spelled out in Atlassian's
  reference: it is what established connectors send, e.g. Onyx's). Each listing call reads one result
  page (``limit`` :data:`PAGE_CHANGES`, lowered in tests). A result without its version or read
  restrictions is ``failed`` (it stays as it was and is tried again next sync).
- **Ancestors' restrictions, fallback**: the inline ``ancestors.restrictions…`` expansion answers 404
  for a whole result page when an ancestor is a draft, trashed or an outdated version (Atlassian's
  CONFCLOUD-77618). On that 404 the listing switches, for the rest of the listing (the cursor
  remembers it), to bare ``ancestors`` and reads each ancestor's restrictions once per step from
  ``GET /wiki/rest/api/content/{id}/restriction/byOperation/read``; an ancestor that answers 403/404
  there is a level no one passes.
- **Body**: ``GET /wiki/api/v2/pages/{id}?body-format=storage`` → ``title`` and
  ``body.storage.value`` (storage-format XHTML), returned as ``<html><head><title>…</title></head>
  <body>…</body></html>`` (``page.html``: the HTML parser reads it).
- **Permissions** (only asked for items listed without access, which this connector never does): the
  same search, its CQL ``AND id = <id>`` (a page moved out of the spaces is read by no one).

Items: ``id`` is the page id, ``version`` its version number, ``name`` its web URL (``siteUrl`` +
``/wiki`` + ``_links.webui``; the title when Confluence gives no link) — what a reader sees as the
document's source. At most ``maxPages`` pages are named per listing; the rest are not (the sweep
deletes what they had).

**Who may read a page** (:mod:`.confluence_access`): whoever is named at every restricted level — its
own read restriction and its ancestors'; everyone when none is restricted. Space permissions are not
mapped.

**Credentials** (``email`` and ``apiToken``) are sent as HTTP Basic auth and appear in no log, error or
``repr``. 401 and 403 on the listing are :class:`~ragline.errors.DependencyFailed` saying the
credentials were refused or lack access; a page that is not JSON of the documented shape likewise.

**Requests** go through :func:`ragline.outbound.request` (public addresses only; loopback only with
``allow_loopback``; bounded bytes and time; redirects not followed) with the retries of
:mod:`ragline.adapters.sources.http`: ``429`` and ``503`` wait ``Retry-After`` (seconds or an HTTP
date), other ``5xx`` back off, all within ``until`` (:data:`RETRIES`); a wait past it — or a ``429``
or ``503`` still answered after the last attempt — ends the listing call early with ``retry_after`` and
a cursor that reads the same result page again. Another ``5xx`` still answered after the retries is
:class:`~ragline.errors.DependencyUnavailable` (the step fails and keeps its cursor).
``fetch``: 404 → :class:`~ragline.errors.NotFound`, anything else that is not a page →
:class:`~ragline.errors.DependencyFailed` (that item fails alone).

**Cursor**: ``c1:`` + base64url JSON ``{"n": next search path ("" = the first), "c": pages named so
far, "e": ancestors read one by one}``. A cursor not of this shape, or whose path is not this
connector's search, raises :class:`~ragline.errors.CursorExpired`.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from html import escape
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from ragline import errors, outbound
from ragline.adapters.sources import http
from ragline.adapters.sources.confluence_access import NOBODY, Level, Unlisted, page_access, read_level
from ragline.domain.source_settings import ConfluenceSettings
from ragline.domain.sources import (
    MAX_CURSOR_BYTES,
    MAX_ITEM_ID_BYTES,
    Change,
    ChangePage,
    ItemAccess,
    SourceItem,
)
from ragline.ports import KnownItems

_log = logging.getLogger(__name__)
PAGE_CHANGES = 50
"""Pages asked per search request (one listing call reads one result page)."""
RETRIES = http.Retries(
    min_seconds=http.REQUEST_SECONDS, last_throttles=frozenset({429, 503}), errors_within_until=True
)
"""Each attempt has its whole :data:`~ragline.adapters.sources.http.REQUEST_SECONDS` (a search begun
just before ``until`` is not cut short: the call ends by ``until`` plus one request's time, as the port
allows); a ``429`` or ``503`` left after the last attempt is a throttle; another ``5xx`` never waits
past ``until``."""
LIST_BYTES = 32 * 1024 * 1024
"""A search result page at most (metadata of :data:`PAGE_CHANGES` pages, their ancestors and readers)."""
BODY_BYTES = 20 * 1024 * 1024
"""A page's storage-format body at most (with its JSON envelope)."""
RESTRICTION_BYTES = 4 * 1024 * 1024
MAX_PATH = 16_000
SEARCH_PATH = "/rest/api/content/search"
_READ = ("restrictions.read.restrictions.user", "restrictions.read.restrictions.group")
INLINE_EXPAND = ",".join(("version", *_READ, *(f"ancestors.{e}" for e in _READ)))
"""The listing's expansion: version, the page's read restrictions and its ancestors'."""
EACH_EXPAND = ",".join(("version", *_READ, "ancestors"))
"""The CONFCLOUD-77618 fallback: bare ancestors, whose restrictions are read one by one."""
_CURSOR = "c1:"


@dataclass(frozen=True)
class _Cursor:
    next: str = ""
    """The search path still to read, relative to ``/wiki`` (``""``: the listing's first)."""
    named: int = 0
    each: bool = False
    """Ancestors' restrictions are read one by one (the CONFCLOUD-77618 fallback)."""

    def encode(self) -> str:
        raw = json.dumps({"n": self.next, "c": self.named, "e": self.each}, separators=(",", ":"))
        text = _CURSOR + base64.urlsafe_b64encode(raw.encode()).decode()
        if len(text) > MAX_CURSOR_BYTES:  # a next link is bounded by MAX_PATH: never in practice
            raise errors.DependencyFailed("Confluence's next link outgrew the cursor", bytes=len(text))
        return text

    @classmethod
    def decode(cls, cursor: str) -> _Cursor:
        if not cursor.startswith(_CURSOR) or len(cursor) > MAX_CURSOR_BYTES:
            raise errors.CursorExpired("not a Confluence listing cursor")
        try:
            value = json.loads(base64.urlsafe_b64decode(cursor[len(_CURSOR) :].encode("ascii")))
            next_path, named, each = value["n"], value["c"], value["e"]
        except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError) as exc:
            raise errors.CursorExpired("the Confluence listing cursor is unreadable") from exc
        if not isinstance(next_path, str) or not isinstance(named, int) or not isinstance(each, bool):
            raise errors.CursorExpired("the Confluence listing cursor is unreadable")
        if next_path and not _is_search_path(next_path):
            raise errors.CursorExpired("the Confluence listing cursor names another resource")
        return cls(next_path, max(named, 0), each)


def _is_search_path(path: str) -> bool:
    return path.startswith(SEARCH_PATH + "?") and path.isascii() and len(path) <= MAX_PATH


class ConfluenceSource:
    """A Confluence Cloud site's pages (see the module docstring for the mapping)."""

    def __init__(
        self,
        settings: ConfluenceSettings,
        credentials: Mapping[str, str],
        *,
        allow_loopback: bool = False,
        fetch: http.Fetch = outbound.request,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        email, token = credentials.get("email"), credentials.get("apiToken")
        if not isinstance(email, str) or not email or not isinstance(token, str) or not token:
            raise errors.ConfigurationError("a Confluence source needs credentials: email and apiToken")
        basic = base64.b64encode(f"{email}:{token}".encode()).decode("ascii")
        self._headers = {"authorization": f"Basic {basic}", "accept": "application/json"}
        self._s = settings
        self._wiki = f"{settings.site_url}/wiki"
        self._monotonic = monotonic
        self._http = http.Requester(
            fetch, RETRIES, allow_loopback=allow_loopback, sleep=sleep, monotonic=monotonic
        )
        self.page_changes = PAGE_CHANGES
        self._ancestors: dict[str, Level | None] = {}

    def __repr__(self) -> str:
        return f"ConfluenceSource({self._s.site_url!r})"

    # -- the port ---------------------------------------------------------------------------------
    def changes(self, cursor: str | None, known: KnownItems, *, until: float) -> ChangePage:
        state = _Cursor.decode(cursor) if cursor else _Cursor()
        if state.named >= self._s.max_pages:
            return ChangePage([], "", done=True, full=True)
        try:
            data, state = self._search(state, until)
            changes = self._changes(data, state, until)
        except http.Throttled as wait:  # the same result page is read again by the next call
            return ChangePage([], state.encode(), done=False, full=True, retry_after=wait.seconds)
        room = self._s.max_pages - state.named
        limited = len(changes) >= room
        changes = changes[:room]
        next_path = self._next_path(data)
        done = limited or not next_path
        cursor_out = "" if done else replace(state, next=next_path, named=state.named + len(changes)).encode()
        return ChangePage(changes, cursor_out, done=done, full=True)

    def fetch(self, item: SourceItem) -> bytes:
        if not item.id.isdigit() or len(item.id) > MAX_ITEM_ID_BYTES:
            raise errors.NotFound("not a Confluence page id", item_id=item.id[:80])
        url = f"{self._wiki}/api/v2/pages/{quote(item.id)}?body-format=storage"
        deadline = self._monotonic() + http.ITEM_SECONDS
        try:
            response = self._get(url, deadline, max_bytes=BODY_BYTES)
        except http.Throttled as wait:
            raise errors.DependencyFailed(
                f"Confluence asked to wait {wait.seconds:g} s before page {item.id}", item_id=item.id
            ) from None
        except errors.DependencyUnavailable as exc:
            raise errors.DependencyFailed(exc.message, item_id=item.id) from None
        if response.status in (404, 410):
            raise errors.NotFound(f"Confluence page {item.id} is gone", item_id=item.id)
        if response.status != 200:
            raise errors.DependencyFailed(
                f"Confluence answered {response.status} for page {item.id}", item_id=item.id
            )
        page = http.json_object(response.body, f"Confluence sent page {item.id}")
        body = page.get("body")
        storage = body.get("storage") if isinstance(body, dict) else None
        value = storage.get("value") if isinstance(storage, dict) else None
        if not isinstance(value, str):
            raise errors.DependencyFailed(f"Confluence sent page {item.id} without its body", item_id=item.id)
        title = page.get("title")
        title = title if isinstance(title, str) else ""
        document = f"<html><head><title>{escape(title)}</title></head><body>{value}</body></html>"
        return document.encode("utf-8", "replace")

    def permissions(self, item: SourceItem) -> ItemAccess:
        if not item.id.isdigit() or len(item.id) > MAX_ITEM_ID_BYTES:
            return ItemAccess.only()
        query = urlencode({"cql": self._cql(f"id = {item.id}"), "expand": INLINE_EXPAND, "limit": 1})
        state = _Cursor(next=f"{SEARCH_PATH}?{query}")
        until = self._monotonic() + http.ITEM_SECONDS
        try:
            data, state = self._search(state, until)
            results = [r for r in _results(data) if isinstance(r, dict) and _id_of(r) == item.id]
            return self._access(results[0], state.each, until) if results else ItemAccess.only()
        except http.Throttled as wait:
            raise errors.DependencyFailed(
                f"Confluence asked to wait {wait.seconds:g} s before page {item.id}'s restrictions"
            ) from None
        except Unlisted as exc:
            raise errors.DependencyFailed(str(exc), item_id=item.id) from None

    # -- the listing ------------------------------------------------------------------------------
    def _cql(self, *clauses: str) -> str:
        """``type = page``, the configured spaces (all when none), and ``clauses``."""
        spaces = ",".join(f'"{key}"' for key in self._s.spaces)  # keys are [A-Za-z0-9_~-]: no quoting
        return " AND ".join(("type = page", *([f"space in ({spaces})"] if spaces else []), *clauses))

    def _first_path(self, each: bool) -> str:
        cql = self._cql() + " order by created asc"
        expand = EACH_EXPAND if each else INLINE_EXPAND
        return f"{SEARCH_PATH}?{urlencode({'cql': cql, 'expand': expand, 'limit': self.page_changes})}"

    def _search(self, state: _Cursor, until: float) -> tuple[dict[str, Any], _Cursor]:
        """One result page, and the state it was read in (switched to the fallback on a 404 of the
        inline expansion). :class:`~ragline.adapters.sources.http.Throttled` carries no state: a switch
        is redone by the next call."""
        response = self._get(
            self._wiki + (state.next or self._first_path(state.each)), until, max_bytes=LIST_BYTES
        )
        if response.status == 404 and not state.each:
            _log.info("ancestors' restrictions not expandable (CONFCLOUD-77618): read one by one")
            state = replace(
                state, next=_with_expand(state.next, EACH_EXPAND) if state.next else "", each=True
            )
            response = self._get(
                self._wiki + (state.next or self._first_path(True)), until, max_bytes=LIST_BYTES
            )
        if response.status == 401:
            raise errors.DependencyFailed(
                "Confluence refused the source's credentials (401): check its email and API token"
            )
        if response.status == 403:
            raise errors.DependencyFailed(
                "Confluence denied the source's account (403): it may not use the REST API of this site"
            )
        if response.status == 404:
            raise errors.DependencyFailed("Confluence's content search is not found (404): check siteUrl")
        if response.status >= 500:
            raise errors.DependencyUnavailable(f"Confluence's content search answered {response.status}")
        if response.status != 200:
            raise errors.DependencyFailed(f"Confluence's content search answered {response.status}")
        data = http.json_object(response.body, "Confluence sent a content search page")
        if not isinstance(data.get("results"), list):
            raise errors.DependencyFailed("Confluence sent a content search page without results")
        return data, state

    def _changes(self, data: dict[str, Any], state: _Cursor, until: float) -> list[Change]:
        changes: list[Change] = []
        named: set[str] = set()
        for result in _results(data):
            if not isinstance(result, dict):
                continue
            page_id = _id_of(result)
            if not page_id or page_id in named:
                continue
            if result.get("type", "page") != "page" or result.get("status", "current") != "current":
                continue
            named.add(page_id)
            version = result.get("version")
            number = version.get("number") if isinstance(version, dict) else None
            if not isinstance(number, int) or isinstance(number, bool):
                changes.append(
                    Change("failed", page_id, error="Confluence listed the page without its version")
                )
                continue
            try:
                access = self._access(result, state.each, until)
            except Unlisted as exc:
                changes.append(Change("failed", page_id, error=str(exc)))
                continue
            title = result.get("title") if isinstance(result.get("title"), str) else ""
            item = SourceItem(
                id=page_id, name=self._web_url(result) or title or page_id, filename="page.html",
                version=str(number), access=access,
            )  # fmt: skip
            changes.append(Change("upsert", page_id, item))
        return changes

    def _next_path(self, data: dict[str, Any]) -> str:
        links = data.get("_links")
        link = links.get("next") if isinstance(links, dict) else None
        if not isinstance(link, str) or not link:
            return ""
        if link.startswith(self._wiki + "/"):
            link = link[len(self._wiki) :]
        elif link.startswith("/wiki/"):
            link = link[len("/wiki") :]
        if not _is_search_path(link):
            raise errors.DependencyFailed("Confluence's next link leaves its content search")
        return link

    def _web_url(self, result: dict[str, Any]) -> str:
        links = result.get("_links")
        webui = links.get("webui") if isinstance(links, dict) else None
        if not isinstance(webui, str) or not webui.startswith("/") or webui.startswith("//"):
            return ""
        return self._wiki + webui

    # -- who may read -----------------------------------------------------------------------------
    def _access(self, result: dict[str, Any], each: bool, until: float) -> ItemAccess:
        """The page's readers; with ``each`` its ancestors' restrictions are read one by one."""
        read_each = (lambda ancestor: self._ancestor_level(_id_of(ancestor), until)) if each else None
        return page_access(_id_of(result), result, read_each)

    def _ancestor_level(self, ancestor_id: str, until: float) -> Level | None:
        """An ancestor's read restriction, read once per connector (an unreadable one: nobody)."""
        if ancestor_id in self._ancestors:
            return self._ancestors[ancestor_id]
        if not ancestor_id.isdigit() or len(ancestor_id) > MAX_ITEM_ID_BYTES:
            return NOBODY
        if self._monotonic() >= until:
            raise http.Throttled(0.0)
        query = urlencode({"expand": "restrictions.user,restrictions.group"})
        url = f"{self._wiki}/rest/api/content/{ancestor_id}/restriction/byOperation/read?{query}"
        response = self._get(url, until, max_bytes=RESTRICTION_BYTES)
        if response.status in (401, 403, 404):
            level: Level | None = NOBODY
        elif response.status != 200:
            raise errors.DependencyUnavailable(
                f"Confluence answered {response.status} for an ancestor's restrictions", page=ancestor_id
            )
        else:
            restrictions = http.json_object(response.body, "Confluence sent an ancestor's restrictions")
            level = read_level({"read": restrictions})
        self._ancestors[ancestor_id] = level
        return level

    # -- requests ---------------------------------------------------------------------------------
    def _get(self, url: str, until: float, *, max_bytes: int) -> outbound.Response:
        """GET with the source's credentials and :data:`RETRIES`."""
        return self._http.send("GET", url, until, headers=self._headers, max_bytes=max_bytes)


def _results(data: dict[str, Any]) -> list[Any]:
    results = data.get("results")
    return results if isinstance(results, list) else []


def _id_of(content: dict[str, Any]) -> str:
    value = content.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.isdigit() or len(value) > MAX_ITEM_ID_BYTES:
        return ""
    return value


def _with_expand(path: str, expand: str) -> str:
    parts = urlsplit(path)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "expand"]
    return f"{parts.path}?{urlencode([*query, ('expand', expand)])}"
