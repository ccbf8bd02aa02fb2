"""What a crawler reads from a response: a page's links, canonical URL and robots directives; a
sitemap's URLs; URLs normalised so one page has one id.

HTML is streamed through libxml2's parser (lxml) with a target (no tree, linear time); sitemaps through
lxml's XML parser with entities unresolved and no network (no XXE), bounded in entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

MAX_URL = 2000
MAX_LINKS = 1000
"""Links kept per page (the rest are not followed)."""
MAX_SITEMAP_ENTRIES = 50_000
"""The sitemap protocol's own limit per file."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SAFE = "/:@!$&'()*+,;=-._~%"


def normalize_url(url: str, base: str = "") -> str | None:
    """``url`` (resolved against ``base``) as the crawler names it: http(s) only, scheme and host in
    lower case, no default port, no fragment, non-ASCII percent-encoded; ``None`` when it is no such URL."""
    try:
        joined = urljoin(base, url.strip()) if base else url.strip()
        parts = urlsplit(joined)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    try:
        host = parts.hostname.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = quote(parts.path or "/", safe=_SAFE)
    query = quote(parts.query, safe=_SAFE + "?")
    out = urlunsplit((scheme, netloc, path, query, ""))
    return out if len(out) <= MAX_URL else None


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@dataclass
class PageLinks:
    links: list[str] = field(default_factory=list)
    canonical: str | None = None
    noindex: bool = False
    nofollow: bool = False


class _LinkTarget:
    def __init__(self, base: str) -> None:
        self.base = base
        self.page = PageLinks()
        self._seen: set[str] = set()

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        tag = tag.lower()
        if tag == "base" and attrib.get("href"):
            resolved = normalize_url(attrib["href"], self.base)
            if resolved:
                self.base = resolved
        elif tag in ("a", "area") and attrib.get("href"):
            if "nofollow" in attrib.get("rel", "").lower().split():
                return
            resolved = normalize_url(attrib["href"], self.base)
            if resolved and resolved not in self._seen and len(self.page.links) < MAX_LINKS:
                self._seen.add(resolved)
                self.page.links.append(resolved)
        elif tag == "link" and "canonical" in attrib.get("rel", "").lower().split() and attrib.get("href"):
            if self.page.canonical is None:
                self.page.canonical = normalize_url(attrib["href"], self.base)
        elif tag == "meta" and attrib.get("name", "").lower() in ("robots", "ragline", "raglinebot"):
            words = {w.strip() for w in attrib.get("content", "").lower().split(",")}
            self.page.noindex |= bool(words & {"noindex", "none"})
            self.page.nofollow |= bool(words & {"nofollow", "none"})

    def end(self, tag: str) -> None: ...

    def data(self, data: str) -> None: ...

    def close(self) -> PageLinks:
        return self.page


def page_links(body: bytes, url: str) -> PageLinks:
    """The links, canonical URL and robots directives of an HTML page (a broken page gives what was read)."""
    from lxml import etree

    target = _LinkTarget(url)
    parser = etree.HTMLParser(target=target, recover=True, no_network=True)
    try:
        parser.feed(body)
        result: PageLinks = parser.close()
    except etree.LxmlError:
        return target.page
    return result


@dataclass
class Sitemap:
    pages: list[tuple[str, str]] = field(default_factory=list)
    """``(loc, lastmod)`` (``""`` when the entry has none)."""
    sitemaps: list[str] = field(default_factory=list)
    """A sitemap index's child sitemaps."""


def parse_sitemap(body: bytes, *, limit: int = MAX_SITEMAP_ENTRIES) -> Sitemap:
    """A ``<urlset>`` or ``<sitemapindex>`` (namespace-agnostic); anything else is an empty sitemap."""
    from lxml import etree

    found = Sitemap()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=True)
    try:
        root = etree.fromstring(body, parser)
    except etree.LxmlError:
        return found
    if root is None:
        return found
    kind = etree.QName(root).localname
    for entry in root:
        if len(found.pages) + len(found.sitemaps) >= limit:
            break
        if not isinstance(entry.tag, str):
            continue
        values = {
            etree.QName(child).localname: (child.text or "").strip()
            for child in entry
            if isinstance(child.tag, str)
        }
        loc = normalize_url(values.get("loc", ""))
        if loc is None:
            continue
        if kind == "sitemapindex":
            found.sitemaps.append(loc)
        elif kind == "urlset":
            found.pages.append((loc, values.get("lastmod", "")[:40]))
    return found


def matches(patterns: list[str], url: str) -> bool:
    """Whether ``url``'s path and query match one of the shell-style ``patterns``."""
    from fnmatch import fnmatchcase

    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    return any(fnmatchcase(target, p) for p in patterns)
