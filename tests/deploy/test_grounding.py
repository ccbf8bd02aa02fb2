"""Grounding in the deployed template: the built-in lexical verifier by default (no model, no permission);
a Bedrock guardrail's contextual grounding check only when named, granted to the chat function alone
and only on that guardrail (issue 30)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.translated import StandInStack
from tests.rehearsal.iam import guardrail_arn, iam_calls

pytestmark = pytest.mark.deploy
FUNCTIONS = (
    "AuthorizerFunction",
    "NamespacesFunction",
    "KeysFunction",
    "SearchFunction",
    "HostingSearchFunction",
    "ChatFunction",
    "DocumentsFunction",
    "IngestionFunction",
)


def may_apply(stack: StandInStack, function: str, guardrail: str) -> bool:
    params = {"guardrailIdentifier": guardrail, "guardrailVersion": "1", "source": "OUTPUT", "content": []}
    calls = iam_calls(function, "bedrock-runtime", "ApplyGuardrail", params, {})
    spec = stack.function(function)
    return all(spec.allows(c.action, c.resource, c.context) for c in calls)


def test_the_default_is_the_lexical_verifier_with_no_guardrail_and_no_permission(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, {})
    assert stack.values["Grounding"] == "verifier"
    for fn in FUNCTIONS:
        env = stack.function(fn).environment
        assert env["RAGLINE_GROUNDING"] == "verifier", fn
        assert "RAGLINE_GROUNDING_GUARDRAIL_ID" not in env, fn
        assert not may_apply(stack, fn, "abc123"), fn


def test_a_named_guardrail_is_applied_by_the_chat_function_only(translated: dict[str, Any]) -> None:
    stack = StandInStack(
        translated,
        {"Grounding": "bedrock", "GroundingGuardrailId": "abc123", "GroundingGuardrailVersion": "4"},
    )
    chat = stack.function("ChatFunction")
    assert chat.environment["RAGLINE_GROUNDING"] == "bedrock"
    assert chat.environment["RAGLINE_GROUNDING_GUARDRAIL_ID"] == "abc123"
    assert chat.environment["RAGLINE_GROUNDING_GUARDRAIL_VERSION"] == "4"
    assert may_apply(stack, "ChatFunction", "abc123") and may_apply(
        stack, "ChatFunction", guardrail_arn("abc123")
    )
    assert not may_apply(stack, "ChatFunction", "other9")  # that guardrail only
    for fn in set(FUNCTIONS) - {"ChatFunction"}:
        assert not may_apply(stack, fn, "abc123"), fn


def test_grounding_choices_and_the_guardrail_rule(translated: dict[str, Any]) -> None:
    assert translated["Parameters"]["Grounding"]["AllowedValues"] == [
        "verifier",
        "overlap",
        "judge",
        "bedrock",
        "none",
    ]
    rule = translated["Rules"]["GuardrailNamedForGrounding"]
    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "Grounding"}, "bedrock"]}
