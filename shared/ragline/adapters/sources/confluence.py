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

**Who may read a page.** Confluence lets a user see a page when they pass its own read restriction and
every ancestor's (each *restricted level* names users and groups; an unrestricted level lets everyone
through). Ragline's readers are a union of users and groups, so the mapping is conservative: a user
survives only when named at every restricted level, a group likewise (users and groups separately: a
user reading through a group at one level and by name at another is not kept). No restricted level →
everyone in the namespace (:data:`~ragline.domain.sources.EVERYONE`). **Space permissions are not
mapped**: a tenant points a source at spaces every reader of the namespace may read. Nobody surviving
→ ``ItemAccess.only()`` (the sync does not index the page). A user is named by their email when
Confluence shows it (profile visibility), else by their ``accountId``; a group by its name.
Principals Ragline cannot carry (a comma, a control character, over 256 characters) are dropped, and
a page with more than :data:`~ragline.domain.access.MAX_GROUPS` surviving users or groups is readable by
no one (a warning is logged): dropping readers can only hide a page, never show it. Restriction lists
Confluence truncates (very long ones) are read as given: a subset, so again only fewer readers.

**Credentials** (``email`` and ``apiToken``) are sent as HTTP Basic auth and appear in no log, error or
``repr``. 401 and 403 on the listing are :class:`~ragline.errors.DependencyFailed` saying the
credentials were refused or lack access; a page that is not JSON of the documented shape likewise.

**Requests** go through :func:`ragline.outbound.request` (public addresses only; loopback only with
``allow_loopback``; bounded bytes and time; redirects not followed). ``429`` and ``503`` wait
``Retry-After`` (seconds or an HTTP date), other ``5xx`` back off, all within ``until``; a wait past it
ends the listing call early with ``retry_after`` and a cursor that reads the same result page again.
Another ``5xx`` still answered after the retries is :class:`~ragline.errors.DependencyUnavailable`
(the step fails and keeps its cursor).
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
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from html import escape
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from ragline import errors, outbound
from ragline.domain.access import MAX_GROUPS, check_principal
from ragline.domain.source_settings import ConfluenceSettings
from ragline.domain.sources import (
    EVERYONE,
    MAX_CURSOR_BYTES,
    MAX_ITEM_ID_BYTES,
    Change,
    ChangePage,
    ItemAccess,
    SourceItem,
)
from ragline.ports import KnownItems

_log = logging.getLogger(__name__)
Fetch = Callable[..., outbound.Response]
PAGE_CHANGES = 50
"""Pages asked per search request (one listing call reads one result page)."""
REQUEST_SECONDS = 10.0
MAX_ATTEMPTS = 3
MAX_WAIT = 10.0
"""The longest ``Retry-After`` (or backoff) waited out inside a call; longer ends the listing call."""
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


class _Level(NamedTuple):
    """One restricted level (the page or an ancestor): the principals its read restriction names."""

    users: frozenset[str]
    groups: frozenset[str]


class _Unlisted(Exception):
    """The listing left out what a page's readers are decided by: the page fails alone."""


class _Throttled(Exception):
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


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
        fetch: Fetch = outbound.request,
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
        self._allow_loopback = allow_loopback
        self._fetch = fetch
        self._sleep = sleep
        self._monotonic = monotonic
        self.page_changes = PAGE_CHANGES
        self._ancestors: dict[str, _Level | None] = {}

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
        except _Throttled as wait:  # the same result page is read again by the next call
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
        deadline = self._monotonic() + REQUEST_SECONDS * MAX_ATTEMPTS
        try:
            response = self._get(url, deadline, max_bytes=BODY_BYTES)
        except _Throttled as wait:
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
        page = _json_object(response.body, f"page {item.id}")
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
        until = self._monotonic() + REQUEST_SECONDS * MAX_ATTEMPTS
        try:
            data, state = self._search(state, until)
            results = [r for r in _results(data) if isinstance(r, dict) and _id_of(r) == item.id]
            return self._access(results[0], state.each, until) if results else ItemAccess.only()
        except _Throttled as wait:
            raise errors.DependencyFailed(
                f"Confluence asked to wait {wait.seconds:g} s before page {item.id}'s restrictions"
            ) from None
        except _Unlisted as exc:
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
        inline expansion). ``_Throttled`` carries no state: a switch is redone by the next call."""
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
        data = _json_object(response.body, "a content search page")
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
            except _Unlisted as exc:
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
        if "restrictions" not in result:
            raise _Unlisted("Confluence listed the page without its read restrictions")
        levels = [_level(result.get("restrictions"))]
        ancestors = result.get("ancestors", [])
        if not isinstance(ancestors, list):
            raise _Unlisted("Confluence listed the page's ancestors in an unknown shape")
        for ancestor in ancestors:
            if not isinstance(ancestor, dict):
                raise _Unlisted("Confluence listed the page's ancestors in an unknown shape")
            if each:
                levels.append(self._ancestor_level(_id_of(ancestor), until))
            elif "restrictions" not in ancestor:
                raise _Unlisted("Confluence listed the page's ancestors without their read restrictions")
            else:
                levels.append(_level(ancestor.get("restrictions")))
        restricted = [level for level in levels if level is not None]
        if not restricted:
            return EVERYONE
        users = frozenset.intersection(*(level.users for level in restricted))
        groups = frozenset.intersection(*(level.groups for level in restricted))
        if len(users) > MAX_GROUPS or len(groups) > MAX_GROUPS:
            _log.warning(
                "a Confluence page names more readers than a document carries: readable by no one",
                extra={"page": _id_of(result), "users": len(users), "groups": len(groups)},
            )
            return ItemAccess.only()
        return ItemAccess.only(sorted(users), sorted(groups))

    def _ancestor_level(self, ancestor_id: str, until: float) -> _Level | None:
        """An ancestor's read restriction, read once per connector (an unreadable one: nobody)."""
        if ancestor_id in self._ancestors:
            return self._ancestors[ancestor_id]
        nobody = _Level(frozenset(), frozenset())
        if not ancestor_id.isdigit() or len(ancestor_id) > MAX_ITEM_ID_BYTES:
            return nobody
        if self._monotonic() >= until:
            raise _Throttled(0.0)
        query = urlencode({"expand": "restrictions.user,restrictions.group"})
        url = f"{self._wiki}/rest/api/content/{ancestor_id}/restriction/byOperation/read?{query}"
        response = self._get(url, until, max_bytes=RESTRICTION_BYTES)
        if response.status in (401, 403, 404):
            level: _Level | None = nobody
        elif response.status != 200:
            raise errors.DependencyUnavailable(
                f"Confluence answered {response.status} for an ancestor's restrictions", page=ancestor_id
            )
        else:
            level = _level({"read": _json_object(response.body, "an ancestor's restrictions")})
        self._ancestors[ancestor_id] = level
        return level

    # -- requests ---------------------------------------------------------------------------------
    def _get(self, url: str, until: float, *, max_bytes: int) -> outbound.Response:
        """GET with retries: ``429``/``503`` wait ``Retry-After`` (else a backoff), other ``5xx`` back
        off; a wait past ``until`` or :data:`MAX_WAIT` raises :class:`_Throttled`, as does a ``429``
        or ``503`` still answered after :data:`MAX_ATTEMPTS`. Another ``5xx`` is returned. Each attempt
        has its whole :data:`REQUEST_SECONDS` (a search begun just before ``until`` is not cut short:
        the call ends by ``until`` plus one request's time, as the port allows)."""
        response: outbound.Response | None = None
        wait = 0.0
        for attempt in range(MAX_ATTEMPTS):
            response = self._fetch(
                "GET", url, headers=self._headers, timeout=REQUEST_SECONDS, max_bytes=max_bytes,
                allow_loopback=self._allow_loopback,
            )  # fmt: skip
            if response.status < 500 and response.status != 429:
                return response
            wait = _retry_after(response.headers.get("retry-after", ""), default=0.5 * 2**attempt)
            if wait > MAX_WAIT or self._monotonic() + wait >= until:
                if response.status in (429, 503):
                    raise _Throttled(wait)
                return response
            if attempt + 1 < MAX_ATTEMPTS:
                self._sleep(wait)
        assert response is not None
        if response.status in (429, 503):
            raise _Throttled(wait)
        return response


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


def _level(restrictions: Any) -> _Level | None:
    """``restrictions.read``'s principals; None when the level names none (it is not restricted)."""
    read = restrictions.get("read") if isinstance(restrictions, dict) else None
    inner = read.get("restrictions") if isinstance(read, dict) else None
    if not isinstance(inner, dict):
        return None
    users = _entries(inner.get("user"))
    groups = _entries(inner.get("group"))
    if not users and not groups:
        return None
    return _Level(
        frozenset(p for p in (_user(u) for u in users) if p),
        frozenset(p for p in (_principal(g.get("name")) for g in groups) if p),
    )


def _entries(value: Any) -> list[dict[str, Any]]:
    results = value.get("results") if isinstance(value, dict) else None
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def _user(user: dict[str, Any]) -> str:
    email = user.get("email")
    if isinstance(email, str) and email.strip():
        return _principal(email.strip())
    return _principal(user.get("accountId"))


def _principal(value: Any) -> str:
    """A principal Ragline can carry, or ``""`` (dropped: one reader fewer, never one more)."""
    try:
        return check_principal(value, "principal")
    except errors.InvalidRequest:
        return ""


def _with_expand(path: str, expand: str) -> str:
    parts = urlsplit(path)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "expand"]
    return f"{parts.path}?{urlencode([*query, ('expand', expand)])}"


def _json_object(body: bytes, what: str) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise errors.DependencyFailed(f"Confluence sent {what} that is not JSON") from None
    if not isinstance(value, dict):
        raise errors.DependencyFailed(f"Confluence sent {what} that is not a JSON object")
    return value


def _retry_after(value: str, *, default: float) -> float:
    """``Retry-After`` in seconds (a number or an HTTP date), ``default`` when absent or unreadable."""
    value = value.strip()
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return default
    return default if math.isnan(seconds) else min(max(seconds, 0.0), 86_400.0)
