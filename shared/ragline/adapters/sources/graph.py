"""SharePoint Online and OneDrive through Microsoft Graph: one drive (a document library), or one folder
of it, as a :class:`~ragline.ports.Source` kept in step by Graph's **delta query**.

Endpoints (confirmed from Microsoft's reference pages: *driveItem: delta*, *Best practices for
discovering files and detecting changes at scale* (the "scan guidance"), *List sharing permissions on a
driveItem*, the *permission*, *sharingLink* and *sharePointIdentitySet* resources, *Download the
contents of a driveItem*, *Microsoft identity platform and the OAuth 2.0 client credentials flow*; 429
and 503 with ``Retry-After`` from the scan guidance's throttling section):

- **Token**: ``POST {loginUrl}/{tenant}/oauth2/v2.0/token`` with the form ``client_id``,
  ``client_secret``, ``grant_type=client_credentials``, ``scope=https://graph.microsoft.com/.default``
  → ``{"access_token", "expires_in", "token_type"}``. The token is kept (per connector, that is per
  sync step) until :data:`TOKEN_MARGIN` before it expires; a ``401`` from Graph drops it and asks for a
  new one once, then the request fails (:class:`~ragline.errors.DependencyFailed`).
- **Listing**: ``GET {graphUrl}/drives/{driveId}/root/delta`` (delta exists only on a drive's root in
  SharePoint and OneDrive for Business: a folder source lists the drive and keeps what is below its
  folder), with ``Prefer: deltashowremovedasdeleted, deltatraversepermissiongaps,
  deltashowsharingchanges, hierarchicalsharing`` (``deltashowsharingchanges`` requires the first two;
  items that appear because their sharing changed carry ``"@microsoft.graph.sharedChanged": "True"``).
  Pages follow ``@odata.nextLink``; the last one carries ``@odata.deltaLink``. A ``410 Gone``
  (``resyncRequired``: the token is too old) is :class:`~ragline.errors.CursorExpired` and the sync
  starts a full listing again.
- **Folders**: ``GET {graphUrl}/drives/{driveId}/root:/{folder}`` (the scope folder, by path, when a
  full listing starts), ``GET …/items/{id}?$select=id,root,parentReference`` (where a folder sits) and
  ``GET …/items/{id}/children`` (what is below a folder, paged by ``@odata.nextLink``).
- **Permissions**: ``GET …/items/{id}/permissions`` (paged by ``@odata.nextLink``).
- **Content**: ``GET …/items/{id}/content`` → ``302`` with ``Location``, a pre-authenticated download
  URL valid for minutes, fetched (once, through :func:`ragline.outbound.request` again: public
  addresses only) **without** the bearer token, at most :data:`MAX_FILE_BYTES`. ``404`` (or a
  download's ``404``/``410``) → :class:`~ragline.errors.NotFound`; any other failure →
  :class:`~ragline.errors.DependencyFailed` (the item fails alone). A download URL carries its own
  credential: it is never put in an error or a log.

**A full listing, then changes.** ``changes(None, …)`` starts a delta without a token: every item of the
drive, page by page, each page a :class:`~ragline.domain.sources.ChangePage` saying ``full`` (the sync
sweeps what it did not name). The ``done`` page's cursor holds the ``@odata.deltaLink``: the next sync
asks it and gets only what changed since (``full`` False) — content changes, new files, deletions
(the ``deleted`` facet), moves, renames and, with the ``Prefer`` header above, sharing changes. The
delta feed shows each item's latest state and may repeat an item; a page's items are read in one pass
(the last occurrence wins, folders before files, parents before their children).

**Items** are files only (folders, the root, notebooks and other packages are not), of a type the
ingest pipeline parses (``.txt``, ``.pdf``, ``.docx``…: others are not named, or are deleted when they
change), within the configured folder. ``id`` is the drive item's id; ``name`` its ``webUrl`` (what a
reader sees as the document's source; a file keeps the URL of its last listing when only a folder
above it is renamed, since delta does not return the descendants of a renamed folder); ``filename``
its name (its extension picks the parser); ``version`` its ``cTag`` (changes with the content only),
else a content hash of its ``file.hashes`` (OneDrive for Business leaves ``cTag`` out of delta
answers), else its ``eTag``. ``access`` is ``None``: the sync asks :meth:`GraphSource.permissions`
for every item a page names, and re-labels without fetching when only the readers changed. An item
whose sharing changed and whose content did not is named all the same (same version). A file over
:data:`MAX_FILE_BYTES` is ``failed`` (named, not fetched).

**Folder scope.** Delta answers carry no ``parentReference.path`` (only the parent's ``id``), so a
folder source keeps, in its cursor, the ids (8-byte digests) of the folders below its folder; the
scope folder is found by its path when a full listing starts and followed by its id afterwards (a
rename or move of it keeps the scope). A parent the cursor does not know is walked up to the scope
folder or the root (``GET …/items/{id}``, once per folder per step). In a listing of changes a file
moved out of the folder is a ``delete``, one moved in an ``upsert``.

**What delta does not say, read from the folder.** Delta names only items that changed themselves, and
their parent folders: not the descendants of a folder whose sharing changed (their inherited readers
changed), nor of a folder moved into or out of the folder scope. Such a folder is queued in the cursor
and its subtree read through ``children`` before the listing ends: each file named again (an
``upsert`` at its version: the sync asks its readers anew and re-labels) or, for a folder that left
the scope, deleted. A sharing change on the drive's root (or on a folder above the scope folder) reads
the whole scope so. When the queue outgrows the cursor, the listing starts over in full
(:class:`~ragline.errors.CursorExpired`). A deleted folder's descendants come in the feed as deleted
items themselves (the delta documentation's own advice: delete a folder once it is empty).

**Who may read a file** (:meth:`GraphSource.permissions`), from its effective permissions (inherited
ones included; SharePoint does not say which are): a permission counts when its ``roles`` hold
``read``, ``write`` or ``owner`` (owners read). A sharing link of scope ``anonymous`` or
``organization`` — or a grant to SharePoint's "Everyone" / "Everyone except external users" claims —
lets everyone in the namespace read (:data:`~ragline.domain.sources.EVERYONE`); a ``users`` link its
``grantedToIdentitiesV2``; an ``existingAccess`` link and an expired link grant nothing. A user is
named by their ``email`` when Graph shows it, else by their Microsoft Entra object ``id`` (a
SharePoint-only user by the account in its ``i:0#.f|membership|`` login name); an Entra group by its
object ``id`` (what Entra ID tokens carry in their ``groups`` claim; also when SharePoint shows it only
as a ``c:0t.c|tenant|<id>`` or ``c:0o.c|federateddirectoryclaimprovider|<id>`` claim); a SharePoint
group (``siteGroup``,
meaningful only inside its site) as ``sharepoint:<display name>``. Principals Ragline cannot carry (a
comma, a control character, over 256 characters) are dropped, and a file naming more than
:data:`~ragline.domain.access.MAX_GROUPS` users or groups is readable by no one (a warning is logged):
dropping readers can only hide a file, never show it. No reader → ``ItemAccess.only()`` (not
indexed); a file gone since → no reader either. The complete set of sharing changes reaches delta
only for an app granted ``Sites.FullControl.All`` (Microsoft's scan guidance); with
``Files.Read.All``/``Sites.Read.All`` alone a re-permissioned file is re-labelled when it next changes
or at the next full listing.

**Requests** go through :func:`ragline.outbound.request` (public addresses only; loopback only with
``allow_loopback``; bounded bytes and time; redirects not followed), and the bearer token only ever to
``graphUrl`` (a link Graph returns elsewhere is refused). ``429`` and ``503`` wait ``Retry-After``
(seconds or an HTTP date; else a backoff), other ``5xx`` back off, three attempts in all; a
``429``/``503`` wait past ``until`` (or over :data:`MAX_WAIT`) ends the listing call early with
``retry_after`` and a cursor that asks the refused link again (in ``fetch``/``permissions`` it fails the
item, :class:`~ragline.errors.DependencyUnavailable`). Each listing call reads one Graph page (delta or
``children``) and the folder lookups it needs — even past ``until``: a call always makes progress.
Other ``5xx`` after the last attempt are :class:`~ragline.errors.DependencyUnavailable` (the step
fails and is retried from its cursor). ``401`` after a fresh token and ``403``
(the app lacks ``Files.Read.All`` or ``Sites.Read.All``) are :class:`~ragline.errors.DependencyFailed`,
so is an answer that is not JSON of the documented shape. Credentials and tokens appear in no error,
log or ``repr``.

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
import logging
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from ragline import errors, outbound
from ragline.domain.access import MAX_GROUPS, check_principal
from ragline.domain.source_settings import GraphSettings
from ragline.domain.sources import EVERYONE, MAX_CURSOR_BYTES, Change, ChangePage, ItemAccess, SourceItem
from ragline.ports import KnownItems

_log = logging.getLogger(__name__)
Fetch = Callable[..., outbound.Response]

GRAPH_SCOPE = "https://graph.microsoft.com/.default"
PREFER = (
    "deltashowremovedasdeleted, deltatraversepermissiongaps, deltashowsharingchanges, hierarchicalsharing"
)
SHARED_CHANGED = "@microsoft.graph.sharedChanged"
PAGE_TOP = 200
"""``$top`` of a delta or children page (Graph may answer fewer)."""
REQUEST_SECONDS = 10.0
MIN_SECONDS = 5.0
DOWNLOAD_SECONDS = 60.0
MAX_ATTEMPTS = 3
MAX_WAIT = 10.0
"""The longest ``Retry-After`` (or backoff) waited out inside a call; longer ends the page."""
TOKEN_MARGIN = 300.0
"""A token is renewed this long before it expires (half its life when that is shorter)."""
MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_PERMISSION_PAGES = 20
MAX_DEPTH = 100
"""Folder levels walked up from a folder to the scope folder or the root."""
_CURSOR = "g1:"
_READ_ROLES = frozenset({"read", "write", "owner"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_EVERYONE_LOGINS = ("c:0-.f|rolemanager|spo-grid-all-users", "c:0(.s|true")
_MEMBER_LOGIN = "i:0#.f|membership|"
_GROUP_LOGINS = ("c:0t.c|tenant|", "c:0o.c|federateddirectoryclaimprovider|")
"""SharePoint's claims for an Entra security group and a Microsoft 365 group (``<id>_o``: its owners)."""
_HASHES = ("quickXorHash", "sha256Hash", "sha1Hash", "crc32Hash")


def _digest(item_id: str) -> str:
    return hashlib.blake2b(item_id.encode(), digest_size=8).hexdigest()


@dataclass
class _State:
    """The cursor: where a listing stands (see the module docstring)."""

    key: str
    full: bool
    link: str
    final: bool = False
    """``link`` is the delta link: the delta pass is over (only folders to read may remain)."""
    scope: str | None = None
    """The scope folder's id; ``""`` the whole drive; ``None`` not looked up yet."""
    inside: set[str] = field(default_factory=set)
    expand: list[list[str]] = field(default_factory=list)
    """Folders whose subtree is still to read: ``["u", id]`` (name its files again) or ``["d", id]``
    (delete them)."""
    children: str = ""
    """The ``children`` page being read, of a folder taken from ``expand``."""
    op: str = ""

    def copy(self) -> _State:
        return _State(
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
        return _CURSOR + base64.urlsafe_b64encode(zlib.compress(raw, 6)).decode()

    @classmethod
    def decode(cls, cursor: str) -> _State:
        if not cursor.startswith(_CURSOR):
            raise errors.CursorExpired("not a Microsoft Graph cursor")
        try:
            value = json.loads(
                zlib.decompressobj().decompress(
                    base64.urlsafe_b64decode(cursor[len(_CURSOR) :]), 8 * MAX_CURSOR_BYTES
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


class _Throttled(Exception):
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class GraphSource:
    """A drive (or one folder of it) through Microsoft Graph; ``credentials`` are the app
    registration's ``clientId`` and ``clientSecret``."""

    def __init__(
        self,
        settings: GraphSettings,
        credentials: Mapping[str, str],
        *,
        allow_loopback: bool = False,
        fetch: Fetch = outbound.request,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        client_id, secret = credentials.get("clientId"), credentials.get("clientSecret")
        if not isinstance(client_id, str) or not client_id or not isinstance(secret, str) or not secret:
            raise errors.DependencyFailed(
                "a Microsoft Graph source needs the credentials clientId and clientSecret"
            )
        self._s = settings
        self._client_id = client_id
        self._secret = secret
        self._allow_loopback = allow_loopback
        self._fetch = fetch
        self._sleep = sleep
        self._monotonic = monotonic
        self._graph = settings.graph_url.rstrip("/")
        self._drive = f"{self._graph}/drives/{quote(settings.drive_id, safe='!')}"
        self._folder = "/".join(p for p in settings.folder.split("/") if p)
        self._key = hashlib.sha256(
            json.dumps([self._graph, settings.drive_id, self._folder]).encode()
        ).hexdigest()[:16]
        self._token_url = f"{settings.login_url.rstrip('/')}/{settings.tenant}/oauth2/v2.0/token"
        self._token: str = ""
        self._token_until = 0.0
        self._outside: set[str] = set()
        """Folders known (this step) to be outside the scope folder."""
        self._walked_in: set[str] = set()
        """Folders found below the scope folder by walking up, in a listing of changes (this step)."""
        self._scope_ancestors: set[str] | None = None

    def __repr__(self) -> str:
        return f"GraphSource(drive={self._s.drive_id!r}, folder={self._folder!r})"

    # -- the port ---------------------------------------------------------------------------------
    def changes(self, cursor: str | None, known: KnownItems, *, until: float) -> ChangePage:
        state = self._decode(cursor) if cursor else self._fresh()
        work = state.copy()
        try:
            changes = self._step(work, until)
        except _Throttled as wait:  # nothing of this call is kept: the cursor asks the same link again
            return ChangePage([], state.encode(), done=False, full=state.full, retry_after=wait.seconds)
        if work.final and not work.pending():
            nxt = _State(self._key, full=False, link=work.link, scope=work.scope, inside=work.inside)
            return ChangePage(changes, self._encoded(nxt), done=True, full=state.full)
        return ChangePage(changes, self._encoded(work), done=False, full=state.full)

    def fetch(self, item: SourceItem) -> bytes:
        deadline = self._monotonic() + DOWNLOAD_SECONDS
        url = f"{self._drive}/items/{_q(item.id)}/content"
        with self._unthrottled():
            response = self._send("GET", url, deadline, auth=True, max_bytes=MAX_FILE_BYTES)
        if response.status == 200:
            return response.body
        if response.status in _REDIRECTS:
            return self._download(item, response.headers.get("location", ""), deadline)
        if response.status in (404, 410):
            raise errors.NotFound("the file is gone from the drive", item_id=item.id)
        failure = self._failure(response, f"the content of {item.id}")
        raise errors.DependencyFailed(failure.message, item_id=item.id, **failure.details)

    def permissions(self, item: SourceItem) -> ItemAccess:
        deadline = self._monotonic() + REQUEST_SECONDS * MAX_ATTEMPTS
        url = f"{self._drive}/items/{_q(item.id)}/permissions"
        users: set[str] = set()
        groups: set[str] = set()
        for _ in range(MAX_PERMISSION_PAGES):
            with self._unthrottled():
                body = self._json(url, deadline, missing_ok=True)
            if body is None:
                return ItemAccess.only()  # gone: no one reads it
            for permission in _values(body):
                if _grants_everyone(permission):
                    return EVERYONE
                more_users, more_groups = _principals(permission)
                users.update(more_users)
                groups.update(more_groups)
            link = body.get("@odata.nextLink")
            if not link:
                return _access(item.id, users, groups)
            url = self._graph_link(link)
        raise errors.DependencyFailed("too many pages of permissions", item_id=item.id)

    # -- a listing --------------------------------------------------------------------------------
    def _fresh(self) -> _State:
        return _State(
            self._key, full=True, link=f"{self._drive}/root/delta?$top={PAGE_TOP}",
            scope=None if self._folder else "",
        )  # fmt: skip

    def _decode(self, cursor: str) -> _State:
        state = _State.decode(cursor)
        links = [state.link] + ([state.children] if state.children else [])
        if state.key != self._key or not all(self._ours(link) for link in links):
            raise errors.CursorExpired("the cursor was made for other settings")
        return state

    def _encoded(self, state: _State) -> str:
        text = state.encode()
        if len(text) <= MAX_CURSOR_BYTES:
            return text
        if state.pending() and not state.full:  # the subtrees to read outgrew the cursor: list afresh
            raise errors.CursorExpired("the folders to read again outgrew the cursor")
        raise errors.DependencyFailed(
            "the folder holds too many subfolders to track: choose a narrower folder or the whole drive",
            bytes=len(text),
        )

    def _step(self, state: _State, until: float) -> list[Change]:
        """One request's worth of the listing (plus the folder lookups it needs), into ``state``."""
        if state.scope is None:
            state.scope = self._scope_id(until)
        if state.pending():
            return self._read_subtree(state, until)
        fresh = state.full and state.link == self._fresh().link
        body = self._json(state.link, until, delta=True, expired_ok=not fresh)
        assert body is not None
        changes = self._apply(state, _values(body), until)
        next_link, delta_link = body.get("@odata.nextLink"), body.get("@odata.deltaLink")
        if next_link:
            state.link = self._graph_link(next_link)
        elif delta_link:
            state.link = self._graph_link(delta_link)
            state.final = True
        else:
            raise errors.DependencyFailed("a delta page without @odata.nextLink or @odata.deltaLink")
        return changes

    def _apply(self, state: _State, values: list[dict[str, Any]], until: float) -> list[Change]:
        latest: dict[str, dict[str, Any]] = {}
        for value in values:
            item_id = value.get("id")
            if isinstance(item_id, str) and item_id:
                latest.pop(item_id, None)
                latest[item_id] = value  # the last occurrence wins
        folders = {i: v for i, v in latest.items() if _is_folder(v)}
        for folder in _parents_first(folders):
            self._folder_changed(state, folder, until)
        out: list[Change] = []
        for item_id, value in latest.items():
            if item_id in folders:
                continue
            change = self._file_change(state, value, until)
            if change is not None:
                out.append(change)
        return out

    def _folder_changed(self, state: _State, folder: dict[str, Any], until: float) -> None:
        """Track a folder the feed named: the scope's folders, and subtrees to read again."""
        folder_id: str = folder["id"]
        deleted = "deleted" in folder
        shared = not state.full and not deleted and _shared_changed(folder)
        if not state.scope:  # the whole drive
            if shared:
                state.expand.append(["u", folder_id])
            return
        if folder_id == state.scope:
            if shared:
                state.expand.append(["u", folder_id])
            return
        key = _digest(folder_id)
        was_in = key in state.inside
        if deleted:
            state.inside.discard(key)
            self._walked_in.discard(folder_id)
            self._outside.add(folder_id)
            return
        now_in = "root" not in folder and self._inside(state, _parent(folder), until)
        if now_in:
            state.inside.add(key)
            self._outside.discard(folder_id)
        else:
            state.inside.discard(key)
            self._walked_in.discard(folder_id)
            self._outside.add(folder_id)
        if state.full:
            return
        if now_in and (not was_in or shared):
            state.expand.append(["u", folder_id])
        elif was_in and not now_in:
            state.expand.append(["d", folder_id])
        elif shared and folder_id in self._ancestors_of_scope(state, until):
            state.expand.append(["u", state.scope])

    def _file_change(
        self, state: _State, item: dict[str, Any], until: float, *, within: bool = False
    ) -> Change | None:
        """The change a file the feed (or a folder's children) named makes; None: nothing to say."""
        item_id: str = item["id"]
        if "deleted" in item:
            return Change("delete", item_id)
        if "file" not in item:
            return None  # a package (a OneNote notebook…), or an item Graph half-described
        name = item.get("name")
        scoped = within or not state.scope or self._inside(state, _parent(item), until)
        if not scoped or not isinstance(name, str) or not _parsable(name):
            return None if state.full else Change("delete", item_id)  # gone from the scope, if it was in
        size = item.get("size")
        if isinstance(size, int) and size > MAX_FILE_BYTES:
            return Change("failed", item_id, error=f"the file is larger than {MAX_FILE_BYTES} bytes")
        version = _version(item)
        if not version:
            return Change("failed", item_id, error="Microsoft Graph gave the file no cTag, hash or eTag")
        web_url = item.get("webUrl")
        shown = web_url if isinstance(web_url, str) and web_url else name
        return Change("upsert", item_id, SourceItem(id=item_id, name=shown, filename=name, version=version))

    def _read_subtree(self, state: _State, until: float) -> list[Change]:
        """One ``children`` page of a folder queued to be read again."""
        if state.children:
            link = state.children
        else:
            state.op, folder_id = state.expand[0]
            del state.expand[0]
            link = f"{self._drive}/items/{_q(folder_id)}/children?$top={PAGE_TOP}"
        body = self._json(link, until, missing_ok=True)
        state.children = ""
        if body is None:
            return []  # deleted since: its files come in the feed as deleted
        out: list[Change] = []
        for value in _values(body):
            item_id = value.get("id")
            if not isinstance(item_id, str) or not item_id:
                continue
            if _is_folder(value):
                if state.scope and state.op == "u":
                    state.inside.add(_digest(item_id))
                    self._outside.discard(item_id)
                elif state.scope:
                    state.inside.discard(_digest(item_id))
                    self._walked_in.discard(item_id)
                    self._outside.add(item_id)
                state.expand.append([state.op, item_id])
            elif state.op == "d":
                out.append(Change("delete", item_id))
            else:
                change = self._file_change(state, value, until, within=True)
                if change is not None:
                    out.append(change)
        next_link = body.get("@odata.nextLink")
        if next_link:
            state.children = self._graph_link(next_link)
        return out

    # -- the folder scope -------------------------------------------------------------------------
    def _scope_id(self, until: float) -> str:
        if not self._folder:
            return ""
        body = self._json(f"{self._drive}/root:/{quote(self._folder, safe='/')}", until, missing_ok=True)
        if body is None or not isinstance(body.get("id"), str) or not _is_folder(body):
            raise errors.DependencyFailed(
                f"the folder /{self._folder} is not a folder of the drive", folder=f"/{self._folder}"
            )
        return str(body["id"])

    def _inside(self, state: _State, folder_id: str, until: float) -> bool:
        """Whether ``folder_id`` is the scope folder or below it (walked up when not known)."""
        if not folder_id:
            return False
        if folder_id == state.scope or _digest(folder_id) in state.inside or folder_id in self._walked_in:
            return True
        if folder_id in self._outside:
            return False
        chain = [folder_id]
        verdict = False
        for _ in range(MAX_DEPTH):
            meta = self._json(
                f"{self._drive}/items/{_q(chain[-1])}?$select=id,root,parentReference", until, missing_ok=True
            )
            parent = _parent(meta) if meta is not None and "root" not in meta else ""
            if not parent or parent in self._outside:
                break
            if parent == state.scope or _digest(parent) in state.inside or parent in self._walked_in:
                verdict = True
                break
            chain.append(parent)
        for folder in chain:
            if not verdict:
                self._outside.add(folder)
            elif state.full:
                state.inside.add(_digest(folder))
            else:  # its own entry in the feed (a folder moved in) still has its subtree read
                self._walked_in.add(folder)
        return verdict

    def _ancestors_of_scope(self, state: _State, until: float) -> set[str]:
        """The folders above the scope folder (whose sharing its files may inherit)."""
        if self._scope_ancestors is None:
            found: set[str] = set()
            current = state.scope or ""
            for _ in range(MAX_DEPTH):
                meta = self._json(
                    f"{self._drive}/items/{_q(current)}?$select=id,root,parentReference",
                    until,
                    missing_ok=True,
                )
                parent = _parent(meta) if meta is not None and "root" not in meta else ""
                if not parent:
                    break
                found.add(parent)
                current = parent
            self._scope_ancestors = found
        return self._scope_ancestors

    # -- requests ---------------------------------------------------------------------------------
    def _ours(self, link: str) -> bool:
        return link.startswith(self._graph + "/")

    def _graph_link(self, link: object) -> str:
        """A link Graph returned: followed (with the bearer token) only when it is Graph's own."""
        if not isinstance(link, str) or not self._ours(link):
            raise errors.DependencyFailed("Microsoft Graph returned a link outside its own address")
        return link

    def _json(
        self,
        url: str,
        until: float,
        *,
        delta: bool = False,
        expired_ok: bool = False,
        missing_ok: bool = False,
    ) -> dict[str, Any] | None:
        """A Graph GET's JSON object (None: 404 and ``missing_ok``)."""
        headers = {"accept": "application/json", **({"prefer": PREFER} if delta else {})}
        response = self._send("GET", url, until, auth=True, headers=headers, max_bytes=MAX_JSON_BYTES)
        if response.status == 200:
            try:
                body = json.loads(response.body)
            except ValueError:
                body = None
            if not isinstance(body, dict):
                raise errors.DependencyFailed(
                    "Microsoft Graph answered with something that is not a JSON object"
                )
            return body
        if response.status == 404 and missing_ok:
            return None
        if response.status == 410 and delta and expired_ok:
            raise errors.CursorExpired("Microsoft Graph no longer honours the delta token (resync required)")
        raise self._failure(response, "Microsoft Graph")

    @staticmethod
    def _failure(response: outbound.Response, what: str) -> errors.RaglineError:
        status, code = response.status, _error_code(response.body)
        if status == 401:
            return errors.DependencyFailed(
                "Microsoft Graph refused the app's token (401): check the app registration",
                status=status,
                code=code,
            )
        if status == 403:
            return errors.DependencyFailed(
                "Microsoft Graph refused access (403): the app needs the application permission "
                "Files.Read.All or Sites.Read.All, granted by an administrator",
                status=status, code=code,
            )  # fmt: skip
        if status >= 500 or status == 429:
            return errors.DependencyUnavailable(f"{what} answered {status}", status=status, code=code)
        return errors.DependencyFailed(f"{what} answered {status}", status=status, code=code)

    @staticmethod
    @contextmanager
    def _unthrottled() -> Iterator[None]:
        """A request outside a listing: a wait past its deadline fails it (the item alone)."""
        try:
            yield
        except _Throttled as wait:
            raise errors.DependencyUnavailable(
                f"Microsoft Graph asked to wait {wait.seconds:.0f} s", retry_after=wait.seconds
            ) from None

    def _send(
        self,
        method: str,
        url: str,
        until: float,
        *,
        auth: bool,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        max_bytes: int = outbound.MAX_RESPONSE_BYTES,
        seconds: float = REQUEST_SECONDS,
    ) -> outbound.Response:
        """A request with retries: ``429``/``503`` wait ``Retry-After`` (else a backoff), other ``5xx``
        back off; a ``429``/``503`` wait past ``until`` or :data:`MAX_WAIT` raises :class:`_Throttled`
        (so does a ``429`` still there after the last attempt). With ``auth`` the bearer token goes
        along, renewed once on a ``401``. Each attempt takes at most ``seconds`` (at least
        :data:`MIN_SECONDS`, even past ``until``: a call always makes progress)."""
        attempt = 0
        renewed = False
        while True:
            sent = dict(headers or {})
            if auth:
                sent["authorization"] = f"Bearer {self._access_token(until)}"
            timeout = max(MIN_SECONDS, min(seconds, until - self._monotonic()))
            response = self._fetch(
                method, url, headers=sent, body=body, timeout=timeout, max_bytes=max_bytes,
                allow_loopback=self._allow_loopback,
            )  # fmt: skip
            if response.status == 401 and auth and not renewed:
                renewed = True
                self._token, self._token_until = "", 0.0
                continue
            if response.status < 500 and response.status != 429:
                return response
            attempt += 1
            wait = _retry_after(response.headers.get("retry-after", ""), default=0.5 * 2 ** (attempt - 1))
            if response.status in (429, 503) and (wait > MAX_WAIT or self._monotonic() + wait >= until):
                raise _Throttled(wait)
            if attempt >= MAX_ATTEMPTS:
                if response.status == 429:
                    raise _Throttled(wait)
                return response
            self._sleep(min(wait, MAX_WAIT))

    def _access_token(self, until: float) -> str:
        if self._token and self._monotonic() < self._token_until:
            return self._token
        form = urlencode(
            {
                "client_id": self._client_id,
                "client_secret": self._secret,
                "grant_type": "client_credentials",
                "scope": GRAPH_SCOPE,
            }
        ).encode()
        response = self._send(
            "POST", self._token_url, until, auth=False, body=form,
            headers={"content-type": "application/x-www-form-urlencoded", "accept": "application/json"},
        )  # fmt: skip
        if response.status != 200:
            code = _error_code(response.body)
            if response.status >= 500:
                raise errors.DependencyUnavailable(
                    f"Microsoft Entra ID answered {response.status}", status=response.status
                )
            raise errors.DependencyFailed(
                f"Microsoft Entra ID refused the app's credentials ({response.status} {code or 'error'}): "
                "check the tenant, clientId and clientSecret",
                status=response.status, code=code,
            )  # fmt: skip
        try:
            value = json.loads(response.body)
            token, lifetime = value["access_token"], float(value.get("expires_in", 3600))
        except (ValueError, KeyError, TypeError):
            token, lifetime = None, 0.0
        if not isinstance(token, str) or not token:
            raise errors.DependencyFailed("Microsoft Entra ID answered a token request without a token")
        self._token = token
        self._token_until = self._monotonic() + max(0.0, lifetime - min(TOKEN_MARGIN, lifetime / 2))
        return token

    def _download(self, item: SourceItem, location: str, deadline: float) -> bytes:
        """The pre-authenticated download URL, fetched without the bearer token; never named in an error."""
        if urlsplit(location).scheme not in ("http", "https"):
            raise errors.DependencyFailed("Microsoft Graph redirected the download nowhere", item_id=item.id)
        try:
            with self._unthrottled():
                response = self._send(
                    "GET", location, deadline, auth=False, max_bytes=MAX_FILE_BYTES, seconds=DOWNLOAD_SECONDS
                )
        except errors.RaglineError as exc:  # outbound's messages name the URL: its credential stays here
            raise type(exc)(f"the download of {item.id} failed ({exc.code})", item_id=item.id) from None
        if response.status == 200:
            return response.body
        if response.status in (404, 410):
            raise errors.NotFound("the file is gone from the drive", item_id=item.id)
        raise errors.DependencyFailed(
            f"the download of {item.id} answered {response.status}", item_id=item.id, status=response.status
        )


# -- reading Graph's answers ----------------------------------------------------------------------
def _q(item_id: str) -> str:
    return quote(item_id, safe="!")


def _values(body: dict[str, Any]) -> list[dict[str, Any]]:
    values = body.get("value")
    if not isinstance(values, list):
        raise errors.DependencyFailed("a Microsoft Graph collection without its value list")
    return [v for v in values if isinstance(v, dict)]


def _is_folder(item: dict[str, Any]) -> bool:
    return "folder" in item or "root" in item


def _parent(item: dict[str, Any] | None) -> str:
    reference = item.get("parentReference") if item else None
    parent = reference.get("id") if isinstance(reference, dict) else None
    return parent if isinstance(parent, str) else ""


def _shared_changed(item: dict[str, Any]) -> bool:
    return str(item.get(SHARED_CHANGED, "")).lower() == "true"


def _parents_first(folders: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Folders ordered so that a parent named on the same page comes before its children."""
    ordered: list[dict[str, Any]] = []
    placed: set[str] = set()
    for folder_id in folders:
        chain: list[str] = []
        current = folder_id
        while current in folders and current not in placed and current not in chain:
            chain.append(current)
            current = _parent(folders[current])
        for link in reversed(chain):
            placed.add(link)
            ordered.append(folders[link])
    return ordered


def _version(item: dict[str, Any]) -> str:
    ctag = item.get("cTag")
    if isinstance(ctag, str) and ctag:
        return ctag
    hashes = item.get("file", {}).get("hashes") if isinstance(item.get("file"), dict) else None
    if isinstance(hashes, dict):
        for name in _HASHES:
            value = hashes.get(name)
            if isinstance(value, str) and value:
                return f"{name}:{value}"
    etag = item.get("eTag")
    return etag if isinstance(etag, str) else ""


def _parsable(filename: str) -> bool:
    from ragline.documents.parsers import is_supported

    return is_supported(filename)


def _error_code(body: bytes) -> str:
    """Graph's ``error.code`` or Entra's ``error`` (a short identifier, nothing more of the answer)."""
    try:
        value = json.loads(body)
    except ValueError:
        return ""
    code = value.get("error") if isinstance(value, dict) else None
    if isinstance(code, dict):
        code = code.get("code")
    if not isinstance(code, str):
        return ""
    return "".join(c for c in code if c.isalnum() or c in "_-.")[:60]


def _retry_after(value: str, *, default: float) -> float:
    value = value.strip()
    if not value:
        return default
    if value.replace(".", "", 1).isdigit():
        return min(float(value), 86_400.0)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return default


# -- permissions ----------------------------------------------------------------------------------
def _reads(permission: dict[str, Any]) -> bool:
    roles = permission.get("roles")
    if not isinstance(roles, list) or not _READ_ROLES.intersection(r for r in roles if isinstance(r, str)):
        return False
    expires = permission.get("expirationDateTime")
    if isinstance(expires, str) and expires and not expires.startswith("0001-01-01"):
        try:
            moment = datetime.fromisoformat(expires.replace("Z", "+00:00"))
        except ValueError:
            return True
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment > datetime.now(UTC)
    return True


def _link_scope(permission: dict[str, Any]) -> str | None:
    link = permission.get("link")
    if not isinstance(link, dict):
        return None
    scope = link.get("scope")
    return scope if isinstance(scope, str) else ""


def _identity_sets(permission: dict[str, Any]) -> Iterable[dict[str, Any]]:
    granted = permission.get("grantedToV2")
    if isinstance(granted, dict):
        yield granted
    many = permission.get("grantedToIdentitiesV2")
    if isinstance(many, list):
        yield from (g for g in many if isinstance(g, dict))


def _grants_everyone(permission: dict[str, Any]) -> bool:
    """A reading permission open to the whole organization (or the world)."""
    if not _reads(permission):
        return False
    if _link_scope(permission) in ("anonymous", "organization"):
        return True
    for identities in _identity_sets(permission):
        site_user = identities.get("siteUser")
        login = site_user.get("loginName") if isinstance(site_user, dict) else None
        if "user" not in identities and isinstance(login, str) and login.lower().startswith(_EVERYONE_LOGINS):
            return True
    return False


def _principals(permission: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The users and groups a reading permission names (an ``existingAccess`` link names none)."""
    if not _reads(permission) or _link_scope(permission) == "existingAccess":
        return [], []
    users: list[str] = []
    groups: list[str] = []
    for identities in _identity_sets(permission):
        user, group = identities.get("user"), identities.get("group")
        site_user, site_group = identities.get("siteUser"), identities.get("siteGroup")
        if isinstance(user, dict):
            email, object_id = user.get("email"), user.get("id")
            named = email if isinstance(email, str) and email.strip() else object_id
            if isinstance(named, str) and named.strip():
                users.append(named.strip())
        elif isinstance(group, dict):
            if isinstance(group.get("id"), str) and group["id"]:
                groups.append(group["id"])
        elif isinstance(site_group, dict):
            name = site_group.get("displayName") or site_group.get("loginName")
            if isinstance(name, str) and name.strip():
                groups.append(f"sharepoint:{name.strip()}")
        elif isinstance(site_user, dict) and isinstance(site_user.get("loginName"), str):
            login: str = site_user["loginName"].strip()
            if login.lower().startswith(_MEMBER_LOGIN):
                users.append(login[len(_MEMBER_LOGIN) :])
            elif login.lower().startswith(_GROUP_LOGINS):  # an Entra group granted as a claim
                groups.append(login.rsplit("|", 1)[-1].removesuffix("_o"))
    return users, groups


def _access(item_id: str, users: set[str], groups: set[str]) -> ItemAccess:
    kept_users, kept_groups = _carried(users), _carried(groups)
    if len(kept_users) > MAX_GROUPS or len(kept_groups) > MAX_GROUPS:
        _log.warning(
            "a file names more readers than a document can carry: no one reads it",
            extra={"item_id": item_id, "users": len(kept_users), "groups": len(kept_groups)},
        )
        return ItemAccess.only()
    return ItemAccess.only(kept_users, kept_groups)


def _carried(principals: set[str]) -> list[str]:
    kept = []
    for principal in principals:
        try:
            kept.append(check_principal(principal, "principal"))
        except errors.InvalidRequest:
            continue  # a name Ragline cannot carry: dropped (fewer readers, never more)
    return kept
