"""Write the committed answer-evaluation question set, ``evals/answers.jsonl`` (issue 43).

The set is two parts, in this order:

- northwind: the hand-written questions of ``evals/northwind.jsonl`` (the sample corpus,
  ``samples/northwind/``), copied as they are (re-serialised in one canonical form);
- scifact: claims of SciFact's train split (``claims_train.jsonl`` in the BEIR folder), chosen
  deterministically: in claim-id order, the first ``--support`` (20) SUPPORT claims and the first
  ``--contradict`` (12) CONTRADICT claims whose evidence lies in exactly one abstract. Each becomes
  "Is it true that <claim>?"; its reference is "Yes." / "No." followed by the claim's gold rationale
  sentences (in sentence-index order, each checked to occur in the corpus abstract); its gold is that
  abstract's corpus id; it is asked in the ``scifact`` namespace.

Every question is validated as an ``EvalQuestion``. Re-running writes byte-identical output.

    .venv/bin/python bench/answer_set.py --data ../shared/data/scifact
    .venv/bin/python bench/answer_set.py --data ../shared/data/scifact --check   # fail if stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ragline.domain.evaluations import EvalQuestion

ROOT = Path(__file__).resolve().parent.parent
NORTHWIND = ROOT / "evals" / "northwind.jsonl"
OUTPUT = ROOT / "evals" / "answers.jsonl"
KEYS = ("id", "question", "reference", "gold", "namespaces")


def _line(record: dict[str, Any]) -> str:
    """One question as one JSON line, keys in schema order, validated."""
    EvalQuestion.model_validate(record)
    return json.dumps({k: record[k] for k in KEYS if k in record}, ensure_ascii=False) + "\n"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def as_question(claim: str) -> str:
    """``Is it true that <claim>?``: the claim's first letter lower-cased unless its first word is an
    acronym or symbol (``ALDH1``, ``ART``, ``4-PBA``), its trailing period dropped."""
    text = claim.strip().rstrip(".").strip()
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and (len(first) == 1 or first[1:].islower()):
        text = text[0].lower() + text[1:]
    return f"Is it true that {text}?"


def scifact_questions(data: Path, support: int, contradict: int) -> list[dict[str, Any]]:
    corpus = {str(d["_id"]): d for d in _read_jsonl(data / "corpus.jsonl")}
    claims = sorted(_read_jsonl(data / "claims_train.jsonl"), key=lambda c: int(c["id"]))
    wanted = {"SUPPORT": support, "CONTRADICT": contradict}
    chosen: list[dict[str, Any]] = []
    for claim in claims:
        evidence = claim["evidence"]
        if len(evidence) != 1:
            continue
        ((doc_id, ev),) = evidence.items()
        label = ev["label"]
        if wanted.get(label, 0) <= 0:
            continue
        wanted[label] -= 1
        abstract = corpus[str(doc_id)]["text"]
        sentences = [text for _, text in sorted(zip(ev["sentences"], ev["text"], strict=True))]
        for sentence in sentences:
            if sentence not in abstract:
                raise ValueError(f"claim {claim['id']}: rationale sentence not in abstract {doc_id}")
        verdict = "Yes." if label == "SUPPORT" else "No."
        chosen.append(
            {
                "id": f"scifact-{claim['id']}",
                "question": as_question(claim["claim"]),
                "reference": " ".join([verdict, *(s.strip() for s in sentences)]),
                "gold": [str(doc_id)],
                "namespaces": ["scifact"],
            }
        )
    if any(wanted.values()):
        raise ValueError(f"not enough claims with single-abstract evidence: short by {wanted}")
    return chosen


def build(data: Path, support: int = 20, contradict: int = 12, northwind: Path = NORTHWIND) -> str:
    records = _read_jsonl(northwind) + scifact_questions(data, support, contradict)
    ids = [r["id"] for r in records]
    if len(set(ids)) != len(ids):
        raise ValueError("question ids must be distinct")
    return "".join(_line(r) for r in records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    parser.add_argument("--support", type=int, default=20)
    parser.add_argument("--contradict", type=int, default=12)
    parser.add_argument("--out", type=Path, default=OUTPUT)
    parser.add_argument(
        "--check", action="store_true", help="fail if --out differs from what would be written"
    )
    args = parser.parse_args(argv)
    text = build(args.data, args.support, args.contradict)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: re-run bench/answer_set.py", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {text.count(chr(10))} questions to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
