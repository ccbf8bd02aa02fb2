"""The Microsoft Graph connector beyond the Source contract, against the local Graph of
:mod:`tests.support.graph_server`: the folder scope and moves, subtrees read again after a folder's
sharing changed, expired cursors, tokens, secrets, throttling, readers from permissions, downloads."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ragline import errors, outbound
from ragline.adapters.sources import graph
from ragline.adapters.sources.graph import GraphSource
from ragline.domain.source_settings import GraphSettings
from ragline.domain.sources import EVERYONE, Change, ChangePage, ItemAccess, SourceItem
from tests.support.graph_server import (
    GraphServer,
    anonymous_link,
    group_grant,
    organization_link,
    site_group_grant,
    user_grant,
    users_link,
)
from tests.support.source_world import MemoryKnown, pages_of


@pytest.fixture
def server() -> Iterator[GraphServer]:
    s = GraphServer(page_size=3)
    s.mkdir("/Docs", perms=[organization_link()])
    s.mkdir("/Other", perms=[organization_link()])
    yield s
    s.close()


def make(server: GraphServer, folder: str = "/Docs", secret: str | None = None, **kwargs: Any) -> GraphSource:
    settings = GraphSettings(
        tenant=server.tenant, drive_id=server.drive_id, folder=folder,
        graph_url=server.graph_url, login_url=server.login_url,
    )  # fmt: skip
    credentials = {"clientId": server.client_id, "clientSecret": secret or server.client_secret}
    return GraphSource(settings, credentials, **{"allow_loopback": True, **kwargs})


def listing(source: GraphSource, cursor: str | None = None) -> tuple[list[ChangePage], str]:
    pages = list(pages_of(source, MemoryKnown(), cursor))
    return pages, pages[-1].cursor


def changes(pages: list[ChangePage]) -> dict[str, Change]:
    return {c.item_id: c for p in pages for c in p.changes}


def upserted(pages: list[ChangePage]) -> set[str]:
    return {i for i, c in changes(pages).items() if c.kind == "upsert"}


def deleted(pages: list[ChangePage]) -> set[str]:
    return {i for i, c in changes(pages).items() if c.kind == "delete"}


def item(item_id: str) -> SourceItem:
    return SourceItem(id=item_id, name=item_id, filename="f.txt", version="v")


# -- the folder scope ---------------------------------------------------------------------------------
def test_a_full_listing_names_the_folders_files_only(server: GraphServer) -> None:
    inside = server.put("/Docs/a.txt", "alpha")
    deep = server.put("/Docs/Sub/Deeper/b.md", "bravo")
    server.put("/Other/c.txt", "charlie")
    server.put("/top.txt", "delta")
    pages, _ = listing(make(server))
    assert upserted(pages) == {inside, deep}
    assert all(p.full for p in pages) and len(pages) > 1
    whole, _ = listing(make(server, folder=""))
    assert len(upserted(whole)) == 4


def test_a_file_moved_out_of_the_folder_is_deleted_and_one_moved_in_is_named(server: GraphServer) -> None:
    a = server.put("/Docs/a.txt", "alpha")
    b = server.put("/Other/b.txt", "bravo")
    _, cursor = listing(make(server))
    server.move(a, server.id_of("/Other"))
    server.move(b, server.id_of("/Docs"))
    pages, _ = listing(make(server), cursor)
    assert not any(p.full for p in pages)
    assert changes(pages)[a].kind == "delete"
    assert changes(pages)[b].kind == "upsert"


def test_a_folder_moved_across_the_scope_takes_its_files_along(server: GraphServer) -> None:
    leaving = [server.put("/Docs/Sub/x.txt", "x"), server.put("/Docs/Sub/Deep/y.txt", "y")]
    coming = [server.put(f"/Other/Team/{n}.txt", n) for n in ("p", "q", "r")]
    coming.append(server.put("/Other/Team/Nested/s.txt", "s"))
    _, cursor = listing(make(server))
    server.move(server.id_of("/Docs/Sub"), server.id_of("/Other"))
    server.move(server.id_of("/Other/Team"), server.id_of("/Docs"))
    pages, cursor = listing(make(server), cursor)
    assert deleted(pages) >= set(leaving)  # delta names the moved folders, not their files
    assert upserted(pages) == set(coming)
    # the cursor now knows the new folders: a change below each is judged by where it is now
    later = server.put("/Docs/Team/Nested/t.txt", "t")
    server.put("/Other/Sub/Deep/y.txt", "y changed")
    pages, _ = listing(make(server), cursor)
    assert upserted(pages) == {later}


def test_the_scope_folder_must_exist(server: GraphServer) -> None:
    with pytest.raises(errors.DependencyFailed, match="/Missing"):
        make(server, folder="/Missing").changes(None, MemoryKnown(), until=time.monotonic() + 30)


def test_files_of_a_type_the_pipeline_cannot_parse_are_not_named(server: GraphServer) -> None:
    kept = server.put("/Docs/a.txt", "alpha")
    server.put("/Docs/archive.zip", b"PK\x03\x04")
    pages, cursor = listing(make(server))
    assert upserted(pages) == {kept}
    server.move(kept, server.id_of("/Docs"), name="a.bin")  # renamed to a type it cannot parse
    pages, _ = listing(make(server), cursor)
    assert changes(pages)[kept].kind == "delete"


def test_a_file_over_the_size_limit_fails_alone(server: GraphServer, monkeypatch: pytest.MonkeyPatch) -> None:
    big = server.put("/Docs/big.txt", "x" * 100)
    small = server.put("/Docs/small.txt", "tiny")
    monkeypatch.setattr(graph, "MAX_FILE_BYTES", 50)
    found = changes(listing(make(server))[0])
    assert found[big].kind == "failed" and "larger" in found[big].error
    assert found[small].kind == "upsert"


# -- changes the feed does not list: sharing -----------------------------------------------------------
def test_a_sharing_only_change_is_an_upsert_at_the_same_version(server: GraphServer) -> None:
    a = server.put("/Docs/a.txt", "alpha")
    server.put("/Docs/b.txt", "bravo")
    source = make(server)
    pages, cursor = listing(source)
    before = changes(pages)[a].item
    assert before is not None and source.permissions(before) == EVERYONE
    server.set_perms(a, [user_grant("ana@example.com")])
    pages, _ = listing(make(server), cursor)
    after = changes(pages)[a]
    assert after.kind == "upsert" and after.item is not None
    assert after.item.version == before.version and after.item.access is None
    assert make(server).permissions(after.item) == ItemAccess.only(users=["ana@example.com"])
    assert all("deltashowsharingchanges" in p and "hierarchicalsharing" in p for p in server.prefers)


def test_a_folders_sharing_change_names_every_file_below_it_again(server: GraphServer) -> None:
    below = [server.put(f"/Docs/Team/{n}.txt", n) for n in ("x", "y", "z")]
    below.append(server.put("/Docs/Team/Deep/w.txt", "w"))
    server.put("/Docs/solo.txt", "solo")
    pages, cursor = listing(make(server))
    versions = {i: c.item.version for i, c in changes(pages).items() if c.item is not None}
    server.set_perms(server.id_of("/Docs/Team"), [group_grant("grp-7", "Team")])
    pages, _ = listing(make(server), cursor)
    assert upserted(pages) == set(below)  # children read page by page (two a page), subfolders too
    assert all(c.item is not None and c.item.version == versions[i] for i, c in changes(pages).items())
    assert make(server).permissions(item(below[3])) == ItemAccess.only(groups=["grp-7"])


def test_a_sharing_change_above_the_folder_reads_the_whole_folder_again(server: GraphServer) -> None:
    server.mkdir("/Shared")  # no permissions of its own: inherits the drive's
    files = {server.put("/Shared/a.txt", "a"), server.put("/Shared/Sub/b.txt", "b")}
    server.set_perms(server.root.id, [organization_link()])
    _, cursor = listing(make(server, folder="/Shared"))
    server.set_perms(server.root.id, [group_grant("everyone-staff")])
    pages, _ = listing(make(server, folder="/Shared"), cursor)
    assert upserted(pages) == files


def test_sharing_changes_in_a_whole_drive_source_read_the_folder_again(server: GraphServer) -> None:
    below = {server.put("/Docs/Team/x.txt", "x"), server.put("/Docs/Team/y.txt", "y")}
    server.put("/Other/z.txt", "z")
    _, cursor = listing(make(server, folder=""))
    server.set_perms(server.id_of("/Docs/Team"), [user_grant("bo@example.com")])
    pages, _ = listing(make(server, folder=""), cursor)
    assert upserted(pages) == below


# -- cursors ---------------------------------------------------------------------------------------------
def test_a_410_on_a_delta_link_is_cursor_expired(server: GraphServer) -> None:
    server.put("/Docs/a.txt", "alpha")
    _, cursor = listing(make(server))
    server.expire_tokens()
    with pytest.raises(errors.CursorExpired):
        make(server).changes(cursor, MemoryKnown(), until=time.monotonic() + 30)


def test_a_410_in_the_middle_of_a_listing_is_cursor_expired(server: GraphServer) -> None:
    for i in range(5):
        server.put(f"/Docs/f{i}.txt", f"file {i}")
    first = make(server).changes(None, MemoryKnown(), until=time.monotonic() + 30)
    assert not first.done
    server.expire_tokens()
    with pytest.raises(errors.CursorExpired):
        make(server).changes(first.cursor, MemoryKnown(), until=time.monotonic() + 30)


def test_a_cursor_of_other_settings_or_garbled_is_expired(server: GraphServer) -> None:
    server.put("/Docs/a.txt", "alpha")
    _, cursor = listing(make(server))
    for other, text in (
        (make(server, folder=""), cursor),
        (make(server), "g1:bm90IHppcA=="),
        (make(server), "x"),
    ):
        with pytest.raises(errors.CursorExpired):
            other.changes(text, MemoryKnown(), until=time.monotonic() + 30)


def test_a_call_past_its_deadline_still_makes_progress(server: GraphServer) -> None:
    ids = {server.put(f"/Docs/f{i}.txt", f"file {i}") for i in range(4)}
    pages = list(pages_of(make(server), MemoryKnown(), until=0.0))
    assert upserted(pages) == ids


# -- requests --------------------------------------------------------------------------------------------
def test_a_retry_after_past_until_ends_the_page_early_at_the_refused_link(server: GraphServer) -> None:
    ids = {server.put(f"/Docs/f{i}.txt", f"file {i}") for i in range(6)}
    source = make(server)
    first = source.changes(None, MemoryKnown(), until=time.monotonic() + 30)
    server.fault(429, retry_after=120)
    refused = source.changes(first.cursor, MemoryKnown(), until=time.monotonic() + 30)
    assert (refused.changes, refused.done, refused.retry_after) == ([], False, 120.0)
    assert refused.cursor == first.cursor and refused.full
    rest = list(pages_of(make(server), MemoryKnown(), refused.cursor))
    assert upserted([first, *rest]) == ids


def test_a_short_retry_after_is_waited_out(server: GraphServer) -> None:
    server.put("/Docs/a.txt", "alpha")
    waits: list[float] = []
    source = make(server, sleep=waits.append)
    source.changes(None, MemoryKnown(), until=time.monotonic() + 30)  # the token is taken
    server.fault(429, retry_after=1.5)
    server.fault(500)  # no Retry-After: a backoff
    pages, _ = listing(source)
    assert len(upserted(pages)) == 1
    assert waits == [1.5, 1.0]


def test_the_token_is_renewed_once_on_a_401(server: GraphServer) -> None:
    server.put("/Docs/a.txt", "alpha")
    source = make(server)
    listing(source)
    assert server.requests["token"] == 1
    server.revoke_access_tokens()
    pages, _ = listing(source)
    assert len(upserted(pages)) == 1
    assert server.requests["token"] == 2


def test_a_token_refused_again_after_renewal_is_dependency_failed(server: GraphServer) -> None:
    server.put("/Docs/a.txt", "alpha")

    def revoking(method: str, url: str, **kwargs: Any) -> outbound.Response:
        if "/v1.0/" in url:
            server.revoke_access_tokens()
        return outbound.request(method, url, **kwargs)

    with pytest.raises(errors.DependencyFailed, match="401"):
        make(server, fetch=revoking).changes(None, MemoryKnown(), until=time.monotonic() + 30)
    assert server.requests["token"] == 2


def test_the_token_is_kept_until_shortly_before_it_expires(server: GraphServer) -> None:
    server.put("/Docs/a.txt", "alpha")
    server.expires_in = 1000
    now = [time.monotonic()]
    source = make(server, monotonic=lambda: now[0])
    listing(source)
    now[0] += 600  # renewed 300 s before it expires
    listing(source)
    assert server.requests["token"] == 1
    now[0] += 200
    listing(source)
    assert server.requests["token"] == 2


def test_a_403_names_the_permissions_the_app_needs(server: GraphServer) -> None:
    server.put("/Docs/a.txt", "alpha")
    source = make(server)
    source.permissions(item(server.id_of("/Docs/a.txt")))  # the token is taken
    server.fault(403)
    with pytest.raises(errors.DependencyFailed, match=r"Files\.Read\.All"):
        source.changes(None, MemoryKnown(), until=time.monotonic() + 30)


def test_a_malformed_page_is_dependency_failed(server: GraphServer) -> None:
    server.put("/Docs/a.txt", "alpha")
    source = make(server)
    source.permissions(item(server.id_of("/Docs/a.txt")))
    server.malformed()
    with pytest.raises(errors.DependencyFailed, match="JSON"):
        source.changes(None, MemoryKnown(), until=time.monotonic() + 30)


def test_a_link_outside_graph_is_not_followed(server: GraphServer) -> None:
    for i in range(5):
        server.put(f"/Docs/f{i}.txt", f"file {i}")

    def elsewhere(method: str, url: str, **kwargs: Any) -> outbound.Response:
        response = outbound.request(method, url, **kwargs)
        if url.split("?", maxsplit=1)[0].endswith("/root/delta") and response.status == 200:
            body = json.loads(response.body)
            body["@odata.nextLink"] = "http://127.0.0.2:9/steal?token=1"
            return response._replace(body=json.dumps(body).encode())
        return response

    with pytest.raises(errors.DependencyFailed, match="outside"):
        make(server, fetch=elsewhere).changes(None, MemoryKnown(), until=time.monotonic() + 30)


def test_a_non_public_address_is_refused_without_allow_loopback(server: GraphServer) -> None:
    server.put("/Docs/a.txt", "alpha")
    with pytest.raises(errors.DependencyFailed, match="loopback"):
        make(server, allow_loopback=False).changes(None, MemoryKnown(), until=time.monotonic() + 30)
    assert server.total() == 0


# -- secrets ---------------------------------------------------------------------------------------------
def _shown(exc: errors.RaglineError) -> str:
    return f"{exc} {exc.message} {json.dumps(exc.to_dict())} {exc!r}"


def test_a_refused_secret_appears_in_no_error(server: GraphServer) -> None:
    secret = "wrong-secret-value-XYZ"
    source = make(server, secret=secret)
    with pytest.raises(errors.DependencyFailed) as caught:
        source.changes(None, MemoryKnown(), until=time.monotonic() + 30)
    assert "invalid_client" in caught.value.message
    assert secret not in _shown(caught.value) and secret not in repr(source)
    assert server.token_forms[-1]["client_secret"] == secret  # the server did quote it back


def test_tokens_and_download_urls_appear_in_no_error(server: GraphServer) -> None:
    file_id = server.put("/Docs/a.txt", "alpha")
    seen: list[str] = []

    def failing_download(method: str, url: str, **kwargs: Any) -> outbound.Response:
        seen.append(kwargs.get("headers", {}).get("authorization", ""))
        if "/download/" in url:
            raise errors.DependencyUnavailable(f"{method} {url} failed: ConnectError")
        return outbound.request(method, url, **kwargs)

    with pytest.raises(errors.DependencyUnavailable) as caught:
        make(server, fetch=failing_download).fetch(item(file_id))
    tokens = [s.removeprefix("Bearer ") for s in seen if s]
    assert tokens and not any(t in _shown(caught.value) for t in tokens)
    assert "tempauth" not in _shown(caught.value) and "/download/" not in _shown(caught.value)


# -- fetch ---------------------------------------------------------------------------------------------
def test_fetch_follows_the_redirect_without_the_bearer_token(server: GraphServer) -> None:
    file_id = server.put("/Docs/a.txt", "alpha bravo")
    source = make(server)
    assert source.fetch(item(file_id)) == b"alpha bravo"
    assert server.requests["download"] == 1 and server.download_auth == []
    server.delete(file_id)
    with pytest.raises(errors.NotFound):
        source.fetch(item(file_id))


def test_a_failed_download_is_dependency_failed(server: GraphServer) -> None:
    file_id = server.put("/Docs/a.txt", "alpha")
    source = make(server)
    source.permissions(item(file_id))
    server.fault(302)  # a redirect without a Location
    with pytest.raises(errors.DependencyFailed):
        source.fetch(item(file_id))


# -- readers -------------------------------------------------------------------------------------------
LINK_SOON_GONE = {**organization_link(), "expirationDateTime": "2001-01-01T00:00:00Z"}
LINK_LASTING = {**organization_link(), "expirationDateTime": "2999-01-01T00:00:00Z"}
EVERYONE_CLAIM = {
    "roles": ["read"],
    "grantedToV2": {"siteUser": {"id": "9", "displayName": "Everyone except external users",
                                 "loginName": "c:0-.f|rolemanager|spo-grid-all-users/1f2e"}},
}  # fmt: skip
MEMBER = {
    "roles": ["write"],
    "grantedToV2": {"siteUser": {"id": "4", "loginName": "i:0#.f|membership|bo@x.com"}},
}
CLAIMED_GROUPS = [
    {"roles": ["read"], "grantedToV2": {"siteUser": {"id": "5", "loginName": "c:0t.c|tenant|9a8b-sec"}}},
    {
        "roles": ["owner"],
        "grantedToV2": {
            "siteUser": {"id": "6", "loginName": "c:0o.c|federateddirectoryclaimprovider|7c6d-m365_o"}
        },
    },
]


@pytest.mark.parametrize(
    ("grants", "access"),
    [
        ([organization_link()], EVERYONE),
        ([anonymous_link()], EVERYONE),
        ([user_grant("ana@x.com"), anonymous_link("write")], EVERYONE),
        ([EVERYONE_CLAIM], EVERYONE),
        ([LINK_LASTING], EVERYONE),
        ([LINK_SOON_GONE], ItemAccess.only()),
        ([users_link("ana@x.com", "bo@x.com")], ItemAccess.only(users=["ana@x.com", "bo@x.com"])),
        ([user_grant("ana@x.com", role="owner"), user_grant("cy@x.com", role="write")],
         ItemAccess.only(users=["ana@x.com", "cy@x.com"])),
        ([user_grant(None, object_id="0a1b-oid")], ItemAccess.only(users=["0a1b-oid"])),
        ([MEMBER], ItemAccess.only(users=["bo@x.com"])),
        (CLAIMED_GROUPS, ItemAccess.only(groups=["9a8b-sec", "7c6d-m365"])),
        ([group_grant("5e6f-gid", "Finance")], ItemAccess.only(groups=["5e6f-gid"])),
        ([site_group_grant("Site Owners")], ItemAccess.only(groups=["sharepoint:Site Owners"])),
        ([site_group_grant("Finance, Legal"), user_grant("ana@x.com")], ItemAccess.only(users=["ana@x.com"])),
        ([{"roles": ["read"], "link": {"scope": "existingAccess", "type": "view"}}], ItemAccess.only()),
        ([{**user_grant("ana@x.com"), "roles": []}], ItemAccess.only()),
        ([], ItemAccess.only()),
    ],
)  # fmt: skip
def test_readers_come_from_the_files_permissions(
    server: GraphServer, grants: list[dict[str, Any]], access: ItemAccess
) -> None:
    file_id = server.put("/Docs/a.txt", "alpha", perms=grants)
    assert make(server).permissions(item(file_id)) == access


def test_readers_inherit_from_the_folder_across_pages_of_permissions(server: GraphServer) -> None:
    server.mkdir("/Docs/Team", perms=[user_grant(f"u{i}@x.com") for i in range(5)] + [group_grant("g1")])
    file_id = server.put("/Docs/Team/a.txt", "alpha")
    access = make(server).permissions(item(file_id))
    assert access == ItemAccess.only(users=[f"u{i}@x.com" for i in range(5)], groups=["g1"])
    assert server.requests["permissions"] == 3  # two a page


def test_a_file_naming_more_readers_than_a_document_carries_is_read_by_no_one(server: GraphServer) -> None:
    server.permissions_page_size = 500
    file_id = server.put("/Docs/a.txt", "alpha", perms=[user_grant(f"u{i}@x.com") for i in range(101)])
    assert make(server).permissions(item(file_id)) == ItemAccess.only()


def test_a_file_gone_is_read_by_no_one(server: GraphServer) -> None:
    file_id = server.put("/Docs/a.txt", "alpha")
    server.delete(file_id)
    assert make(server).permissions(item(file_id)) == ItemAccess.only()


def test_the_version_falls_back_to_a_content_hash_without_ctag(server: GraphServer) -> None:
    file_id = server.put("/Docs/a.txt", "alpha")

    def without_ctag(method: str, url: str, **kwargs: Any) -> outbound.Response:
        response = outbound.request(method, url, **kwargs)
        if "/root/delta" in url and response.status == 200:
            body = json.loads(response.body)
            for value in body["value"]:
                value.pop("cTag", None)
            return response._replace(body=json.dumps(body).encode())
        return response

    found = changes(listing(make(server, fetch=without_ctag))[0])[file_id]
    assert found.item is not None and found.item.version.startswith("quickXorHash:")
