"""What a crawl asks a website for: a first crawl, then a second after three pages changed and one was
removed — with the site's sitemap (``lastmod``) and without it (conditional GETs only).

The site is the tests' handbook (tests/support/web_site.py: a ring of pages, redirects, a duplicate, a
canonical copy, a page robots.txt keeps out) on 127.0.0.1, synced through the real sync service into
an embedded namespace (bag-of-words embedder: this measures requests, not embedding).

    .venv/bin/python -m bench.crawl --pages 220 --pages 1000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.source_world import SyncHarness
from tests.support.web_site import Site, handbook_site, html

from ragline.domain.sources import EVERYONE, ItemAccess


class _World:
    kind = "web"

    def __init__(self, site: Site, settings: dict[str, Any]) -> None:
        self.site, self.settings, self.items = site, settings, {}

    def source(self) -> Any:
        from ragline.adapters.sources.web import WebSource
        from ragline.domain.source_settings import WebSettings

        return WebSource(WebSettings.model_validate(self.settings), allow_loopback=True)

    def expected(self) -> dict[str, tuple[str, ItemAccess]]:
        return {f"{self.site.url}{p}": (t, EVERYONE) for p, t in self.items.items()}


def measure(pages: int, sitemap: bool) -> list[tuple[str, int, int, int, int, float]]:
    site = Site()
    settings = {"seeds": [f"{site.url}/"], "maxPages": 5000, "maxDepth": 50}
    world = _World(site, settings)
    world.items = handbook_site(site, pages)
    site.sitemap = sitemap
    rows = []
    with tempfile.TemporaryDirectory() as home:
        harness = SyncHarness(Path(home), world, settings)  # type: ignore[arg-type]
        try:
            for label in ("first crawl", "second crawl"):
                if label == "second crawl":
                    for i in (3, 4, 5):
                        site.put(
                            f"/docs/p{i}.html", html(f"page {i}", f"changed{i}", [f"/docs/p{i + 1}.html"])
                        )
                    site.drop("/docs/p10.html")
                site.reset_counts()
                began = time.perf_counter()
                harness.run()
                seconds = time.perf_counter() - began
                held = len(harness.held())
                rows.append(
                    (
                        label,
                        site.total(),
                        sum(site.bodies.values()),
                        sum(site.conditional.values()),
                        held,
                        seconds,
                    )
                )
        finally:
            harness.close()
            site.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, action="append", default=[])
    args = parser.parse_args()
    print("| pages | sitemap | crawl | requests | page bodies | 304s | pages held | seconds |")
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for pages in args.pages or [220]:
        for sitemap in (True, False):
            for label, requests, bodies, not_modified, held, seconds in measure(pages, sitemap):
                with_map = "yes" if sitemap else "no"
                counts = f"{requests} | {bodies} | {not_modified} | {held}"
                print(f"| {pages} | {with_map} | {label} | {counts} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
