"""The chat and embedding models a default deployment uses are the stack's Region's own (``Mappings:
RegionModels``: an in-Region model id where Bedrock offers one, else the geography's inference profile),
the roles grant exactly them, and every Region/mode/model combination that would fail at deploy or at the
first request is refused by a template Rule, before anything is created, naming the parameter to change."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.modes import SNAPSTART
from tests.deploy.translated import StandInStack
from tests.rehearsal.cloudformation import FunctionSpec
from tests.rehearsal.iam import bedrock_model_calls

pytestmark = pytest.mark.deploy
CHAT_CALLERS = ("SearchFunction", "HostingSearchFunction", "ChatFunction")
"""The functions that may call the chat model: search only to rerank with it (:func:`callers`)."""
EMBEDDERS = (
    "SearchFunction",
    "HostingSearchFunction",
    "DocumentsFunction",
    "IngestionFunction",
    "ChatFunction",
)
GEOGRAPHY = {"us": "us.", "eu": "eu.", "ap": "apac."}
"""A Region's code prefix → the prefix of the cross-Region inference profiles it may call."""
MAPPED = ["us-east-1", "us-west-2", "eu-central-1", "eu-west-1", "eu-west-3", "ap-northeast-1", "ap-south-1"]
"""Regions with both defaults, across the three geographies and both kinds of id."""
GIVEN = {"BedrockChatModel": "amazon.nova-lite-v1:0", "EmbeddingModel": "amazon.titan-embed-text-v2:0"}
"""Explicit models: what an operator sets in a Region the mapping has no default for."""


def regions(translated: dict[str, Any]) -> dict[str, dict[str, str]]:
    mapping: dict[str, dict[str, str]] = translated["Mappings"]["RegionModels"]
    return mapping


def chat_granted(spec: FunctionSpec, model: str, region: str) -> bool:
    calls = [c for action in ("InvokeModel", "InvokeModelWithResponseStream")
             for c in bedrock_model_calls(spec.logical, action, model, region)]  # fmt: skip
    return all(spec.allows(c.action, c.resource, c.context) for c in calls)


def embedding_granted(spec: FunctionSpec, model: str, region: str) -> bool:
    return spec.allows("bedrock:InvokeModel", f"arn:aws:bedrock:{region}::foundation-model/{model}")


def callers(params: dict[str, str]) -> tuple[str, ...]:
    """Who calls the chat model with these parameters: hosting search and chat; search with Reranker=llm."""
    return CHAT_CALLERS if params.get("Reranker") == "llm" else CHAT_CALLERS[1:]


def reranker_here(translated: dict[str, Any], region: str) -> dict[str, str]:
    """Bedrock Rerank where the Region offers it, else the LLM reranker (its own Rule is tested elsewhere)."""
    return {} if "Rerank" in regions(translated).get(region, {}) else {"Reranker": "llm"}


@pytest.mark.parametrize("region", MAPPED)
def test_the_default_models_are_the_regions_own_and_the_roles_grant_exactly_them(
    translated: dict[str, Any], region: str
) -> None:
    # Given a deployment with every model parameter empty, in a Region the mapping has defaults for
    params = {"AWS::Region": region, **reranker_here(translated, region)}
    stack = StandInStack(translated, params)
    assert stack.values["BedrockChatModel"] == "" and stack.values["EmbeddingModel"] == ""
    assert stack.violated_rules() == []
    chat, embedding = regions(translated)[region]["Chat"], regions(translated)[region]["Embedding"]

    # Then the chat model is an in-Region id or the profile of the Region's own geography
    is_profile = chat.split(".", 1)[0] in {"us", "eu", "apac", "global"}
    assert not is_profile or chat.startswith(GEOGRAPHY[region.split("-", maxsplit=1)[0]]), chat
    other_chats = {m["Chat"] for m in regions(translated).values() if "Chat" in m} - {chat}
    other_embeddings = {"amazon.titan-embed-text-v1", "cohere.embed-multilingual-v3"}
    for fn in CHAT_CALLERS + EMBEDDERS:
        spec = stack.function(fn)
        # And every function is configured with the Region's models...
        assert spec.environment["RAGLINE_BEDROCK_CHAT_MODEL"] == chat, fn
        assert spec.environment["RAGLINE_BEDROCK_EMBEDDING_MODEL"] == embedding, fn
        # ...and may call exactly them: the chat model only where it is called, no other one anywhere
        assert chat_granted(spec, chat, region) == (fn in callers(params)), fn
        assert not any(chat_granted(spec, other, region) for other in other_chats), fn
        assert embedding_granted(spec, embedding, region) == (fn in EMBEDDERS), fn
        assert not any(embedding_granted(spec, other, region) for other in other_embeddings), fn


def test_us_east_1_keeps_nova_pro_by_its_in_region_id_and_elsewhere_a_profile_replaces_it(
    translated: dict[str, Any],
) -> None:
    mapping = regions(translated)
    assert mapping["us-east-1"]["Chat"] == "amazon.nova-pro-v1:0"
    assert mapping["us-west-2"]["Chat"] == "us.amazon.nova-pro-v1:0"
    assert mapping["eu-west-1"]["Chat"] == "eu.amazon.nova-pro-v1:0"
    assert mapping["ap-northeast-1"]["Chat"] == "apac.amazon.nova-pro-v1:0"
    # Embeddings are mapped to in-Region ids only (the roles grant a foundation model in the Region)
    assert {m["Embedding"] for m in mapping.values() if "Embedding" in m} == {"amazon.titan-embed-text-v2:0"}


@pytest.mark.parametrize("region", ["eu-west-1", "ca-central-1", "ap-east-2"])
def test_explicit_models_are_kept_and_granted_in_any_region(translated: dict[str, Any], region: str) -> None:
    params = {"AWS::Region": region, "SnapStart": "false", **reranker_here(translated, region), **GIVEN}
    stack = StandInStack(translated, params)
    assert stack.violated_rules() == []
    for fn in callers(params):
        spec = stack.function(fn)
        assert spec.environment["RAGLINE_BEDROCK_CHAT_MODEL"] == GIVEN["BedrockChatModel"], fn
        assert chat_granted(spec, GIVEN["BedrockChatModel"], region), fn
        assert not chat_granted(spec, "amazon.nova-pro-v1:0", region), fn
    for fn in EMBEDDERS:
        assert embedding_granted(stack.function(fn), GIVEN["EmbeddingModel"], region), fn


# Each refused combination: (parameters, the one Rule it violates); the fix: parameters that deploy.
REFUSED = {
    "no chat default (ca-central-1)": (
        {"AWS::Region": "ca-central-1"},
        "BedrockChatModelHasARegionDefault",
        {"BedrockChatModel": "amazon.nova-lite-v1:0"},
    ),
    "no embedding default (eu-north-1)": (
        {"AWS::Region": "eu-north-1", "Reranker": "llm"},
        "EmbeddingModelHasARegionDefault",
        {"EmbeddingModel": "amazon.titan-embed-text-v2:0"},
    ),
    "no SnapStart (Taipei)": (
        {"AWS::Region": "ap-east-2", "Reranker": "llm", **GIVEN},
        "SnapStartIsOfferedHere",
        {"SnapStart": "false"},
    ),
    "no SnapStart (New Zealand)": (
        {"AWS::Region": "ap-southeast-6", "Reranker": "llm", **GIVEN},
        "SnapStartIsOfferedHere",
        {"SnapStart": "false"},
    ),
    "no OpenSearch Serverless (Cape Town)": (
        {"AWS::Region": "af-south-1", "Reranker": "llm", "OpenSearchMode": "serverless", **GIVEN},
        "OpenSearchServerlessIsOfferedHere",
        {"OpenSearchMode": "domain"},
    ),
    "no OpenSearch Serverless (Jakarta)": (
        {"AWS::Region": "ap-southeast-3", "Reranker": "llm", "OpenSearchMode": "serverless", **GIVEN},
        "OpenSearchServerlessIsOfferedHere",
        {"OpenSearchMode": "domain"},
    ),
}
NAMED = {
    "BedrockChatModelHasARegionDefault": "BedrockChatModel",
    "EmbeddingModelHasARegionDefault": "EmbeddingModel",
    "SnapStartIsOfferedHere": "SnapStart=false",
    "OpenSearchServerlessIsOfferedHere": "OpenSearchMode=domain",
}


@pytest.mark.parametrize("case", REFUSED)
def test_each_unsupported_combination_is_refused_by_exactly_its_rule_and_its_fix_deploys(
    translated: dict[str, Any], case: str
) -> None:
    params, rule, fix = REFUSED[case]
    assert StandInStack(translated, params).violated_rules() == [rule]
    assert StandInStack(translated, {**params, **fix}).violated_rules() == []


@pytest.mark.parametrize(("rule", "parameter"), NAMED.items())
def test_each_refusal_names_the_parameter_to_change(
    translated: dict[str, Any], rule: str, parameter: str
) -> None:
    (assertion,) = translated["Rules"][rule]["Assertions"]
    assert parameter in assertion["AssertDescription"]


def test_no_chat_default_is_needed_for_an_openai_compatible_endpoint(translated: dict[str, Any]) -> None:
    stack = StandInStack(translated, {"AWS::Region": "ca-central-1", "ChatProvider": "openai"})
    assert stack.violated_rules() == []
    assert "RAGLINE_BEDROCK_CHAT_MODEL" not in stack.function("ChatFunction").environment


def test_snapstart_false_deploys_the_seven_functions_without_it_and_keeps_their_alias(
    translated: dict[str, Any],
) -> None:
    resources = translated["Resources"]
    for value, expected in (("true", {"ApplyOn": "PublishedVersions"}), ("false", None)):
        stack = StandInStack(translated, {"SnapStart": value})
        for fn in SNAPSTART:
            resolved = stack.resolve(resources[fn]["Properties"])
            assert resolved.get("SnapStart") == expected, (value, fn)
            alias = resources[f"{fn}Aliaslive"]
            assert "Condition" not in alias and alias["Properties"]["Name"] == "live", fn
