"""Keyword search on the embedded store after writes to a large namespace: first query and steady state.

Run: ``PYTHONPATH=shared .venv/bin/python bench/bm25_incremental.py [--chunks 100000]``

A namespace of ``--chunks`` generated chunks (``--docs-of`` chunks per document; words drawn from a
Zipf-distributed vocabulary of 30,000 made-up words, a quarter of them after an English stop word;
random unit vectors) is written through the store's API (``upsert`` + ``publish``, as ingestion
does). A fresh provider then answers its first keyword query (reading the scope and building the
BM25 index) and ``--queries`` more (steady state); then, in turn: a new document is ingested, an
existing one re-ingested shorter (chunks rewritten in place, the tail swept), one deleted, each
followed by the first keyword query after it and another steady-state run. A first semantic query
after a further ingest shows the vector matrix's side.

Milliseconds are wall time of the store's ``search`` (what a caller waits for); ``CPU ms`` is the
process's CPU time for the same call, steadier on a shared machine. The script only uses the store's
public API, so the tree before a change can be measured with the same file:
``git archive <commit> shared | tar -x -C /tmp/before`` then ``PYTHONPATH=/tmp/before/shared``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.domain.models import Chunk, ChunkMetadata, KeywordQuery, SemanticQuery, TenantScope

SCOPE = TenantScope(tenant_id="bench", namespace_id="big")
DIMENSION = 384
STOP = "the of and to in is was that for it with as on be at by this had not are but from or have".split()


def vocabulary(size: int, rng: random.Random) -> list[str]:
    syllables = "ka lo mi ne ru sa ti vo xe zu pre tra ment ion al er ing ed ly ic".split()
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))))
    return sorted(words)


class Corpus:
    """Deterministic chunk texts and vectors."""

    def __init__(self, seed: int) -> None:
        self.words = np.array(vocabulary(30_000, random.Random(seed)))
        self.rng = np.random.default_rng(seed)

    def texts(self, n: int) -> list[str]:
        out = []
        for _ in range(n):
            ranks = self.rng.zipf(1.15, size=400)
            ranks = ranks[ranks <= len(self.words)][: int(self.rng.integers(60, 160))] - 1
            words = self.words[ranks].tolist()
            for j in range(0, len(words), 4):
                words[j] = f"{STOP[j % len(STOP)]} {words[j]}"
            out.append(" ".join(words).capitalize() + ".")
        return out

    def vectors(self, n: int) -> np.ndarray:
        v = self.rng.standard_normal((n, DIMENSION)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def chunks(corpus: Corpus, document_id: str, n: int) -> list[Chunk]:
    texts, vectors = corpus.texts(n), corpus.vectors(n)
    meta = ChunkMetadata(filename=f"{document_id}.txt")
    return [
        Chunk(document_id=document_id, sequence_number=i, text=t, metadata=meta, embedding=tuple(v.tolist()))
        for i, (t, v) in enumerate(zip(texts, vectors, strict=True))
    ]


def ingest(
    provider: SqliteVectorStoreProvider, corpus: Corpus, document_id: str, n: int, generation: int
) -> None:
    store = provider.scoped(SCOPE)
    store.upsert(chunks(corpus, document_id, n), generation=generation)
    store.publish(document_id, generation=generation)


def timed(call: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    call()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--docs-of", type=int, default=100, help="chunks per document")
    ap.add_argument("--new", type=int, default=200, help="chunks of the document ingested afterwards")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=15)
    args = ap.parse_args()

    corpus = Corpus(args.seed)
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.sqlite"
        writer = SqliteVectorStoreProvider(path, dimension=DIMENSION)
        started = time.perf_counter()
        for d in range(args.chunks // args.docs_of):
            ingest(writer, corpus, f"doc{d}", args.docs_of, 1)
        loaded = time.perf_counter() - started
        queries = [" ".join(t.split()[1:4]) for t in corpus.texts(args.queries)]
        store = writer.scoped(SCOPE)
        count = store.count()

        def first(label: str, query: object) -> None:
            wall, cpu = timed(lambda: store.search(query))  # type: ignore[arg-type]
            rows.append((label, f"{wall:,.1f}", f"{cpu:,.1f}"))

        def steady(label: str) -> None:
            times = sorted(timed(lambda q=q: store.search(KeywordQuery(text=q, k=10)))[0] for q in queries)
            p95 = times[int(len(times) * 0.95) - 1]
            rows.append((label, f"p50 {statistics.median(times):.2f} / p95 {p95:.2f}", ""))

        writer.close()  # a fresh provider: nothing held in memory, as in a new process
        writer = SqliteVectorStoreProvider(path, dimension=DIMENSION)
        store = writer.scoped(SCOPE)
        first("first keyword query, fresh process (read scope + build BM25)", KeywordQuery(text=queries[0]))
        steady("steady-state keyword query, k=10 (ms)")
        ingest(writer, corpus, "new", args.new, 1)
        first(
            f"first keyword query after ingesting a {args.new}-chunk document", KeywordQuery(text=queries[1])
        )
        steady("steady-state keyword query after it")
        ingest(writer, corpus, "doc3", args.docs_of * 4 // 5, 2)
        first("first keyword query after re-ingesting a document shorter", KeywordQuery(text=queries[2]))
        writer.scoped(SCOPE).delete_document("doc5")
        first("first keyword query after deleting a document", KeywordQuery(text=queries[3]))
        steady("steady-state keyword query after them")
        ingest(writer, corpus, "new2", args.new, 1)
        vector = tuple(corpus.vectors(1)[0].tolist())
        first(
            "first semantic query after another ingest", SemanticQuery(text=queries[4], vector=vector, k=10)
        )
        writer.close()

    print(
        f"{count:,} chunks in {args.chunks // args.docs_of:,} documents, loaded in {loaded:.0f} s; "
        f"python {sys.version.split()[0]}"
    )
    print("| measurement | ms | CPU ms |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
