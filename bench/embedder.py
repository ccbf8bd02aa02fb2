"""Throughput of the local embedder on SciFact abstracts under several batching/thread settings.

Run: ``PYTHONPATH=shared .venv/bin/python bench/embedder.py [--limit 500] [--configs ...]``

Texts are ``title + " " + text`` of the first ``--limit`` lines of the SciFact corpus (``--chunks``:
those abstracts chunked as ingestion does, ~200-token chunks). A config is
``batch_size:batch_tokens:threads:spin`` (``batch_tokens`` ``-`` for none, ``spin`` ``spin`` or
``nospin``); the default set puts the settings before issue 15 (8 texts per batch, no token cap,
onnxruntime's spinning threads) beside the new defaults. Each config gets a fresh embedder after one
untimed warm-up call (session load, first-run allocation); configs run interleaved over
``--rounds`` rounds and the best round is kept. ``tokens/s`` counts the tokens fed to the model
without padding ([CLS]/[SEP] included, truncated at the model's max length). ``CPU s`` is the
process's CPU time (all threads) for the call: on a shared machine it is steadier than wall time,
which includes waiting for a core. ``peak RSS`` is the process's high-water mark during that run:
reset through ``/proc/self/clear_refs`` where Linux allows it, otherwise the process-lifetime peak
(marked ``*``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))

import numpy as np  # noqa: E402

from ragline.adapters.local_models.embedder import LocalOnnxEmbedder  # noqa: E402
from ragline.documents import WordCachedCounter, chunk_document, parse_document  # noqa: E402

CPUS = os.cpu_count() or 1

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact" / "corpus.jsonl"


def load_abstracts(path: Path, limit: int) -> list[str]:
    texts: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if len(texts) >= limit:
                break
            if line.strip():
                record = json.loads(line)
                texts.append(f"{record.get('title', '')} {record.get('text', '')}")
    return texts


def reset_peak_rss() -> bool:
    """Reset the kernel's VmHWM for this process; False where it is not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def peak_rss_mib() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--chunks", action="store_true", help="embed the abstracts' ingestion chunks")
    parser.add_argument(
        "--configs",
        default=f"8:-:{CPUS}:spin,8:1024:{CPUS}:nospin,8:1024:1:nospin,32:1024:{CPUS}:nospin",
        help="batch_size:batch_tokens:threads:spin,...",
    )
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()

    texts = load_abstracts(args.corpus, args.limit)
    probe = LocalOnnxEmbedder()
    if args.chunks:
        texts = [
            c.text
            for c in chunk_document(
                parse_document("s.txt", "\n\n".join(texts).encode()),
                document_id="s",
                tokenizer=WordCachedCounter(probe),
            )
        ]
    counts = probe.count_many(texts)
    fed_tokens = sum(min(n + 2, probe.max_length) for n in counts)
    truncated = sum(1 for n in counts if n + 2 > probe.max_length)
    print(
        f"{len(texts)} SciFact {'chunks' if args.chunks else 'abstracts'}, {fed_tokens} tokens fed "
        f"({truncated} truncated at {probe.max_length}), model {probe.model_id}, {CPUS} CPUs"
    )
    del probe

    configs = [parse_config(part) for part in args.configs.split(",") if part.strip()]
    best: dict[int, tuple[float, float, str]] = {}
    reference = None
    for _ in range(args.rounds):
        for n, config in enumerate(configs):
            embedder = LocalOnnxEmbedder(**config)
            embedder.embed_documents(texts[:8])  # warm-up: load the session, first allocations
            exact = reset_peak_rss()
            cpu, started = time.process_time(), time.perf_counter()
            vectors = embedder.embed_documents(texts)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
            assert vectors.shape == (len(texts), embedder.dimension)
            reference = vectors if reference is None else reference
            assert float(np.abs(vectors - reference).max()) < 1e-5, "a config changed the vectors"
            rss = f"{peak_rss_mib():.0f}{'' if exact else '*'}"
            if n not in best or elapsed < best[n][0]:
                best[n] = (elapsed, cpu, rss)
            del embedder, vectors

    header = (
        f"{'batch':>5} | {'tokens/run':>10} | {'threads':>7} | {'spin':>5} | {'texts/s':>8} | "
        f"{'tokens/s':>9} | {'seconds':>7} | {'CPU s':>6} | {'peak RSS MiB':>12}"
    )
    print(header)
    print("-" * len(header))
    for n, config in enumerate(configs):
        elapsed, cpu, rss = best[n]
        tokens = config["batch_tokens"] or "-"
        print(
            f"{config['batch_size']:>5} | {tokens:>10} | {config['intra_op_threads']:>7} | "
            f"{'yes' if config['spin_threads'] else 'no':>5} | {len(texts) / elapsed:>8.1f} | "
            f"{fed_tokens / elapsed:>9.0f} | {elapsed:>7.1f} | {cpu:>6.1f} | {rss:>12}"
        )


def parse_config(text: str) -> dict[str, Any]:
    batch_size, batch_tokens, threads, spin = text.split(":")
    return {
        "batch_size": int(batch_size),
        "batch_tokens": None if batch_tokens == "-" else int(batch_tokens),
        "intra_op_threads": int(threads),
        "spin_threads": spin == "spin",
    }


if __name__ == "__main__":
    main()
