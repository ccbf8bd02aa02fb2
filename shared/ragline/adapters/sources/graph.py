"""SharePoint Online and OneDrive through Microsoft Graph: one drive (a document library), or one folder
of it, as a :class:`~ragline.ports.Source` kept in step by Graph's **delta query**.

Endpoints (confirmed from Microsoft's reference pages: *driveItem: delta*, *Best practices for
discovering files and detecting changes at scale* (the "scan guidance"), *List sharing permissions on a
driveItem*, the *permission*, *sharingLink* and *sharePointIdentitySet* resources, *Download the
contents of a driveItem*, *Microsoft identity platform and the OAuth 2.0 client credentials flow*; 429
and 503 with ``Retry-After`` from the scan guidance's throttling section; the token's endpoint:
:mod:`.graph_http`):

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

**Folder scope** (:mod:`.graph_scope`): a folder source keeps, in its cursor, the folders below its
folder; in a listing of changes a file moved out of the folder is a ``delete``, one moved in an
``upsert``.

**What delta does not say, read from the folder.** Delta names only items that changed themselves, and
their parent folders: not the descendants of a folder whose sharing changed (their inherited readers
changed), nor of a folder moved into or out of the folder scope. Such a folder is queued in the cursor
and its subtree read through ``children`` before the listing ends: each file named again (an
``upsert`` at its version: the sync asks its readers anew and re-labels) or, for a folder that left
the scope, deleted. A sharing change on the drive's root (or on a folder above the scope folder) reads
the whole scope so. When the queue outgrows the cursor, the listing starts over in full
(:class:`~ragline.errors.CursorExpired`). A deleted folder's descendants come in the feed as deleted
items themselves (the delta documentation's own advice: delete a folder once it is empty).

**Who may read a file** (:meth:`GraphSource.permissions`): its effective permissions, mapped by
:mod:`.graph_access`.

**Requests**, the app's token and what Graph's refusals mean: :mod:`.graph_http` (the bearer token
only ever to ``graphUrl``; ``429``/``503`` waited out within ``until``, else the listing call ends early
with ``retry_after`` and a cursor that asks the refused link again). **Cursor**: :mod:`.graph_state`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

from ragline import errors, outbound
from ragline.adapters.sources import graph_access, http
from ragline.adapters.sources.graph_http import DOWNLOAD_SECONDS, GraphClient, page_values, quote_id
from ragline.adapters.sources.graph_scope import FolderScope, is_folder, parent
from ragline.adapters.sources.graph_state import ListingState, digest
from ragline.domain.source_settings import GraphSettings
from ragline.domain.sources import EVERYONE, MAX_CURSOR_BYTES, Change, ChangePage, ItemAccess, SourceItem
from ragline.ports import KnownItems

SHARED_CHANGED = "@microsoft.graph.sharedChanged"
PAGE_TOP = 200
"""``$top`` of a delta or children page (Graph may answer fewer)."""
MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_PERMISSION_PAGES = 20
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HASHES = ("quickXorHash", "sha256Hash", "sha1Hash", "crc32Hash")


class GraphSource:
    """A drive (or one folder of it) through Microsoft Graph; ``credentials`` are the app
    registration's ``clientId`` and ``clientSecret``."""

    def __init__(
        self,
        settings: GraphSettings,
        credentials: Mapping[str, str],
        *,
        allow_loopback: bool = False,
        fetch: http.Fetch = outbound.request,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        client_id, secret = credentials.get("clientId"), credentials.get("clientSecret")
        if not isinstance(client_id, str) or not client_id or not isinstance(secret, str) or not secret:
            raise errors.DependencyFailed(
                "a Microsoft Graph source needs the credentials clientId and clientSecret"
            )
        self._s = settings
        self._monotonic = monotonic
        graph = settings.graph_url.rstrip("/")
        token_url = f"{settings.login_url.rstrip('/')}/{settings.tenant}/oauth2/v2.0/token"
        self._api = GraphClient(
            graph, token_url, client_id, secret,
            fetch=fetch, allow_loopback=allow_loopback, sleep=sleep, monotonic=monotonic,
        )  # fmt: skip
        self._drive = f"{graph}/drives/{quote(settings.drive_id, safe='!')}"
        self._folder = "/".join(p for p in settings.folder.split("/") if p)
        fingerprint = json.dumps([graph, settings.drive_id, self._folder])
        self._key = hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
        self._scope = FolderScope(self._api, self._drive, self._folder)

    def __repr__(self) -> str:
        return f"GraphSource(drive={self._s.drive_id!r}, folder={self._folder!r})"

    # -- the port ---------------------------------------------------------------------------------
    def changes(self, cursor: str | None, known: KnownItems, *, until: float) -> ChangePage:
        state = self._decode(cursor) if cursor else self._fresh()
        work = state.copy()
        try:
            changes = self._step(work, until)
        except http.Throttled as wait:  # nothing of this call is kept: the cursor asks the same link again
            return ChangePage([], state.encode(), done=False, full=state.full, retry_after=wait.seconds)
        if work.final and not work.pending():
            nxt = ListingState(self._key, full=False, link=work.link, scope=work.scope, inside=work.inside)
            return ChangePage(changes, self._encoded(nxt), done=True, full=state.full)
        return ChangePage(changes, self._encoded(work), done=False, full=state.full)

    def fetch(self, item: SourceItem) -> bytes:
        deadline = self._monotonic() + DOWNLOAD_SECONDS
        url = f"{self._drive}/items/{quote_id(item.id)}/content"
        with self._api.unthrottled():
            response = self._api.send("GET", url, deadline, auth=True, max_bytes=MAX_FILE_BYTES)
        if response.status == 200:
            return response.body
        if response.status in _REDIRECTS:
            location = response.headers.get("location", "")
            return self._api.download(item.id, location, deadline, max_bytes=MAX_FILE_BYTES)
        if response.status in (404, 410):
            raise errors.NotFound("the file is gone from the drive", item_id=item.id)
        failure = self._api.failure(response, f"the content of {item.id}")
        raise errors.DependencyFailed(failure.message, item_id=item.id, **failure.details)

    def permissions(self, item: SourceItem) -> ItemAccess:
        deadline = self._monotonic() + http.ITEM_SECONDS
        url = f"{self._drive}/items/{quote_id(item.id)}/permissions"
        users: set[str] = set()
        groups: set[str] = set()
        for _ in range(MAX_PERMISSION_PAGES):
            with self._api.unthrottled():
                body = self._api.json(url, deadline, missing_ok=True)
            if body is None:
                return ItemAccess.only()  # gone: no one reads it
            for permission in page_values(body):
                if graph_access.grants_everyone(permission):
                    return EVERYONE
                more_users, more_groups = graph_access.principals(permission)
                users.update(more_users)
                groups.update(more_groups)
            link = body.get("@odata.nextLink")
            if not link:
                return graph_access.access(item.id, users, groups)
            url = self._api.link(link)
        raise errors.DependencyFailed("too many pages of permissions", item_id=item.id)

    # -- a listing --------------------------------------------------------------------------------
    def _fresh(self) -> ListingState:
        return ListingState(
            self._key, full=True, link=f"{self._drive}/root/delta?$top={PAGE_TOP}",
            scope=None if self._folder else "",
        )  # fmt: skip

    def _decode(self, cursor: str) -> ListingState:
        state = ListingState.decode(cursor)
        links = [state.link] + ([state.children] if state.children else [])
        if state.key != self._key or not all(self._api.ours(link) for link in links):
            raise errors.CursorExpired("the cursor was made for other settings")
        return state

    def _encoded(self, state: ListingState) -> str:
        text = state.encode()
        if len(text) <= MAX_CURSOR_BYTES:
            return text
        if state.pending() and not state.full:  # the subtrees to read outgrew the cursor: list afresh
            raise errors.CursorExpired("the folders to read again outgrew the cursor")
        raise errors.DependencyFailed(
            "the folder holds too many subfolders to track: choose a narrower folder or the whole drive",
            bytes=len(text),
        )

    def _step(self, state: ListingState, until: float) -> list[Change]:
        """One request's worth of the listing (plus the folder lookups it needs), into ``state``."""
        if state.scope is None:
            state.scope = self._scope.find(until)
        if state.pending():
            return self._read_subtree(state, until)
        fresh = state.full and state.link == self._fresh().link
        body = self._api.json(state.link, until, delta=True, expired_ok=not fresh)
        assert body is not None
        changes = self._apply(state, page_values(body), until)
        next_link, delta_link = body.get("@odata.nextLink"), body.get("@odata.deltaLink")
        if next_link:
            state.link = self._api.link(next_link)
        elif delta_link:
            state.link = self._api.link(delta_link)
            state.final = True
        else:
            raise errors.DependencyFailed("a delta page without @odata.nextLink or @odata.deltaLink")
        return changes

    def _apply(self, state: ListingState, values: list[dict[str, Any]], until: float) -> list[Change]:
        latest: dict[str, dict[str, Any]] = {}
        for value in values:
            item_id = value.get("id")
            if isinstance(item_id, str) and item_id:
                latest.pop(item_id, None)
                latest[item_id] = value  # the last occurrence wins
        folders = {i: v for i, v in latest.items() if is_folder(v)}
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

    def _folder_changed(self, state: ListingState, folder: dict[str, Any], until: float) -> None:
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
        was_in = digest(folder_id) in state.inside
        if deleted:
            self._scope.leave(state, folder_id)
            return
        now_in = "root" not in folder and self._scope.inside(state, parent(folder), until)
        if now_in:
            self._scope.enter(state, folder_id)
        else:
            self._scope.leave(state, folder_id)
        if state.full:
            return
        if now_in and (not was_in or shared):
            state.expand.append(["u", folder_id])
        elif was_in and not now_in:
            state.expand.append(["d", folder_id])
        elif shared and folder_id in self._scope.ancestors(state, until):
            state.expand.append(["u", state.scope])

    def _file_change(
        self, state: ListingState, item: dict[str, Any], until: float, *, within: bool = False
    ) -> Change | None:
        """The change a file the feed (or a folder's children) named makes; None: nothing to say."""
        item_id: str = item["id"]
        if "deleted" in item:
            return Change("delete", item_id)
        if "file" not in item:
            return None  # a package (a OneNote notebook…), or an item Graph half-described
        name = item.get("name")
        scoped = within or not state.scope or self._scope.inside(state, parent(item), until)
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

    def _read_subtree(self, state: ListingState, until: float) -> list[Change]:
        """One ``children`` page of a folder queued to be read again."""
        if state.children:
            link = state.children
        else:
            state.op, folder_id = state.expand[0]
            del state.expand[0]
            link = f"{self._drive}/items/{quote_id(folder_id)}/children?$top={PAGE_TOP}"
        body = self._api.json(link, until, missing_ok=True)
        state.children = ""
        if body is None:
            return []  # deleted since: its files come in the feed as deleted
        out: list[Change] = []
        for value in page_values(body):
            item_id = value.get("id")
            if not isinstance(item_id, str) or not item_id:
                continue
            if is_folder(value):
                if state.scope and state.op == "u":
                    self._scope.enter(state, item_id)
                elif state.scope:
                    self._scope.leave(state, item_id)
                state.expand.append([state.op, item_id])
            elif state.op == "d":
                out.append(Change("delete", item_id))
            else:
                change = self._file_change(state, value, until, within=True)
                if change is not None:
                    out.append(change)
        next_link = body.get("@odata.nextLink")
        if next_link:
            state.children = self._api.link(next_link)
        return out


# -- reading Graph's answers ----------------------------------------------------------------------
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
            current = parent(folders[current])
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
