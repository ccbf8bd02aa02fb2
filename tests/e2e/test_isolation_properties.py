"""Tenant isolation as a property, at scale (issue 12 #6): thousands of generated requests in CI.

Hypothesis picks a key (another tenant's admin, an allow-listed reader of the same tenant), a route and
the namespace and document it names — existing, the other tenant's, outside the allow-list, or made up —
and every answer must hold: no 5xx, every 4xx in the one error shape, a namespace the key may not read
answers exactly like a missing one, and no body ever carries text the key may not read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import examples_at_scale
from tests.e2e.test_isolation import NAMESPACE_ROUTES, Api, fill

pytestmark = pytest.mark.e2e
SECRETS = {
    "globex_admin": ["Acme rocket plans.", "Acme payroll."],  # another tenant's text
    "acme_reader": ["Acme payroll."],  # its own tenant's namespace outside its allow-list
}
NAMES = st.sampled_from(["docs", "private", "ghost", "acme", "globex"]) | st.from_regex(
    r"[a-z][a-z0-9-]{0,20}", fullmatch=True
)
READER_ROUTES = {("search", "POST"), ("documents", "GET"), ("namespaces", "GET"), ("chat", "POST")}
"""Routes the reader's scopes (chat, search) allow: there only the namespace can refuse it."""
DOCS = st.sampled_from(["acme-docs.txt", "acme-private.txt", "globex-docs.txt", "nope.txt"])


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield Api(tmp_path_factory.mktemp("iso-props"))


def one_shape(body: Any) -> bool:
    return (
        isinstance(body, dict)
        and set(body) == {"error"}
        and {"code", "message", "details"} <= set(body["error"])
    )


@settings(
    max_examples=examples_at_scale(),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    key=st.sampled_from(sorted(SECRETS)),
    route=st.sampled_from(NAMESPACE_ROUTES),
    namespace=NAMES,
    document=DOCS,
)
def test_no_request_crosses_a_boundary(
    api: Api, key: str, route: tuple[str, str, str, str, Any], namespace: str, document: str
) -> None:
    fn, method, path, resource, body = route
    path = path.replace("acme-private.txt", document).replace("{namespace}", namespace)
    status, payload = api.call(api.keys[key], fn, method, path, resource, fill(body, namespace))
    assert status < 500, (status, payload)
    if status >= 400:
        assert one_shape(payload), payload
    text = json.dumps(payload)
    for secret in SECRETS[key]:
        assert secret not in text, (key, fn, method, path, payload)
    if key == "acme_reader" and namespace != "docs" and (fn, method) in READER_ROUTES:
        # outside its allow-list, on a route its scopes allow: the answer for a missing namespace
        assert status == 404, (status, payload)
        if fn != "chat":
            assert payload["error"] == {
                "code": "namespace_not_found",
                "message": f"namespace {namespace!r} does not exist",
                "details": {"namespace": namespace},
            }


def test_the_ci_profile_runs_at_scale() -> None:
    assert examples_at_scale() >= 150
