"""``ragline serve``'s app: the real handlers (chat, search, documents) on the embedded backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from ragline.cli.app import app as cli
from ragline.cli.serve import build_app
from ragline.config import load_settings

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    home = tmp_path / "home"
    result = CliRunner().invoke(
        cli,
        ["ingest", str(ROOT / "samples" / "northwind"), "-n", "northwind", "--create", "--home", str(home)],
    )
    assert result.exit_code == 0, result.output
    monkeypatch.setenv("RAGLINE_HOME", str(home))
    load_settings.cache_clear()
    with TestClient(build_app(ROOT / "functions", "local")) as c:
        yield c
    load_settings.cache_clear()


def test_search_documents_and_chat_routes_answer(client: TestClient) -> None:
    hits = client.post("/v1/namespaces/northwind/search", json={"query": "tyre pressure", "k": 3})
    assert hits.status_code == 200 and "maintenance-guide.html" in hits.json()["hits"][0]["id"]
    docs = client.get("/v1/namespaces/northwind/documents")
    assert docs.status_code == 200 and len(docs.json()["documents"]) == 7
    chat = client.post(
        "/v1/chat",
        json={
            "messages": [{"role": "user", "content": "Which store has a workshop?"}],
            "namespaces": ["northwind"],
            "stream": False,
        },
    )
    assert chat.status_code == 200 and "Leeds" in chat.json()["answer"]
    missing = client.post("/v1/namespaces/nope/search", json={"query": "x"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "namespace_not_found"
