"""The rerank model the template deploys is one Bedrock offers in the stack's Region: the Region's default
when RerankModel is empty, and a deployment refused (a template Rule) when the model or Rerank itself is
not offered there. Checked against the local Bedrock server's own table of Regions, not the template's."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.translated import StandInStack
from tests.rehearsal.cloudformation import REGION
from tests.support.bedrock_requests import RERANK_REGIONS

pytestmark = pytest.mark.deploy
RERANK_CALLERS = ("SearchFunction", "HostingSearchFunction", "ChatFunction")
RERANK_OFFERED = sorted(set().union(*RERANK_REGIONS.values()))


def in_region(translated: dict[str, Any], region: str, **parameters: str) -> StandInStack:
    """A stack in ``region``; where the Region has no default chat model (ca-central-1, whose Rule
    test_region_defaults checks), an explicit one, so that only the rerank Rules are in play here."""
    if "Chat" not in translated["Mappings"]["RegionModels"].get(region, {}):
        parameters = {"BedrockChatModel": "amazon.nova-lite-v1:0", **parameters}
    return StandInStack(translated, {"AWS::Region": region, **parameters})


def rerank_model_granted(stack: StandInStack, fn: str, model: str, region: str) -> bool:
    return stack.function(fn).allows(
        "bedrock:InvokeModel", f"arn:aws:bedrock:{region}::foundation-model/{model}"
    )


@pytest.mark.parametrize("region", [REGION, *RERANK_OFFERED])
def test_the_default_rerank_model_is_one_bedrock_offers_in_the_stacks_region(
    translated: dict[str, Any], region: str
) -> None:
    # Given the defaults, deployed in a Region that offers Bedrock Rerank (the rehearsal's among them)
    stack = in_region(translated, region)
    assert stack.values["Reranker"] == "bedrock" and not stack.violated_rules()

    # Then every function that reranks is configured with, and may invoke, a model offered there
    for fn in RERANK_CALLERS:
        model = stack.function(fn).environment["RAGLINE_BEDROCK_RERANK_MODEL"]
        assert region in RERANK_REGIONS[model], (fn, model)
        assert rerank_model_granted(stack, fn, model, region), fn
        others = set(RERANK_REGIONS) - {model}
        assert not any(rerank_model_granted(stack, fn, other, region) for other in others), fn


@pytest.mark.parametrize(("model", "region"), [(m, r) for m, rs in RERANK_REGIONS.items() for r in rs])
def test_an_explicit_rerank_model_offered_in_the_region_is_kept(
    translated: dict[str, Any], model: str, region: str
) -> None:
    stack = in_region(translated, region, RerankModel=model)
    assert not stack.violated_rules()
    assert stack.function("SearchFunction").environment["RAGLINE_BEDROCK_RERANK_MODEL"] == model


def test_a_rerank_model_not_offered_in_the_region_is_refused_before_anything_is_created(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, {"AWS::Region": "us-east-1", "RerankModel": "amazon.rerank-v1:0"})
    assert stack.violated_rules() == ["AmazonRerankIsOfferedHere"]


@pytest.mark.parametrize("region", ["eu-west-1", "ap-south-1"])
def test_a_region_without_bedrock_rerank_refuses_it_and_deploys_another_reranker(
    translated: dict[str, Any], region: str
) -> None:
    assert StandInStack(translated, {"AWS::Region": region}).violated_rules() == [
        "BedrockRerankIsOfferedHere"
    ]
    # The LLM reranker needs no Rerank model: the Region's table is not consulted, nothing fails
    stack = StandInStack(translated, {"AWS::Region": region, "Reranker": "llm"})
    assert not stack.violated_rules()
    assert stack.function("SearchFunction").environment["RAGLINE_RERANKER"] == "llm"
