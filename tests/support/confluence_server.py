"""A Confluence Cloud site on 127.0.0.1 for the Confluence connector, speaking the documented shapes.

- ``GET /wiki/rest/api/content/search?cql=…&expand=…&limit=…&cursor=…`` (v1 content search): pages of
  at most :attr:`ConfluenceServer.page_size` results with ``_links.next`` (relative to ``/wiki``,
  carrying an opaque ``cursor``), the CQL this connector sends (``type = page``, ``space in (…)``/``space
  = …``, ``id = …``), expansions ``version``, ``restrictions.read.restrictions.user|group``,
  ``ancestors`` and ``ancestors.restrictions.read.restrictions.user|group``.
- ``GET /wiki/rest/api/content/{id}/restriction/byOperation/read`` (v1 content restrictions).
- ``GET /wiki/api/v2/pages/{id}?body-format=storage`` (v2 page).

Every request must carry the site's Basic credentials (else ``401``). Pages live in spaces, under
parents, with read restrictions naming users (by ``accountId``; email shown or hidden) and groups.
Faults are scripted: ``fault(status, times, retry_after)`` answers the next requests so, ``malformed``
answers a page that is not JSON, ``ancestor_expand_404`` answers the inline ancestors' restrictions
expansion with CONFCLOUD-77618's 404. ``requests`` counts what was asked, by route.

:class:`ConfluenceWorld` is the contract's :class:`~tests.support.source_world.SourceWorld` over it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from ragline.adapters.sources.confluence import ConfluenceSource
from ragline.domain.source_settings import ConfluenceSettings
from ragline.domain.sources import EVERYONE, ItemAccess

EMAIL = "sync-bot@example.com"
TOKEN = "ATATT3xFfGF0-secret-token-value"


@dataclass
class Page:
    id: str
    space: str
    title: str
    text: str
    seq: int
    version: int = 1
    parent: str | None = None
    users: list[str] = field(default_factory=list)
    """Account ids the read restriction names."""
    groups: list[str] = field(default_factory=list)
    status: str = "current"

    @property
    def body(self) -> str:
        return f"<p>{escape(self.text)}</p>"


class ConfluenceServer:
    def __init__(self, *, email: str = EMAIL, token: str = TOKEN, page_size: int = 5) -> None:
        self.pages: dict[str, Page] = {}
        self.accounts: dict[str, str | None] = {}
        """accountId → email (None: the user hides it)."""
        self.group_ids: dict[str, str] = {}
        self.page_size = page_size
        self.ancestor_expand_404 = False
        self.requests: Counter[str] = Counter()
        self.auth_headers: set[str] = set()
        self._basic = "Basic " + base64.b64encode(f"{email}:{token}".encode()).decode()
        self._faults: list[tuple[int, float, bool]] = []
        self._lock = threading.RLock()
        self._seq = 0
        self._next_id = 65_000
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- the site's content ---------------------------------------------------------------------
    def add_page(self, space: str, title: str, text: str, *, parent: str | None = None) -> str:
        with self._lock:
            self._next_id += 7
            self._seq += 1
            page_id = str(self._next_id)
            self.pages[page_id] = Page(page_id, space, title, text, self._seq, parent=parent)
            return page_id

    def edit(self, page_id: str, text: str) -> None:
        with self._lock:
            page = self.pages[page_id]
            if page.text != text:
                page.text = text
                page.version += 1

    def delete(self, page_id: str) -> None:
        """As Confluence does: the page goes, its children move up to its parent."""
        with self._lock:
            gone = self.pages.pop(page_id, None)
            for page in self.pages.values():
                if gone is not None and page.parent == page_id:
                    page.parent = gone.parent

    def restrict(self, page_id: str, *, users: list[str] = (), groups: list[str] = ()) -> None:  # type: ignore[assignment]
        """Sets the page's read restriction (nothing named: unrestricted); the version stays."""
        with self._lock:
            page = self.pages[page_id]
            page.users = list(users)
            page.groups = list(groups)
            for group in groups:
                self.group_ids.setdefault(group, hashlib.sha256(group.encode()).hexdigest()[:24])

    def move(self, page_id: str, parent: str | None) -> None:
        with self._lock:
            self.pages[page_id].parent = parent

    def account(self, email: str, *, visible: bool = True) -> str:
        """The account id of ``email``'s user (created on first use)."""
        account_id = "712020:" + hashlib.sha256(email.encode()).hexdigest()[:32]
        with self._lock:
            self.accounts.setdefault(account_id, email if visible else None)
        return account_id

    def ancestors(self, page_id: str) -> list[Page]:
        """Root first, as Confluence lists them."""
        chain: list[Page] = []
        parent = self.pages[page_id].parent
        while parent is not None and parent in self.pages and len(chain) < 100:
            chain.insert(0, self.pages[parent])
            parent = self.pages[parent].parent
        return chain

    # -- scripted faults ------------------------------------------------------------------------
    def fault(self, status: int, *, times: int = 1, retry_after: float | None = None) -> None:
        with self._lock:
            self._faults += [(status, -1.0 if retry_after is None else retry_after, False)] * times

    def malformed(self, *, times: int = 1) -> None:
        with self._lock:
            self._faults += [(200, -1.0, True)] * times

    def total(self) -> int:
        return sum(self.requests.values())

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next_fault(self) -> tuple[int, float, bool] | None:
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    # -- JSON shapes ----------------------------------------------------------------------------
    def _user_json(self, account_id: str) -> dict[str, Any]:
        email = self.accounts.get(account_id)
        name = (email or account_id).split("@")[0]
        return {
            "type": "known", "accountId": account_id, "accountType": "atlassian", "email": email or "",
            "publicName": name, "displayName": name,
            "_links": {"self": f"{self.url}/wiki/rest/api/user?accountId={account_id}"},
        }  # fmt: skip

    def _restriction_json(self, page: Page, *, users: bool = True, groups: bool = True) -> dict[str, Any]:
        restrictions: dict[str, Any] = {}
        if users:
            results = [self._user_json(a) for a in page.users]
            restrictions["user"] = {"results": results, "start": 0, "limit": 200, "size": len(results)}
        if groups:
            results = [{"type": "group", "name": g, "id": self.group_ids.get(g, g)} for g in page.groups]
            restrictions["group"] = {"results": results, "start": 0, "limit": 200, "size": len(results)}
        return {
            "operation": "read",
            "restrictions": restrictions,
            "_expandable": {"content": f"/rest/api/content/{page.id}"},
            "_links": {"self": f"{self.url}/wiki/rest/api/content/{page.id}/restriction/byOperation/read"},
        }

    def _links(self, page: Page) -> dict[str, str]:
        slug = quote(page.title.replace(" ", "+"), safe="+")
        return {
            "webui": f"/spaces/{page.space}/pages/{page.id}/{slug}",
            "tinyui": f"/x/{page.id}",
            "self": f"{self.url}/wiki/rest/api/content/{page.id}",
        }

    def _content_json(self, page: Page, expand: set[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"id": page.id, "type": "page", "status": page.status, "title": page.title}
        if "version" in expand:
            out["version"] = {"number": page.version, "minorEdit": False, "when": "2024-05-01T10:00:00.000Z"}
        read_users = "restrictions.read.restrictions.user" in expand
        read_groups = "restrictions.read.restrictions.group" in expand
        if read_users or read_groups:
            out["restrictions"] = {"read": self._restriction_json(page, users=read_users, groups=read_groups)}
        anc_users = "ancestors.restrictions.read.restrictions.user" in expand
        anc_groups = "ancestors.restrictions.read.restrictions.group" in expand
        if "ancestors" in expand or anc_users or anc_groups:
            ancestors = []
            for ancestor in self.ancestors(page.id):
                entry: dict[str, Any] = {
                    "id": ancestor.id, "type": "page", "status": ancestor.status, "title": ancestor.title,
                    "_links": self._links(ancestor),
                }  # fmt: skip
                if anc_users or anc_groups:
                    entry["restrictions"] = {
                        "read": self._restriction_json(ancestor, users=anc_users, groups=anc_groups)
                    }
                ancestors.append(entry)
            out["ancestors"] = ancestors
        out["_links"] = self._links(page)
        out["_expandable"] = {"space": f"/rest/api/space/{page.space}", "body": ""}
        return out

    def search(self, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        cql = query.get("cql", [""])[0]
        expand = {e.strip() for e in ",".join(query.get("expand", [])).split(",") if e.strip()}
        if self.ancestor_expand_404 and any(e.startswith("ancestors.restrictions") for e in expand):
            return 404, {
                "statusCode": 404,
                "message": "Cannot find content. Outdated version/old_draft/trashed?",
            }
        if not re.search(r"\btype\s*=\s*\"?page\"?", cql):
            return 400, {"statusCode": 400, "message": "this server searches pages only"}
        try:
            limit = max(1, min(int(query.get("limit", ["25"])[0]), self.page_size))
            after = int(base64.urlsafe_b64decode(query["cursor"][0]).decode()) if "cursor" in query else 0
        except (ValueError, KeyError, UnicodeDecodeError):
            return 400, {"statusCode": 400, "message": "bad limit or cursor"}
        spaces: set[str] | None = None
        if found := re.search(r"\bspace\s+in\s*\(([^)]*)\)", cql):
            spaces = set(re.findall(r'"([^"]+)"', found.group(1)))
        elif found := re.search(r"\bspace\s*=\s*\"?([A-Za-z0-9_~-]+)\"?", cql):
            spaces = {found.group(1)}
        only_id = found.group(1) if (found := re.search(r"\bid\s*=\s*\"?(\d+)\"?", cql)) else None
        with self._lock:
            matching = sorted(
                (
                    p for p in self.pages.values()
                    if p.status == "current" and (spaces is None or p.space in spaces)
                    and (only_id is None or p.id == only_id) and p.seq > after
                ),
                key=lambda p: p.seq,
            )  # fmt: skip
            batch = matching[:limit]
            results = [self._content_json(p, expand) for p in batch]
        links: dict[str, str] = {"base": f"{self.url}/wiki", "context": "/wiki"}
        if len(matching) > limit:
            cursor = base64.urlsafe_b64encode(str(batch[-1].seq).encode()).decode()
            params = {
                "cql": cql,
                "expand": ",".join(query.get("expand", [])),
                "limit": str(limit),
                "cursor": cursor,
            }
            links["next"] = "/rest/api/content/search?" + urlencode(params)
        return 200, {"results": results, "start": 0, "limit": limit, "size": len(results), "_links": links}

    def restriction(self, page_id: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            page = self.pages.get(page_id)
            if page is None:
                return 404, {"statusCode": 404, "message": f"No content with id {page_id}"}
            return 200, self._restriction_json(page)

    def page_v2(self, page_id: str, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            page = self.pages.get(page_id)
            if page is None or page.status != "current":
                return 404, {
                    "errors": [{"status": 404, "code": "NOT_FOUND", "title": "Not Found", "detail": None}]
                }
            out: dict[str, Any] = {
                "id": page.id, "status": page.status, "title": page.title,
                "spaceId": str(int(hashlib.sha256(page.space.encode()).hexdigest()[:8], 16)),
                "parentId": page.parent, "parentType": "page" if page.parent else None,
                "version": {"number": page.version, "minorEdit": False, "createdAt": "2024-05-01T10:00:00Z"},
                "body": {},
                "_links": {**self._links(page), "base": f"{self.url}/wiki"},
            }  # fmt: skip
            if query.get("body-format", [""])[0] == "storage":
                out["body"] = {"storage": {"representation": "storage", "value": page.body}}
            return 200, out


_RESTRICTION = re.compile(r"/wiki/rest/api/content/\d+/restriction/byOperation/read")


class _Handler(BaseHTTPRequestHandler):
    server_state: ConfluenceServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        site = self.server_state
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        path = parts.path
        route = (
            "search" if path == "/wiki/rest/api/content/search"
            else "restriction" if _RESTRICTION.fullmatch(path)
            else "page" if re.fullmatch(r"/wiki/api/v2/pages/\d+", path)
            else "other"
        )  # fmt: skip
        site.requests[route] += 1
        site.auth_headers.add(self.headers.get("authorization", ""))
        if self.headers.get("authorization") != site._basic:
            return self._json(
                401, {"code": 401, "message": "Client must be authenticated to access this resource."}
            )
        fault = site._next_fault()
        if fault is not None:
            status, retry_after, malformed = fault
            if malformed:
                return self._send(200, b'{"results": [{"id": "1", "ver', "application/json")
            headers = {"retry-after": f"{retry_after:g}"} if retry_after >= 0 else {}
            return self._send(status, b'{"message": "busy"}', "application/json", headers)
        if route == "search":
            return self._json(*site.search(query))
        if route == "restriction":
            return self._json(*site.restriction(path.split("/")[5]))
        if route == "page":
            return self._json(*site.page_v2(path.rsplit("/", 1)[1], query))
        return self._json(404, {"statusCode": 404, "message": "null for uri"})

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._send(status, json.dumps(body).encode(), "application/json;charset=UTF-8")

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


SPACE = "DOCS"
OTHER_SPACE = "SECRET"
VAULT_KEEPER = "keeper@example.com"
LOCKED = "locked-out@example.com"


class ConfluenceWorld:
    """The contract's world: every key is a page of space ``DOCS``; a page of another space (out of
    the source's scope) is never expected. ``permit(key, ItemAccess.only())`` — no one may read —
    is made the Confluence way: the page is restricted to one user and moved under a *vault* page
    restricted to another, so no principal passes both levels (the vault itself is readable by its
    keeper, and expected as such)."""

    kind = "confluence"

    def __init__(self, page_changes: int = 5) -> None:
        self.server = ConfluenceServer()
        self.page_changes = page_changes
        self.ids: dict[str, str] = {}
        """Key → its page's id (the latest page of that key, also once removed)."""
        self.live: set[str] = set()
        self._vault: str | None = None
        self.server.add_page(OTHER_SPACE, "Out of scope", "never listed secret")

    def settings(self) -> dict[str, Any]:
        return {"siteUrl": self.server.url, "spaces": [SPACE]}

    def credentials(self) -> dict[str, str]:
        return {"email": EMAIL, "apiToken": TOKEN}

    def source(self) -> ConfluenceSource:
        source = ConfluenceSource(
            ConfluenceSettings.model_validate(self.settings()), self.credentials(), allow_loopback=True
        )
        source.page_changes = self.page_changes  # small result pages: a listing of a few takes several
        return source

    def put(self, key: str, text: str, access: ItemAccess | None = None) -> None:
        if key in self.live:
            self.server.edit(self.ids[key], text)
        else:
            self.ids[key] = self.server.add_page(SPACE, f"Page {key}", text)
            self.live.add(key)
        if access is not None:
            self.permit(key, access)

    def remove(self, key: str) -> None:
        if key in self.live:
            self.live.discard(key)
            self.server.delete(self.ids[key])

    def permit(self, key: str, access: ItemAccess) -> None:
        page_id = self.ids[key]
        if access.everyone:
            self.server.restrict(page_id)
            self.server.move(page_id, None)
        elif access.readable:
            users = [self.server.account(u) for u in access.users]
            self.server.restrict(page_id, users=users, groups=list(access.groups))
            self.server.move(page_id, None)
        else:
            self.server.restrict(page_id, users=[self.server.account(LOCKED)])
            self.server.move(page_id, self._vault_id())

    def _vault_id(self) -> str:
        if self._vault is None or self._vault not in self.server.pages:
            self._vault = self.server.add_page(SPACE, "Vault", "vault keeper page")
            self.server.restrict(self._vault, users=[self.server.account(VAULT_KEEPER)])
        return self._vault

    def item_id(self, key: str) -> str:
        return self.ids[key]

    def expected(self) -> dict[str, tuple[str, ItemAccess]]:
        """Every page of the source's spaces someone may read, with its readers by the rule the
        connector must follow, computed here from the server's own records: a principal reads a page
        when every restricted level (the page, each ancestor) names it."""
        out: dict[str, tuple[str, ItemAccess]] = {}
        server = self.server
        with server._lock:
            for page in server.pages.values():
                if page.space != SPACE or page.status != "current":
                    continue
                chain = [page, *server.ancestors(page.id)]
                restricted = [p for p in chain if p.users or p.groups]
                if not restricted:
                    out[page.id] = (page.text, EVERYONE)
                    continue
                user_sets = [{server.accounts.get(a) or a for a in p.users} for p in restricted]
                group_sets = [set(p.groups) for p in restricted]
                users = set.intersection(*user_sets)
                groups = set.intersection(*group_sets)
                if users or groups:
                    out[page.id] = (page.text, ItemAccess.only(sorted(users), sorted(groups)))
        return out

    def requests(self) -> int:
        return self.server.total()

    def throttle(self, times: int, retry_after: float) -> None:
        self.server.fault(429, times=times, retry_after=retry_after)

    def fail(self, times: int, status: int = 500) -> None:
        self.server.fault(status, times=times)

    def close(self) -> None:
        self.server.close()
