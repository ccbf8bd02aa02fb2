"""Ids and periods in requests are validated whole: ``"docs\\n"`` no longer creates a namespace, and a
usage period is ``YYYY-MM`` in ASCII digits with a real month."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.config import Settings
from ragline.wiring import Container
from tests.support.lambda_harness import call_rest, load_handler, operator

pytestmark = pytest.mark.unit
NAMESPACES = load_handler("namespaces")
KEYS = load_handler("keys")


@pytest.fixture
def container(tmp_path: Path) -> Container:
    return Container(Settings(home=tmp_path))


@pytest.mark.parametrize("namespace_id", ["docs\n", "docs\r\n", "docs\x00", "d" * 129])
def test_a_namespace_id_with_a_trailing_newline_or_control_character_is_a_400(
    container: Container, namespace_id: str
) -> None:
    status, body = call_rest(
        NAMESPACES, container, "POST", "/v1/namespaces", resource="/v1/namespaces",
        authorizer=operator("acme"), body={"namespaceId": namespace_id},
    )  # fmt: skip
    assert status == 400 and body["error"]["code"] == "invalid_request"
    listed = call_rest(
        NAMESPACES, container, "GET", "/v1/namespaces", resource="/v1/namespaces", authorizer=operator("acme")
    )[1]
    assert listed["namespaces"] == []


def test_a_well_formed_namespace_id_is_created(container: Container) -> None:
    status, body = call_rest(
        NAMESPACES, container, "POST", "/v1/namespaces", resource="/v1/namespaces",
        authorizer=operator("acme"), body={"namespaceId": "docs-2026.v1"},
    )  # fmt: skip
    assert status == 201 and body["namespaceId"] == "docs-2026.v1"


@pytest.mark.parametrize(
    ("period", "status"),
    [("2026-03", 200), ("2026-03\n", 400), ("٢٠٢٦-٠٣", 400), ("2026-13", 400), ("2026-00", 400)],
    ids=["valid", "trailing-newline", "arabic-indic-digits", "month-13", "month-0"],
)
def test_a_usage_period_is_yyyy_mm_in_ascii_digits(container: Container, period: str, status: int) -> None:
    got, body = call_rest(
        KEYS, container, "GET", "/v1/usage", resource="/v1/usage",
        authorizer=operator("acme"), query={"period": period},
    )  # fmt: skip
    assert got == status, body
