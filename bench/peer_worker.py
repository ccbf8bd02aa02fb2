"""One store of ``bench/peers.py`` in its own process, so its memory is its own; driven over stdin.

    python bench/peer_worker.py DATA.pkl STORE OPENSEARCH_URL OPENSEARCH_PID

Commands arrive one JSON object a line; each answer is one line starting with ``@@`` (anything else on
stdout is a library talking). ``index`` writes every batch and waits until each mode has answered one
query; ``pass`` times a block of queries in one mode; ``close`` reports memory and drops the store.
The driver interleaves the stores' query blocks, so load from other work on the machine falls on all.
"""

from __future__ import annotations

import json
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import filler_text
from peer_stores import Batch, PeerStore, build, versions
from ragline.domain.metrics import dedupe_documents, ndcg_at, recall_at


def proc_kib(field: str, pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def batches(data: dict[str, Any]) -> list[Batch]:
    """Filler first (1,000 a batch), then SciFact (500 a batch), as ``bench/retrieval.py`` upserts."""
    n, dim = data["filler"], data["vectors"].shape[1]
    out = []
    if n:  # the same recipe as bench/retrieval.py's filler_chunks: real text, stand-in vectors
        texts = filler_text.passages(n)
        vecs = filler_text.stand_in_vectors(texts, dim)
        for i in range(0, n, 1000):
            j = min(i + 1000, n)
            tenants = [f"filler{x % 20}" for x in range(i, j)]
            out.append(Batch([f"f{x}" for x in range(i, j)], tenants, texts[i:j], vecs[i:j]))
    ids, texts, vecs = data["ids"], data["texts"], data["vectors"]
    for i in range(0, len(ids), 500):
        j = min(i + 500, len(ids))
        out.append(Batch(ids[i:j], ["bench"] * (j - i), texts[i:j], vecs[i:j]))
    return out


def index(store: PeerStore, work: list[Batch], probe: tuple[str, Any], workdir: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    for b in work:
        store.add(b)
    store.finish()
    written = time.perf_counter() - t0
    for mode in store.modes:  # searchable in every mode: lazily built indexes are paid here
        store.search(mode, probe[0], probe[1], 10)
    searchable = time.perf_counter() - t0
    t1 = time.perf_counter()
    store.maintain()
    total = sum(len(b.ids) for b in work)
    return {
        "modes": list(store.modes),
        "chunks": total,
        "write_rate": total / written,
        "rate": total / searchable,
        "maintain_s": time.perf_counter() - t1,
        "disk_mib": sum(f.stat().st_size for f in workdir.rglob("*") if f.is_file()) / 2**20,
    }


def run_pass(store: PeerStore, data: dict[str, Any], mode: str, k: int, lo: int, hi: int) -> dict[str, Any]:
    lat, ndcg, recall = [], 0.0, 0.0
    for i in range(lo, hi):
        started = time.perf_counter()
        ranked = store.search(mode, data["queries"][i], data["qvectors"][i], k)
        lat.append((time.perf_counter() - started) * 1000)
        docs = dedupe_documents(ranked)
        qrels = data["qrels"][data["qids"][i]]
        ndcg += ndcg_at(docs, qrels, 10)
        recall += recall_at(docs, qrels, 100)
    return {"lat": lat, "ndcg": ndcg, "recall": recall}


def main() -> int:
    data_path, name, url, pid = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    data = pickle.loads(data_path.read_bytes())
    work = batches(data)
    baseline = proc_kib("VmRSS")  # data loaded; the store's SDK not yet imported
    # the peak from here on (loading the data and generating filler vectors peaked higher than a store)
    Path("/proc/self/clear_refs").write_text("5")
    with tempfile.TemporaryDirectory() as tmp:
        store: PeerStore | None = None
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd["op"] == "index":
                store = build(name, Path(tmp), data["vectors"].shape[1], url)
                answer = index(store, work, (data["queries"][0], data["qvectors"][0]), Path(tmp))
            elif cmd["op"] == "pass":
                assert store is not None
                answer = run_pass(store, data, cmd["mode"], cmd["k"], cmd["lo"], cmd["hi"])
            else:
                answer = {
                    "versions": versions(name),
                    "baseline_mib": baseline / 1024,
                    "peak_mib": proc_kib("VmHWM") / 1024,
                    "server_mib": proc_kib("VmRSS", pid) / 1024 if pid else 0.0,
                }
                if store is not None:
                    answer.update(getattr(store, "stats", dict)())  # OpenSearch: segments, index size
                    store.close()
            print("@@ " + json.dumps(answer), flush=True)
            if cmd["op"] == "close":
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())
