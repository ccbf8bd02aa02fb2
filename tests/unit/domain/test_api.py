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


def test_a_chunk_view_shows_the_documents_metadata_and_never_its_readers() -> None:
    """Issue 29 #1: every hit, chat source and hosting-search chunk is a ChunkView."""
    from ragline.domain.api import ChunkView
    from ragline.domain.models import Chunk, ChunkMetadata

    chunk = Chunk(
        document_id="d",
        sequence_number=0,
        text="t",
        metadata=ChunkMetadata(attributes={"year": 2024.0, "tags": ["a"]}, readers=("g:hr", "u:ann")),
    )
    shown = ChunkView.build("d#0", "docs", chunk, None).model_dump()
    assert shown["metadata"] == {"year": 2024.0, "tags": ["a"]}
    assert "g:hr" not in str(shown) and "readers" not in shown
