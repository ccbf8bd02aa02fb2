"""``/v1/webhooks`` on the keys function: per tenant, admin-only, the secret shown once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragline.config import Settings
from ragline.wiring import Container
from tests.support.lambda_harness import authorizer_context, call_rest, load_handler

pytestmark = pytest.mark.unit
HANDLER = load_handler("keys")
URL = "https://hooks.example.com/ragline"


@pytest.fixture
def container(tmp_path: Path) -> Container:
    return Container(Settings(home=tmp_path))


def call(
    c: Container,
    method: str,
    path: str,
    body: Any = None,
    tenant: str = "acme",
    scopes: str = "admin",
    namespaces: str = "",
) -> tuple[int, Any]:
    parts = path.split("/")
    resource = (
        "/v1/webhooks"
        + ("/{webhook_id}" if len(parts) > 3 else "")
        + ("/rotate-secret" if len(parts) > 4 else "")
    )
    auth = authorizer_context(tenant, scopes=scopes, namespaces=namespaces)
    return call_rest(HANDLER, c, method, path, resource=resource, authorizer=auth, body=body)  # fmt: skip


def test_create_list_get_rotate_delete(container: Container) -> None:
    status, made = call(container, "POST", "/v1/webhooks", {"url": URL, "eventTypes": ["document.failed"]})
    assert status == 201, made
    assert made["secret"].startswith("whsec_") and made["eventTypes"] == ["document.failed"]
    hook = made["webhookId"]
    status, listed = call(container, "GET", "/v1/webhooks")
    assert status == 200 and [w["webhookId"] for w in listed["webhooks"]] == [hook]
    assert "secret" not in listed["webhooks"][0]
    status, got = call(container, "GET", f"/v1/webhooks/{hook}")
    assert status == 200 and got["url"] == URL and "secret" not in got
    status, rotated = call(container, "POST", f"/v1/webhooks/{hook}/rotate-secret")
    assert status == 200 and rotated["secret"] != made["secret"]
    assert container.webhook_store.get("acme", hook).secret == rotated["secret"]
    status, gone = call(container, "DELETE", f"/v1/webhooks/{hook}")
    assert status == 200 and gone["webhookId"] == hook
    assert call(container, "GET", f"/v1/webhooks/{hook}")[0] == 404


def test_another_tenant_cannot_see_or_delete_it(container: Container) -> None:
    _, made = call(container, "POST", "/v1/webhooks", {"url": URL})
    hook = made["webhookId"]
    assert call(container, "GET", "/v1/webhooks", tenant="globex")[1] == {"webhooks": []}
    assert call(container, "GET", f"/v1/webhooks/{hook}", tenant="globex")[0] == 404
    assert call(container, "DELETE", f"/v1/webhooks/{hook}", tenant="globex")[0] == 404
    assert call(container, "POST", f"/v1/webhooks/{hook}/rotate-secret", tenant="globex")[0] == 404


@pytest.mark.parametrize(
    ("scopes", "namespaces"), [("search,ingest", ""), ("admin", "docs")], ids=["not admin", "allow-list"]
)
def test_only_a_tenant_wide_admin_key(container: Container, scopes: str, namespaces: str) -> None:
    status, body = call(container, "POST", "/v1/webhooks", {"url": URL}, scopes=scopes, namespaces=namespaces)
    assert status == 403, body


@pytest.mark.parametrize(
    "body",
    [
        {"url": "http://hooks.example.com/x"},
        {"url": "https://169.254.169.254/latest"},
        {"url": "http://127.0.0.1:9000/x"},
        {"url": URL, "eventTypes": ["document.created"]},
        {"url": URL, "secret": "mine"},
    ],
    ids=["http", "link-local", "loopback not allowed", "unknown type", "unknown field"],
)
def test_bad_subscriptions_are_refused(container: Container, body: dict[str, Any]) -> None:
    status, answer = call(container, "POST", "/v1/webhooks", body)
    assert status == 400 and answer["error"]["code"] == "invalid_request", answer
    assert container.webhook_store.list("acme") == []
