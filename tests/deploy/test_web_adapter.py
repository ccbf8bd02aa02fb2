"""Chat runs under AWS's Lambda Web Adapter layer, which AWS publishes for arm64 only in the commercial
partition (account 753240598075 in every Region; AWS China publishes x86_64 layers only, from other
accounts, and GovCloud none): the template builds the commercial ARN and refuses, before creating
anything, a partition where that layer does not exist."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.translated import StandInStack

pytestmark = pytest.mark.deploy

RULE = "WebAdapterLayerIsPublishedHere"


@pytest.mark.parametrize(
    ("partition", "region"),
    [("aws-cn", "cn-north-1"), ("aws-cn", "cn-northwest-1"), ("aws-us-gov", "us-gov-west-1")],
)
def test_a_partition_without_the_arm64_layer_is_refused(
    translated: dict[str, Any], partition: str, region: str
) -> None:
    stack = StandInStack(translated, {"AWS::Partition": partition, "AWS::Region": region})
    assert RULE in stack.violated_rules()
    description = translated["Rules"][RULE]["Assertions"][0]["AssertDescription"]
    assert "commercial" in description and "docs/deploy.md" in description


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "ap-southeast-2"])
def test_the_commercial_partition_gets_awss_published_arm64_layer(
    translated: dict[str, Any], region: str
) -> None:
    # (Reranker=none: Bedrock Rerank is not offered in every Region, another rule)
    stack = StandInStack(
        translated, {"AWS::Region": region, "WebAdapterLayerVersion": "25", "Reranker": "none"}
    )
    assert RULE not in stack.violated_rules()
    (adapter,) = [layer for layer in stack.function("ChatFunction").layers if "LambdaAdapter" in layer]
    assert adapter == f"arn:aws:lambda:{region}:753240598075:layer:LambdaAdapterLayerArm64:25"
    # and the function it is attached to is the architecture the layer is built for
    props = translated["Resources"]["ChatFunction"]["Properties"]
    assert props["Architectures"] == ["arm64"]
