"""The crawler's ``fetch`` against the local site of :mod:`tests.support.web_site`: a throttle it cannot
wait out is a :class:`~ragline.errors.RaglineError` (the sync fails that page alone), a short one is
waited out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragline import errors
from ragline.adapters.sources.web import WebSource
from ragline.domain.source_settings import WebSettings
from ragline.domain.sources import SourceItem
from tests.support.web_site import Site, html

pytestmark = pytest.mark.unit


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    s.put("/", html("home", "welcome home"))
    s.put("/a.html", html("page a", "alpha text"))
    yield s
    s.close()


def source(site: Site, sleeps: list[float]) -> WebSource:
    settings = WebSettings.model_validate({"seeds": [f"{site.url}/"]})
    return WebSource(settings, allow_loopback=True, sleep=sleeps.append)


def page(site: Site) -> SourceItem:
    url = f"{site.url}/a.html"
    return SourceItem(id=url, name=url, filename="page.html", version="v1")


def test_fetch_under_a_long_retry_after_raises_a_ragline_error_without_waiting(site: Site) -> None:
    sleeps: list[float] = []
    src = source(site, sleeps)
    site.fault(429, retry_after=120)
    with pytest.raises(errors.Throttled) as caught:
        src.fetch(page(site))
    assert isinstance(caught.value, errors.RaglineError)  # what the sync catches per item
    assert caught.value.details == {"url": page(site).id, "retry_after": 120.0}
    assert "120" in caught.value.message
    assert sleeps == [] and site.requests["/a.html"] == 1  # refused at once, not retried
    assert b"alpha text" in src.fetch(page(site))  # the throttle is gone: the page is read


def test_fetch_under_a_429_left_after_the_last_attempt_raises_a_ragline_error(site: Site) -> None:
    sleeps: list[float] = []
    site.fault(429, times=3)  # no Retry-After: backoffs, then the longest wait is asked for
    with pytest.raises(errors.Throttled) as caught:
        source(site, sleeps).fetch(page(site))
    assert caught.value.details["retry_after"] == 10.0
    assert sleeps == [0.5, 1.0] and site.requests["/a.html"] == 3


def test_fetch_waits_out_a_short_retry_after(site: Site) -> None:
    sleeps: list[float] = []
    site.fault(429, retry_after=2)
    assert b"alpha text" in source(site, sleeps).fetch(page(site))
    assert sleeps == [2.0] and site.requests["/a.html"] == 2


def test_a_crawls_state_at_its_limits_fits_its_cursor() -> None:
    """``maxPages`` at its most, every URL it may queue queued (long, distinct paths), half of them
    visited with distinct bodies: the cursor still fits, and reads back whole."""
    import hashlib

    from ragline.adapters.sources.web_crawl import QUEUED_PER_PAGE, Crawl
    from ragline.domain.source_settings import MAX_PAGES
    from ragline.domain.sources import MAX_CURSOR_BYTES

    crawl = Crawl(limit=QUEUED_PER_PAGE * MAX_PAGES)
    for i in range(QUEUED_PER_PAGE * MAX_PAGES + 50):  # past the limit: not queued
        crawl.push(f"https://docs.example.com/section-{i % 97}/a-longer-page-name-{i}.html?lang=en", 3)
    assert len(crawl.queued) == QUEUED_PER_PAGE * MAX_PAGES
    crawl.queue = crawl.queue[MAX_PAGES:]
    for i in range(MAX_PAGES):
        assert crawl.first_body(hashlib.sha256(str(i).encode()).hexdigest())
    assert not crawl.first_body(hashlib.sha256(b"0").hexdigest())  # a duplicate body
    cursor = crawl.encode()
    assert len(cursor) <= MAX_CURSOR_BYTES
    back = Crawl.decode(cursor)
    assert (back.queue, back.queued, back.bodies, back.limit) == (
        crawl.queue,
        crawl.queued,
        crawl.bodies,
        crawl.limit,
    )
