"""SnapStart in the deployed template: every Python zip function but chat (Web Adapter) and the
authorizer (already cheap) restores from a snapshot of a published version, and everything that invokes
it — API Gateway's integrations and permissions, the SQS event source mapping — names its ``live``
alias, never ``$LATEST`` (which SnapStart does not apply to)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.modes import SNAPSTART
from tests.deploy.modes import functions as stack_functions
from tests.deploy.translated import ROOT, translate

pytestmark = pytest.mark.deploy
ON_DEMAND = ("ChatFunction", "AuthorizerFunction")


def resources(translated: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in translated["Resources"].items() if v["Type"] == kind}


def target(ref: Any) -> str:
    """The resource a FunctionName (``Ref X``, ``GetAtt X.Arn``) or an integration URI names."""
    if isinstance(ref, dict) and "Ref" in ref:
        return str(ref["Ref"])
    if isinstance(ref, dict) and "Fn::GetAtt" in ref:
        return str(ref["Fn::GetAtt"][0])
    found = re.search(r"/functions/\$\{(\w+)(?:\.Arn)?\}/", str(ref))
    assert found, ref
    return found.group(1)


def integration_targets(translated: dict[str, Any]) -> dict[str, str]:
    body = translated["Resources"]["RaglineApi"]["Properties"]["Body"]
    uris = {
        f"{method.upper()} {path}": spec["x-amazon-apigateway-integration"]["uri"]
        for path, methods in body["paths"].items()
        for method, spec in methods.items()
    }
    return {route: target(uri) for route, uri in uris.items()}


def test_snapstart_and_a_live_alias_on_every_python_function_but_chat_and_the_authorizer(
    translated: dict[str, Any],
) -> None:
    functions = resources(translated, "AWS::Lambda::Function")
    python = {
        k
        for k, v in functions.items()
        if str(v["Properties"].get("Runtime", "")).startswith("python") and k in stack_functions(translated)
    }
    assert python == set(SNAPSTART) | set(ON_DEMAND)
    versions = resources(translated, "AWS::Lambda::Version")
    aliases = resources(translated, "AWS::Lambda::Alias")
    for fn in SNAPSTART:
        props = functions[fn]["Properties"]
        # SnapStart unless the SnapStart parameter turns it off (test_region_defaults resolves both).
        assert props.get("SnapStart") == {
            "Fn::If": ["UseSnapStart", {"ApplyOn": "PublishedVersions"}, {"Ref": "AWS::NoValue"}]
        }, fn
        alias = aliases[f"{fn}Aliaslive"]["Properties"]
        assert alias["Name"] == "live" and alias["FunctionName"] == {"Ref": fn}, fn
        version = alias["FunctionVersion"]["Fn::GetAtt"][0]
        assert versions[version]["Properties"]["FunctionName"] == {"Ref": fn}, fn
        # A replaced version goes with the update: no snapshot cached (and billed) for old code.
        assert versions[version]["DeletionPolicy"] == "Delete", fn
        # What SnapStart cannot be combined with.
        assert int(props.get("EphemeralStorage", {}).get("Size", 512)) <= 512, fn
        assert "FileSystemConfigs" not in props, fn
    assert not any("ProvisionedConcurrencyConfig" in a["Properties"] for a in aliases.values())
    for fn in ON_DEMAND:
        assert "SnapStart" not in functions[fn]["Properties"] and f"{fn}Aliaslive" not in aliases, fn


def test_api_gateway_and_the_queues_invoke_the_alias(translated: dict[str, Any]) -> None:
    alias = {fn: f"{fn}Aliaslive" for fn in SNAPSTART}
    queued = ("IngestionFunction", "WebhookDeliveryFunction")
    routes = integration_targets(translated)
    assert set(routes.values()) == {
        *(alias[fn] for fn in SNAPSTART if fn not in queued),
        "ChatFunction",
    }
    assert routes["POST /v1/chat"] == "ChatFunction"

    permissions = resources(translated, "AWS::Lambda::Permission").values()
    invoked = {target(p["Properties"]["FunctionName"]) for p in permissions}
    assert invoked == {*set(routes.values()), "AuthorizerFunction"}

    # (the chat function, no SnapStart, drains the runs queue unqualified, as API Gateway invokes it)
    mappings = resources(translated, "AWS::Lambda::EventSourceMapping").values()
    assert sorted(target(m["Properties"]["FunctionName"]) for m in mappings) == [
        "ChatFunction",
        *(alias[fn] for fn in queued),
    ]


def test_the_authorizer_is_invoked_unqualified_as_before(translated: dict[str, Any]) -> None:
    schemes = translated["Resources"]["RaglineApi"]["Properties"]["Body"]["components"]["securitySchemes"]
    uri = schemes["ApiKeyAuthorizer"]["x-amazon-apigateway-authorizer"]["authorizerUri"]
    assert uri["Fn::Sub"][1]["__FunctionArn__"] == {"Fn::GetAtt": ["AuthorizerFunction", "Arn"]}


def test_reserved_concurrency_still_applies_to_the_snapstart_functions(translated: dict[str, Any]) -> None:
    functions = resources(translated, "AWS::Lambda::Function")
    for fn, condition in (
        ("SearchFunction", "ReserveSearch"),
        ("HostingSearchFunction", "ReserveHostingSearch"),
    ):
        assert functions[fn]["Properties"]["ReservedConcurrentExecutions"]["Fn::If"][0] == condition


def test_a_new_layer_publishes_a_new_version(tmp_path: Path) -> None:
    """The code lives in the layer: a layer-only change must move the alias to a new version (and a new
    snapshot), or the functions would keep running the old layer. Two packaged templates (the layer
    uploaded to S3 as ``sam deploy`` does) that differ only in the layer's content."""
    source = (ROOT / "template.yaml").read_text()
    assert source.count("ContentUri: shared/\n") == 1
    versions = []
    for content in ("0a1b2c", "3d4e5f"):
        packaged = tmp_path / f"{content}.yaml"
        packaged.write_text(
            source.replace("ContentUri: shared/\n", f"ContentUri: s3://artifacts/{content}\n")
        )
        out = translate(packaged, tmp_path / f"{content}.json")
        versions.append(
            {fn: out["Resources"][f"{fn}Aliaslive"]["Properties"]["FunctionVersion"] for fn in SNAPSTART}
        )
    for fn in SNAPSTART:
        assert versions[0][fn] != versions[1][fn], f"{fn}: the alias stays on the version with the old layer"
