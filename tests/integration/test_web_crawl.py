"""The crawler on a site of 220 pages: sitemap, robots.txt exclusions, redirects, duplicates, a canonical
page, a removed page — and a second crawl that asks only for what changed (requests counted)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.domain.source_settings import CRAWLER_NAME
from ragline.domain.sources import EVERYONE, ItemAccess
from tests.support.source_world import SyncHarness
from tests.support.web_site import Site, handbook_site, html

pytestmark = pytest.mark.integration

PAGES = 220


class SiteWorld:
    """A :class:`~tests.support.source_world.SourceWorld` over a hand-built site (only what the
    harness reads: kind, source, expected)."""

    kind = "web"

    def __init__(self, site: Site, settings: dict[str, Any]) -> None:
        self.site = site
        self._settings = settings
        self.items: dict[str, str] = {}

    def source(self) -> Any:
        from ragline.adapters.sources.web import WebSource
        from ragline.domain.source_settings import WebSettings

        return WebSource(WebSettings.model_validate(self._settings), allow_loopback=True)

    def expected(self) -> dict[str, tuple[str, ItemAccess]]:
        return {f"{self.site.url}{p}": (t, EVERYONE) for p, t in self.items.items()}


@pytest.fixture
def crawl(tmp_path: Path) -> Iterator[tuple[Site, SiteWorld, SyncHarness]]:
    site = Site()
    settings = {"seeds": [f"{site.url}/"], "maxPages": 1000, "maxDepth": 10}
    world = SiteWorld(site, settings)
    world.items = handbook_site(site, PAGES)
    harness = SyncHarness(tmp_path, world, settings)  # type: ignore[arg-type]
    yield site, world, harness
    harness.close()
    site.close()


def test_a_crawl_names_each_page_once_and_obeys_robots(crawl: tuple[Site, SiteWorld, SyncHarness]) -> None:
    site, world, harness = crawl
    assert harness.run()[-1] == "done"
    held = harness.held()
    assert set(held) == set(world.expected())  # no redirect, duplicate, canonical copy or private page
    assert len(held) == PAGES + 1
    for path, word in world.items.items():
        assert word in held[f"{site.url}{path}"].text
    assert site.requests["/private/secret.html"] == 0  # disallowed for RaglineBot, never asked
    assert all(CRAWLER_NAME in agent for agent in site.agents)


def test_a_second_crawl_asks_only_for_what_changed(crawl: tuple[Site, SiteWorld, SyncHarness]) -> None:
    site, world, harness = crawl
    harness.run()
    first = site.total()
    site.reset_counts()
    for i in (3, 4, 5):
        site.put(f"/docs/p{i}.html", html(f"page {i}", f"changed{i} handbook text", [f"/docs/p{i + 1}.html"]))
        world.items[f"/docs/p{i}.html"] = f"changed{i}"
    site.drop("/docs/p10.html")
    world.items.pop("/docs/p10.html")

    harness.run()

    assert set(harness.held()) == set(world.expected())  # the removed page is gone
    assert "changed4" in harness.held()[f"{site.url}/docs/p4.html"].text
    assert dict(site.bodies) == {"/docs/p3.html": 1, "/docs/p4.html": 1, "/docs/p5.html": 1}
    second = site.total()
    assert second < first / 10, (first, second)  # robots, sitemap, the changed and the removed page
    counts = harness.state().counts
    assert (counts.indexed, counts.deleted) == (3, 1)


def test_without_a_sitemap_the_second_crawl_is_conditional(
    crawl: tuple[Site, SiteWorld, SyncHarness],
) -> None:
    site, world, harness = crawl
    site.sitemap = False
    harness.run()
    site.reset_counts()
    site.put("/docs/p3.html", html("page 3", "changed3 handbook text", ["/docs/p4.html"]))
    world.items["/docs/p3.html"] = "changed3"
    harness.run()
    held = harness.held()
    copies = {f"{site.url}/docs/p7.html", f"{site.url}/print/p7.html"}
    assert len(copies & set(held)) == 1  # the copy reached first stands for both (no sitemap orders them)
    assert set(held) - copies == set(world.expected()) - copies
    assert {p for p, n in site.bodies.items() if n} == {"/docs/p3.html"}
    # every other page answered 304: duplicates and the canonical copy too (remembered, not items)
    assert sum(site.conditional.values()) == len(site.pages) - 1 - 1  # less the changed and the private one


def test_pdf_and_docx_links_are_parsed_and_a_bad_page_fails_alone(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1] / "fixtures" / "tables"
    site = Site()
    try:
        site.put(
            "/",
            html("home", "welcome", ["/files/parts.pdf", "/files/bikes.docx", "/big.html", "/broken.html"]),
        )
        site.put("/files/parts.pdf", (root / "spare-parts.pdf").read_bytes(), "application/pdf")
        docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        site.put("/files/bikes.docx", (root / "bikes.docx").read_bytes(), docx)
        site.put("/big.html", html("big", "word " * 20_000))  # past maxPageBytes: this page fails alone
        site.put("/broken.html", "<html><body><p>half a page about <b>torque wrenches<table><tr><td>12 Nm")
        settings = {"seeds": [f"{site.url}/"], "maxPageBytes": 64 * 1024}
        world = SiteWorld(site, settings)
        harness = SyncHarness(tmp_path, world, settings)  # type: ignore[arg-type]
        try:
            harness.run()
            held = harness.held()
            assert "Volt" in held[f"{site.url}/files/bikes.docx"].text
            assert held[f"{site.url}/files/parts.pdf"].text.strip()
            assert "torque" in held[f"{site.url}/broken.html"].text  # a broken page is read as far as it goes
            assert f"{site.url}/big.html" not in held
            state = harness.state()
            assert state.counts.failed == 1 and not state.last_error
            row = harness.c.sources.known("acme", "docs", harness.record.source_id, [f"{site.url}/big.html"])
            assert "larger than" in row[f"{site.url}/big.html"].error
        finally:
            harness.close()
    finally:
        site.close()


@pytest.mark.parametrize(
    ("limits", "held"),
    [
        ({"maxDepth": 2}, {"/", "/docs/a.html", "/docs/b.html", "/blog/x.html"}),
        ({"maxPages": 3}, {"/", "/docs/a.html", "/blog/x.html"}),
        ({"include": ["/", "/docs/*"]}, {"/", "/docs/a.html", "/docs/b.html", "/docs/c.html"}),
        ({"exclude": ["/blog/*", "*?print=1"]}, {"/", "/docs/a.html", "/docs/b.html", "/docs/c.html"}),
    ],
)
def test_depth_page_limits_and_patterns_bound_the_crawl(
    tmp_path: Path, limits: dict[str, Any], held: set[str]
) -> None:
    elsewhere = Site()  # another origin (port): never crawled, though linked
    site = Site()
    try:
        elsewhere.put("/", html("elsewhere", "another site"))
        site.put("/", html("home", "home page", ["/docs/a.html", "/blog/x.html", f"{elsewhere.url}/"]))
        site.put("/docs/a.html", html("a", "alpha page", ["/docs/b.html", "/docs/a.html?print=1"]))
        site.put("/docs/b.html", html("b", "bravo page", ["/docs/c.html"]))
        site.put("/docs/c.html", html("c", "charlie page"))
        site.put("/blog/x.html", html("x", "xray post"))
        settings = {"seeds": [f"{site.url}/"], **limits}
        harness = SyncHarness(tmp_path, SiteWorld(site, settings), settings)  # type: ignore[arg-type]
        try:
            harness.run()
            assert set(harness.held()) == {f"{site.url}{p}" for p in held}
            assert elsewhere.total() == 0
        finally:
            harness.close()
    finally:
        site.close()
        elsewhere.close()


@pytest.mark.parametrize("broken", ["/", "/robots.txt", "/sitemap.xml"])
def test_a_crawl_that_cannot_see_everything_deletes_nothing(
    crawl: tuple[Site, SiteWorld, SyncHarness], broken: str
) -> None:
    """A page, the sitemap or robots.txt answering 503 past the retries: the pages behind it are not
    named this time, and none is deleted for it — only the next crawl that sees everything deletes."""
    site, world, harness = crawl
    harness.run()
    before = set(harness.held())
    site.drop("/docs/p10.html")
    world.items.pop("/docs/p10.html")
    site.always[broken] = 503
    harness.run()
    held = set(harness.held())
    copies = {f"{site.url}/docs/p7.html", f"{site.url}/print/p7.html"}  # which copy stands may change
    assert held - copies == before - copies  # the removed page too: this crawl could not prove it gone
    assert len(held & copies) == 1
    assert f"{site.url}/docs/p10.html" in held
    del site.always[broken]
    harness.run()
    assert set(harness.held()) == set(world.expected())  # the removed page is gone now
