"""Schemathesis against ``ragline serve`` (its ASGI app, ``--api-keys``), every operation of the
generated OpenAPI document, valid keys of two tenants: no 5xx, every answer conforming to the document
(so every 4xx is the one error shape), and no answer carrying the other tenant's ids."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from ragline.adapters.embedded.step_queue import InlineStepQueue
from ragline.cli.serve import build_app
from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
TENANTS = {
    "alpha": ("alphadocs", "alphanote.txt", "Alpha aardvark notes: the warranty lasts ten years."),
    "beta": ("betasecretns", "betazebrafile.txt", "Beta platinum zebra: the warranty lasts forever."),
}
"""Per tenant: a namespace, a document and its text, each with words no other tenant holds."""
EXAMPLES = 20
"""Generated cases per operation (each sent with both tenants' keys): fits the CI budget."""
KEYS: dict[str, str] = {}
LOCAL = "http://localhost"
REQUESTS: list[int] = []


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    # Queued steps are kept, not run: a generated data source names made-up hosts, and its sync must
    # not look them up (network tests reach 127.0.0.1 only); a generated reindex stays "building".
    container = Container(Settings(home=tmp_path_factory.mktemp("home")), step_queue=InlineStepQueue())
    for tenant, (namespace, filename, text) in TENANTS.items():
        container.tenancy.create_tenant(tenant)
        container.registry.create_namespace(new_namespace(tenant, namespace, default=True))
        container.ingest.ingest(
            TenantScope(tenant_id=tenant, namespace_id=namespace), filename=filename, data=text.encode()
        )
        KEYS[tenant], _ = container.tenancy.create_key(tenant, scopes=["chat", "search", "ingest", "admin"])
    app = build_app(ROOT / "functions", "alpha", container, api_keys=True)
    # `ragline serve` answers only loopback names (DNS rebinding): address it as localhost, not schemathesis'
    # default "testserver"
    yield schemathesis.openapi.from_asgi("/openapi.json", app, headers={"Host": "localhost"})
    container.close()
    print(f"\nschemathesis: {len(REQUESTS)} requests, {sum(1 for s in REQUESTS if s >= 500)} answered >= 500")


OPERATIONS = [
    (method.upper(), path)
    for path, item in json.loads((ROOT / "docs" / "openapi.json").read_text()).get("paths", {}).items()
    for method in item
]


def foreign_markers(tenant: str) -> list[str]:
    """What only the other tenant holds: its namespace, its document id and a word of its text."""
    return [
        m for other, (ns, doc, text) in TENANTS.items() if other != tenant for m in (ns, doc, text.split()[2])
    ]


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_every_operation_as_two_tenants(api: Any, method: str, path: str) -> None:
    operation = api[path][method]

    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    def check(case: Any) -> None:
        for tenant, key in KEYS.items():
            response = case.call(base_url=LOCAL, headers={"Authorization": f"Bearer {key}"})
            REQUESTS.append(response.status_code)
            assert "addressed to localhost" not in response.text, "the fuzzer never reached a route"
            assert response.status_code < 500, response.text[:500]
            # Every check but "a schema-valid request is accepted": the API has rules a schema cannot
            # say (the last user message must not be blank, a namespace must exist), answered as 400/404.
            case.validate_response(response, excluded_checks=[positive_data_acceptance])
            if response.status_code >= 400:
                body = response.json()
                assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
            text = response.text.lower()
            for marker in foreign_markers(tenant):
                assert marker.lower() not in text, (tenant, marker, text[:300])

    check()
