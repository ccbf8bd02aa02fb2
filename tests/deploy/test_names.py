"""Two stacks of the same ``Stage`` side by side (a second copy for a load test, a blue/green cut-over):
every name the template gives a resource explicitly carries the stack id, so the second deploys
beside the first. The names are found in the translated template, not listed here: a new named
resource without the stack id fails this test."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.modes import EXISTING, SERVERLESS, STACK_A, STACK_B
from tests.deploy.translated import StandInStack

pytestmark = pytest.mark.deploy

NOT_A_NAME = {"MetricName"}
"""Properties ending in ``Name`` that name what a resource watches, not the resource."""
SCOPED = {
    ("AWS::Lambda::Alias", "Name"): "unique within its function, whose name CloudFormation generates",
    ("AWS::ApiGateway::Stage", "StageName"): "unique within its REST API",
}
"""Names that only need to be unique within a parent resource of this stack, each with its reason."""
MODES = {
    "created domain, Bedrock": {},
    "existing domain, OpenAI-compatible": {**EXISTING, "ChatProvider": "openai"},
    "serverless": SERVERLESS,
}


def explicit_names(translated: dict[str, Any], stack_id: str, parameters: dict[str, str]) -> dict[str, Any]:
    """(logical id, property) → the name the stack gives the resource itself: every top-level
    ``Name``/``…Name`` property of a created resource that is not a reference to another resource (a
    name built on another resource's generated name, such as ``/aws/lambda/${Fn}``, is unique with it)."""
    stack = StandInStack(translated, {"AWS::StackId": stack_id, "Stage": "prod", **parameters})
    found = {}
    for logical, resource in translated["Resources"].items():
        if not stack.exists(logical):
            continue
        for prop, value in resource.get("Properties", {}).items():
            if not prop.endswith("Name") or prop in NOT_A_NAME or (resource["Type"], prop) in SCOPED:
                continue
            if not stack.references(value):
                found[(logical, prop)] = stack.resolve(value)
    return found


@pytest.mark.parametrize("parameters", MODES.values(), ids=MODES.keys())
def test_a_second_stack_of_the_same_stage_names_nothing_as_the_first_does(
    translated: dict[str, Any], parameters: dict[str, str]
) -> None:
    # Given two stacks of Stage=prod in one account and Region
    first = explicit_names(translated, STACK_A, parameters)
    second = explicit_names(translated, STACK_B, parameters)
    # Then every resource named explicitly is named apart (the bus, the access-log group, the
    # dashboard, the layer, the REST API, the bucket, the domain or collection and its policies, ...)
    assert first.keys() == second.keys() and len(first) >= 7, sorted(first)
    same = sorted(
        f"{logical}.{prop} = {name!r}"
        for (logical, prop), name in first.items()
        if second[(logical, prop)] == name
    )
    assert not same, "named alike in both stacks:\n" + "\n".join(same)


def test_the_names_this_issue_found_colliding_are_among_those_checked(translated: dict[str, Any]) -> None:
    """The test above finds names generically; it must see at least the ones that collided."""
    checked = {logical for logical, _ in explicit_names(translated, STACK_A, {})}
    layer = next(k for k, r in translated["Resources"].items() if r["Type"] == "AWS::Lambda::LayerVersion")
    assert {"EventBus", "ApiAccessLogGroup", "OperationsDashboard", "RaglineApi", layer} <= checked


def test_the_alarms_and_the_dashboard_watch_the_api_by_the_name_it_has(translated: dict[str, Any]) -> None:
    """API Gateway's metrics carry the REST API's name (``ApiName``): a renamed API must not leave its
    alarms watching a name nothing reports under."""
    stack = StandInStack(translated, {"AWS::StackId": STACK_B, "Stage": "prod"})
    api = stack.resolve(translated["Resources"]["RaglineApi"]["Properties"]["Name"])
    watched = {
        d["Value"]
        for r in translated["Resources"].values()
        if r["Type"] == "AWS::CloudWatch::Alarm"
        for d in stack.resolve(r["Properties"].get("Dimensions", []))
        if d["Name"] == "ApiName"
    }
    assert watched == {api}
    body = stack.resolve(translated["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"])
    assert f'"ApiName","{api}"' in body and '"ApiName","ragline-prod"' not in body
