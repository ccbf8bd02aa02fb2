"""A website on 127.0.0.1 for the crawler: pages with ``ETag``/``Last-Modified`` and conditional GETs
(``304``), ``robots.txt``, a sitemap with ``lastmod``, redirects, and scripted 429/5xx answers.

Every request is counted (``requests`` by path, ``bodies``: answers that carried a page's body), so a
test measures what a crawl asked for.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ragline.adapters.sources.web import WebSource
from ragline.domain.source_settings import CRAWLER_NAME, WebSettings
from ragline.domain.sources import EVERYONE, ItemAccess


@dataclass
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    modified: float = 0.0
    lastmod: str = ""

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:16] + '"'


class Site:
    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.redirects: dict[str, str] = {}
        self.robots = "User-agent: *\nAllow: /\n"
        self.sitemap = False
        """Serve ``/sitemap.xml`` listing every page (and name it in robots.txt)."""
        self.requests: Counter[str] = Counter()
        self.bodies: Counter[str] = Counter()
        self.conditional: Counter[str] = Counter()
        self.agents: set[str] = set()
        self._faults: list[tuple[int, float]] = []
        self.always: dict[str, int] = {}
        """Path → a status it answers to every request (a page that stays broken)."""
        self._lock = threading.Lock()
        self._clock = 1_700_000_000
        handler = type("Handler", (_Handler,), {"site": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def put(self, path: str, body: bytes | str, content_type: str = "text/html; charset=utf-8") -> None:
        data = body.encode() if isinstance(body, str) else body
        with self._lock:
            old = self.pages.get(path)
            if old is not None and old.body == data and old.content_type == content_type:
                return
            self._clock += 60
            self.pages[path] = Page(
                data, content_type, self._clock, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._clock))
            )

    def drop(self, path: str) -> None:
        with self._lock:
            self.pages.pop(path, None)

    def fault(self, status: int, *, times: int = 1, retry_after: float | None = None) -> None:
        with self._lock:
            self._faults += [(status, -1.0 if retry_after is None else retry_after)] * times

    def total(self) -> int:
        return sum(self.requests.values())

    def reset_counts(self) -> None:
        self.requests.clear()
        self.bodies.clear()
        self.conditional.clear()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next_fault(self) -> tuple[int, float] | None:
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    def _sitemap_xml(self) -> bytes:
        with self._lock:
            entries = "".join(
                f"<url><loc>{self.url}{path}</loc><lastmod>{page.lastmod}</lastmod></url>"
                for path, page in sorted(self.pages.items())
            )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
        ).encode()


class _Handler(BaseHTTPRequestHandler):
    site: Site

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        site = self.site
        path = self.path
        site.requests[path] += 1
        site.agents.add(self.headers.get("user-agent", ""))
        if path in site.always:
            return self._send(site.always[path], b"down", {})
        fault = site._next_fault()
        if fault is not None:
            status, retry_after = fault
            headers = {"retry-after": f"{retry_after:g}"} if retry_after >= 0 else {}
            return self._send(status, b"busy", headers)
        if path == "/robots.txt":
            robots = site.robots + (f"Sitemap: {site.url}/sitemap.xml\n" if site.sitemap else "")
            return self._send(200, robots.encode(), {"content-type": "text/plain"})
        if path == "/sitemap.xml" and site.sitemap:
            return self._send(200, site._sitemap_xml(), {"content-type": "application/xml"})
        if path in site.redirects:
            return self._send(301, b"", {"location": site.redirects[path]})
        page = site.pages.get(path)
        if page is None:
            return self._send(404, b"not found", {"content-type": "text/plain"})
        modified = formatdate(page.modified, usegmt=True)
        if (
            self.headers.get("if-none-match") == page.etag
            or self.headers.get("if-modified-since") == modified
        ):
            site.conditional[path] += 1
            return self._send(304, b"", {"etag": page.etag, "last-modified": modified})
        site.bodies[path] += 1
        self._send(
            200, page.body, {"content-type": page.content_type, "etag": page.etag, "last-modified": modified}
        )

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)


def html(title: str, text: str, links: list[str] = (), extra_head: str = "") -> str:  # type: ignore[assignment]
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (
        f"<!doctype html><html><head><title>{title}</title>{extra_head}</head>"
        f"<body><h1>{title}</h1><p>{text}</p><ul>{anchors}</ul></body></html>"
    )


def handbook_site(site: Site, pages: int) -> dict[str, str]:
    """``pages`` handbook pages linked in a ring (and by a stride), a home page, a sitemap, redirects,
    a byte-identical copy, a canonical copy, a page ``robots.txt`` keeps from RaglineBot: returns path
    → a word only that page holds, for every page a crawl must name."""
    items: dict[str, str] = {}
    for i in range(pages):
        links = [f"/docs/p{(i + 1) % pages}.html", f"/docs/p{(i * 7) % pages}.html", "/private/secret.html"]
        links += [f"/old/p{i}", f"/docs/p{i}.html?ref=nav"] if i % 50 == 0 else []
        site.put(f"/docs/p{i}.html", html(f"page {i}", f"unique{i} handbook text", links))
        items[f"/docs/p{i}.html"] = f"unique{i}"
        site.redirects[f"/old/p{i}"] = f"/docs/p{i}.html"
    site.put("/", html("home", "welcome home", ["/docs/p0.html", "/print/p7.html", "/docs/p8-amp.html"]))
    items["/"] = "welcome"
    site.put("/print/p7.html", site.pages["/docs/p7.html"].body)  # the same bytes: a duplicate
    canonical = f'<link rel="canonical" href="{site.url}/docs/p8.html">'
    site.put("/docs/p8-amp.html", html("page 8", "unique8 handbook text amp", [], canonical))
    site.put("/private/secret.html", html("secret", "secretword"))
    site.robots = f"User-agent: *\nDisallow: /nothing\n\nUser-agent: {CRAWLER_NAME}\nDisallow: /private/\n"
    site.sitemap = True
    return items


def three_page_site() -> Site:
    """A home page linking a pump page and a valve page (the end-to-end tests' small site)."""
    site = Site()
    site.put("/", html("handbook", "welcome to the handbook", ["/pump.html", "/valve.html"]))
    site.put("/pump.html", html("pump", "the pump runs at 1450 rpm and needs oil every quarter"))
    site.put("/valve.html", html("valve", "close the relief valve before service"))
    return site


class WebWorld:
    """The contract's world for the crawler: ``/`` links every item page ``/<key>.html``."""

    kind = "web"

    def __init__(self, page_changes: int = 5) -> None:
        self.site = Site()
        self.texts: dict[str, str] = {}
        self.page_changes = page_changes
        self._index()

    def settings(self) -> dict[str, Any]:
        return {"seeds": [f"{self.site.url}/"], "maxDepth": 2}

    def source(self) -> WebSource:
        from ragline.adapters.sources import web

        source = WebSource(WebSettings.model_validate(self.settings()), allow_loopback=True)
        source.page_changes = self.page_changes  # small pages: a listing of a few items takes several
        assert self.page_changes <= web.PAGE_CHANGES
        return source

    def _index(self) -> None:
        links = [f"/{k}.html" for k in sorted(self.texts)]
        self.site.put("/", html("site index", "site index", links))

    def put(self, key: str, text: str, access: ItemAccess | None = None) -> None:
        assert access in (None, EVERYONE), "a website is public"
        self.texts[key] = text
        self.site.put(f"/{key}.html", html(key, text))
        self._index()

    def remove(self, key: str) -> None:
        self.texts.pop(key, None)
        self.site.drop(f"/{key}.html")
        self._index()

    def permit(self, key: str, access: ItemAccess) -> None:
        raise NotImplementedError("a website is public")

    def item_id(self, key: str) -> str:
        return f"{self.site.url}/{key}.html"

    def expected(self) -> dict[str, tuple[str, ItemAccess]]:
        out = {self.item_id(k): (t, EVERYONE) for k, t in self.texts.items()}
        out[f"{self.site.url}/"] = ("site index", EVERYONE)
        return out

    def requests(self) -> int:
        return self.site.total()

    def throttle(self, times: int, retry_after: float) -> None:
        self.site.fault(429, times=times, retry_after=retry_after)

    def fail(self, times: int, status: int = 500) -> None:
        self.site.fault(status, times=times)

    def close(self) -> None:
        self.site.close()
