"""Data sources through the API (``RaglineClient`` against ``ragline serve`` over real HTTP): a website
added and synced on the server's own thread, searched under its own URLs, isolated per tenant and
scope (admin), re-scheduled, refused when wrong, and removed with its documents."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline import errors
from ragline.client import RaglineClient
from ragline.domain.source_api import SourceView
from tests.e2e.test_client import Server
from tests.support.web_site import Site, html, three_page_site

pytestmark = pytest.mark.e2e


@pytest.fixture
def site() -> Iterator[Site]:
    s = three_page_site()
    yield s
    s.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path, source_loopback_http=True)
    yield s
    s.stop()


def settled(rl: RaglineClient, source_id: str, run: int = 1) -> SourceView:
    """The source once its ``run``-th sync has ended (the server's thread runs it)."""
    view = rl.get_source("docs", source_id)
    for _ in range(1200):
        if view.status == "idle" and view.run >= run:
            return view
        time.sleep(0.05)
        view = rl.get_source("docs", source_id)
    raise AssertionError(f"the sync did not end: {view}")


def test_a_website_through_the_api(served: Server, site: Site) -> None:
    with RaglineClient(served.url, served.admin, backoff_s=0.01) as rl:
        rl.create_namespace("docs", default=True)
        made = rl.create_source("docs", "web", {"seeds": [f"{site.url}/"]}, name="handbook")
        assert (made.kind, made.name, made.has_credentials) == ("web", "handbook", False)
        view = settled(rl, made.source_id)
        assert (view.counts.indexed, view.last_error) == (3, "")
        hit = rl.search("docs", "how fast does the pump run", k=1).hits[0]
        assert hit.source == f"{site.url}/pump.html"

        site.put("/pump.html", html("pump", "the pump now runs at 1600 rpm"))
        rl.sync_source("docs", made.source_id)
        view = settled(rl, made.source_id, run=2)
        assert (view.counts.indexed, view.counts.unchanged) == (1, 2)

        assert rl.update_source("docs", made.source_id, every_minutes=60).every_minutes == 60
        with pytest.raises(errors.InvalidRequest):
            rl.update_source("docs", made.source_id, every_minutes=5)  # more often than every 15 minutes
        with pytest.raises(errors.InvalidRequest) as refused:
            rl.create_source("docs", "web", {"seeds": [f"{site.url}/"]}, credentials={"apiToken": "s3cret"})
        assert "s3cret" not in str(refused.value.details) and "s3cret" not in refused.value.message
        with pytest.raises(errors.InvalidRequest):
            rl.create_source("docs", "web", {"seeds": ["file:///etc/passwd"]})

        rl.delete_source("docs", made.source_id)
        for _ in range(1200):
            try:
                rl.get_source("docs", made.source_id)
            except errors.NotFound:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the source was not removed")
        assert [d for d in rl.list_documents("docs").documents if d.status != "deleted"] == []


def test_sources_are_the_tenants_own_and_need_the_admin_scope(served: Server, site: Site) -> None:
    with RaglineClient(served.url, served.admin, backoff_s=0.01) as rl:
        rl.create_namespace("docs", default=True)
        made = rl.create_source("docs", "web", {"seeds": [f"{site.url}/"]})
    with RaglineClient(served.url, served.globex, backoff_s=0.01) as other:
        other.create_namespace("docs", default=True)
        with pytest.raises(errors.NotFound):
            other.get_source("docs", made.source_id)
        assert other.list_sources("docs").sources == []
    reader, _ = served.container.tenancy.create_key("acme", scopes=["search", "ingest"])
    with RaglineClient(served.url, reader, backoff_s=0.01) as rl:
        with pytest.raises(errors.Forbidden):
            rl.list_sources("docs")
        with pytest.raises(errors.Forbidden):
            rl.sync_source("docs", made.source_id)


def test_a_confluence_spaces_restrictions_decide_what_each_end_user_finds(served: Server) -> None:
    """Through the API, as end users: a restricted page is found only by who its restrictions (and
    its ancestors') name; a restriction changed at the source takes effect after the next sync."""
    from ragline.domain.sources import ItemAccess
    from tests.support.confluence_server import ConfluenceWorld

    site = ConfluenceWorld()
    try:
        site.put("pump", "The feed pump runs at 1450 rpm.")
        site.put("budget", "The pump spares budget is 12000 euros.", ItemAccess.only(groups=["finance"]))
        key, _ = served.container.tenancy.create_key(
            "acme", scopes=["search", "ingest", "admin"], assert_user=True
        )
        with RaglineClient(served.url, key, backoff_s=0.01) as rl:
            rl.create_namespace("docs", default=True)
            made = rl.create_source("docs", "confluence", site.settings(), credentials=site.credentials())
            assert settled(rl, made.source_id).counts.indexed == 2
            finance = rl.for_user("ana@example.com", groups=["finance"])
            other = rl.for_user("bo@example.com", groups=["workshop"])

            def found(client: RaglineClient) -> str:
                return " ".join(h.text for h in client.search("docs", "pump spares budget euros", k=5).hits)

            assert "12000" in found(finance)
            assert "12000" not in found(other) and "1450" in found(other)

            site.permit("budget", ItemAccess.only(groups=["workshop"]))
            rl.sync_source("docs", made.source_id)
            view = settled(rl, made.source_id, run=2)
            assert (view.counts.relabelled, view.counts.indexed) == (1, 0)  # re-labelled, not fetched again
            assert "12000" in found(other) and "12000" not in found(finance)
    finally:
        site.close()
