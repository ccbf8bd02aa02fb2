"""One source for the Regions: the template's ``RegionModels`` mapping. docs/deploy.md's "Default models by
Region" block is generated from the template (``infra/sam/region_table.py``), and each Rule's Region list
(Rules cannot use Fn::FindInMap) names exactly the mapping's Regions; OpenSearch Serverless's list is
cfn-lint's (the Regions whose CloudFormation has ``AWS::OpenSearchServerless::Collection``)."""

from __future__ import annotations

import importlib.util
import json
from types import ModuleType
from typing import Any

import pytest

from tests.deploy.translated import ROOT

pytestmark = pytest.mark.deploy
RULE_KEY = {
    "BedrockChatModelHasARegionDefault": "Chat",
    "EmbeddingModelHasARegionDefault": "Embedding",
    "BedrockRerankIsOfferedHere": "Rerank",
}


def region_table() -> ModuleType:
    spec = importlib.util.spec_from_file_location("region_table", ROOT / "infra/sam/region_table.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rule_regions(translated: dict[str, Any], rule: str) -> list[str]:
    """The Region list of a Rule's one ``Fn::Contains [[regions...], Ref AWS::Region]`` assertion."""
    (assertion,) = translated["Rules"][rule]["Assertions"]
    regions, region = assertion["Assert"]["Fn::Contains"]
    assert region == {"Ref": "AWS::Region"}
    return list(regions)


def cfn_lint_regions_with(resource_type: str) -> set[str]:
    """Regions whose CloudFormation offers ``resource_type``, from cfn-lint's per-Region schema index."""
    venv = ROOT / "infra/sam/.venv/lib"
    (providers,) = venv.glob("python3*/site-packages/cfnlint/data/schemas/providers")
    found = {p.stem for p in providers.glob("*-*.json") if resource_type in json.loads(p.read_text())}
    assert "us-east-1" in found
    return found


def test_docs_deploy_md_holds_the_table_generated_from_the_template() -> None:
    generator = region_table()
    docs = (ROOT / "docs/deploy.md").read_text()
    expected = generator.render(generator.load(ROOT / "template.yaml"))
    assert generator.block(docs) == expected, "docs/deploy.md is stale: run infra/sam/region_table.py --write"


@pytest.mark.parametrize(("rule", "key"), RULE_KEY.items())
def test_each_rules_regions_are_the_mappings(translated: dict[str, Any], rule: str, key: str) -> None:
    regions = rule_regions(translated, rule)
    mapped = [r for r, models in translated["Mappings"]["RegionModels"].items() if key in models]
    assert regions == sorted(regions) and set(regions) == set(mapped)


def test_serverless_is_refused_exactly_where_cloudformation_has_no_collection(
    translated: dict[str, Any],
) -> None:
    offered = cfn_lint_regions_with("AWS::OpenSearchServerless::Collection")
    regions = rule_regions(translated, "OpenSearchServerlessIsOfferedHere")
    assert regions == sorted(regions) and set(regions) == offered
