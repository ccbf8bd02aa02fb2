"""The rehearsal's IAM view of Bedrock chat calls: the mapper (what a Converse call needs) and the
matcher (whether a role's statements grant it), on statements shaped as template.yaml writes them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.rehearsal.cloudformation import ACCOUNT, REGION, AwsCall, FunctionSpec, Unresolvable
from tests.rehearsal.iam import calls_from_log

pytestmark = pytest.mark.unit
PROFILE = f"arn:aws:bedrock:{REGION}:{ACCOUNT}:inference-profile"
MODEL_STATEMENT = {
    "Effect": "Allow",
    "Action": ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
    "Resource": [
        "arn:aws:bedrock:*::foundation-model/{model}",
        f"arn:aws:bedrock:{REGION}:{ACCOUNT}:inference-profile/{{model}}",
    ],
}
ROUTES_STATEMENT = {
    "Effect": "Allow",
    "Action": ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
    "Resource": "arn:aws:bedrock:*::foundation-model/*",
    "Condition": {"StringEquals": {"bedrock:InferenceProfileArn": f"{PROFILE}/{{model}}"}},
}


def role(model: str, *statements: Mapping[str, Any]) -> FunctionSpec:
    filled = [_fill(st, model) for st in statements]
    return FunctionSpec("ChatFunction", "app.h", [], {}, filled, 30, 1024, "Active")


def _fill(value: Any, model: str) -> Any:
    if isinstance(value, str):
        return value.replace("{model}", model)
    if isinstance(value, list):
        return [_fill(v, model) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, model) for k, v in value.items()}
    return value


def calls(tmp_path: Path, operation: str, model: str) -> list[AwsCall]:
    log = tmp_path / "calls.jsonl"
    log.write_text(
        f'{{"service": "bedrock-runtime", "operation": "{operation}", "params": {{"modelId": "{model}"}}}}\n'
    )
    return calls_from_log("ChatFunction", log, {})


def granted(spec: FunctionSpec, found: list[AwsCall]) -> bool:
    return all(spec.allows(c.action, c.resource, c.context) for c in found)


def test_converse_on_a_model_id_needs_invoke_model_on_the_foundation_model(tmp_path: Path) -> None:
    found = calls(tmp_path, "Converse", "amazon.nova-pro-v1:0")
    assert found == [
        AwsCall(
            "ChatFunction",
            "bedrock:InvokeModel",
            f"arn:aws:bedrock:{REGION}::foundation-model/amazon.nova-pro-v1:0",
        )
    ]
    assert granted(role("amazon.nova-pro-v1:0", MODEL_STATEMENT, ROUTES_STATEMENT), found)
    assert not granted(role("amazon.nova-lite-v1:0", MODEL_STATEMENT, ROUTES_STATEMENT), found)


@pytest.mark.parametrize(
    "model",
    [
        "us.amazon.nova-pro-v1:0",
        "eu.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "apac.amazon.nova-pro-v1:0",
        "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "ca.amazon.nova-pro-v1:0",
    ],
)
def test_converse_stream_on_a_profile_id_needs_the_profile_and_its_routed_model(
    tmp_path: Path, model: str
) -> None:
    found = calls(tmp_path, "ConverseStream", model)
    routed = model.split(".", 1)[1]
    assert found == [
        AwsCall("ChatFunction", "bedrock:InvokeModelWithResponseStream", f"{PROFILE}/{model}"),
        AwsCall(
            "ChatFunction",
            "bedrock:InvokeModelWithResponseStream",
            f"arn:aws:bedrock:{REGION}::foundation-model/{routed}",
            (("bedrock:InferenceProfileArn", f"{PROFILE}/{model}"),),
        ),
    ]
    assert granted(role(model, MODEL_STATEMENT, ROUTES_STATEMENT), found)
    # Without the conditioned statement the routed model is not granted.
    assert not granted(role(model, MODEL_STATEMENT), found)


def test_a_profile_id_is_denied_by_the_foundation_model_statement_alone(tmp_path: Path) -> None:
    model = "us.amazon.nova-pro-v1:0"
    only_models = {**MODEL_STATEMENT, "Resource": "arn:aws:bedrock:*::foundation-model/{model}"}
    assert not granted(role(model, only_models), calls(tmp_path, "Converse", model))


def test_a_conditioned_statement_grants_no_call_without_its_context() -> None:
    model = "amazon.nova-pro-v1:0"
    spec = role(model, ROUTES_STATEMENT)
    arn = f"arn:aws:bedrock:{REGION}::foundation-model/{model}"
    assert not spec.allows("bedrock:InvokeModel", arn)
    assert not spec.allows("bedrock:InvokeModel", arn, (("bedrock:InferenceProfileArn", f"{PROFILE}/other"),))
    assert spec.allows("bedrock:InvokeModel", arn, (("bedrock:InferenceProfileArn", f"{PROFILE}/{model}"),))


def test_converse_stream_is_denied_when_the_role_has_invoke_model_alone(tmp_path: Path) -> None:
    model = "amazon.nova-pro-v1:0"
    spec = role(model, {**MODEL_STATEMENT, "Action": "bedrock:InvokeModel"})
    assert granted(spec, calls(tmp_path, "Converse", model))
    assert not granted(spec, calls(tmp_path, "ConverseStream", model))


def test_the_matcher_refuses_a_condition_operator_it_cannot_evaluate() -> None:
    statement = {**ROUTES_STATEMENT, "Condition": {"ArnLike": {"bedrock:InferenceProfileArn": "*"}}}
    with pytest.raises(Unresolvable):
        role("m", statement).allows("bedrock:InvokeModel", "arn:aws:bedrock:us-east-1::foundation-model/m")


def test_put_events_needs_put_events_on_each_entrys_bus(tmp_path: Path) -> None:
    other = f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/other"
    entry = {"service": "events", "operation": "PutEvents",
             "params": {"Entries": [{"EventBusName": "rh-events"}, {"EventBusName": other}]}}  # fmt: skip
    log = tmp_path / "calls.jsonl"
    log.write_text(json.dumps(entry) + "\n")
    found = calls_from_log("IngestionFunction", log, {})
    ours = f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/rh-events"
    assert [c.resource for c in found] == [ours, other]
    assert {c.action for c in found} == {"events:PutEvents"}
    statement = {"Effect": "Allow", "Action": "events:PutEvents", "Resource": ours}
    spec = FunctionSpec("IngestionFunction", "app.h", [], {}, [statement], 30, 1024, "Active")
    assert spec.allows("events:PutEvents", ours) and not spec.allows("events:PutEvents", other)
