"""Who reaches the store in each mode: a collection's data access policy names exactly the store roles
with what each needs, the roles reach a collection with ``aoss:APIAccessAll`` only and a domain with
``es:*`` only, the store roles keep fences in the documents table in serverless mode, and every request
the store sends (as the rehearsal maps it) passes IAM and the policy for its own role only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.deploy.modes import (
    FENCES,
    MODES,
    READERS,
    SERVERLESS,
    STORE_USERS,
    TABLE,
    WRITERS,
    TableArnStack,
    actions,
    functions,
    resolved,
)
from tests.deploy.translated import StandInStack
from tests.rehearsal.aoss import DataAccessPolicy, collection_calls

pytestmark = pytest.mark.deploy


def test_the_data_access_policy_lets_exactly_the_store_roles_in_with_what_they_need(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, SERVERLESS)
    name = resolved(stack, "OpenSearchCollection")["Name"]
    access = resolved(stack, "OpenSearchDataAccessPolicy")
    assert access["Type"] == "data" and access["Name"] == name
    granted: dict[str, set[str]] = {}
    for entry in json.loads(access["Policy"]):
        for rule in entry["Rules"]:
            # Only the collection's indexes: no collection items, no other collection
            assert rule["ResourceType"] == "index" and rule["Resource"] == [f"index/{name}/*"], rule
            for principal in entry["Principal"]:
                granted.setdefault(principal, set()).update(rule["Permission"])
    # Exactly the roles of the functions that use the store
    assert set(granted) == {f"{fn}Role.Arn" for fn in STORE_USERS}
    for fn in READERS:  # a namespace's first search creates its index, as on a domain
        assert granted[f"{fn}Role.Arn"] == {"aoss:CreateIndex", "aoss:DescribeIndex", "aoss:ReadDocument"}, fn
    for fn in WRITERS:  # UpdateIndex: the filter fields added to an index made before them
        assert granted[f"{fn}Role.Arn"] == {
            "aoss:CreateIndex",
            "aoss:DescribeIndex",
            "aoss:UpdateIndex",
            "aoss:ReadDocument",
            "aoss:WriteDocument",
        }, fn


@pytest.mark.parametrize("parameters", MODES.values(), ids=MODES.keys())
def test_roles_reach_a_collection_with_aoss_only_and_a_domain_with_es_only(
    translated: dict[str, Any], parameters: dict[str, str]
) -> None:
    stack = StandInStack(translated, parameters)
    serverless = parameters == SERVERLESS
    for fn in functions(translated):
        found = actions(stack, fn)
        es = {a for a in found if a.startswith("es:")}
        aoss = {a for a in found if a.startswith("aoss:")}
        if fn not in STORE_USERS:
            assert not es and not aoss, fn
        elif serverless:
            assert not es and aoss == {"aoss:APIAccessAll"}, (fn, es, aoss)  # no DashboardsAccessAll
            assert stack.function(fn).allows("aoss:APIAccessAll", "OpenSearchCollection.Arn"), fn
            assert not stack.function(fn).allows("aoss:APIAccessAll", "arn:aws:aoss:us-east-1:1:collection/x")
        else:
            assert es and not aoss, (fn, aoss)


def test_in_serverless_mode_writers_raise_fences_in_the_documents_table_and_readers_only_read_them(
    translated: dict[str, Any],
) -> None:
    serverless, domain = TableArnStack(translated, SERVERLESS), TableArnStack(translated, {})
    fence = (("dynamodb:LeadingKeys", "VSFENCE#rh-chunks#acme#docs"),)
    for fn in WRITERS:  # a publish reads and raises a fence (a search reads them)
        for action in FENCES:
            assert serverless.function(fn).allows(f"dynamodb:{action}", TABLE, fence), (fn, action)
            assert not domain.function(fn).allows(f"dynamodb:{action}", TABLE, fence), (fn, action)
    for fn in READERS:  # a search reads the published generations, nothing more, and only serverless
        assert serverless.function(fn).allows("dynamodb:BatchGetItem", TABLE, fence), fn
        assert not domain.function(fn).allows("dynamodb:BatchGetItem", TABLE, fence), fn
        for stack in (serverless, domain):
            for action in ("PutItem", "UpdateItem", "DeleteItem"):
                assert not stack.function(fn).allows(f"dynamodb:{action}", TABLE, fence), (fn, action)


def test_what_the_store_sends_passes_iam_and_the_data_access_policy_for_its_role_only(
    translated: dict[str, Any],
) -> None:
    # Given the stack in serverless mode and the rehearsal's view of a collection request
    stack = StandInStack(translated, SERVERLESS)
    name = resolved(stack, "OpenSearchCollection")["Name"]
    policy = DataAccessPolicy(resolved(stack, "OpenSearchDataAccessPolicy")["Policy"])
    search = ("POST", "/rh-chunks/_search", None)
    create = ("PUT", "/rh-chunks", None)
    write = ("POST", "/_bulk", b'{"index":{"_index":"rh-chunks","_id":"1"}}\n{"text":"x"}\n')

    def allowed(fn: str, request: tuple[str, str, bytes | None]) -> bool:
        iam, data = collection_calls(fn, *request, name)
        spec = stack.function(fn)
        return all(spec.allows(c.action, "OpenSearchCollection.Arn") for c in iam) and all(
            policy.allows(f"{fn}Role.Arn", d.permission, d.resource) for d in data
        )

    # Then each store role may search and create its index, writers may write, readers may not
    for fn in STORE_USERS:
        assert allowed(fn, search) and allowed(fn, create), fn
        assert allowed(fn, write) == (fn in WRITERS), fn
    # and the functions that never use the store reach nothing
    for fn in set(functions(translated)) - set(STORE_USERS):
        assert not allowed(fn, search), fn
