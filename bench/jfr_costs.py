"""Where an OpenSearch node's CPU goes, from a Java Flight Recorder file: execution samples by thread
pool and, on write threads, by what the stack is doing (issue 39: naming the write path's cost).

    jcmd $(cat infra/opensearch-local/target/node.pid) JFR.start name=w settings=profile filename=/tmp/w.jfr
    ...the load...
    jcmd $(cat infra/opensearch-local/target/node.pid) JFR.stop name=w
    .venv/bin/python bench/jfr_costs.py /tmp/w.jfr

A sample is counted once, under the first category (in the order of ``WORK``) one of its frames names;
a thread in native code counts only inside faiss (``NATIVE_GRAPH``).
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys

EVENTS = "jdk.ExecutionSample,jdk.NativeMethodSample"
NATIVE_GRAPH = re.compile(r"FaissService|JNIService")
"""A native-method sample counted as work: faiss building or writing a graph through k-NN's JNI (the
execution samples see only Java frames)."""


WORK = [
    ("faiss graph (native, through k-NN's JNI)", NATIVE_GRAPH),
    ("HNSW graph (insert, search while building)", re.compile(r"hnsw|HnswGraph|VectorSimilarity|VectorUtil")),
    ("vector values, flat (write, read, merge)", re.compile(r"FlatVectors|KnnVectors|VectorValues")),
    ("JSON parsing (_bulk body, _source)", re.compile(r"jackson|XContentParser|JsonXContent|DocumentParser")),
    ("text analysis (tokenize, stem)", re.compile(r"Tokenizer|TokenFilter|PorterStem|analysis|TokenStream")),
    ("postings, doc values, points", re.compile(r"Postings|DocValues|Points|TermsHash|FreqProx")),
    ("stored fields (_source, _id; LZ4)", re.compile(r"StoredFields|LZ4|Compressing")),
    ("translog", re.compile(r"Translog")),
    ("HTTP, transport, TLS-less netty", re.compile(r"netty|Netty")),
]


def main(path: str) -> int:
    text = subprocess.run(
        ["jfr", "print", "--events", EVENTS, "--stack-depth", "64", path],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    pools: collections.Counter[str] = collections.Counter()
    work: collections.Counter[str] = collections.Counter()
    parts = re.split(r"jdk\.(ExecutionSample|NativeMethodSample) \{", text)[1:]
    for kind_of, event in zip(parts[0::2], parts[1::2], strict=True):
        if kind_of == "NativeMethodSample" and not NATIVE_GRAPH.search(event):
            continue  # a thread waiting in native code (epoll, a lock), not working
        thread = re.search(r'sampledThread = "([^"]*)"', event)
        name = thread.group(1) if thread else "?"
        named = re.search(r"\]\[(\w+)\]\[T#\d+\]$", name)  # opensearch[node][write][T#1]
        pool = named.group(1) if named else re.sub(r".*: |#\d+|\]$", "", name).strip()
        pools[pool] += 1
        frames = event.split("stackTrace = [", 1)[-1]
        kind = next((label for label, rx in WORK if rx.search(frames)), "other")
        work[f"{pool}: {kind}"] += 1
    total = sum(pools.values())
    print(f"{total} samples")
    for pool, n in pools.most_common(8):
        print(f"| {pool} | {100 * n / total:.0f} % |")
    print()
    for label, n in work.most_common(20):
        print(f"| {label} | {100 * n / total:.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
