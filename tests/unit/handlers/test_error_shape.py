"""Every answer the REST handlers and the chat app give to a request they cannot serve is the one
JSON error shape with the right status: bodies nested to overflow the parser, bodies that are not
UTF-8 or not JSON, odd characters in path parameters, unknown routes and wrong methods."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ragline.cli.serve import REST_ROUTES, LambdaContext, gateway_event
from ragline.config import Settings
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.error_bodies import NOT_UTF8, TOO_DEEP, not_json
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import (
    authorizer_context,
    chat_client,
    chat_headers,
    load_handler,
    path_parameters,
)

pytestmark = pytest.mark.unit
HANDLERS = {name: load_handler(name) for name in REST_ROUTES}
CHAT = load_handler("chat")
CALLER = authorizer_context("acme")

BODY_ROUTES = [
    ("search", "POST", "/v1/namespaces/docs/search", {"query": "pump"}),
    ("documents", "POST", "/v1/namespaces/docs/documents", {"filename": "a.txt", "text": "Prime it."}),
    ("namespaces", "POST", "/v1/namespaces", {"namespaceId": "more"}),
    ("namespaces", "PATCH", "/v1/namespaces/docs", {"description": "pumps"}),
    ("keys", "POST", "/v1/keys", {"name": "ci", "scopes": ["search"]}),
]
"""Every REST route that reads a body, with a body it accepts."""
BODY_IDS = [f"{method} {name}" for name, method, _, _ in BODY_ROUTES]

DEEP_BODIES = {
    "open arrays": "[" * 100_000,
    "open objects": '{"a":' * 100_000,
    "closed arrays": "[" * 33 + "]" * 33,
    "deep field": '{"query": ' + "[" * 40 + "]" * 40 + "}",
}


def no_route(method: str, path: str) -> dict[str, Any]:
    return {
        "error": {
            "code": "not_found",
            "message": "no such route",
            "details": {"method": method, "path": path},
        }
    }


def not_allowed(method: str, allowed: list[str]) -> dict[str, Any]:
    return {
        "error": {
            "code": "method_not_allowed",
            "message": f"{method} is not allowed here",
            "details": {"allowed": allowed},
        }
    }


def assert_one_shape(body: Any, *codes: str) -> None:
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "details"}, body
    assert error["code"] in codes and isinstance(error["message"], str) and error["message"], body
    assert isinstance(error["details"], dict), body


@pytest.fixture
def container(tmp_path: Path) -> Container:
    c = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    c.registry.create_namespace(new_namespace("acme", "docs"))
    return c


def send(
    container: Container,
    name: str,
    method: str,
    path: str,
    body: str | bytes | None = None,
    content_type: str | None = "application/json",
) -> tuple[int, dict[str, str], Any]:
    """One API Gateway proxy event through handler ``name``, as AWS delivers it: a ``bytes`` body
    arrives base64-encoded (a binary media type), a ``str`` body as text."""
    resource = next((r for r, _ in REST_ROUTES[name] if r == path or path_parameters(r, path)), path)
    event = gateway_event(
        method,
        path,
        resource=resource,
        path_parameters=path_parameters(resource, path),
        authorizer=CALLER,
        body=base64.b64encode(body).decode() if isinstance(body, bytes) else body,
    )
    event["isBase64Encoded"] = isinstance(body, bytes)
    del event["headers"]["content-type"]
    if content_type is not None:
        event["headers"]["Content-Type"] = content_type
    result = HANDLERS[name].lambda_handler(event, LambdaContext(), container=container)
    headers = {k: ", ".join(v) for k, v in result["multiValueHeaders"].items()}
    return result["statusCode"], headers, json.loads(result["body"])


# -- deep JSON ------------------------------------------------------------------------------------


@pytest.mark.parametrize("deep", DEEP_BODIES.values(), ids=DEEP_BODIES.keys())
@pytest.mark.parametrize(("name", "method", "path", "_"), BODY_ROUTES, ids=BODY_IDS)
def test_deep_json_is_a_400_not_a_crash(
    container: Container, name: str, method: str, path: str, _: Any, deep: str
) -> None:
    # Given a body nested deeper than the bound (deep enough to overflow a recursive parser)
    # When it reaches a handler that reads a body
    status, headers, body = send(container, name, method, path, deep)
    # Then the answer is a 400 in the one shape, as JSON
    assert (status, body) == (400, TOO_DEEP)
    assert headers["Content-Type"] == "application/json"


def test_brackets_inside_strings_do_not_count_as_nesting(container: Container) -> None:
    # Given bodies whose strings hold many brackets (and escaped quotes) but that nest two levels
    query = json.dumps({"query": '[{"[' * 500 + '\\"]'})
    text = json.dumps({"filename": "b.md", "text": "[[{{ " * 1000})
    # When they are sent, Then they are served
    assert send(container, "search", "POST", "/v1/namespaces/docs/search", query)[0] == 200
    assert send(container, "documents", "POST", "/v1/namespaces/docs/documents", text)[0] == 201


# -- bodies that are not UTF-8 -------------------------------------------------------------------


@pytest.mark.parametrize("delivery", ["base64", "text"])
@pytest.mark.parametrize(("name", "method", "path", "good"), BODY_ROUTES, ids=BODY_IDS)
def test_a_body_that_is_not_utf8_is_a_400(
    container: Container, name: str, method: str, path: str, good: dict[str, Any], delivery: str
) -> None:
    # Given a JSON body whose first string value is Latin-1, not UTF-8
    key = next(k for k, v in good.items() if isinstance(v, str))
    raw = json.dumps({**good, key: "caf\xe9"}, ensure_ascii=False).encode("latin-1")
    # When API Gateway delivers it: base64 for a binary media type, else as text with U+FFFD for
    # each byte that is not UTF-8 (the API declares no binary media types)
    sent = raw if delivery == "base64" else raw.decode("utf-8", errors="replace")
    status, _, body = send(container, name, method, path, sent)
    # Then it is refused as not UTF-8, in the one shape
    assert (status, body) == (400, NOT_UTF8)


def test_an_escaped_replacement_character_is_text_like_any_other(container: Container) -> None:
    # Given a body that means U+FFFD and says so with the JSON escape (json.dumps's default)
    body = json.dumps({"query": "caf\ufffd"})
    # When it is sent, Then it is served
    assert send(container, "search", "POST", "/v1/namespaces/docs/search", body)[0] == 200


# -- content types --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain; charset=utf-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=b",
    ],
)
@pytest.mark.parametrize(("name", "method", "path", "good"), BODY_ROUTES, ids=BODY_IDS)
def test_a_body_declared_as_something_else_than_json_is_a_415(
    container: Container, name: str, method: str, path: str, good: dict[str, Any], content_type: str
) -> None:
    # Given a valid JSON body sent with another Content-Type
    status, _, body = send(container, name, method, path, json.dumps(good), content_type=content_type)
    # Then the handler does not guess: 415 in the one shape, naming the media type it got
    assert (status, body) == (415, not_json(content_type.split(";", maxsplit=1)[0]))


@pytest.mark.parametrize(
    "content_type",
    [None, "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"],
)
def test_json_or_no_content_type_is_read_as_json(container: Container, content_type: str | None) -> None:
    # Given a JSON body with no Content-Type, or a JSON one in any spelling
    body = json.dumps({"description": "pumps"})
    # When it is sent, Then it is read as JSON
    status, _, view = send(container, "namespaces", "PATCH", "/v1/namespaces/docs", body, content_type)
    assert status == 200 and view["description"] == "pumps"


def test_a_route_without_a_body_ignores_the_content_type(container: Container) -> None:
    status, _, body = send(container, "namespaces", "GET", "/v1/namespaces/docs", content_type="text/plain")
    assert status == 200 and body["namespaceId"] == "docs"


# -- paths ----------------------------------------------------------------------------------------

ODD_SEGMENTS = [
    "a%2Fb",
    "%2F..%2F..%2Fetc",
    "a%00b",
    "%C3%A9",
    "é",
    "%FF",
    "a%22b",
    "a b",
    "☃",
    'a"b',
    "a\\b",
]
"""Percent-encoded slashes, NUL and bytes that are not UTF-8, unicode raw and encoded, characters
Powertools' route patterns do not match (``☃``, ``"``, ``\\``)."""
PATH_FAMILIES = [
    ("namespaces", "GET", "/v1/namespaces/{}"),
    ("namespaces", "DELETE", "/v1/namespaces/{}"),
    ("search", "POST", "/v1/namespaces/{}/search"),
    ("documents", "GET", "/v1/namespaces/{}/documents"),
    ("documents", "GET", "/v1/namespaces/docs/documents/{}"),
    ("documents", "DELETE", "/v1/namespaces/docs/documents/{}"),
    ("keys", "DELETE", "/v1/keys/{}"),
]


@pytest.mark.parametrize("segment", ODD_SEGMENTS)
@pytest.mark.parametrize(
    ("name", "method", "template"), PATH_FAMILIES, ids=[f"{m} {t}" for _, m, t in PATH_FAMILIES]
)
def test_odd_path_characters_are_a_404_in_the_one_shape(
    container: Container, name: str, method: str, template: str, segment: str
) -> None:
    # Given a path parameter with characters no namespace, document or key id has
    body = json.dumps({"query": "pump"}) if method == "POST" else None
    # When it reaches the handler
    status, headers, answer = send(container, name, method, template.format(segment), body)
    # Then nothing by that name exists (or no route has such a path): 404, in the one shape
    assert status == 404 and headers["Content-Type"] == "application/json"
    assert_one_shape(answer, "not_found", "namespace_not_found")


@pytest.mark.parametrize("name", list(REST_ROUTES))
@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/v1/nope"), ("POST", "/v1/namespaces/docs/nope"), ("GET", "/")]
)
def test_an_unknown_route_is_a_404_in_the_one_shape(
    container: Container, name: str, method: str, path: str
) -> None:
    status, _, body = send(container, name, method, path, "{}" if method == "POST" else None)
    assert (status, body) == (404, no_route(method, path))


@pytest.mark.parametrize(
    ("name", "method", "path", "allowed"),
    [
        ("search", "GET", "/v1/namespaces/docs/search", ["POST"]),
        ("namespaces", "PUT", "/v1/namespaces/docs", ["DELETE", "GET", "PATCH"]),
        ("namespaces", "DELETE", "/v1/namespaces", ["GET", "POST"]),
        ("documents", "PATCH", "/v1/namespaces/docs/documents", ["GET", "POST"]),
        ("documents", "POST", "/v1/namespaces/docs/documents/a.txt", ["DELETE", "GET", "PATCH"]),
        ("keys", "GET", "/v1/keys/key_1", ["DELETE"]),
        ("keys", "POST", "/v1/usage", ["GET"]),
    ],
)
def test_a_known_path_with_another_method_is_a_405_that_says_which_are_allowed(
    container: Container, name: str, method: str, path: str, allowed: list[str]
) -> None:
    status, headers, body = send(container, name, method, path, "{}")
    assert (status, body) == (405, not_allowed(method, allowed))
    assert headers["Allow"] == ", ".join(allowed)


# -- the chat app ---------------------------------------------------------------------------------

CHAT_HEADERS = chat_headers(CALLER)


@pytest.mark.parametrize("deep", DEEP_BODIES.values(), ids=DEEP_BODIES.keys())
def test_chat_refuses_deep_json_with_a_400(container: Container, deep: str) -> None:
    with chat_client(CHAT, container) as client:
        resp = client.post(
            "/v1/chat", content=deep, headers={**CHAT_HEADERS, "content-type": "application/json"}
        )
    assert (resp.status_code, resp.json()) == (400, TOO_DEEP)


@pytest.mark.parametrize("delivery", ["bytes", "replaced"])
def test_chat_refuses_a_body_that_is_not_utf8_with_a_400(container: Container, delivery: str) -> None:
    # Given a chat body in Latin-1: raw bytes (ragline serve, a binary media type) or as the gateway
    # and the Web Adapter forward it (U+FFFD for each bad byte, re-encoded as UTF-8)
    raw = '{"messages": [{"role": "user", "content": "caf\xe9"}], "stream": false}'.encode("latin-1")
    sent = raw if delivery == "bytes" else raw.decode("utf-8", errors="replace").encode()
    with chat_client(CHAT, container) as client:
        resp = client.post(
            "/v1/chat", content=sent, headers={**CHAT_HEADERS, "content-type": "application/json"}
        )
    assert (resp.status_code, resp.json()) == (400, NOT_UTF8)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_chat_refuses_a_body_that_is_not_json_with_a_415(container: Container, content_type: str) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "stream": False})
    with chat_client(CHAT, container) as client:
        resp = client.post("/v1/chat", content=body, headers={**CHAT_HEADERS, "content-type": content_type})
    assert (resp.status_code, resp.json()) == (415, not_json(content_type))


def test_chat_reads_a_body_without_content_type_as_json(container: Container) -> None:
    # Given a body that is JSON but not a valid chat request, sent without a Content-Type
    with chat_client(CHAT, container) as client:
        resp = client.post("/v1/chat", content=b'{"messages": []}', headers=CHAT_HEADERS)
    # Then it was parsed: the model's validation answers, not the media type check
    assert resp.status_code == 400 and resp.json()["error"]["details"]["problems"][0]["loc"] == ["messages"]


def test_chat_answers_unknown_routes_and_methods_in_the_one_shape(container: Container) -> None:
    with chat_client(CHAT, container) as client:
        unknown = client.get("/v1/nope", headers=CHAT_HEADERS)
        wrong = client.get("/v1/chat", headers=CHAT_HEADERS)
    assert (unknown.status_code, unknown.json()) == (404, no_route("GET", "/v1/nope"))
    assert (wrong.status_code, wrong.json()) == (405, not_allowed("GET", ["POST"]))
    assert wrong.headers["allow"] == "POST"


def test_a_deep_gateway_context_is_no_context_not_a_crash(container: Container) -> None:
    # Given a request context header nested to overflow a recursive parser
    headers = {"x-amzn-request-context": "[" * 100_000, "content-type": "application/json"}
    with chat_client(CHAT, container) as client:
        resp = client.post("/v1/chat", content=b'{"messages": []}', headers=headers)
    # Then there is no caller: 401 in the one shape (not a 500)
    assert resp.status_code == 401
    assert_one_shape(resp.json(), "unauthorized")
