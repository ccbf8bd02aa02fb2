"""Only the functions that use the store are given its URL, and so only they wait for it: a created
domain takes 15-30 minutes, and the authorizer, namespaces, keys and webhook delivery must not be
created after it (nor fail with it)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.modes import EXISTING, MODES, SERVERLESS, SERVERLESS_RESOURCES, STORE_USERS, functions
from tests.deploy.translated import StandInStack

pytestmark = pytest.mark.deploy

STORE = {"OpenSearchDomain", *SERVERLESS_RESOURCES}
"""What a function that never uses the store must not wait for."""
URL = {
    "created domain": "https://OpenSearchDomain.DomainEndpoint",
    "existing domain": EXISTING["OpenSearchEndpoint"],
    "serverless": "OpenSearchCollection.CollectionEndpoint",
}


@pytest.mark.parametrize("mode", MODES.keys())
def test_the_store_users_get_the_url_and_no_other_function_waits_for_the_store(
    translated: dict[str, Any], mode: str
) -> None:
    stack = StandInStack(translated, MODES[mode])
    others = set(functions(translated)) - set(STORE_USERS)
    assert {"AuthorizerFunction", "NamespacesFunction", "KeysFunction", "WebhookDeliveryFunction"} <= others
    for fn in STORE_USERS:
        assert stack.function(fn).environment["RAGLINE_OPENSEARCH_URL"] == URL[mode], fn
    for fn in others:
        assert "RAGLINE_OPENSEARCH_URL" not in stack.function(fn).environment, fn
        # Not through its environment, its role or a DependsOn, at any remove
        assert not stack.dependencies(fn) & STORE, (fn, stack.dependencies(fn) & STORE)


def test_the_store_settings_without_a_reference_stay_shared(translated: dict[str, Any]) -> None:
    """The service to sign for and the replicas name no resource: every function keeps them (the
    namespaces function builds a reindex's space from them, without the URL)."""
    for parameters in ({}, SERVERLESS):
        stack = StandInStack(translated, parameters)
        for fn in functions(translated):
            env = stack.function(fn).environment
            assert env["RAGLINE_OPENSEARCH_SERVICE"] == ("aoss" if parameters else "es"), fn
