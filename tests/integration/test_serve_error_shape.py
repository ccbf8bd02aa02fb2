"""``ragline serve`` answers every request it cannot serve in the one JSON error shape, with the
right status, from the real handlers behind its Starlette app: deep JSON, bodies that are not UTF-8
or not JSON, odd path characters, unknown routes and wrong methods — REST routes and chat alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from ragline.cli.serve import build_app
from ragline.config import Settings
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.error_bodies import NOT_UTF8, TOO_DEEP, not_json
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.integration
FUNCTIONS = Path(__file__).parents[2] / "functions"
JSON = {"content-type": "application/json"}

BODY_ROUTES = [
    ("POST", "/v1/chat", {"messages": [{"role": "user", "content": "hi"}], "stream": False}),
    ("POST", "/v1/namespaces/docs/search", {"query": "pump"}),
    ("POST", "/v1/namespaces/docs/documents", {"filename": "a.txt", "text": "Prime it."}),
    ("POST", "/v1/namespaces", {"namespaceId": "more"}),
    ("PATCH", "/v1/namespaces/docs", {"description": "pumps"}),
    ("POST", "/v1/keys", {"name": "ci", "scopes": ["search"]}),
]
"""Every route that reads a body, chat included, with a body it accepts."""
BODY_IDS = [f"{method} {path}" for method, path, _ in BODY_ROUTES]


def assert_one_shape(body: Any, *codes: str) -> None:
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "details"}, body
    assert error["code"] in codes and isinstance(error["message"], str) and error["message"], body
    assert isinstance(error["details"], dict), body


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    container = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    container.tenancy.create_tenant("local")
    container.registry.create_namespace(new_namespace("local", "docs"))
    with TestClient(build_app(FUNCTIONS, "local", container), base_url="http://localhost") as c:
        yield c
    container.close()


@pytest.mark.parametrize("deep", ["[" * 100_000, '{"a":' * 100_000], ids=["arrays", "objects"])
@pytest.mark.parametrize(("method", "path", "_"), BODY_ROUTES, ids=BODY_IDS)
def test_deep_json_is_a_400_in_the_one_shape(
    client: TestClient, method: str, path: str, _: Any, deep: str
) -> None:
    resp = client.request(method, path, content=deep, headers=JSON)
    assert (resp.status_code, resp.json()) == (400, TOO_DEEP)
    assert resp.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(("method", "path", "good"), BODY_ROUTES, ids=BODY_IDS)
def test_a_body_that_is_not_utf8_is_a_400_in_the_one_shape(
    client: TestClient, method: str, path: str, good: dict[str, Any]
) -> None:
    # Given a JSON body with a Latin-1 "é" in its first string value
    raw = json.dumps(good).replace(': "', ': "caf\xe9 ', 1).encode("latin-1")
    # When it is sent, Then it is refused as not UTF-8 (not a plain-text 500)
    resp = client.request(method, path, content=raw, headers=JSON)
    assert (resp.status_code, resp.json()) == (400, NOT_UTF8)


@pytest.mark.parametrize(("method", "path", "good"), BODY_ROUTES, ids=BODY_IDS)
def test_text_plain_is_a_415_and_no_content_type_is_json(
    client: TestClient, method: str, path: str, good: dict[str, Any]
) -> None:
    body = json.dumps(good).encode()
    # When a JSON body is declared text/plain, Then it is a 415 in the one shape
    resp = client.request(method, path, content=body, headers={"content-type": "text/plain"})
    assert (resp.status_code, resp.json()) == (415, not_json("text/plain"))
    # When it is sent with no Content-Type at all, Then it is read as JSON and served
    resp = client.request(method, path, content=body)
    assert resp.status_code in (200, 201), resp.text


def test_a_document_id_with_an_encoded_slash_is_one_path_segment(client: TestClient) -> None:
    # Given a document whose id holds a slash
    added = client.post(
        "/v1/namespaces/docs/documents", json={"filename": "notes/pump.md", "text": "Prime the pump."}
    )
    assert added.status_code == 201
    # When it is read and deleted with the slash percent-encoded, as clients must send it
    got = client.get("/v1/namespaces/docs/documents/notes%2Fpump.md")
    deleted = client.delete("/v1/namespaces/docs/documents/notes%2Fpump.md")
    # Then the route matches (the escape is not decoded into a second segment first)
    assert got.status_code == 200 and got.json()["documentId"] == "notes/pump.md"
    assert deleted.status_code == 200 and deleted.json()["status"] == "deleted"


ODD_SEGMENTS = ["a%2Fb", "%2F..%2F..%2Fetc", "a%00b", "%C3%A9", "%FF", "a%22b", "a%20b", "%E2%98%83", "a%5Cb"]
PATH_FAMILIES = [
    ("GET", "/v1/namespaces/{}"),
    ("DELETE", "/v1/namespaces/{}"),
    ("POST", "/v1/namespaces/{}/search"),
    ("GET", "/v1/namespaces/{}/documents"),
    ("GET", "/v1/namespaces/docs/documents/{}"),
    ("DELETE", "/v1/namespaces/docs/documents/{}"),
    ("DELETE", "/v1/keys/{}"),
    ("POST", "/v1/chat/{}"),
]


@pytest.mark.parametrize("segment", ODD_SEGMENTS)
@pytest.mark.parametrize(("method", "template"), PATH_FAMILIES, ids=[f"{m} {t}" for m, t in PATH_FAMILIES])
def test_odd_path_characters_are_a_404_in_the_one_shape(
    client: TestClient, method: str, template: str, segment: str
) -> None:
    body = {"query": "pump"} if method == "POST" else None
    resp = client.request(method, template.format(segment), json=body)
    assert resp.status_code == 404 and resp.headers["content-type"].startswith("application/json")
    assert_one_shape(resp.json(), "not_found", "namespace_not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/nope"),
        ("POST", "/v1/namespaces/docs/nope"),
        ("GET", "/index.html"),
        ("GET", "/v1/namespaces/docs/documents/a/b"),
    ],
)
def test_an_unknown_route_is_a_404_in_the_one_shape(client: TestClient, method: str, path: str) -> None:
    resp = client.request(method, path)
    assert resp.status_code == 404
    assert resp.json() == {
        "error": {
            "code": "not_found",
            "message": "no such route",
            "details": {"method": method, "path": path},
        }
    }


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("GET", "/v1/chat", ["POST"]),
        ("GET", "/v1/namespaces/docs/search", ["POST"]),
        ("PUT", "/v1/namespaces/docs", ["DELETE", "GET", "PATCH"]),
        ("DELETE", "/v1/namespaces", ["GET", "POST"]),
        ("PATCH", "/v1/namespaces/docs/documents", ["GET", "POST"]),
        ("POST", "/v1/keys/key_1", ["DELETE"]),
        ("POST", "/v1/usage", ["GET"]),
    ],
)
def test_a_known_path_with_another_method_is_a_405_in_the_one_shape(
    client: TestClient, method: str, path: str, allowed: list[str]
) -> None:
    resp = client.request(method, path)
    assert resp.status_code == 405 and resp.headers["allow"] == ", ".join(allowed)
    assert resp.json() == {
        "error": {
            "code": "method_not_allowed",
            "message": f"{method} is not allowed here",
            "details": {"allowed": allowed},
        }
    }
