"""The chat model in the deployed template: Bedrock by default, reached through the roles of every
function that calls the model (no secret anywhere); an OpenAI-compatible endpoint keeps its key in
Secrets Manager. Both branches of the translated template, resolved per parameter set."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.translated import StandInStack
from tests.rehearsal.cloudformation import FunctionSpec
from tests.rehearsal.iam import bedrock_model_calls

pytestmark = pytest.mark.deploy
MODEL_CALLERS = ("HostingSearchFunction", "ChatFunction")
"""The functions whose container builds a chat model: hosting search's planner, chat; and search, whose
only use of it is the LLM reranker (``Reranker=llm``: :func:`callers`)."""
PYTHON_FUNCTIONS = (
    "AuthorizerFunction",
    "NamespacesFunction",
    "KeysFunction",
    "SearchFunction",
    *MODEL_CALLERS,
    "DocumentsFunction",
    "IngestionFunction",
)


def callers(reranker: str) -> tuple[str, ...]:
    return (*MODEL_CALLERS, "SearchFunction") if reranker == "llm" else MODEL_CALLERS


SECRET_ENV = "RAGLINE_LLM_API_KEY_SECRET"


def secret_statements(spec: FunctionSpec) -> list[dict[str, Any]]:
    """The statements about the LLM key's secret (data sources' credentials are another prefix's)."""
    return [
        st
        for st in spec.statements
        if "secretsmanager" in str(st["Action"]) and not str(st["Resource"]).endswith("/sources/*")
    ]


def bedrock_chat_granted(spec: FunctionSpec, model: str) -> bool:
    calls = [c for action in ("InvokeModel", "InvokeModelWithResponseStream")
             for c in bedrock_model_calls(spec.logical, action, model)]  # fmt: skip
    return all(spec.allows(c.action, c.resource, c.context) for c in calls)


def test_bedrock_is_the_default_and_the_stack_has_no_chat_secret(translated: dict[str, Any]) -> None:
    stack = StandInStack(translated, {})
    assert stack.values["ChatProvider"] == "bedrock"
    assert not stack.exists("LlmApiKeySecret")
    assert not stack.condition(translated["Outputs"]["LlmApiKeySecretId"]["Condition"])
    for fn in PYTHON_FUNCTIONS:
        spec = stack.function(fn)
        assert SECRET_ENV not in spec.environment, fn
        assert "OPENAI_BASE_URL" not in spec.environment and "RAGLINE_CHAT_MODEL" not in spec.environment, fn
        assert spec.environment["RAGLINE_CHAT_PROVIDER"] == "bedrock", fn
        assert spec.environment["RAGLINE_BEDROCK_CHAT_MODEL"] == "amazon.nova-pro-v1:0", fn
        assert not secret_statements(spec), fn


@pytest.mark.parametrize("reranker", ["bedrock", "llm"])
@pytest.mark.parametrize(
    ("model", "other"),
    [
        ("amazon.nova-pro-v1:0", "amazon.nova-premier-v1:0"),
        ("us.amazon.nova-pro-v1:0", "us.amazon.nova-premier-v1:0"),
        ("eu.anthropic.claude-3-7-sonnet-20250219-v1:0", "eu.amazon.nova-pro-v1:0"),
    ],
)
def test_every_model_caller_may_converse_and_stream_with_the_configured_model(
    translated: dict[str, Any], model: str, other: str, reranker: str
) -> None:
    stack = StandInStack(translated, {"BedrockChatModel": model, "Reranker": reranker})
    for fn in callers(reranker):
        assert bedrock_chat_granted(stack.function(fn), model), fn
        # Only the configured model: another one (or another profile) is not granted.
        assert not bedrock_chat_granted(stack.function(fn), other), fn
    for fn in set(PYTHON_FUNCTIONS) - set(callers(reranker)):  # search, unless the model reranks
        assert not bedrock_chat_granted(stack.function(fn), model), fn


@pytest.mark.parametrize("reranker", ["bedrock", "llm"])
def test_an_openai_compatible_endpoint_gets_a_created_secret_and_only_the_model_callers_read_it(
    translated: dict[str, Any], reranker: str
) -> None:
    params = {"ChatProvider": "openai", "LlmBaseUrl": "https://llm.example", "Reranker": reranker}
    stack = StandInStack(translated, params)
    assert stack.exists("LlmApiKeySecret")
    assert stack.resolve(translated["Outputs"]["LlmApiKeySecretId"]["Value"]) == "LlmApiKeySecret"
    for fn in PYTHON_FUNCTIONS:
        spec = stack.function(fn)
        assert spec.environment[SECRET_ENV] == "LlmApiKeySecret", fn
        assert spec.environment["OPENAI_BASE_URL"] == "https://llm.example", fn
        assert "RAGLINE_BEDROCK_CHAT_MODEL" not in spec.environment, fn
        readers = spec.allows("secretsmanager:GetSecretValue", "LlmApiKeySecret")
        assert readers == (fn in callers(reranker)), fn
        assert not bedrock_chat_granted(spec, "amazon.nova-pro-v1:0"), fn


def test_an_openai_compatible_endpoint_with_a_given_secret_creates_none(translated: dict[str, Any]) -> None:
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:llm-AbCdEf"
    stack = StandInStack(translated, {"ChatProvider": "openai", "LlmApiKeySecretArn": arn})
    assert not stack.exists("LlmApiKeySecret")
    for fn in MODEL_CALLERS:
        spec = stack.function(fn)
        assert spec.environment[SECRET_ENV] == arn and spec.allows("secretsmanager:GetSecretValue", arn), fn


def test_the_chat_provider_is_bedrock_or_openai(translated: dict[str, Any]) -> None:
    assert translated["Parameters"]["ChatProvider"]["AllowedValues"] == ["bedrock", "openai"]
