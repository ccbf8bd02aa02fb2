"""Microsoft Graph on 127.0.0.1 for the Graph connector: one drive (a SharePoint document library) and
the Microsoft Entra token endpoint, speaking the documented shapes.

- ``POST /{tenant}/oauth2/v2.0/token`` (client credentials: the form's ``client_id``,
  ``client_secret``, ``grant_type`` and ``scope`` are checked) → ``access_token``/``expires_in``;
  every ``/v1.0`` request needs ``Authorization: Bearer`` with a live token (else ``401``).
- ``GET /v1.0/drives/{drive}/root/delta``: the drive as a change log. Without a token, every live item
  (parents first); with ``?token=`` (from an ``@odata.deltaLink``), the items changed since — content
  changes, new items, deletions (``deleted`` facet, ``name`` and ``cTag`` left out), moves and renames,
  and sharing changes (``@microsoft.graph.sharedChanged``) only when ``Prefer`` asks for
  ``deltashowsharingchanges`` — with the parent folders of each. Pages of ``page_size`` items follow
  ``@odata.nextLink`` (``$skiptoken``: asking one twice answers the same page); the last carries the
  ``@odata.deltaLink``, whose token encodes the change log's position. Like SharePoint, delta answers
  carry no ``parentReference.path`` (plain item GETs do). An unknown or expired token (see
  :meth:`GraphServer.expire_tokens`) is ``410 Gone`` (``resyncRequired``).
- ``GET …/root:/{path}``, ``…/items/{id}``, ``…/items/{id}/children`` (paged), ``…/items/{id}/permissions``
  (the effective permissions: the item's own, or inherited from its nearest folder that has some;
  paged) and ``…/items/{id}/content`` (``302`` to ``/download/{id}?tempauth=…`` on this server, served
  without a bearer token; requests that sent one are recorded).

A refused token request's ``error_description`` quotes the secret it was sent (Entra does not: this
one does so that a test can check the connector never repeats an answer's text). Scripted faults
(:meth:`GraphServer.fault`: a status, with ``Retry-After``, for the next requests of any kind),
malformed pages (:meth:`GraphServer.malformed`) and request counters by kind let a test measure what
the connector asked.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import zlib
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from ragline.adapters.sources.graph import GraphSource
from ragline.domain.source_settings import GraphSettings
from ragline.domain.sources import ItemAccess

GRAPH_DEFAULT = "https://graph.microsoft.com/.default"


# -- permissions, as Graph shapes them ------------------------------------------------------------
def organization_link(role: str = "read") -> dict[str, Any]:
    return {"roles": [role], "link": {"scope": "organization", "type": "view", "webUrl": "https://x/:t:/s"}}


def anonymous_link(role: str = "read") -> dict[str, Any]:
    return {"roles": [role], "link": {"scope": "anonymous", "type": "view", "webUrl": "https://x/:t:/a"}}


def users_link(*emails: str, role: str = "read") -> dict[str, Any]:
    return {
        "roles": [role],
        "link": {"scope": "users", "type": "view", "webUrl": "https://x/:t:/u"},
        "grantedToIdentitiesV2": [{"user": _user(e)} for e in emails],
    }


def user_grant(email: str | None, object_id: str = "", role: str = "read") -> dict[str, Any]:
    user = _user(email, object_id)
    return {"roles": [role], "grantedToV2": {"user": user, "siteUser": {"id": "7", "loginName": "x"}}}


def group_grant(group_id: str, name: str = "", role: str = "read") -> dict[str, Any]:
    return {"roles": [role], "grantedToV2": {"group": {"id": group_id, "displayName": name or group_id}}}


def site_group_grant(name: str, role: str = "owner") -> dict[str, Any]:
    return {
        "roles": [role],
        "grantedToV2": {"siteGroup": {"id": "3", "displayName": name, "loginName": name}},
    }


def _user(email: str | None, object_id: str = "") -> dict[str, Any]:
    made = f"oid-{zlib.crc32((email or '').encode()):08x}"
    user: dict[str, Any] = {"id": object_id or made, "displayName": email or "someone"}
    if email:
        user["email"] = email
    return user


@dataclass
class Node:
    id: str
    name: str
    parent: str | None
    folder: bool
    content: bytes = b""
    version: int = 1
    """Bumped by every content change (the ``cTag``)."""
    meta: int = 1
    """Bumped by every change (the ``eTag``)."""
    perms: list[dict[str, Any]] | None = None
    """Its own permissions; ``None``: inherited from its parent."""
    deleted: bool = False
    changed: int = 0
    """The change log position of its last change that is not a sharing change."""
    shared: int = 0
    """The position of its last sharing change."""


@dataclass
class _Session:
    ids: list[str]
    upto: int
    since: int | None
    sharing: bool


class GraphServer:
    def __init__(
        self,
        *,
        tenant: str = "contoso.onmicrosoft.com",
        drive_id: str = "b!drive-0123",
        client_id: str = "app-1234",
        client_secret: str = "s3cret-value-never-shown",
        page_size: int = 5,
        children_page_size: int = 2,
        permissions_page_size: int = 2,
        expires_in: int = 3599,
    ) -> None:
        self.tenant = tenant
        self.drive_id = drive_id
        self.client_id = client_id
        self.client_secret = client_secret
        self.page_size = page_size
        self.children_page_size = children_page_size
        self.permissions_page_size = permissions_page_size
        self.expires_in = expires_in
        self.nodes: dict[str, Node] = {}
        self.seq = 0
        self.oldest_token = 0
        """Delta tokens (and listings) older than this position answer ``410``."""
        self.tokens: set[str] = set()
        self.requests: Counter[str] = Counter()
        self.prefers: list[str] = []
        self.download_auth: list[str] = []
        """``Authorization`` headers sent to the download URL (there should be none)."""
        self.token_forms: list[dict[str, str]] = []
        self._tempauth: set[str] = set()
        self._sessions: dict[str, _Session] = {}
        self._faults: list[tuple[int, float]] = []
        self._malformed = 0
        self._ids = 0
        self._lock = threading.RLock()
        self.root = self._new("root", None, folder=True)
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self.graph_url = f"{self.url}/v1.0"
        self.login_url = self.url

    # -- the drive, changed by a test ---------------------------------------------------------------
    def _new(self, name: str, parent: str | None, *, folder: bool, content: bytes = b"") -> Node:
        self._ids += 1
        self.seq += 1
        node = Node(f"01ITEM{self._ids:06d}", name, parent, folder, content, changed=self.seq)
        self.nodes[node.id] = node
        return node

    def find(self, path: str) -> Node | None:
        with self._lock:
            node = self.nodes[self.root.id]
            for part in [p for p in path.split("/") if p]:
                found = [
                    n for n in self.nodes.values() if n.parent == node.id and n.name == part and not n.deleted
                ]
                if not found:
                    return None
                node = found[0]
            return node

    def id_of(self, path: str) -> str:
        node = self.find(path)
        assert node is not None, path
        return node.id

    def mkdir(self, path: str, perms: list[dict[str, Any]] | None = None) -> str:
        with self._lock:
            parent = self.root
            for part in [p for p in path.split("/") if p]:
                found = self.find(self.path_of(parent.id) + "/" + part)
                parent = found if found is not None else self._new(part, parent.id, folder=True)
            if perms is not None:
                parent.perms = [dict(p) for p in perms]
            return parent.id

    def put(self, path: str, text: str | bytes, perms: list[dict[str, Any]] | None = None) -> str:
        """Add a file or change its content (``perms`` given: its own permissions too)."""
        data = text.encode() if isinstance(text, str) else text
        with self._lock:
            folder, _, name = path.rstrip("/").rpartition("/")
            parent_id = self.mkdir(folder)
            node = self.find(path)
            if node is None:
                node = self._new(name, parent_id, folder=False, content=data)
            elif node.content != data:
                self.seq += 1
                node.content, node.version, node.meta, node.changed = (
                    data,
                    node.version + 1,
                    node.meta + 1,
                    self.seq,
                )
            if perms is not None:
                node.perms = [dict(p) for p in perms]
            return node.id

    def set_perms(self, item_id: str, perms: list[dict[str, Any]] | None) -> None:
        """Change who may read an item (``None``: inherit from its folder again) — a sharing change."""
        with self._lock:
            self.seq += 1
            node = self.nodes[item_id]
            node.perms = None if perms is None else [dict(p) for p in perms]
            node.shared = self.seq

    def delete(self, item_id: str) -> None:
        """Delete an item (a folder with everything below it: each a deleted item of its own)."""
        with self._lock:
            for node in self._subtree(item_id):
                self.seq += 1
                node.deleted, node.meta, node.changed = True, node.meta + 1, self.seq

    def move(self, item_id: str, folder_id: str, name: str | None = None) -> None:
        with self._lock:
            self.seq += 1
            node = self.nodes[item_id]
            node.parent, node.name, node.meta, node.changed = (
                folder_id,
                name or node.name,
                node.meta + 1,
                self.seq,
            )

    def expire_tokens(self) -> None:
        """Every delta token and listing so far answers ``410 Gone`` from now on."""
        with self._lock:
            self.seq += 1
            self.oldest_token = self.seq

    def revoke_access_tokens(self) -> None:
        with self._lock:
            self.tokens.clear()

    def fault(self, status: int, *, times: int = 1, retry_after: float | None = None) -> None:
        with self._lock:
            self._faults += [(status, -1.0 if retry_after is None else retry_after)] * times

    def malformed(self, times: int = 1) -> None:
        """The next ``times`` JSON answers of Graph are cut short (not JSON)."""
        with self._lock:
            self._malformed += times

    def total(self) -> int:
        return sum(self.requests.values())

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- reading the drive ------------------------------------------------------------------------
    def _subtree(self, item_id: str) -> list[Node]:
        out = [self.nodes[item_id]]
        for node in out:
            out += [n for n in self.nodes.values() if n.parent == node.id and not n.deleted and n not in out]
        return out

    def path_of(self, item_id: str) -> str:
        parts = []
        node = self.nodes[item_id]
        while node.parent is not None:
            parts.append(node.name)
            node = self.nodes[node.parent]
        return "".join(f"/{p}" for p in reversed(parts))

    def _depth(self, node: Node) -> int:
        depth = 0
        while node.parent is not None:
            depth, node = depth + 1, self.nodes[node.parent]
        return depth

    def effective(self, item_id: str) -> list[dict[str, Any]]:
        node: Node | None = self.nodes[item_id]
        while node is not None:
            if node.perms is not None:
                return node.perms
            node = self.nodes[node.parent] if node.parent is not None else None
        return []

    def render(self, node: Node, *, path: bool = False, annotate: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"id": node.id, "eTag": f'"{{{node.id}}},{node.meta}"'}
        if node.parent is not None:
            reference = {"driveId": self.drive_id, "driveType": "documentLibrary", "id": node.parent}
            if path:
                reference["path"] = f"/drives/{self.drive_id}/root:{self.path_of(node.parent)}"
            out["parentReference"] = reference
        if node.parent is None:
            out["root"] = {}
        if node.folder:
            out["folder"] = {
                "childCount": sum(1 for n in self.nodes.values() if n.parent == node.id and not n.deleted)
            }
        else:
            out["file"] = {"mimeType": "text/plain", "hashes": {"quickXorHash": f"qx{node.id}{node.version}"}}
        if node.deleted:
            out["deleted"] = {"state": "deleted"}
            return out
        out["name"] = node.name
        out["webUrl"] = f"{self.url}/sites/acme/Shared%20Documents{quote(self.path_of(node.id))}"
        if not node.folder:
            out["cTag"] = f'"c:{{{node.id}}},{node.version}"'
            out["size"] = len(node.content)
        if annotate:
            out["@microsoft.graph.sharedChanged"] = "True"
        return out

    def _delta_ids(self, since: int | None, sharing: bool) -> list[str]:
        if since is None:
            live = [n for n in self.nodes.values() if not n.deleted]
            return [n.id for n in sorted(live, key=lambda n: (self._depth(n), n.changed))]
        changed = {n.id for n in self.nodes.values() if n.changed > since or (sharing and n.shared > since)}
        for item_id in list(changed):  # and the parent hierarchy of each
            node = self.nodes[item_id]
            while node.parent is not None:
                node = self.nodes[node.parent]
                changed.add(node.id)
        nodes = [self.nodes[i] for i in changed]
        return [n.id for n in sorted(nodes, key=lambda n: (self._depth(n), n.changed))]

    # -- answers ----------------------------------------------------------------------------------
    def _delta(self, query: dict[str, str], prefer: str) -> tuple[int, dict[str, Any]]:
        base = f"{self.graph_url}/drives/{quote(self.drive_id, safe='!')}/root/delta"
        sharing = "deltashowsharingchanges" in prefer.replace(" ", "").split(",")
        if "$skiptoken" in query:
            key, _, offset = query["$skiptoken"].partition(".")
            session = self._sessions.get(key)
            if session is None or session.upto < self.oldest_token or not offset.isdigit():
                return _gone()
            start = int(offset)
        else:
            since: int | None = None
            if "token" in query:
                position = _position(query["token"])
                if position is None or position < self.oldest_token:
                    return _gone()
                since = position
            session = _Session(self._delta_ids(since, sharing), self.seq, since, sharing)
            key = secrets.token_hex(6)
            self._sessions[key] = session
            start = 0
        ids = session.ids[start : start + self.page_size]
        values = []
        for item_id in ids:
            node = self.nodes[item_id]
            shared_only = session.since is not None and node.shared > session.since
            values.append(self.render(node, annotate=session.sharing and shared_only))
        body: dict[str, Any] = {
            "@odata.context": f"{self.graph_url}/$metadata#Collection(driveItem)",
            "value": values,
        }
        if start + self.page_size < len(session.ids):
            body["@odata.nextLink"] = f"{base}?$skiptoken={key}.{start + self.page_size}"
        else:
            token = base64.urlsafe_b64encode(f"pos:{session.upto}".encode()).decode().rstrip("=")
            body["@odata.deltaLink"] = f"{base}?token={token}"
        return 200, body

    def _paged(
        self, values: list[dict[str, Any]], query: dict[str, str], size: int, link: str
    ) -> dict[str, Any]:
        start = int(query.get("$skiptoken", "0") or 0)
        body: dict[str, Any] = {"value": values[start : start + size]}
        if start + size < len(values):
            body["@odata.nextLink"] = f"{link}?$skiptoken={start + size}"
        return body


def _position(token: str) -> int | None:
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    kind, _, number = text.partition(":")
    return int(number) if kind == "pos" and number.isdigit() else None


def _gone() -> tuple[int, dict[str, Any]]:
    return 410, {"error": {"code": "resyncRequired", "message": "Resync required. Replace any local items."}}


def _not_found() -> tuple[int, dict[str, Any]]:
    return 404, {"error": {"code": "itemNotFound", "message": "The resource could not be found."}}


class _Handler(BaseHTTPRequestHandler):
    server_state: GraphServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        g = self.server_state
        parts = urlsplit(self.path)
        length = int(self.headers.get("content-length", "0") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        with g._lock:
            g.requests["token"] += 1
            fault = g._faults.pop(0) if g._faults else None
        if fault is not None:
            return self._fault(fault)
        if parts.path != f"/{g.tenant}/oauth2/v2.0/token":
            return self._json(
                404, {"error": "invalid_tenant", "error_description": "AADSTS90002: Tenant not found."}
            )
        g.token_forms.append(form)
        ok = (
            form.get("client_id") == g.client_id
            and form.get("client_secret") == g.client_secret
            and form.get("grant_type") == "client_credentials"
            and form.get("scope") == GRAPH_DEFAULT
        )
        if not ok:
            return self._json(
                401,
                {
                    "error": "invalid_client",
                    "error_description": f"AADSTS7000215: Invalid client secret: {form.get('client_secret')}",
                },
            )
        token = "eyJ0eXAi." + secrets.token_urlsafe(24)
        with g._lock:
            g.tokens.add(token)
        self._json(200, {"token_type": "Bearer", "expires_in": g.expires_in, "access_token": token})

    def do_GET(self) -> None:
        g = self.server_state
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        kind = _kind(path)
        with g._lock:
            g.requests[kind] += 1
            fault = g._faults.pop(0) if g._faults else None
        if fault is not None:
            return self._fault(fault)
        if kind == "download":
            auth = self.headers.get("authorization")
            if auth:
                g.download_auth.append(auth)
            item_id = path.rsplit("/", 1)[-1]
            with g._lock:
                node = g.nodes.get(item_id)
                valid = query.get("tempauth") in g._tempauth
            if not valid:
                return self._json(401, {"error": {"code": "unauthenticated"}})
            if node is None or node.deleted:
                return self._json(404, {"error": {"code": "itemNotFound"}})
            return self._send(200, node.content, {"content-type": "application/octet-stream"})
        auth = self.headers.get("authorization", "")
        with g._lock:
            authorized = auth.startswith("Bearer ") and auth[7:] in g.tokens
        if not authorized:
            return self._json(
                401, {"error": {"code": "InvalidAuthenticationToken", "message": "Access token is empty."}}
            )
        prefix = f"/v1.0/drives/{g.drive_id}"
        if not path.startswith(prefix + "/"):
            return self._json(*_not_found())
        rest = path[len(prefix) :]
        with g._lock:
            status, body, headers = self._answer(g, rest, query)
            if status == 200 and g._malformed > 0:
                g._malformed -= 1
                return self._send(200, b'{"value": [{"id": "01', {"content-type": "application/json"})
        if status == 302:
            return self._send(302, b"", headers)
        self._json(status, body)

    def _answer(self, g: GraphServer, rest: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        if rest == "/root/delta":
            prefer = self.headers.get("prefer", "")
            g.prefers.append(prefer)
            return (*g._delta(query, prefer), {})
        if rest.startswith("/root:"):
            node = g.find(rest[len("/root:") :].rstrip(":"))
            return (200, g.render(node, path=True), {}) if node is not None else (*_not_found(), {})
        if rest == "/root":
            return 200, g.render(g.root, path=True), {}
        if not rest.startswith("/items/"):
            return (*_not_found(), {})
        item_id, _, tail = rest[len("/items/") :].partition("/")
        node = g.nodes.get(item_id)
        if node is None or node.deleted:
            return (*_not_found(), {})
        link = f"{g.graph_url}/drives/{quote(g.drive_id, safe='!')}/items/{item_id}/{tail}"
        if tail == "":
            return 200, g.render(node, path=True), {}
        if tail == "children" and node.folder:
            children = sorted(
                (n for n in g.nodes.values() if n.parent == node.id and not n.deleted), key=lambda n: n.name
            )
            values = [g.render(n, path=True) for n in children]
            return 200, g._paged(values, query, g.children_page_size, link), {}
        if tail == "permissions":
            values = [{"id": f"p{i}", **p} for i, p in enumerate(g.effective(node.id))]
            return 200, g._paged(values, query, g.permissions_page_size, link), {}
        if tail == "content" and not node.folder:
            tempauth = secrets.token_urlsafe(16)
            g._tempauth.add(tempauth)
            return 302, None, {"location": f"{g.url}/download/{node.id}?tempauth={tempauth}"}
        return (*_not_found(), {})

    def _fault(self, fault: tuple[int, float]) -> None:
        status, retry_after = fault
        headers = {"retry-after": f"{retry_after:g}"} if retry_after >= 0 else {}
        body = json.dumps(
            {"error": {"code": "activityLimitReached" if status == 429 else "serviceNotAvailable"}}
        )
        self._send(status, body.encode(), {"content-type": "application/json", **headers})

    def _json(self, status: int, body: Any) -> None:
        self._send(status, json.dumps(body).encode(), {"content-type": "application/json"})

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)


def _kind(path: str) -> str:
    if path.startswith("/download/"):
        return "download"
    if path.endswith("/root/delta"):
        return "delta"
    for tail in ("children", "permissions", "content"):
        if path.endswith("/" + tail):
            return tail
    return "item"


# -- the contract's world -------------------------------------------------------------------------
class GraphWorld:
    """The contract's world for the Graph connector: a drive whose folder ``/Docs`` is the source (its
    items ``/Docs/<key>.txt``, readable by the whole organization through the folder's sharing link
    unless given their own permissions), next to ``/Other`` which the source must never name."""

    kind = "graph"
    FOLDER = "/Docs"

    def __init__(self, page_size: int = 1) -> None:
        self.server = GraphServer(page_size=page_size)
        self.credentials = {"clientId": self.server.client_id, "clientSecret": self.server.client_secret}
        self.server.mkdir(self.FOLDER, perms=[organization_link()])
        self.server.mkdir("/Other", perms=[organization_link()])
        self.server.put("/Other/outside.txt", "outside the folder")
        self.texts: dict[str, str] = {}
        self.access: dict[str, ItemAccess] = {}
        self.ids: dict[str, str] = {}

    def settings(self) -> dict[str, Any]:
        return {
            "tenant": self.server.tenant,
            "driveId": self.server.drive_id,
            "folder": self.FOLDER,
            "graphUrl": self.server.graph_url,
            "loginUrl": self.server.login_url,
        }

    def source(self) -> GraphSource:
        return GraphSource(
            GraphSettings.model_validate(self.settings()), self.credentials, allow_loopback=True
        )

    def put(self, key: str, text: str, access: ItemAccess | None = None) -> None:
        self.texts[key] = text
        self.ids[key] = self.server.put(f"{self.FOLDER}/{key}.txt", text)
        if access is not None:
            self.permit(key, access)
        else:
            self.access.setdefault(key, ItemAccess())

    def remove(self, key: str) -> None:
        self.texts.pop(key, None)
        self.access.pop(key, None)
        node = self.server.find(f"{self.FOLDER}/{key}.txt")
        if node is not None:
            self.server.delete(node.id)

    def permit(self, key: str, access: ItemAccess) -> None:
        self.access[key] = access
        self.server.set_perms(self.ids[key], _grants(access))

    def item_id(self, key: str) -> str:
        return self.ids[key]

    def expected(self) -> dict[str, tuple[str, ItemAccess]]:
        return {
            self.ids[k]: (text, self.access[k]) for k, text in self.texts.items() if self.access[k].readable
        }

    def requests(self) -> int:
        return self.server.total()

    def throttle(self, times: int, retry_after: float) -> None:
        self.server.fault(429, times=times, retry_after=retry_after)

    def fail(self, times: int, status: int = 500) -> None:
        self.server.fault(status, times=times)

    def close(self) -> None:
        self.server.close()


def _grants(access: ItemAccess) -> list[dict[str, Any]] | None:
    """The world's readers as SharePoint permissions: everyone inherits the folder's organization
    link; named users are granted by email, groups are Entra groups whose object id is their name."""
    if access.everyone:
        return None
    return [user_grant(u) for u in access.users] + [group_grant(g, f"{g} team") for g in access.groups]
