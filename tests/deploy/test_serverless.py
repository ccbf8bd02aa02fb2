"""OpenSearch Serverless as the second way to deploy (``OpenSearchMode=serverless``): a VECTORSEARCH
collection with its encryption, network and data access policies in place of the domain; the functions
that use the store reach it with ``aoss:APIAccessAll`` only, keep their fences in the documents table,
and are pointed at the collection, signed for ``aoss``. The default (``domain``) keeps today's stack."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ragline.config import Settings
from tests.deploy.modes import (
    EXISTING,
    MODES,
    SERVERLESS,
    SERVERLESS_RESOURCES,
    STACK_A,
    STACK_B,
    STORE_USERS,
    functions,
    resolved,
)
from tests.deploy.translated import ROOT, StandInStack, translate
from tests.rehearsal.stack_checks import api_routes

pytestmark = pytest.mark.deploy


@pytest.mark.parametrize("parameters", MODES.values(), ids=MODES.keys())
def test_each_mode_creates_everything_it_references_and_resolves(
    translated: dict[str, Any], parameters: dict[str, str]
) -> None:
    # Given the stack in this mode
    stack = StandInStack(translated, parameters)
    made = {r for r in translated["Resources"] if stack.exists(r)}
    # Then no created resource, function or output refers to one that is not created (a failed deploy)
    for logical in made:
        assert stack.dependencies(logical) <= made, (logical, stack.dependencies(logical) - made)
    for name, output in translated["Outputs"].items():
        if "Condition" not in output or stack.condition(output["Condition"]):
            assert stack.references(output["Value"]) <= made, name
            stack.resolve(output["Value"])
    for fn in functions(translated):
        stack.function(fn)  # environment and role resolve
    serverless = parameters == SERVERLESS
    assert all(stack.exists(r) == serverless for r in SERVERLESS_RESOURCES)
    assert stack.exists("OpenSearchDomain") == (parameters == {})


def test_serverless_mode_renders_and_validates_as_the_default_mode_does(tmp_path: Path) -> None:
    # Given the template with serverless as its default (the translator substitutes some defaults)
    text = (ROOT / "template.yaml").read_text()
    flipped = re.sub(
        r"(  OpenSearchMode:\n    Type: String\n    Default:) domain\n", r"\1 serverless\n", text, count=1
    )
    assert flipped != text
    source = ROOT / f".serverless-{tmp_path.name}.yaml"  # next to template.yaml: its CodeUris resolve
    source.write_text(flipped)
    try:
        # When SAM translates it and cfn-lint checks the result (raises on any error)
        out = translate(source, tmp_path / "translated.json")
    finally:
        source.unlink()
    # Then the functions are pointed at the collection
    env = StandInStack(out, {}).function("SearchFunction").environment
    assert env["RAGLINE_OPENSEARCH_SERVICE"] == "aoss"


def test_serverless_creates_a_vector_collection_encrypted_and_reachable_and_no_domain(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, SERVERLESS)
    collection = resolved(stack, "OpenSearchCollection")
    name = collection["Name"]
    assert collection["Type"] == "VECTORSEARCH" and collection["StandbyReplicas"] == "ENABLED"
    dev = StandInStack(translated, {**SERVERLESS, "ServerlessStandbyReplicas": "DISABLED"})
    assert resolved(dev, "OpenSearchCollection")["StandbyReplicas"] == "DISABLED"
    # Its encryption policy: an AWS-owned key, for this collection
    encryption = resolved(stack, "OpenSearchEncryptionPolicy")
    assert encryption["Type"] == "encryption" and encryption["Name"] == name
    assert json.loads(encryption["Policy"]) == {
        "Rules": [{"ResourceType": "collection", "Resource": [f"collection/{name}"]}],
        "AWSOwnedKey": True,
    }
    # Its network policy: the collection's public endpoint (as the domain's), no dashboards
    network = resolved(stack, "OpenSearchNetworkPolicy")
    assert network["Type"] == "network" and network["Name"] == name
    assert json.loads(network["Policy"]) == [
        {
            "Rules": [{"ResourceType": "collection", "Resource": [f"collection/{name}"]}],
            "AllowFromPublic": True,
        }
    ]
    # AOSS refuses a collection no encryption policy covers: created after both
    assert {"OpenSearchEncryptionPolicy", "OpenSearchNetworkPolicy"} <= stack.dependencies(
        "OpenSearchCollection"
    )
    # Kept by `sam delete` with its key's policy, as the domain is
    for logical in ("OpenSearchCollection", "OpenSearchEncryptionPolicy"):
        assert translated["Resources"][logical]["DeletionPolicy"] == "Retain", logical
    # No domain, nor its alarms or dashboard widgets; the account's OCUs on the dashboard instead
    assert not stack.exists("OpenSearchDomain")
    alarms = [
        stack.resolve(r["Properties"])
        for logical, r in translated["Resources"].items()
        if r["Type"] == "AWS::CloudWatch::Alarm" and stack.exists(logical)
    ]
    assert not [a for a in alarms if a.get("Namespace") == "AWS/ES" or "Metrics" in a]
    body = json.loads(
        stack.resolve(translated["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"])
    )
    metrics = [m for w in body["widgets"] for m in w["properties"]["metrics"]]
    assert not [m for m in metrics if m[0] == "AWS/ES"]
    assert {tuple(m[:2]) for m in metrics if m[0] == "AWS/AOSS"} == {
        ("AWS/AOSS", "IndexingOCU"),
        ("AWS/AOSS", "SearchOCU"),
    }


def test_the_functions_are_pointed_at_the_store_of_their_mode(translated: dict[str, Any]) -> None:
    expected = {
        "created domain": ("https://OpenSearchDomain.DomainEndpoint", "es"),
        "existing domain": (EXISTING["OpenSearchEndpoint"], "es"),
        "serverless": ("OpenSearchCollection.CollectionEndpoint", "aoss"),
    }
    for mode, parameters in MODES.items():
        # two nodes would give a domain's indexes a replica; a collection keeps its own standby
        stack = StandInStack(translated, {**parameters, "OpenSearchInstanceCount": "2"})
        for fn in STORE_USERS:
            env = stack.function(fn).environment
            assert (env["RAGLINE_OPENSEARCH_URL"], env["RAGLINE_OPENSEARCH_SERVICE"]) == expected[mode], (
                mode,
                fn,
            )
            assert env["RAGLINE_OPENSEARCH_AUTH"] == "sigv4"
            assert env["RAGLINE_OPENSEARCH_REPLICAS"] == ("0" if mode == "serverless" else "1")
            assert env["RAGLINE_DOCUMENTS_TABLE"] == "DocumentsTable"
        outputs = {
            k: stack.resolve(v["Value"])
            for k, v in translated["Outputs"].items()
            if "Condition" not in v or stack.condition(v["Condition"])
        }
        assert outputs["OpenSearchEndpointUrl"] == expected[mode][0], mode
        assert outputs.get("OpenSearchCollectionArn") == (
            "OpenSearchCollection.Arn" if mode == "serverless" else None
        ), mode


def test_serverless_refuses_an_existing_domain_and_the_domain_modes_are_unchanged(
    translated: dict[str, Any],
) -> None:
    assert StandInStack(translated, {**SERVERLESS, **EXISTING}).violated_rules() == [
        "ServerlessCreatesItsCollection"
    ]
    for parameters in MODES.values():
        assert StandInStack(translated, parameters).violated_rules() == []
    assert StandInStack(translated, {}).values["OpenSearchMode"] == "domain"


def test_serverless_names_are_new_per_deployment_and_within_aoss_limits(translated: dict[str, Any]) -> None:
    def names(stack_id: str, **parameters: str) -> dict[str, str]:
        stack = StandInStack(translated, {**SERVERLESS, "AWS::StackId": stack_id, **parameters})
        return {r: resolved(stack, r)["Name"] for r in SERVERLESS_RESOURCES}

    first, second = names(STACK_A), names(STACK_B)
    for logical in SERVERLESS_RESOURCES:  # a retained collection never blocks the next deployment
        assert first[logical] != second[logical], logical
    assert names(STACK_A) == first  # an update keeps them (a new name would replace the collection)
    for logical, name in names(STACK_A, Stage="x" * 16).items():
        # AOSS: 3-32 characters, lower case, starting with a letter (collections and policies alike)
        assert re.fullmatch(r"[a-z][a-z0-9-]{2,31}", name), (logical, name)


API_GATEWAY_TIMEOUT = 29
"""Seconds API Gateway waits for a (non-streaming) REST integration before answering 504 itself."""


def test_a_wait_for_the_collections_refresh_ends_before_the_function_or_the_gateway_gives_up(
    translated: dict[str, Any],
) -> None:
    # Given serverless mode: a publish waits (bounded) until the collection has made the writes
    # searchable, and the bound is the store's setting
    default = Settings.model_fields["opensearch_visibility_timeout"].default
    stack = StandInStack(translated, SERVERLESS)
    behind_api = {route.function for route in api_routes(translated).values() if not route.streams}
    for fn in STORE_USERS:
        spec = stack.function(fn)
        bound = float(spec.environment.get("RAGLINE_OPENSEARCH_VISIBILITY_TIMEOUT", default))
        # Then the wait ends, with the store's retryable error, while the function still runs
        assert bound < spec.timeout, (fn, bound, spec.timeout)
        # and, behind the API, before the gateway answers 504 in Ragline's place
        if fn in behind_api:
            assert bound < API_GATEWAY_TIMEOUT, (fn, bound)
    # Ingestion (SQS, 300 s) may wait for a slow refresh longer than an API caller can
    ingestion = stack.function("IngestionFunction").environment["RAGLINE_OPENSEARCH_VISIBILITY_TIMEOUT"]
    assert float(ingestion) > API_GATEWAY_TIMEOUT
    # A domain's store never waits: the setting is not there
    domain = StandInStack(translated, {})
    assert not [
        fn for fn in STORE_USERS if "RAGLINE_OPENSEARCH_VISIBILITY_TIMEOUT" in domain.function(fn).environment
    ]
