"""Run-local evidence: aliases unique across namespaces, stable, and safe inside a citation marker."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.domain.citations import verify_citations
from ragline.domain.models import Chunk, ScoreBreakdown, SearchHit, TenantScope
from ragline.domain.retrieval import ChunkKey, EvidenceTable, RetrievedHit, deduplicate

pytestmark = pytest.mark.unit
DOCS = TenantScope(tenant_id="acme", namespace_id="docs")
SUPPORT = TenantScope(tenant_id="acme", namespace_id="support")


def chunk(doc: str, seq: int = 0, text: str | None = None) -> Chunk:
    return Chunk(document_id=doc, sequence_number=seq, text=text or f"{doc} part {seq}")


def hit(scope: TenantScope, doc: str, seq: int, text: str, score: float) -> RetrievedHit:
    return RetrievedHit(
        scope, SearchHit(chunk=chunk(doc, seq, text), score=score, breakdown=ScoreBreakdown())
    )


def test_one_namespace_keeps_plain_chunk_ids() -> None:
    table = EvidenceTable()
    assert table.add(DOCS, chunk("guide.md", 3)).alias == "guide.md#3"
    assert table.document("guide.md") == (DOCS, "guide.md")


def test_the_same_document_id_in_two_namespaces_gets_two_aliases() -> None:
    table = EvidenceTable()
    first = table.add(DOCS, chunk("guide.md", 0))
    second = table.add(SUPPORT, chunk("guide.md", 0))
    assert (first.alias, second.alias) == ("guide.md#0", "support:guide.md#0")
    assert table.document("support:guide.md") == (SUPPORT, "guide.md")
    assert (first.key, second.key) == (ChunkKey("docs", "guide.md", 0), ChunkKey("support", "guide.md", 0))


def test_a_real_document_id_that_looks_like_an_alias_is_not_confused() -> None:
    table = EvidenceTable()
    table.add(DOCS, chunk("guide.md"))
    table.add(DOCS, chunk("support:guide.md"))  # a real id in docs, taken before support's guide.md
    third = table.add(SUPPORT, chunk("guide.md"))
    assert third.alias == "support:guide.md~2#0"
    assert table.document("support:guide.md") == (DOCS, "support:guide.md")
    assert table.document("support:guide.md~2") == (SUPPORT, "guide.md")


def test_the_first_sighting_wins_but_a_later_score_fills_in() -> None:
    table = EvidenceTable()
    table.add(DOCS, chunk("a"))
    scored = SearchHit(chunk=chunk("a"), score=0.5, breakdown=ScoreBreakdown())
    assert table.add(DOCS, chunk("a"), scored).hit == scored
    assert len(table) == 1


def test_ids_with_citation_breaking_characters_are_made_safe_and_still_verify() -> None:
    table = EvidenceTable()
    alias = table.add(DOCS, chunk('a,b "c".txt')).alias
    assert alias == "a_b__c_.txt#0"
    assert verify_citations(f'x <citation ids="{alias}"/>', table).cited == [alias]
    assert table.document("a_b__c_.txt") == (DOCS, 'a,b "c".txt')


@given(
    st.lists(st.tuples(st.sampled_from([DOCS, SUPPORT]), st.text(min_size=1, max_size=8), st.integers(0, 3)))
)
def test_aliases_are_unique_and_lead_back_to_their_chunk(items: list[tuple[TenantScope, str, int]]) -> None:
    table = EvidenceTable()
    for scope, doc, seq in items:
        table.add(scope, chunk(doc, seq))
    keys = {ChunkKey(s.namespace_id, d, q) for s, d, q in items}
    assert len(table) == len(keys)
    for alias in table:
        item = table.get(alias)
        assert item is not None and item.key in keys
        doc_alias = alias.rsplit("#", 1)[0]
        assert table.document(doc_alias) == (item.scope, item.chunk.document_id)


def test_duplicates_by_key_or_normalised_text_keep_the_best() -> None:
    hits = [
        hit(DOCS, "a", 0, "Bees  make honey.", 0.9),
        hit(DOCS, "b", 0, "bees make HONEY.", 0.8),  # the same passage under another name
        hit(SUPPORT, "a", 0, "Other text.", 0.7),  # same document id, other namespace: distinct
        hit(DOCS, "a", 0, "Bees  make honey.", 0.6),  # the same chunk again
    ]
    kept = deduplicate(hits)
    assert [(h.scope.namespace_id, h.hit.chunk.document_id, h.hit.score) for h in kept] == [
        ("docs", "a", 0.9),
        ("support", "a", 0.7),
    ]
