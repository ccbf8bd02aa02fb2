"""``ragline sources``: add a website, sync it here, sync again after a change, remove it — with the
shipped offline models, against a site on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.config import Settings
from ragline.domain.api import SearchRequest
from ragline.services.authentication import Principal
from ragline.wiring import Container
from tests.e2e.test_cli import cli
from tests.support.web_site import Site, html, three_page_site

pytestmark = pytest.mark.e2e


@pytest.fixture
def site() -> Iterator[Site]:
    s = three_page_site()
    yield s
    s.close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGLINE_SOURCE_LOOPBACK_HTTP", "1")
    assert cli("tenants", "create", "acme", "--home", str(tmp_path))[0] == 0
    code, out = cli("namespaces", "create", "docs", "--tenant", "acme", "--home", str(tmp_path))
    assert code == 0, out
    return tmp_path


def _json(out: str) -> dict[str, object]:
    start = out.index("{")
    value: dict[str, object] = json.loads(out[start:])
    return value


def _search(home: Path, text: str) -> list[str]:
    c = Container(Settings(home=home))
    try:
        hits = c.search.search(Principal.operator("acme"), "docs", SearchRequest(query=text, k=3)).hits
        return [h.source for h in hits]
    finally:
        c.close()


def test_a_website_is_added_synced_resynced_and_removed(site: Site, home: Path) -> None:
    code, out = cli(
        "sources", "add", "docs", "--tenant", "acme", "--seed", f"{site.url}/", "--home", str(home)
    )
    assert code == 0, out
    view = _json(out)
    assert view["status"] == "idle" and view["counts"]["indexed"] == 3  # type: ignore[index]
    assert _search(home, "how fast does the pump run")[0] == f"{site.url}/pump.html"  # its own name

    site.put("/valve.html", html("valve", "open the bypass first, then close the relief valve"))
    site.drop("/pump.html")
    source = str(view["sourceId"])
    code, out = cli("sources", "sync", "docs", source, "--tenant", "acme", "--home", str(home))
    assert code == 0, out
    counts = _json(out)["counts"]
    assert (counts["indexed"], counts["deleted"], counts["unchanged"]) == (1, 1, 1)  # type: ignore[index]

    code, out = cli("sources", "list", "docs", "--tenant", "acme", "--home", str(home))
    assert [s["sourceId"] for s in _json(out)["sources"]] == [source]  # type: ignore[union-attr]

    code, out = cli("sources", "remove", "docs", source, "--tenant", "acme", "--home", str(home))
    assert code == 0, out
    c = Container(Settings(home=home))
    try:
        assert [r for r in c.documents.list("acme", "docs") if r.status != "deleted"] == []
        assert c.sources.list("acme", "docs") == []
    finally:
        c.close()


def test_bad_settings_and_credentials_are_refused_without_a_traceback(
    site: Site, home: Path, tmp_path: Path
) -> None:
    code, out = cli(
        "sources", "add", "docs", "--tenant", "acme", "--seed", "ftp://example.com/", "--home", str(home)
    )
    assert code == 2 and "invalid_request" in out and "Traceback" not in out
    secret = tmp_path / "creds.json"
    secret.write_text(json.dumps({"apiToken": "s3cret"}))
    code, out = cli(
        "sources", "add", "docs", "--tenant", "acme", "--seed", f"{site.url}/", "--credentials", str(secret),
        "--home", str(home),
    )  # fmt: skip
    assert code == 2 and "takes no credentials" in out and "s3cret" not in out
    code, out = cli(
        "sources", "show", "docs", "src_0000000000000000", "--tenant", "acme", "--home", str(home)
    )
    assert code == 2 and "not_found" in out
