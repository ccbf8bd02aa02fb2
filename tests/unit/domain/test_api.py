"""The API's views repeat the domain's field lists in camelCase; they must not drift apart."""

from __future__ import annotations

import pytest

from ragline.domain.api import Scores, Usage
from ragline.domain.models import RunUsage, ScoreBreakdown

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("view", "model"), [(Usage, RunUsage), (Scores, ScoreBreakdown)])
def test_every_domain_field_is_in_its_view_and_only_those(view: type, model: type) -> None:
    assert list(view.model_fields) == list(model.model_fields)


def test_a_view_serialises_camel_case_from_the_domain_model() -> None:
    usage = Usage.of(RunUsage(retrievals=2, llm_input_tokens=5, llm_cached_input_tokens=3))
    assert usage.model_dump() == {
        "retrievals": 2,
        "reranks": 0,
        "llmInputTokens": 5,
        "llmOutputTokens": 0,
        "embeddedTokens": 0,
        "pages": 0,
        "llmCachedInputTokens": 3,
    }
