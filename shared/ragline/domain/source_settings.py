"""What a tenant configures per data source kind, checked (a bad setting is a 400 naming its field)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

MAX_SEEDS = 20
MAX_PATTERNS = 50
MAX_PAGES = 5_000
"""A crawl's page limit at most: its frontier rides in the cursor
(see :data:`~ragline.domain.sources.MAX_CURSOR_BYTES`)."""
CRAWLER_NAME = "RaglineBot"
"""The user agent a crawl names, and the ``robots.txt`` group it obeys (else ``*``'s)."""
CRAWLER_AGENT = f"{CRAWLER_NAME}/1.0 (+https://ragline.dev/bot)"

Pattern = Annotated[str, Field(min_length=1, max_length=300)]


def _check_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http(s) URL with a host")
    if not value.isascii() or len(value) > 2000:
        raise ValueError("must be an ASCII URL of at most 2000 characters (percent-encode the rest)")
    return value


class WebSettings(BaseModel):
    """A website: pages reached from the seeds and sitemaps, on the seeds' own hosts.

    ``include``/``exclude`` are shell-style patterns (``*`` any run of characters, ``?`` one) matched
    against a URL's path and query (``/docs/*``); a URL is crawled when it matches an include (all,
    when none is given) and no exclude. ``robots.txt`` is always obeyed."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    seeds: list[str] = Field(min_length=1, max_length=MAX_SEEDS)
    sitemaps: list[str] = Field(default_factory=list, max_length=MAX_SEEDS)
    include: list[Pattern] = Field(default_factory=list, max_length=MAX_PATTERNS)
    exclude: list[Pattern] = Field(default_factory=list, max_length=MAX_PATTERNS)
    max_depth: int = Field(default=5, ge=0, le=50)
    """Links followed from a seed or a sitemap's page (0: those pages only)."""
    max_pages: int = Field(default=500, ge=1, le=MAX_PAGES)
    max_page_bytes: int = Field(default=10 * 1024 * 1024, ge=1024, le=50 * 1024 * 1024)

    @field_validator("seeds", "sitemaps")
    @classmethod
    def _urls(cls, values: list[str]) -> list[str]:
        return [_check_url(v) for v in values]

    def hosts(self) -> frozenset[str]:
        """The crawl's scope: the seeds' scheme, host and port."""
        return frozenset(_origin(u) for u in self.seeds)


SPACE_KEY = r"^[A-Za-z0-9~][A-Za-z0-9_~-]{0,254}$"


class ConfluenceSettings(BaseModel):
    """Confluence Cloud: the pages of the named spaces (all spaces the credentials can read, when
    none is named). Credentials (``email`` and ``apiToken``) are the source's secret, never settings."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    site_url: str
    """``https://<site>.atlassian.net`` (the site's base URL, without ``/wiki``)."""
    spaces: list[Annotated[str, Field(pattern=SPACE_KEY)]] = Field(default_factory=list, max_length=50)
    max_pages: int = Field(default=50_000, ge=1, le=1_000_000)

    @field_validator("site_url")
    @classmethod
    def _site(cls, value: str) -> str:
        return _check_url(value).rstrip("/")


class GraphSettings(BaseModel):
    """SharePoint Online or OneDrive through Microsoft Graph: one drive (a document library), or one
    folder of it. Credentials (an app registration's ``clientId`` and ``clientSecret``) are the
    source's secret; ``tenant`` is the Microsoft Entra tenant (id or domain) they belong to."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    tenant: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9.-]+$")
    drive_id: str = Field(min_length=1, max_length=500, pattern=r"^[A-Za-z0-9!_.:-]+$")
    folder: str = Field(default="", max_length=1000)
    """A folder path in the drive (``/Policies/HR``): only items below it; ``""``: the whole drive."""
    graph_url: str = "https://graph.microsoft.com/v1.0"
    login_url: str = "https://login.microsoftonline.com"

    @field_validator("graph_url", "login_url")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        return _check_url(value).rstrip("/")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}{f':{parts.port}' if parts.port else ''}"


SETTINGS_BY_KIND: dict[str, type[BaseModel]] = {
    "web": WebSettings,
    "confluence": ConfluenceSettings,
    "graph": GraphSettings,
}
