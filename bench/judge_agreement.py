"""How often an answer judge agrees with human labels: SciFact train claims as answers, their gold
rationale sentences as the reference.

Each train claim with evidence is graded as an answer (the claim) against a reference (the rationale
sentences of its evidence abstract, verbatim); the human label is the claim's: SUPPORT → the answer is
correct, CONTRADICT → incorrect. A judge's correctness is bucketed as *correct* (≥ 0.75), *partial*
(0.25–0.75) or *incorrect* (< 0.25) — the model judge's three levels exactly — and its binary verdict is
correctness ≥ 0.5. Prints accuracy, per-label recall and a confusion table per judge. Nothing is tuned
here: the offline judge has no fitted parameter of its own (its verifier was fitted on the even-id
claims' *grounding* task, bench/fit_grounding.py), so even and odd ids are reported apart as a check.

    .venv/bin/python bench/judge_agreement.py --data ../shared/data/scifact
    .venv/bin/python bench/judge_agreement.py --data ../shared/data/scifact \
        --judge-url http://127.0.0.1:8080/v1 --limit 100
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ragline.adapters.grounding.answer_judges import ModelAnswerJudge, ReferenceOverlapJudge
from ragline.ports import AnswerJudge

LABELS = {"SUPPORT": "correct", "CONTRADICT": "incorrect"}
BUCKETS = ("correct", "partial", "incorrect", "unreadable")


def cases(data: Path) -> list[tuple[int, str, str, str]]:
    """(claim id, claim, reference, expected) for every train claim with one evidence abstract."""
    out = []
    with (data / "claims_train.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            claim = json.loads(line)
            evidence = list(claim.get("evidence", {}).values())
            if len(evidence) != 1 or evidence[0].get("label") not in LABELS:
                continue
            reference = " ".join(s.strip() for s in evidence[0]["text"])
            out.append((int(claim["id"]), claim["claim"], reference, LABELS[evidence[0]["label"]]))
    return out


def bucket(correctness: float | None) -> str:
    if correctness is None:
        return "unreadable"
    return "correct" if correctness >= 0.75 else "partial" if correctness >= 0.25 else "incorrect"


Graded = list[tuple[int, str, float | None, float]]
"""Per claim: (claim id, expected, the judge's correctness, milliseconds)."""


def grade(judge: AnswerJudge, rows: list[tuple[int, str, str, str]]) -> Graded:
    graded = []
    for claim_id, claim, reference, expected in rows:
        started = time.perf_counter()
        verdict = judge.judge("Is this claim true?", reference, claim)
        graded.append((claim_id, expected, verdict.correctness, (time.perf_counter() - started) * 1000))
    return graded


def measure(graded: Graded) -> dict[str, Any]:
    """Accuracy of the binary verdict (correctness ≥ 0.5), its recall per label and their mean (balanced
    accuracy), the majority guess's accuracy, the confusion table."""
    confusion: Counter[tuple[str, str]] = Counter((expected, bucket(c)) for _, expected, c, _ in graded)
    agreed: Counter[str] = Counter(
        expected
        for _, expected, c, _ in graded
        if c is not None and ("correct" if c >= 0.5 else "incorrect") == expected
    )
    totals = Counter(expected for _, expected, _, _ in graded)
    n = max(len(graded), 1)
    recall = {label: agreed[label] / max(totals[label], 1) for label in ("correct", "incorrect")}
    return {
        "n": len(graded),
        "accuracy": sum(agreed.values()) / n,
        "recall": recall,
        "balanced": sum(recall.values()) / 2,
        "majority": max(totals.values(), default=0) / n,
        "confusion": confusion,
        "ms": sorted(ms for *_, ms in graded)[len(graded) // 2] if graded else 0.0,
    }


def print_table(name: str, split: str, m: dict[str, Any]) -> None:
    print(
        f"| {name} | {split} ({m['n']}) | **{m['accuracy']:.3f}** | {m['recall']['correct']:.3f} |"
        f" {m['recall']['incorrect']:.3f} | {m['balanced']:.3f} | {m['majority']:.3f} | {m['ms']:.2f} |"
    )


def print_confusion(name: str, m: dict[str, Any]) -> None:
    print(f"\n{name}: label (rows) × judge's correctness (columns)\n")
    print("| label | " + " | ".join(BUCKETS) + " |")
    print("|---|" + "---|" * len(BUCKETS))
    for label in ("correct", "incorrect"):
        cells = " | ".join(str(m["confusion"][(label, b)]) for b in BUCKETS)
        print(f"| {'SUPPORT' if label == 'correct' else 'CONTRADICT'} → {label} | {cells} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--judge-url", default="", help="an OpenAI-compatible endpoint: also the model judge")
    parser.add_argument("--model", default="local", help="the model name sent to --judge-url")
    parser.add_argument("--limit", type=int, default=0, help="the model judge: N claims, evenly spread")
    args = parser.parse_args()
    rows = cases(args.data)
    judges: list[tuple[str, AnswerJudge, list[tuple[int, str, str, str]]]] = [
        ("reference-overlap (offline)", ReferenceOverlapJudge(), rows)
    ]
    if args.judge_url:
        from openai import OpenAI

        from ragline.adapters.openai.chat import OpenAIChatModel

        client = OpenAI(
            base_url=args.judge_url, api_key=os.environ.get("OPENAI_API_KEY", "local"), timeout=600
        )
        model = OpenAIChatModel(model=args.model, client=client)
        step = max(1, len(rows) // args.limit) if args.limit else 1  # spread over the file, not its head
        judges.append((f"model ({args.model})", ModelAnswerJudge(model), rows[::step][: args.limit or None]))
    print(
        "| judge | claims | accuracy | SUPPORT judged correct | CONTRADICT judged incorrect"
        " | balanced accuracy | always-correct accuracy | ms/answer (median) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    results = []
    for name, judge, subset in judges:
        graded = grade(judge, subset)
        whole = measure(graded)
        results.append((name, whole))
        print_table(name, "even ids", measure([g for g in graded if g[0] % 2 == 0]))
        print_table(name, "odd ids", measure([g for g in graded if g[0] % 2]))
        print_table(name, "all", whole)
    for name, whole in results:
        print_confusion(name, whole)


if __name__ == "__main__":
    main()
