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
from tests.deploy.translated import ROOT, StandInStack, translate
from tests.rehearsal.aoss import DataAccessPolicy, collection_calls
from tests.rehearsal.stack_checks import api_routes

pytestmark = pytest.mark.deploy

SERVERLESS = {"OpenSearchMode": "serverless"}
EXISTING = {
    "OpenSearchEndpoint": "https://search-x.us-east-1.es.amazonaws.com",
    "ExistingOpenSearchDomainArn": "arn:aws:es:us-east-1:123456789012:domain/x",
}
MODES = {"created domain": {}, "existing domain": EXISTING, "serverless": SERVERLESS}
READERS = ("SearchFunction", "HostingSearchFunction", "ChatFunction")
WRITERS = ("DocumentsFunction", "IngestionFunction")
STORE_USERS = READERS + WRITERS
FENCES = ("GetItem", "BatchGetItem", "PutItem", "UpdateItem", "DeleteItem", "Query")
"""What the store does to the documents table in aoss mode (its document fences live there)."""
SERVERLESS_RESOURCES = (
    "OpenSearchCollection",
    "OpenSearchEncryptionPolicy",
    "OpenSearchNetworkPolicy",
    "OpenSearchDataAccessPolicy",
)
TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/DocumentsTable"
STACK_A = (
    "arn:aws:cloudformation:us-east-1:123456789012:stack/ragline-dev/6f1c2a30-1111-11ef-9a7b-0a1b2c3d4e5f"
)
STACK_B = (
    "arn:aws:cloudformation:us-east-1:123456789012:stack/ragline-dev/b83e9d40-2222-11ef-8c6d-0f9e8d7c6b5a"
)


class TableArnStack(StandInStack):
    """Stand-ins where a table's ``GetAtt Arn`` is the ARN its name gives, as SAM's policy templates
    (``DynamoDBCrudPolicy``) build it: both ways of naming the documents table compare equal."""

    def _attribute(self, logical: str, attr: str) -> str:
        if (
            attr == "Arn"
            and self.template["Resources"].get(logical, {}).get("Type") == "AWS::DynamoDB::Table"
        ):
            return f"arn:aws:dynamodb:us-east-1:123456789012:table/{logical}"
        return super()._attribute(logical, attr)


def functions(translated: dict[str, Any]) -> list[str]:
    return sorted(k for k, r in translated["Resources"].items() if r["Type"] == "AWS::Lambda::Function")


def actions(stack: StandInStack, fn: str) -> set[str]:
    spec = stack.function(fn)
    found: set[str] = set()
    for st in spec.statements:
        found |= set(st["Action"] if isinstance(st["Action"], list) else [st["Action"]])
    return found


def resolved(stack: StandInStack, logical: str) -> dict[str, Any]:
    props: dict[str, Any] = stack.resolve(stack.template["Resources"][logical]["Properties"])
    return props


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
    for fn in WRITERS:
        assert granted[f"{fn}Role.Arn"] == {
            "aoss:CreateIndex",
            "aoss:DescribeIndex",
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


def test_in_serverless_mode_every_store_role_keeps_fences_in_the_documents_table(
    translated: dict[str, Any],
) -> None:
    serverless, domain = TableArnStack(translated, SERVERLESS), TableArnStack(translated, {})
    for fn in STORE_USERS:
        for action in FENCES:
            assert serverless.function(fn).allows(f"dynamodb:{action}", TABLE), (fn, action)
    # A domain keeps fences in OpenSearch: the readers' table rights stay read-only there
    for fn in READERS:
        for action in ("PutItem", "UpdateItem", "DeleteItem"):
            assert not domain.function(fn).allows(f"dynamodb:{action}", TABLE), (fn, action)


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
