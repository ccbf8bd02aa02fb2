"""The Confluence connector beyond the Source contract: readers through ancestors (inline and the
CONFCLOUD-77618 fallback), credentials kept out of errors, refused and malformed answers, throttling
past the call's time, its own cursors only, public addresses only, bodies, scope and limits."""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.sources.confluence import ConfluenceSource
from ragline.domain.source_settings import ConfluenceSettings
from ragline.domain.sources import EVERYONE, ChangePage, ItemAccess, SourceItem
from tests.support.confluence_server import EMAIL, TOKEN, ConfluenceServer
from tests.support.source_world import MemoryKnown, pages_of

pytestmark = pytest.mark.unit


@pytest.fixture
def server() -> Iterator[ConfluenceServer]:
    s = ConfluenceServer(page_size=3)
    yield s
    s.close()


def source(
    server: ConfluenceServer,
    *,
    token: str = TOKEN,
    sleeps: list[float] | None = None,
    allow_loopback: bool = True,
    **settings: Any,
) -> ConfluenceSource:
    config = ConfluenceSettings.model_validate({"siteUrl": server.url, "spaces": ["DOCS"], **settings})
    return ConfluenceSource(
        config, {"email": EMAIL, "apiToken": token}, allow_loopback=allow_loopback,
        sleep=(sleeps.append if sleeps is not None else time.sleep),
    )  # fmt: skip


def listing(src: ConfluenceSource, cursor: str | None = None) -> list[ChangePage]:
    return list(pages_of(src, MemoryKnown(), cursor, until=time.monotonic() + 60))


def accesses(pages: list[ChangePage]) -> dict[str, ItemAccess | None]:
    return {c.item_id: c.item.access for p in pages for c in p.changes if c.item is not None}


def seed(server: ConfluenceServer, n: int) -> list[str]:
    return [server.add_page("DOCS", f"Page {i}", f"text{i}") for i in range(n)]


class Tree:
    """root (ana, bo; finance, eng) ← child (ana, cy; finance) ← grandchild (unrestricted);
    root ← sibling (unrestricted); users-only parent (ana) ← groups-only page (finance);
    a page restricted to a user who hides their email; an unrestricted top page."""

    def __init__(self, s: ConfluenceServer) -> None:
        ana, bo, cy = (s.account(f"{n}@example.com") for n in ("ana", "bo", "cy"))
        self.hidden_account = s.account("hidden@example.com", visible=False)
        self.root = s.add_page("DOCS", "Root", "root text")
        s.restrict(self.root, users=[ana, bo], groups=["finance", "eng"])
        self.child = s.add_page("DOCS", "Child", "child text", parent=self.root)
        s.restrict(self.child, users=[ana, cy], groups=["finance"])
        self.grandchild = s.add_page("DOCS", "Grandchild", "grandchild text", parent=self.child)
        self.sibling = s.add_page("DOCS", "Sibling", "sibling text", parent=self.root)
        self.users_parent = s.add_page("DOCS", "Users only", "users text")
        s.restrict(self.users_parent, users=[ana])
        self.mixed = s.add_page("DOCS", "Groups only", "groups text", parent=self.users_parent)
        s.restrict(self.mixed, groups=["finance"])
        self.hidden = s.add_page("DOCS", "Hidden email", "hidden text")
        s.restrict(self.hidden, users=[self.hidden_account])
        self.top = s.add_page("DOCS", "Top", "top text")

    def expected(self) -> dict[str, ItemAccess]:
        ana_finance = ItemAccess.only(["ana@example.com"], ["finance"])
        return {
            self.root: ItemAccess.only(["ana@example.com", "bo@example.com"], ["eng", "finance"]),
            self.child: ana_finance,
            self.grandchild: ana_finance,
            self.sibling: ItemAccess.only(["ana@example.com", "bo@example.com"], ["eng", "finance"]),
            self.users_parent: ItemAccess.only(["ana@example.com"]),
            self.mixed: ItemAccess.only(),
            self.hidden: ItemAccess.only([self.hidden_account]),
            self.top: EVERYONE,
        }


# -- who may read ---------------------------------------------------------------------------------
def test_a_page_is_read_by_the_principals_named_at_every_restricted_level(server: ConfluenceServer) -> None:
    tree = Tree(server)
    pages = listing(source(server))
    assert accesses(pages) == tree.expected()
    assert not tree.expected()[tree.mixed].readable  # users at one level, groups at the other: no one
    assert server.requests["restriction"] == 0  # the ancestors' restrictions came inline


def test_when_the_inline_expansion_404s_ancestors_are_read_one_by_one(server: ConfluenceServer) -> None:
    tree = Tree(server)
    server.ancestor_expand_404 = True
    pages = listing(source(server))
    assert accesses(pages) == tree.expected()
    assert server.requests["restriction"] == 3  # root, child and the users-only parent, once each
    assert all(p.full for p in pages)


def test_permissions_reads_one_page_by_the_same_rule(server: ConfluenceServer) -> None:
    tree = Tree(server)
    src = source(server)
    item = SourceItem(id=tree.grandchild, name="", filename="page.html", version="1")
    assert src.permissions(item) == ItemAccess.only(["ana@example.com"], ["finance"])
    server.delete(tree.grandchild)
    assert not src.permissions(item).readable


def test_a_page_naming_more_readers_than_a_document_carries_is_read_by_no_one(
    server: ConfluenceServer,
) -> None:
    crowded = server.add_page("DOCS", "Crowded", "many readers")
    server.restrict(crowded, users=[server.account(f"u{i}@example.com") for i in range(101)])
    principled = server.add_page("DOCS", "Odd names", "odd principals")
    server.restrict(principled, groups=["a,b", "fine"])  # a comma cannot be carried: dropped
    assert accesses(listing(source(server))) == {
        crowded: ItemAccess.only(),
        principled: ItemAccess.only(groups=["fine"]),
    }


# -- refusals and malformed answers ---------------------------------------------------------------
def test_credentials_never_appear_in_errors_or_logs(
    server: ConfluenceServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "ATATT-wrong-token-0123456789"
    src = source(server, token=wrong)
    with pytest.raises(errors.DependencyFailed) as refused:
        src.changes(None, MemoryKnown(), until=time.monotonic() + 30)
    assert "401" in refused.value.message
    assert server.requests["search"] == 1  # a refusal is not retried
    server.fault(500, times=3)
    good = source(server, sleeps=[])
    page_id = seed(server, 1)[0]
    with pytest.raises(errors.DependencyFailed) as failed:
        good.fetch(SourceItem(id=page_id, name="", filename="page.html", version="1"))
    secrets = [
        wrong, TOKEN, EMAIL,
        base64.b64encode(f"{EMAIL}:{wrong}".encode()).decode(),
        base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode(),
    ]  # fmt: skip
    said = " ".join(
        [str(e.value) + repr(e.value.to_dict()) for e in (refused, failed)]
        + [repr(src), repr(good), caplog.text]
    )
    assert not [s for s in secrets if s in said]


def test_forbidden_is_a_clear_failure(server: ConfluenceServer) -> None:
    server.fault(403)
    with pytest.raises(errors.DependencyFailed, match="403"):
        source(server).changes(None, MemoryKnown(), until=time.monotonic() + 30)


def test_a_malformed_page_fails_the_listing_and_the_fetch(server: ConfluenceServer) -> None:
    page_id = seed(server, 2)[0]
    src = source(server)
    server.malformed()
    with pytest.raises(errors.DependencyFailed, match="not JSON"):
        src.changes(None, MemoryKnown(), until=time.monotonic() + 30)
    server.malformed()
    with pytest.raises(errors.DependencyFailed, match="not JSON"):
        src.fetch(SourceItem(id=page_id, name="", filename="page.html", version="1"))


def test_a_server_error_that_persists_fails_the_call(server: ConfluenceServer) -> None:
    seed(server, 2)
    sleeps: list[float] = []
    server.fault(500, times=3)
    with pytest.raises(errors.DependencyUnavailable, match="500"):
        source(server, sleeps=sleeps).changes(None, MemoryKnown(), until=time.monotonic() + 30)
    assert sleeps == [0.5, 1.0]  # backed off between the three attempts


# -- throttling -----------------------------------------------------------------------------------
def test_a_short_retry_after_is_waited_out(server: ConfluenceServer) -> None:
    ids = seed(server, 2)
    sleeps: list[float] = []
    server.fault(429, retry_after=2)
    page = source(server, sleeps=sleeps).changes(None, MemoryKnown(), until=time.monotonic() + 30)
    assert sleeps == [2.0]
    assert [c.item_id for c in page.changes] == ids and page.done and page.retry_after == 0


def test_a_retry_after_past_until_ends_the_call_and_its_cursor_resumes(server: ConfluenceServer) -> None:
    ids = seed(server, 7)
    src = source(server, sleeps=[])
    known = MemoryKnown()
    first = src.changes(None, known, until=time.monotonic() + 30)
    assert [c.item_id for c in first.changes] == ids[:3]
    server.fault(429, retry_after=30)
    started = time.monotonic()
    throttled = src.changes(first.cursor, known, until=started + 2)
    assert time.monotonic() - started < 2
    assert (throttled.changes, throttled.done, throttled.full, throttled.retry_after) == ([], False, True, 30)
    rest = list(pages_of(src, known, throttled.cursor))
    assert [c.item_id for p in rest for c in p.changes] == ids[3:]
    server.fault(503, retry_after=120)  # beyond the longest wait: the very first call ends early too
    opening = src.changes(None, known, until=time.monotonic() + 600)
    assert (opening.changes, opening.retry_after) == ([], 120)
    assert [c.item_id for p in pages_of(src, known, opening.cursor) for c in p.changes] == ids


# -- cursors and addresses ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cursor",
    [
        "z1:eJyrVkrLz1eyUkpKLFKqBQAZtgPx",  # another connector's
        "c1:not base64 at all!",
        "c1:" + base64.urlsafe_b64encode(b'{"n": 3}').decode(),
        "c1:"
        + base64.urlsafe_b64encode(b'{"n": "https://elsewhere.example/x?y", "c": 0, "e": false}').decode(),
        "c1:" + base64.urlsafe_b64encode(b'{"n": "/rest/api/user?accountId=1", "c": 0, "e": false}').decode(),
    ],
)
def test_a_cursor_this_connector_did_not_make_is_expired(server: ConfluenceServer, cursor: str) -> None:
    with pytest.raises(errors.CursorExpired):
        source(server).changes(cursor, MemoryKnown(), until=time.monotonic() + 30)
    assert server.total() == 0


def test_a_loopback_site_is_refused_unless_allowed(server: ConfluenceServer) -> None:
    seed(server, 1)
    with pytest.raises(errors.DependencyFailed, match="loopback"):
        source(server, allow_loopback=False).changes(None, MemoryKnown(), until=time.monotonic() + 30)
    assert server.total() == 0


# -- bodies, scope, limits ------------------------------------------------------------------------
def test_fetch_wraps_the_storage_body_in_a_titled_document(server: ConfluenceServer) -> None:
    page_id = server.add_page("DOCS", 'Q3 <plans> & "goals"', "revenue <up>")
    src = source(server)
    (page,) = listing(src)
    item = page.changes[0].item
    assert item is not None
    assert (item.id, item.version, item.filename) == (page_id, "1", "page.html")
    assert item.name == f"{server.url}/wiki/spaces/DOCS/pages/{page_id}/Q3+%3Cplans%3E+%26+%22goals%22"
    html = src.fetch(item).decode()
    assert html == (
        "<html><head><title>Q3 &lt;plans&gt; &amp; &quot;goals&quot;</title></head>"
        "<body><p>revenue &lt;up&gt;</p></body></html>"
    )
    server.edit(page_id, "revenue down")
    assert [c.item.version for c in listing(src)[0].changes if c.item] == ["2"]
    server.delete(page_id)
    with pytest.raises(errors.NotFound):
        src.fetch(item)


def test_only_the_configured_spaces_are_listed(server: ConfluenceServer) -> None:
    docs = seed(server, 2)
    other = server.add_page("OTHER", "Elsewhere", "other space")

    def listed(**settings: Any) -> list[str]:
        return sorted(accesses(listing(source(server, **settings))))

    assert listed() == sorted(docs)
    assert listed(spaces=[]) == sorted([*docs, other])
    assert listed(spaces=["OTHER"]) == [other]


def test_a_listing_names_at_most_max_pages(server: ConfluenceServer) -> None:
    ids = seed(server, 8)
    pages = listing(source(server, maxPages=4))
    assert [c.item_id for p in pages for c in p.changes] == ids[:4]
    assert pages[-1].done and pages[-1].cursor == ""


def test_the_next_sync_starts_afresh(server: ConfluenceServer) -> None:
    seed(server, 4)
    pages = listing(source(server))
    assert len(pages) == 2 and pages[-1].cursor == ""
    assert all(p.cursor.startswith("c1:") for p in pages[:-1])
