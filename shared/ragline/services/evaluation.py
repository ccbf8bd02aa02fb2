"""``ragline eval``: index a BEIR-format dataset into a namespace and score every search mode.

BEIR documents are short abstracts, so each is one chunk of title + text (the baselines index them
the same way); chunk hits are collapsed to documents before scoring. ``accurate`` scores what a chat
search in the default ``accurate`` mode shows the model: the hybrid candidates reranked by the
deployment's reranker (fused order when it has none) and cut to the chunks one search shows.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ragline import errors
from ragline.domain.generations import storage_scope
from ragline.domain.metrics import dedupe_documents, mrr_at, ndcg_at, recall_at
from ragline.domain.models import Chunk, ChunkMetadata, SearchMode, TenantScope
from ragline.domain.retrieval import RetrievedHit
from ragline.domain.tenancy import Namespace
from ragline.ports import Embedder, TenantRegistry, VectorStoreProvider
from ragline.services.chat import MODES
from ragline.services.namespaces import claim_embedding_space, new_namespace
from ragline.services.retrieval import Fusion, RetrievalService

EvalMode = SearchMode | Literal["accurate"]
"""A search mode, or ``accurate``: the pipeline chat's default mode runs (hybrid → rerank)."""


@dataclass(frozen=True)
class BeirDataset:
    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


@dataclass(frozen=True)
class ModeScore:
    mode: EvalMode
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float
    queries: int
    recall_at_30: float = 0.0
    """Recall of a search of 30: what a reranker of 30 sees."""


def _jsonl(path: Path) -> Iterator[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def load_beir(directory: Path, split: str) -> BeirDataset:
    corpus_path, queries_path, qrels_path = (
        directory / "corpus.jsonl",
        directory / "queries.jsonl",
        directory / "qrels" / f"{split}.tsv",
    )
    for p in (corpus_path, queries_path, qrels_path):
        if not p.is_file():
            raise errors.InvalidRequest(f"not a BEIR dataset: {p} is missing", path=str(p))
    try:
        corpus = {d["_id"]: (d.get("title", ""), d.get("text", "")) for d in _jsonl(corpus_path)}
        queries = {q["_id"]: q["text"] for q in _jsonl(queries_path)}
        qrels: dict[str, dict[str, int]] = {}
        with qrels_path.open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    except (KeyError, ValueError) as exc:
        raise errors.InvalidRequest(f"malformed BEIR dataset in {directory}: {exc}") from exc
    return BeirDataset(corpus, {q: t for q, t in queries.items() if q in qrels}, qrels)


class EvaluationService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        stores: VectorStoreProvider,
        embedder: Embedder,
        retrieval: RetrievalService,
        chunks_per_search: int = 10,
    ) -> None:
        """``chunks_per_search``: the deployment's setting, what ``accurate`` keeps (as chat does)."""
        self._registry = registry
        self._stores = stores
        self._embedder = embedder
        self._retrieval = retrieval
        self._chunks_per_search = chunks_per_search

    def index(
        self, scope: TenantScope, data: BeirDataset, progress: Callable[[int], None] | None = None
    ) -> int:
        """Index the corpus once; an index already holding exactly this corpus is reused."""
        try:
            ns: Namespace = self._registry.get_namespace(scope.tenant_id, scope.namespace_id)
        except errors.NamespaceNotFound:
            ns = self._registry.create_namespace(
                new_namespace(scope.tenant_id, scope.namespace_id, "BEIR eval")
            )
        claim_embedding_space(self._registry, ns, self._embedder)
        store = self._stores.scoped(storage_scope(scope, ns.settings.generation))  # the one searched
        if store.count() == len(data.corpus):
            return 0
        ids = list(data.corpus)
        for start in range(0, len(ids), 256):
            batch = ids[start : start + 256]
            texts = [f"{data.corpus[i][0]}\n{data.corpus[i][1]}".strip() for i in batch]
            vectors = self._embedder.embed_documents(texts)
            store.upsert(
                [
                    Chunk(
                        document_id=doc_id,
                        sequence_number=0,
                        text=text,
                        metadata=ChunkMetadata(filename=doc_id, source=f"beir:{doc_id}"),
                        embedding=tuple(float(x) for x in vectors[j]),
                    )
                    for j, (doc_id, text) in enumerate(zip(batch, texts, strict=True))
                ]
            )
            if progress:
                progress(len(batch))
        return len(ids)

    def score(
        self, scope: TenantScope, data: BeirDataset, mode: EvalMode, fusion: Fusion | None = None
    ) -> ModeScore:
        """Mean nDCG@10, Recall@30, Recall@100 and MRR@10, each read from the search a client makes for
        it: nDCG@10 and MRR@10 from a search of 10, Recall@30 from a search of 30 (what a reranker of
        30 sees), Recall@100 from a search of 100 — ``adaptive`` fusion keeps each leg's top half of the
        hits asked for, so its first 10 of 100 are not its search of 10. ``accurate`` returns only the
        chunks a chat search shows, so all its figures are over those."""
        ndcg = recall = recall30 = mrr = 0.0
        retriever = self._retrieval.bind([scope])
        accurate = MODES["accurate"].showing(self._chunks_per_search)
        for qid, text in data.queries.items():
            rel = data.qrels[qid]
            if mode == "accurate":
                result = retriever.search(
                    text, mode="hybrid", candidates=accurate.candidates, keep=accurate.keep, rerank=True
                )
                lists = dict.fromkeys((10, 30, 100), _documents(result.hits))
            else:
                lists = {
                    k: _documents(retriever.search(text, mode=mode, candidates=k, keep=k, fusion=fusion).hits)
                    for k in (10, 30, 100)
                }
            ndcg += ndcg_at(lists[10], rel, 10)
            mrr += mrr_at(lists[10], rel, 10)
            recall30 += recall_at(lists[30], rel, 30)
            recall += recall_at(lists[100], rel, 100)
        n = len(data.queries) or 1
        return ModeScore(mode, ndcg / n, recall / n, mrr / n, len(data.queries), recall30 / n)


def _documents(hits: Sequence[RetrievedHit]) -> list[str]:
    """The ranked documents of chunk hits (a document's first chunk places it)."""
    return dedupe_documents([h.hit.chunk.document_id for h in hits])
