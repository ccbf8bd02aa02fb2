"""Tenant-true relevance: SciFact train as ONE tenant, alone vs pooled with many tenants of real text.

Four indexes on one node: the tenant alone and pooled, each with per-scope BM25 statistics (today's
mapping, :mod:`ragline.adapters.opensearch.term_stats`) and with the plain-BM25 mapping of before
(shard statistics). The pool: ``--filler`` passages of real English text of other domains
(:mod:`filler_text`) cut among ``--tenants`` tenants of random sizes, plus ``--same-domain``
tenants holding SciFact corpus passages (sampled with replacement). The tenant's own chunks and
queries use the real offline embedder; the filler's vectors are stand-ins (:mod:`filler_text`).
The plain-BM25 pool is written without filler vectors (text only, for time): its hybrid semantic leg
searches the tenant's vectors alone. Pooled indexes are kept and reused across runs (``--fresh``).

    PYTHONPATH=shared:. .venv/bin/python bench/tenant_relevance.py --opensearch-url URL \
        --filler 200000 --tenants 1000
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import filler_text
from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import term_stats
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.metrics import dedupe_documents, ndcg_at
from ragline.domain.models import Chunk, ChunkMetadata, HybridQuery, KeywordQuery, TenantScope
from ragline.services.evaluation import load_beir

ROOT = Path(__file__).parents[1]
SCOPE = TenantScope(tenant_id="scifact", namespace_id="docs")
DIM = 384


def plain_body() -> dict[str, Any]:
    """The mapping before per-scope statistics: Lucene's BM25 on ``text``, no lengths."""
    return term_stats.without(rq.index_body(DIM))


def pool(n: int, tenants: int, same_domain: int, scifact: list[str], seed: int = 11) -> list[tuple[str, str]]:
    """``(tenant, text)`` for the pool: real text cut at random among ``tenants``, then SciFact
    passages for ``same_domain`` tenants (2,000 chunks each, sampled with replacement)."""
    rng = random.Random(seed)
    texts = filler_text.passages(n)
    cuts = sorted(rng.sample(range(1, len(texts)), tenants - 1))
    out = []
    for t, (lo, hi) in enumerate(zip([0, *cuts], [*cuts, len(texts)], strict=True)):
        out += [(f"t{t}", x) for x in texts[lo:hi]]
    words = [w for doc in scifact for w in [doc.split()]]
    for t in range(same_domain):
        for _ in range(2000):
            doc = rng.choice(words)
            lo = rng.randrange(max(1, len(doc) - 100))
            out.append((f"sci{t}", " ".join(doc[lo : lo + 100])))
    return out


def load(
    p: OpenSearchVectorStoreProvider, items: list[tuple[str, str]], vectors: bool, writers: int = 3
) -> float:
    """Bulk the pool (no refresh while loading, several writers): chunks/s."""
    started = time.perf_counter()
    client = p.client
    client.indices.put_settings(index=p.index, body={"index": {"refresh_interval": "-1"}})

    def batch(lo: int) -> None:
        part = items[lo : lo + 2000]
        vecs = filler_text.stand_in_vectors([t for _, t in part], DIM, seed=lo) if vectors else None
        lines: list[bytes] = []
        for j, (tenant, text) in enumerate(part):
            c = Chunk(
                document_id=f"d{lo + j}",
                sequence_number=0,
                text=text,
                metadata=ChunkMetadata(filename=f"d{lo + j}"),
                embedding=tuple(vecs[j].tolist()) if vecs is not None else None,
            )
            line = rq.bulk_lines(TenantScope(tenant_id=tenant, namespace_id="docs"), p.index, [c])[0]
            lines.append(line if vecs is not None else line.replace(b',"embedding":[]', b""))
        for body in rq.bulk_requests(lines, rq.BULK_BYTES):
            resp = client.bulk(body=b"".join(body), request_timeout=600, filter_path="errors")
            assert not resp.get("errors"), "bulk errors"

    with ThreadPoolExecutor(writers) as ex:
        list(ex.map(batch, range(0, len(items), 2000)))
    client.indices.put_settings(index=p.index, body={"index": {"refresh_interval": None}})
    client.indices.refresh(index=p.index, request_timeout=600)
    return len(items) / (time.perf_counter() - started)


def report(results: dict[tuple[str, str, str], dict[str, float]], queries: int, own: int, pooled: int,
           others: int) -> None:  # fmt: skip
    """The pooled-vs-alone table (docs/benchmarks.md)."""
    print(f"\nSciFact train ({queries} queries, {own} chunks) alone vs pooled with "
          f"{pooled} chunks of {others} other tenants\n")  # fmt: skip
    print(
        "| BM25 statistics | mode | nDCG@10 alone | nDCG@10 pooled | pooled − alone "
        "| p50 ms alone | p50 ms pooled |"
    )
    print("|---|---|---|---|---|---|---|")
    for mapping in ("plain", "scoped"):
        for mode in ("keyword", "hybrid"):
            a, b = results[(mapping, "alone", mode)], results[(mapping, "pooled", mode)]
            label = "shard (before)" if mapping == "plain" else "per scope (after)"
            print(f"| {label} | {mode} | {a['ndcg']:.4f} | {b['ndcg']:.4f} | {b['ndcg'] - a['ndcg']:+.4f} "
                  f"| {a['p50']:.1f} | {b['p50']:.1f} |")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opensearch-url", required=True)
    ap.add_argument("--dataset", type=Path, default=Path("/work/shared/data/scifact"))
    ap.add_argument("--filler", type=int, default=200_000)
    ap.add_argument("--tenants", type=int, default=1000)
    ap.add_argument("--same-domain", type=int, default=15)
    ap.add_argument("--fresh", action="store_true", help="rebuild the pooled indexes")
    ap.add_argument("--cache", type=Path, default=ROOT / ".ragline" / "bench-cache" / "embeddings.sqlite")
    args = ap.parse_args()

    data = load_beir(args.dataset, "train")
    ids = list(data.corpus)
    texts = [f"{data.corpus[i][0]}\n{data.corpus[i][1]}".strip() for i in ids]
    items = pool(args.filler, args.tenants, args.same_domain, texts)
    client = build_client(Settings(opensearch_url=args.opensearch_url))
    tag = f"{args.filler}-{args.tenants}-{args.same_domain}"
    providers = {}
    for mapping in ("plain", "scoped"):  # the pools first: they need no embedding
        for where in ("alone", "pooled"):
            name = f"reltest-{mapping}-{where}-{tag if where == 'pooled' else 'x'}"
            p = OpenSearchVectorStoreProvider(client, index=name, dimension=DIM, refresh="false")
            if args.fresh or not client.indices.exists(index=name):
                p.drop()
                client.indices.create(
                    index=name, body=plain_body() if mapping == "plain" else rq.index_body(DIM)
                )
                if where == "pooled":
                    rate = load(p, items, vectors=mapping == "scoped")
                    print(f"{name}: {len(items)} pool chunks at {rate:.0f}/s", flush=True)
            providers[(mapping, where)] = p

    embedder = EmbeddingCache(LocalOnnxEmbedder(), args.cache)
    dvecs = embedder.embed_documents(texts)
    qids = list(data.queries)
    qv = embedder.embed_documents([data.queries[q] for q in qids])
    chunks = [
        Chunk(document_id=d, sequence_number=0, text=t, metadata=ChunkMetadata(filename=d),
              embedding=tuple(dvecs[i].tolist()))
        for i, (d, t) in enumerate(zip(ids, texts, strict=True))
    ]  # fmt: skip
    results: dict[tuple[str, str, str], dict[str, float]] = {}
    for (mapping, where), p in providers.items():
        store = p.scoped(SCOPE)
        assert (p.scope_stats is not None) == (mapping == "scoped")
        if store.count() < len(chunks):
            for i in range(0, len(chunks), 500):
                store.upsert(chunks[i : i + 500])
            client.indices.refresh(index=p.index)
        for mode in ("keyword", "hybrid"):
            ndcg, lat = 0.0, []
            for i, q in enumerate(qids):
                text = data.queries[q]
                query = (KeywordQuery(text=text, k=10) if mode == "keyword"
                         else HybridQuery(text=text, k=10, vector=tuple(qv[i].tolist())))  # fmt: skip
                t0 = time.perf_counter()
                hits = store.search(query)
                lat.append((time.perf_counter() - t0) * 1000)
                ndcg += ndcg_at(dedupe_documents([h.chunk.document_id for h in hits]), data.qrels[q], 10)
            lat.sort()
            results[(mapping, where, mode)] = {"ndcg": ndcg / len(qids), "p50": lat[len(lat) // 2]}
    report(results, len(qids), len(chunks), len(items), args.tenants + args.same_domain)
    return 0


if __name__ == "__main__":
    sys.exit(main())
