"""Shared fixtures: the real services the suites run against."""

from __future__ import annotations

import os

import pytest

pytest_plugins = [
    "tests.support.dynamodb_stub",
    "tests.support.moto_server",
    "tests.support.openai_replay",
    "tests.support.bedrock_server",
    "tests.support.model_endpoints",
    "tests.support.textract_server",
]


@pytest.fixture(scope="session")
def opensearch_url() -> str:
    """The local OpenSearch node started by ``scripts/run-tests`` (``make test``).

    Missing is a failure, not a skip: a suite that silently skips its real backend proves nothing.
    """
    url = os.environ.get("RAGLINE_TEST_OPENSEARCH_URL", "")
    if not url:
        pytest.fail(
            "RAGLINE_TEST_OPENSEARCH_URL is not set: run the suite with `make test` (scripts/run-tests)"
        )
    return url


AT_SCALE = {"ci": 2000, "dev": 150}
"""Examples per property test run *at scale* (the isolation properties): ``make test`` sets
``RAGLINE_TEST_PROFILE=ci``; a bare ``pytest`` run is ``dev``."""


def examples_at_scale() -> int:
    return AT_SCALE[os.environ.get("RAGLINE_TEST_PROFILE", "dev")]
