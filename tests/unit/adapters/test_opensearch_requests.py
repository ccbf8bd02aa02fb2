"""The OpenSearch request builders, as plain dicts (no cluster)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.adapters.opensearch import requests as rq
from ragline.domain.models import Chunk, ChunkMetadata, MetadataFilter, TenantScope

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
MAPPING = Path(__file__).parents[3] / "infra" / "opensearch" / "chunks-index.json"


def test_knn_filter_is_inside_the_knn_clause_and_names_the_bound_scope() -> None:
    body = rq.knn_search(SCOPE, [0.1, 0.2], 7, MetadataFilter(document_ids=("d1",)))
    knn = body["query"]["knn"]["embedding"]
    assert knn["k"] == 7 and body["size"] == 7
    assert knn["filter"]["bool"]["filter"] == [
        {"term": {"tenant_id": "acme"}},
        {"term": {"namespace_id": "docs"}},
        {"terms": {"document_id": ["d1"]}},
    ]
    assert body["_source"] == {"excludes": ["embedding"]}


def test_a_knn_query_explores_at_least_its_candidates_and_returns_its_k() -> None:
    few = rq.knn_search(SCOPE, [0.1, 0.2], 10, MetadataFilter(), candidates=100)
    assert few["query"]["knn"]["embedding"]["k"] == 100 and few["size"] == 10
    many = rq.knn_search(SCOPE, [0.1, 0.2], 300, MetadataFilter(), candidates=100)
    assert many["query"]["knn"]["embedding"]["k"] == 300 and many["size"] == 300


def test_bm25_query_is_filtered_by_scope_not_scored_by_it() -> None:
    body = rq.bm25_search(SCOPE, "bees", 5, MetadataFilter())
    assert body["query"]["bool"]["must"] == [{"match": {"text": {"query": "bees"}}}]
    assert {"term": {"tenant_id": "acme"}} in body["query"]["bool"]["filter"]


def test_neighbors_is_an_ordered_sequence_range_within_the_document() -> None:
    body = rq.neighbors_search(SCOPE, "doc", 3, 5, 5)
    rng = body["query"]["bool"]["filter"][-1]
    assert rng == {"range": {"sequence_number": {"gte": 0, "lte": 8}}}
    assert body["sort"] == [{"sequence_number": "asc"}] and body["size"] == 11


def test_bulk_line_routes_by_tenant_versions_by_generation_and_stamps_scope_from_the_binding() -> None:
    chunk = Chunk(
        document_id="d",
        sequence_number=2,
        text="tëxt",
        metadata=ChunkMetadata(filename="f.txt"),
        embedding=(1.0, -0.25),
    )
    [line] = rq.bulk_lines(SCOPE, "idx", [chunk], generation=3)
    action, source, end = line.decode().split("\n")
    assert end == ""  # NDJSON: every line ends with a newline
    assert json.loads(action) == {
        "index": {
            "_index": "idx",
            "_id": "acme/docs/d#2@3",  # each generation beside the others, never over them
            "routing": "acme",
            "version": 3,
            "version_type": "external_gte",
        }
    }
    src = json.loads(source)
    assert (src["tenant_id"], src["namespace_id"], src["generation"]) == ("acme", "docs", 3)
    assert src["text"] == "tëxt" and src["embedding"] == [1.0, -0.25]


@settings(max_examples=200)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=40))
def test_vector_json_is_valid_json_and_exact_at_float32(values: list[float]) -> None:
    """Nine significant digits: every float32 comes back exactly (-0.0 as 0)."""
    text = rq.vector_json(values)
    back = np.asarray(json.loads(text), dtype=np.float32)
    assert np.array_equal(back, np.asarray(values, dtype=np.float32))


@settings(max_examples=200)
@given(st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=40))
def test_vector_json_writes_a_unit_vectors_components_in_fewer_bytes_than_repr(values: list[float]) -> None:
    """Embedding components lie in [-1, 1]: there nine significant digits never take more bytes than
    repr (a large integral float such as 1869264128.0 can: ``1.86926413e+09``, which no vector holds)."""
    assert len(rq.vector_json(values)) <= len(json.dumps(values))


def test_mapping_uses_lucene_hnsw_cosine_and_matches_the_checked_in_copy() -> None:
    body = rq.index_body(384)
    method = body["mappings"]["properties"]["embedding"]["method"]
    assert (method["engine"], method["name"], method["space_type"]) == ("lucene", "hnsw", "cosinesimil")
    assert body["mappings"]["_routing"] == {"required": True}
    assert json.loads(MAPPING.read_text()) == body, (
        "regenerate with: python -m ragline.adapters.opensearch.requests"
    )


def test_a_faiss_index_builds_a_16_bit_graph_once_a_segment_is_large() -> None:
    """faiss: the same HNSW and cosine, the graph's vectors at 16 bits, no graph below the threshold
    (a flush's small segment is searched exactly); Lucene's index has neither."""
    faiss = rq.index_body(384, engine="faiss", hnsw=(12, 48))
    assert faiss["mappings"]["properties"]["embedding"]["method"] == {
        "name": "hnsw",
        "engine": "faiss",
        "space_type": "cosinesimil",
        "parameters": {
            "m": 12,
            "ef_construction": 48,
            "encoder": {"name": "sq", "parameters": {"type": "fp16"}},
        },
    }
    assert (
        faiss["settings"]["index"]["knn.advanced.approximate_threshold"] == rq.FAISS_GRAPH_THRESHOLD == 15_000
    )
    encoder = faiss["mappings"]["properties"]["embedding"]["method"]["parameters"]["encoder"]
    encoder["parameters"]["type"] = "x"  # a body is its own copy: the next one is untouched
    fresh = rq.index_body(384, engine="faiss")["mappings"]["properties"]["embedding"]["method"]["parameters"]
    assert fresh["encoder"] == {"name": "sq", "parameters": {"type": "fp16"}}
    silo = rq.index_body(384, engine="faiss", silo=True)  # one tenant: a graph on every segment
    assert silo["settings"]["index"]["knn.advanced.approximate_threshold"] == 0
    assert "knn.advanced.approximate_threshold" not in rq.index_body(384, silo=True)["settings"]["index"]
    lucene = rq.index_body(384, hnsw=(12, 48))
    assert lucene["mappings"]["properties"]["embedding"]["method"]["parameters"] == {
        "m": 12,
        "ef_construction": 48,
    }
    assert "knn.advanced.approximate_threshold" not in lucene["settings"]["index"]
    del faiss["settings"]["index"]["knn.advanced.approximate_threshold"]
    faiss["mappings"]["properties"]["embedding"]["method"] = lucene["mappings"]["properties"]["embedding"][
        "method"
    ]
    assert faiss == lucene  # nothing else differs


def test_the_engine_is_a_setting_and_lucene_by_default() -> None:
    from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider
    from ragline.config import Settings

    def engine(**kw: object) -> str:
        settings = Settings(opensearch_url="http://127.0.0.1:9", **kw)  # type: ignore[arg-type]
        provider = OpenSearchVectorStoreProvider.from_settings(settings, dimension=4, model_id="m")
        return str(provider.chunk_index_body()["mappings"]["properties"]["embedding"]["method"]["engine"])

    assert engine() == "lucene"
    assert engine(opensearch_engine="faiss") == "faiss"
    settings = Settings(opensearch_url="http://127.0.0.1:9", opensearch_engine="faiss")
    provider = OpenSearchVectorStoreProvider.from_settings(settings, dimension=4, model_id="m")
    threshold = "knn.advanced.approximate_threshold"
    assert provider.chunk_index_body()["settings"]["index"][threshold] == rq.FAISS_GRAPH_THRESHOLD
    assert provider.chunk_index_body(silo=True)["settings"]["index"][threshold] == 0


def test_the_vector_is_stored_once_the_source_derived_from_the_vector_values() -> None:
    """Derived source keeps the JSON vector out of the stored ``_source`` and puts it back on reads;
    ``_source.excludes`` would lose it for re-ingest reuse (and keep a ``_recovery_source`` copy)."""
    body = rq.index_body(384)
    assert body["settings"]["index"][rq.DERIVED_SOURCE] is True
    assert "_source" not in body["mappings"]


def test_index_name_is_per_embedding_space() -> None:
    assert (
        rq.index_name("ragline-chunks", "all-MiniLM-L6-v2-int8@256", 384)
        == "ragline-chunks-all-minilm-l6-v2-int8-256-384"
    )


def test_hybrid_legs_load_no_stored_fields_only_the_id_and_generation_doc_values() -> None:
    """Loading even ``_id`` decompresses each hit's stored-fields block, vectors and all."""
    leg = rq.ids_only(rq.bm25_search(SCOPE, "bees", 100, MetadataFilter()))
    assert leg["_source"] is False and leg["stored_fields"] == "_none_"
    assert leg["docvalue_fields"] == ["document_id", "sequence_number", "generation"]


def test_chunk_ids_are_per_generation_bounded_and_plain_at_generation_zero() -> None:
    assert rq.doc_id(SCOPE, "d#2") == "acme/docs/d#2"  # what an index written before versions holds
    assert rq.doc_id(SCOPE, "d#2", 7) == "acme/docs/d#2@7"
    long_doc = "x" * 240
    scope = TenantScope(tenant_id="t" * 128, namespace_id="n" * 128)
    versioned = rq.doc_id(scope, f"{long_doc}#99999", 2**40)
    assert len(versioned.encode()) <= rq.MAX_ID_BYTES and versioned.endswith(f"@{2**40}")
    assert versioned != rq.doc_id(scope, f"{long_doc}#99998", 2**40)


class RecordingIndices:
    """The ``indices`` API of a cluster with no index yet, keeping each create request."""

    def __init__(self) -> None:
        self.created: dict[str, dict[str, object]] = {}

    def exists(self, *, index: str) -> bool:
        return False

    def exists_alias(self, *, name: str) -> bool:
        return False

    def create(self, *, index: str, body: dict[str, object]) -> None:
        self.created[index] = body

    def get_mapping(self, *, index: str) -> dict[str, object]:
        """The mappings of ``index``, or of every index the name is an alias of."""
        named = {
            name: body
            for name, body in self.created.items()
            if name == index or index in body.get("aliases", {})  # type: ignore[operator]
        }
        return {name: {"mappings": body["mappings"]} for name, body in named.items()}


@pytest.mark.parametrize("replicas", [0, 1])
def test_indexes_are_created_with_the_configured_replicas(replicas: int) -> None:
    """Given RAGLINE_OPENSEARCH_REPLICAS (the template's: 1 from two nodes), when the provider creates
    its indexes, then the chunks, the fences and the placement registry get that many replicas."""
    from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider
    from ragline.config import Settings
    from tests.support.placement_registry import InMemoryDocuments

    environ = {"RAGLINE_OPENSEARCH_REPLICAS": str(replicas), "RAGLINE_OPENSEARCH_URL": "http://127.0.0.1:9"}
    settings = Settings.from_env(environ)
    provider = OpenSearchVectorStoreProvider.from_settings(settings, dimension=8, model_id="m")
    indices = RecordingIndices()
    client = InMemoryDocuments()
    client.indices = indices  # type: ignore[attr-defined]
    provider.client = provider.placements.client = client  # type: ignore[assignment]

    provider.ensure_index()

    created = {
        name: body["settings"]["index"]["number_of_replicas"] for name, body in indices.created.items()
    }  # type: ignore[index]
    assert created == {  # the pool's first generation, the fences and the placement registry
        provider.placements.pool(): replicas,
        rq.fences_index(provider.index): replicas,
        provider.placements.registry: replicas,
    }
    assert indices.created[provider.placements.pool()]["aliases"] == {provider.index: {}}


@settings(max_examples=200)
@given(sizes=st.lists(st.integers(min_value=1, max_value=300), max_size=40), cap=st.integers(10, 400))
def test_bulk_requests_are_cut_by_bytes_in_order_and_an_oversized_line_goes_alone(
    sizes: list[int], cap: int
) -> None:
    lines = [bytes([65 + i % 26]) * n for i, n in enumerate(sizes)]
    requests = list(rq.bulk_requests(lines, cap))
    assert [line for r in requests for line in r] == lines  # every line, once, in order
    for r in requests:
        assert sum(map(len, r)) <= cap or len(r) == 1  # under the cap, or one oversized line alone
    for a, b in itertools.pairwise(requests):
        assert sum(map(len, a)) + len(b[0]) > cap  # a request ends only when the next line would not fit


def test_a_sweep_of_many_documents_takes_each_below_its_own_generation_within_the_scope() -> None:
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    q = rq.older_versions_query(scope, [("a", 3), ("b", 7)])["bool"]
    assert q["filter"] == rq.scope_filter(scope) and q["minimum_should_match"] == 1
    assert [c["bool"]["filter"] for c in q["should"]] == [
        [{"term": {"document_id": "a"}}, {"range": {"generation": {"lt": 3}}}],
        [{"term": {"document_id": "b"}}, {"range": {"generation": {"lt": 7}}}],
    ]
