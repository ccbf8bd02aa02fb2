"""Throughput of parse + chunk on generated English-like text, with the embedder's WordPiece tokenizer.

Run: ``PYTHONPATH=shared .venv/bin/python bench/chunking.py [--mb 20] [--counters wordpiece,word-cached]``

Side by side with another tree (``git archive <commit> shared | tar -x -C /tmp/before``):
``bench/chunking.py --compare /tmp/before [--rounds 3]`` runs each format and counter in a fresh process
per tree, the trees alternating round by round, keeps each one's best round and checks both made the
same number of chunks.

Text is paragraphs of sentences drawn from a fixed vocabulary (seeded, so every run sees the same
bytes), with commas, abbreviations (``e.g.``, ``Dr.``), decimals and questions. The Markdown variant
adds a ``##``/``###`` heading every few paragraphs, bullet lists and fenced code. Counters:

- ``wordpiece``: ``encode_batch(sentences, add_special_tokens=False)``, padding/truncation off;
- ``wordpiece-fast``: the same with ``encode_batch_fast`` (no offsets);
- ``word-cached``: :class:`ragline.documents.WordCachedCounter` over ``wordpiece`` (each distinct word
  encoded once, counts summed; exact for WordPiece), fresh for every run;
- ``whitespace``: ``len(text.split())``, the floor: everything but the model tokenizer.

``MB/s`` is input megabytes (10^6 bytes) over parse + chunk seconds (wall); ``CPU MB/s`` over the
process's CPU seconds for the same work, steadier on a shared machine. ``--breakdown`` times the
chunker's stages on the plain-text run: sentence splitting, counting, packing + building chunks.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if "--tree" in sys.argv:  # a worker measuring another tree: its code, not this one's
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--tree") + 1]) / "shared"))
else:
    sys.path.insert(0, str(REPO / "shared"))

from ragline.adapters.local_models.embedder import find_tokenizer_file  # noqa: E402
from ragline.documents import WordCachedCounter, chunk_document, parse_document  # noqa: E402
from ragline.documents.sentences import split_with_breaks  # noqa: E402
from ragline.ports import Tokenizer  # noqa: E402

_VOCABULARY_TEXT = """
the of and to in is was that for it with as on be at by this had not are but from or have an they
which one you were her all she there would their we him been has when who will more no if out so
said what up its about into than them can only other new some could time these two may then do
first any my now such like our over man me even most made after also did many before must through
back years where much your way well down should because each just those people how too little state
good very make world still own see men work long get here between both life being under never day
same another know while last might us great old year off come since against go came right used take
three himself few house use during without again place around however home small found thought went
say part once general high upon school every does got united left number course war until always
away something fact though water less public put think almost hand enough far took head yet
government system better set told nothing night end why called didn't eyes find going look asked
later knew point next program city business give group toward young days let room president side
social given present several order national possible rather second face per among form important
often things looking early white case john become large big need four within felt along children
saw best church ever least power development light thing seemed family interest want members mind
country area others done turned although open god service certain kind problem began different door
thus help sense means whole matter perhaps itself york times law human line above name example
action company hands local show whether five history gave today either act feet across taken past
quite anything seen having death experience body half really week words field car already
information tell together college shall money period held keep sure probably free seems real behind
cannot miss political air question making office brought whose special heard major problems ago
became federal moment study available known result street economic boy position reason change south
board individual job areas society west close turn love community true court force full seem am
wife age policy voice everything million amount tokenizer retrieval embedding namespace tenant
chunk document vector index search hybrid semantic keyword ranking latency
"""
VOCABULARY = _VOCABULARY_TEXT.split()
ABBREVIATIONS = ["e.g.", "i.e.", "Dr.", "Mr.", "approx.", "vs.", "etc."]


def sentence(rng: random.Random) -> str:
    words = rng.choices(VOCABULARY, k=rng.randint(6, 28))
    if rng.random() < 0.3:
        words.insert(rng.randint(1, len(words) - 1), rng.choice(ABBREVIATIONS))
    if rng.random() < 0.2:
        words.insert(rng.randint(1, len(words) - 1), f"{rng.randint(1, 99)}.{rng.randint(0, 9)}")
    if rng.random() < 0.4:
        at = rng.randint(1, len(words) - 1)
        words[at] += ","
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice("......?!")


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(3, 8)))


def plain_text(size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        parts.append(paragraph(rng))
        total += len(parts[-1]) + 2
    return "\n\n".join(parts).encode()


def markdown_text(size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    parts: list[str] = ["# Generated handbook"]
    total = 0
    section = 0
    while total < size:
        if rng.random() < 0.15:
            section += 1
            parts.append(f"{'#' * rng.choice((2, 2, 3))} Section {section}")
        roll = rng.random()
        if roll < 0.08:
            parts.append("\n".join(f"- {sentence(rng)}" for _ in range(rng.randint(2, 5))))
        elif roll < 0.1:
            parts.append("```python\n# a comment, not a heading\nprint('hello')\n```")
        else:
            parts.append(paragraph(rng))
        total += len(parts[-1]) + 2
    return "\n\n".join(parts).encode()


class WordPieceCounter:
    def __init__(self, *, fast: bool = False) -> None:
        from tokenizers import Tokenizer as HFTokenizer

        self._tokenizer = HFTokenizer.from_file(str(find_tokenizer_file()))
        self._tokenizer.no_padding()  # tokenizer.json pads and truncates at 128: every count would be 128
        self._tokenizer.no_truncation()
        self._encode = self._tokenizer.encode_batch_fast if fast else self._tokenizer.encode_batch

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._encode(list(texts), add_special_tokens=False)]


class WhitespaceCounter:
    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(text.split()) for text in texts]


COUNTERS: dict[str, Callable[[], Tokenizer]] = {
    "wordpiece": WordPieceCounter,
    "wordpiece-fast": lambda: WordPieceCounter(fast=True),
    "word-cached": lambda: WordCachedCounter(WordPieceCounter()),
    "whitespace": WhitespaceCounter,
}


def run(filename: str, data: bytes, counter: Tokenizer) -> tuple[float, float, float, int]:
    """``(parse s, chunk s, CPU s of both, chunks)``."""
    cpu = time.process_time()
    started = time.perf_counter()
    doc = parse_document(filename, data)
    parsed = time.perf_counter()
    chunks = chunk_document(doc, document_id="bench", tokenizer=counter, filename=filename)
    done = time.perf_counter()
    return parsed - started, done - parsed, time.process_time() - cpu, len(chunks)


class Replay:
    """Returns counts computed earlier, in order, so the chunker's own stages can be timed alone."""

    def __init__(self, counts: list[int]) -> None:
        self.counts = counts
        self.done = 0

    def count_many(self, texts: Sequence[str]) -> list[int]:
        counts = self.counts[self.done : self.done + len(texts)]
        self.done += len(texts)
        return counts


def breakdown(data: bytes) -> None:
    """Where the plain-text time goes (CPU seconds): parse, split, count, pack + build."""
    clock = time.process_time
    started = clock()
    doc = parse_document("bench.txt", data)
    parsed = clock()
    sentences = [s for section in doc.sections for s in split_with_breaks(section.text)[0]]
    split = clock()
    counter = WordCachedCounter(WordPieceCounter())
    counts = [
        n for i in range(0, len(sentences), 16_384) for n in counter.count_many(sentences[i : i + 16_384])
    ]
    counted = clock()
    chunk_document(doc, document_id="bench", tokenizer=Replay(counts))
    chunked = clock()
    print(
        f"\nplain-text breakdown, CPU s, {len(data) / 1e6:.1f} MB, {len(sentences)} sentences: "
        f"parse {parsed - started:.2f} | split {split - parsed:.2f} | count (word-cached, fresh) "
        f"{counted - split:.2f} | chunk with counts given {chunked - counted:.2f} (of which pack + build "
        f"≈ {(chunked - counted) - (split - parsed):.2f})"
    )


MAKERS = {"txt": plain_text, "md": markdown_text}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=20.0, help="megabytes of text per format")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--counters", default="wordpiece,wordpiece-fast,word-cached,whitespace")
    parser.add_argument("--formats", default="txt,md")
    parser.add_argument("--breakdown", action="store_true")
    parser.add_argument("--compare", type=Path, help="another tree to measure side by side")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    size = int(args.mb * 1_000_000)
    if args.worker:
        fmt, name = args.formats, args.counters
        parse_s, chunk_s, cpu_s, chunks = run(f"bench.{fmt}", MAKERS[fmt](size, args.seed), COUNTERS[name]())
        print(json.dumps({"parse": parse_s, "chunk": chunk_s, "cpu": cpu_s, "chunks": chunks}))
        return
    if args.compare:
        compare(args, size)
        return
    inputs = {fmt: MAKERS[fmt](size, args.seed) for fmt in args.formats.split(",")}
    header = (
        f"{'format':<6} | {'counter':<14} | {'MB':>5} | {'parse s':>7} | {'chunk s':>7} | "
        f"{'total s':>7} | {'MB/s':>6} | {'CPU MB/s':>8} | {'chunks':>7}"
    )
    print(header)
    print("-" * len(header))
    for fmt, data in inputs.items():
        mb = len(data) / 1_000_000
        for name in args.counters.split(","):
            counter = COUNTERS[name]()
            parse_s, chunk_s, cpu_s, chunks = run(f"bench.{fmt}", data, counter)
            total = parse_s + chunk_s
            print(
                f"{fmt:<6} | {name:<14} | {mb:>5.1f} | {parse_s:>7.2f} | {chunk_s:>7.2f} | "
                f"{total:>7.2f} | {mb / total:>6.1f} | {mb / cpu_s:>8.1f} | {chunks:>7}"
            )
    if args.breakdown and "txt" in inputs:
        breakdown(inputs["txt"])


def compare(args: argparse.Namespace, size: int) -> None:
    """Each format × counter in fresh processes, this tree and ``args.compare`` alternating."""
    trees = {"before": args.compare.resolve(), "after": REPO}
    print(f"before: {trees['before']}  after: {trees['after']}  best of {args.rounds} rounds, alternating")
    print(
        "| format | counter | MB | before MB/s | after MB/s | before CPU MB/s | after CPU MB/s"
        " | CPU ratio | chunks |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for fmt in args.formats.split(","):
        mb = len(MAKERS[fmt](size, args.seed)) / 1_000_000
        for name in args.counters.split(","):
            best: dict[str, dict[str, Any]] = {}
            for _ in range(args.rounds):
                for label, tree in trees.items():
                    command = [
                        sys.executable, __file__, "--worker", "--tree", str(tree), "--formats", fmt,
                        "--counters", name, "--mb", str(args.mb), "--seed", str(args.seed),
                    ]  # fmt: skip
                    env = {**os.environ, "PYTHONPATH": str(tree / "shared")}
                    result = json.loads(
                        subprocess.run(command, env=env, check=True, capture_output=True).stdout
                    )
                    result["wall"] = result["parse"] + result["chunk"]
                    held = best.setdefault(label, result)
                    held["wall"], held["cpu"] = (
                        min(held["wall"], result["wall"]),
                        min(held["cpu"], result["cpu"]),
                    )
            before, after = best["before"], best["after"]
            assert before["chunks"] == after["chunks"], (fmt, name, before["chunks"], after["chunks"])
            print(
                f"| {fmt} | {name} | {mb:.1f} | {mb / before['wall']:.1f} | {mb / after['wall']:.1f} | "
                f"{mb / before['cpu']:.1f} | {mb / after['cpu']:.1f} | {before['cpu'] / after['cpu']:.2f}x | "
                f"{after['chunks']:,} |"
            )


if __name__ == "__main__":
    main()
