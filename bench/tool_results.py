"""What a search result costs the model in each layout: ``compact`` (``[id] filename — text``) vs ``json``.

``samples/northwind`` and a slice of SciFact (``--scifact``, the first N abstracts of the train corpus)
are ingested into fresh embedded homes; every question of ``bench/data/multihop.jsonl`` (Northwind) and
the first N SciFact train claims runs one chat ``search`` exactly as the tool loop calls it
(:func:`ragline.agents.tools.run_tool`, ``accurate`` retrieval without a reranker: hybrid, 10 chunks);
the same hits are rendered in both layouts. Per corpus: characters and tokens per result (the local
MiniLM tokenizer's count, a proxy for a chat model's; OpenAI's ``o200k`` vocabulary is not
downloadable here), and the compact/json ratio. What the layouts do to a real model's tool use and
citations is measured by ``bench/real_model.py``; what they contain is the same (checked here: the
compact text read back gives the json's ids and texts).

    .venv/bin/python bench/tool_results.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from ragline.agents.tools import ToolContext, run_tool
from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.services.evaluation import load_beir
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))
from bench.agents import NAMESPACE, TENANT, ingest, load_questions  # noqa: E402

LAYOUTS = ("compact", "json")


def measure(c: Container, scope: TenantScope, questions: list[str]) -> dict[str, list[tuple[int, int]]]:
    """(characters, tokens) of each question's search result, per layout."""
    sizes: dict[str, list[tuple[int, int]]] = {layout: [] for layout in LAYOUTS}
    for question in questions:
        shown = {}
        for layout in LAYOUTS:
            retriever = c.retrieval.bind([scope])
            ctx = ToolContext(retriever=retriever, candidates=30, keep=10, layout=layout)
            shown[layout] = run_tool(ctx, "search", json.dumps({"query": question})).content
            sizes[layout].append((len(shown[layout]), c.tokenizer.count_many([shown[layout]])[0]))
        ids = [item["id"] for item in json.loads(shown["json"])]
        assert all(f"[{i}]" in shown["compact"] for i in ids), "the layouts show different chunks"
    return sizes


def scifact(c: Container, data: Path, n: int) -> tuple[TenantScope, list[str]]:
    beir = load_beir(data, "train")
    scope = TenantScope(tenant_id=TENANT, namespace_id="scifact")
    c.registry.create_namespace(new_namespace(TENANT, scope.namespace_id))
    wanted = {d for q in list(beir.qrels)[:n] for d in beir.qrels[q]}
    docs = [d for d in beir.corpus if d in wanted] + [d for d in beir.corpus if d not in wanted][: 4 * n]
    for doc in docs:
        title, text = beir.corpus[doc]
        c.ingest.ingest(scope, filename=f"{doc}.txt", data=f"{title}\n\n{text}".encode(), source=doc)
    return scope, [beir.queries[q] for q in list(beir.qrels)[:n]]


def row(name: str, sizes: dict[str, list[tuple[int, int]]]) -> str:
    chars = {k: statistics.mean(s[0] for s in v) for k, v in sizes.items()}
    tokens = {k: statistics.mean(s[1] for s in v) for k, v in sizes.items()}
    return (
        f"| {name} | {len(sizes['json'])} | {chars['json']:,.0f} | {chars['compact']:,.0f} "
        f"| {chars['compact'] / chars['json']:.2f} | {tokens['json']:,.0f} | {tokens['compact']:,.0f} "
        f"| {tokens['compact'] / tokens['json']:.2f} |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=Path, default=ROOT / "bench" / "data" / "multihop.jsonl")
    ap.add_argument("--corpus", type=Path, default=ROOT / "samples" / "northwind")
    ap.add_argument("--beir", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--scifact", type=int, default=30, help="SciFact claims (0: skip SciFact)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="ragline-bench-layouts-") as tmp:
        settings = Settings.from_env(
            home=Path(tmp), backend="embedded", store="sqlite", embedding_provider="local"
        )
        c = Container(settings)
        try:
            ingest(c, args.corpus)
            northwind = TenantScope(tenant_id=TENANT, namespace_id=NAMESPACE)
            rows = [
                row("Northwind", measure(c, northwind, [q.question for q in load_questions(args.questions)]))
            ]
            if args.scifact:
                scope, claims = scifact(c, args.beir, args.scifact)
                rows.append(row("SciFact", measure(c, scope, claims)))
        finally:
            c.close()
    print("| corpus | searches | json chars | compact chars | ratio | json tokens | compact tokens | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
