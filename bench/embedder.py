"""Throughput of the local embedder on SciFact abstracts at several batch sizes (no cache).

Run: ``PYTHONPATH=shared .venv/bin/python bench/embedder.py [--limit 500] [--batch-sizes 8,32,64]``

Texts are ``title + " " + text`` of the first ``--limit`` lines of the SciFact corpus. Each batch
size gets a fresh embedder after one untimed warm-up call (session load, first-run allocation).
``tokens/s`` counts the tokens fed to the model without padding ([CLS]/[SEP] included, truncated at
the model's max length). ``peak RSS`` is the process's high-water mark during that batch size's
run: reset through ``/proc/self/clear_refs`` where Linux allows it, otherwise the process-lifetime
peak (marked ``*``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))

from ragline.adapters.local_models.embedder import LocalOnnxEmbedder  # noqa: E402

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
    parser.add_argument("--batch-sizes", default="8,32,64")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="onnxruntime intra-op threads")
    args = parser.parse_args()

    texts = load_abstracts(args.corpus, args.limit)
    batch_sizes = [int(part) for part in args.batch_sizes.split(",") if part.strip()]
    probe = LocalOnnxEmbedder(intra_op_threads=args.threads)
    counts = probe.count_many(texts)
    fed_tokens = sum(min(n + 2, probe.max_length) for n in counts)
    truncated = sum(1 for n in counts if n + 2 > probe.max_length)
    print(
        f"{len(texts)} SciFact abstracts, {fed_tokens} tokens fed ({truncated} truncated at "
        f"{probe.max_length}), model {probe.model_id}, intra-op threads {args.threads}, "
        f"{os.cpu_count()} CPUs"
    )
    del probe

    header = f"{'batch':>5} | {'texts/s':>8} | {'tokens/s':>9} | {'seconds':>7} | {'peak RSS MiB':>12}"
    print(header)
    print("-" * len(header))
    for batch_size in batch_sizes:
        embedder = LocalOnnxEmbedder(batch_size=batch_size, intra_op_threads=args.threads)
        embedder.embed_documents(texts[:batch_size])  # warm-up: load the session, first allocations
        exact = reset_peak_rss()
        started = time.perf_counter()
        vectors = embedder.embed_documents(texts)
        elapsed = time.perf_counter() - started
        assert vectors.shape == (len(texts), embedder.dimension)
        rss = f"{peak_rss_mib():.0f}{'' if exact else '*'}"
        print(
            f"{batch_size:>5} | {len(texts) / elapsed:>8.1f} | {fed_tokens / elapsed:>9.0f} | "
            f"{elapsed:>7.1f} | {rss:>12}"
        )
        del embedder, vectors


if __name__ == "__main__":
    main()
