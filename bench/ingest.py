"""Ingestion benchmark: parse+chunk throughput, and end-to-end ingest into each store.

Rows, measured in one run:
- parse+chunk of plain text (MB/s) with the production token counter;
- a 100-page PDF through the ingest service (claim → fetch → parse → chunk → embed → index → ready),
  with the offline embedder, into the embedded store and into OpenSearch;
- end-to-end chunks/s for a folder of text documents, with the offline embedder and with embedding
  excluded (a precomputed-vector stand-in), into each store.

    .venv/bin/python bench/ingest.py --opensearch-url http://127.0.0.1:9200
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ragline.adapters.embedded.objects import LocalObjectStore
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.documents.chunker import WordCachedCounter, chunk_document
from ragline.documents.parsers import parse_document
from ragline.domain.models import TenantScope
from ragline.ports import Embedder, VectorStoreProvider
from ragline.services.ingest import IngestService, ObjectEvent
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container

sys.path.insert(0, str(Path(__file__).parents[1] / "samples"))
from make_binaries import write_pdf

WORDS = """the model retrieval index tenant document chunk search answer question evidence vector
keyword hybrid fusion score rank cell protein gene study result patient trial effect analysis""".split()
SCOPE = TenantScope(tenant_id="bench", namespace_id="docs")


def prose(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = rng.choices(WORDS, k=rng.randint(8, 24))
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


class PrecomputedEmbedder:
    """Embedding excluded: unit vectors with no model work, same dimension as the real one."""

    model_id = "all-MiniLM-L6-v2-int8@256"
    dimension = 384

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self.embed_documents([text])[0]

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        v = np.ones((len(texts), self.dimension), dtype=np.float32)
        return v / np.sqrt(self.dimension)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def service(root: Path, stores: VectorStoreProvider, embedder: Embedder, tokenizer: object) -> IngestService:
    """The production ingest service over fresh records (a new home each time), with these parts."""
    objects = LocalObjectStore(root / "objects")
    c = Container(
        Settings(home=root / uuid.uuid4().hex[:6]),
        stores=stores,
        embedder=embedder,
        tokenizer=tokenizer,
        objects=objects,
    )
    c.registry.create_namespace(new_namespace(SCOPE.tenant_id, SCOPE.namespace_id))
    return c.ingest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opensearch-url", default="")
    ap.add_argument("--docs", type=int, default=40, help="text documents for the chunks/s rows")
    args = ap.parse_args()
    rng = random.Random(11)
    onnx = LocalOnnxEmbedder()
    counter = WordCachedCounter(onnx)
    rows: list[tuple[str, str, str]] = []

    text = "\n\n".join(prose(rng, 8) for _ in range(6000)).encode()
    t0 = time.perf_counter()
    parsed = parse_document("big.txt", text)
    chunks = chunk_document(parsed, document_id="big.txt", tokenizer=counter)
    took = time.perf_counter() - t0
    rows.append(
        (
            "parse+chunk plain text",
            f"{len(text) / 1e6:.1f} MB → {len(chunks)} chunks",
            f"{len(text) / 1e6 / took:.1f} MB/s",
        )
    )

    pdf = write_pdf([[prose(rng, 1)[:90] for _ in range(40)] for _ in range(100)])
    tmp = tempfile.TemporaryDirectory()
    root = Path(tmp.name)
    (root / "objects" / "bench" / "docs").mkdir(parents=True)
    (root / "objects" / "bench" / "docs" / "manual.pdf").write_bytes(pdf)
    docs = {f"doc{i}.txt": "\n\n".join(prose(rng, 10) for _ in range(30)).encode() for i in range(args.docs)}

    providers: list[tuple[str, VectorStoreProvider]] = [
        ("sqlite", SqliteVectorStoreProvider(root / "store.sqlite", dimension=384))
    ]
    os_provider = None
    if args.opensearch_url:
        os_provider = OpenSearchVectorStoreProvider(
            build_client(Settings(opensearch_url=args.opensearch_url)),
            index=f"bench-{uuid.uuid4().hex[:8]}",
            dimension=384,
        )
        providers.append(("opensearch", os_provider))

    for name, stores in providers:
        svc = service(root, stores, onnx, counter)
        t0 = time.perf_counter()
        r = svc.sync_object(
            ObjectEvent(
                scope=SCOPE, key="bench/docs/manual.pdf", path="manual.pdf", sequencer="1", size=len(pdf)
            )
        )
        took = time.perf_counter() - t0
        rows.append(
            (
                f"100-page PDF, event → searchable ({name})",
                f"{r.chunks} chunks, {r.pages} pages",
                f"{took:.1f} s",
            )
        )
        for label, embedder in (("offline embedder", onnx), ("embedding excluded", PrecomputedEmbedder())):
            svc = service(root, stores, embedder, counter)
            total = 0
            t0 = time.perf_counter()
            for filename, data in docs.items():
                total += svc.ingest(SCOPE, filename=f"{label[:3]}-{filename}", data=data).chunks
            took = time.perf_counter() - t0
            rows.append(
                (
                    f"text documents, {label} ({name})",
                    f"{len(docs)} docs, {total} chunks",
                    f"{total / took:,.0f} chunks/s",
                )
            )
    if os_provider is not None:
        os_provider.drop()

    print("| measurement | work | result |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
