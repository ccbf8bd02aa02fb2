"""Fit the learned grounding verifier on the even-id half of SciFact train (issue 30), deterministically.

Every even-id train claim goes through chat's own path (``cited_claims`` with the default limits) and
:func:`~ragline.adapters.grounding.features.score_claim`; then, with numpy (full-batch gradient descent,
zero start, no randomness):

- the label model: a softmax regression over the claim features, classes weighted to balance them
  (the benchmark is macro-F1), its L2 strength chosen by 5-fold cross-validation inside the even half
  (folds by id);
- the evidence model: a logistic regression over the top passage sentences' features (gold: the claim's
  rationale sentences, matched as bench/grounding.py matches them), then the probability threshold and
  the number of sentences named chosen on the even half's evidence F1.

The odd-id half is never read here. It writes ``shared/ragline/adapters/grounding/verifier_weights.py``:

    .venv/bin/python bench/fit_grounding.py --data ../shared/data/scifact
"""

from __future__ import annotations

import argparse
import pprint
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt
from bench.grounding import Example, _norm, load

from ragline.adapters.grounding.features import (
    CLAIM_FEATURES,
    SENTENCE_FEATURES,
    Scored,
    score_claim,
    sentence_features,
)
from ragline.adapters.grounding.verifier import TOP
from ragline.domain.grounding import GroundingLimits
from ragline.services.grounding import cited_claims

CLASSES = ("supported", "contradicted", "not_enough_info")
OUT = Path(__file__).resolve().parents[1] / "shared/ragline/adapters/grounding/verifier_weights.py"
Array = npt.NDArray[np.float64]


def claims_of(examples: list[Example], corpus: dict[str, str]) -> list[tuple[Example, Scored]]:
    out = []
    for ex in examples:
        for claim in cited_claims(ex.answer, corpus, GroundingLimits()).claims:
            scored = score_claim(claim)
            if scored is not None:
                out.append((ex, scored))
    return out


def gold_evidence(ex: Example, text: str) -> bool:
    s = _norm(text)
    return any(s in g or g in s for g in (_norm(r) for r in ex.rationale))


def standardise(x: Array) -> tuple[Array, Array]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    return mean, np.where(scale > 1e-9, scale, 1.0)


def fit_softmax(x: Array, y: npt.NDArray[np.int64], l2: float, steps: int = 3000) -> tuple[Array, Array]:
    n, d = x.shape
    k = int(y.max()) + 1
    counts = np.bincount(y, minlength=k).astype(float)
    sample_w = (n / (k * counts))[y]
    onehot = np.eye(k)[y]
    w, b = np.zeros((d, k)), np.zeros(k)
    for _ in range(steps):
        logits = x @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * sample_w[:, None] / n
        w -= 0.5 * (x.T @ g + l2 * w)
        b -= 0.5 * g.sum(axis=0)
    return w, b


def fit_logistic(x: Array, y: Array, l2: float, steps: int = 3000) -> tuple[Array, float]:
    n, d = x.shape
    w, b = np.zeros(d), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = (p - y) / n
        w -= 0.5 * (x.T @ g + l2 * w)
        b -= 0.5 * float(g.sum())
    return w, b


def macro_f1(gold: npt.NDArray[np.int64], pred: npt.NDArray[np.int64]) -> float:
    f1s = []
    for c in range(len(CLASSES)):
        tp = int(((gold == c) & (pred == c)).sum())
        fp = int(((gold != c) & (pred == c)).sum())
        fn = int(((gold == c) & (pred != c)).sum())
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return statistics.fmean(f1s)


def choose_l2(x: Array, y: npt.NDArray[np.int64], folds: npt.NDArray[np.int64]) -> float:
    best = (-1.0, 0.0)
    for l2 in (0.0, 0.001, 0.01, 0.03, 0.1):
        pred = np.zeros_like(y)
        for f in range(5):
            train, test = folds != f, folds == f
            mean, scale = standardise(x[train])
            w, b = fit_softmax((x[train] - mean) / scale, y[train], l2)
            pred[test] = ((x[test] - mean) / scale @ w + b).argmax(axis=1)
        score = macro_f1(y, pred)
        print(f"l2={l2}: cross-validated label macro-F1 {score:.3f}")
        if score > best[0] + 1e-9:
            best = (score, l2)
    return best[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    examples, corpus = load(args.data)
    rows = claims_of([e for e in examples if e.id % 2 == 0], corpus)
    x = np.array([s.vector for _, s in rows])
    y = np.array([CLASSES.index(ex.label) for ex, _ in rows])
    folds = np.array([(ex.id // 2) % 5 for ex, _ in rows])
    l2 = choose_l2(x, y, folds)
    mean, scale = standardise(x)
    w, b = fit_softmax((x - mean) / scale, y, l2)
    label_model = {
        "names": list(CLAIM_FEATURES),
        "mean": mean.round(6).tolist(),
        "scale": scale.round(6).tolist(),
        "classes": list(CLASSES),
        "bias": b.round(6).tolist(),
        "weights": w.T.round(6).tolist(),
    }

    sx, sy, owner = [], [], []
    for i, (ex, scored) in enumerate(rows):
        for rank in range(min(TOP, len(scored.rows))):
            sx.append(sentence_features(scored, rank))
            sy.append(1.0 if gold_evidence(ex, scored.rows[rank].text) else 0.0)
            owner.append(i)
    sxa = np.array(sx)
    smean, sscale = standardise(sxa)
    sw, sb = fit_logistic((sxa - smean) / sscale, np.array(sy), 0.01)
    prob = 1 / (1 + np.exp(-((sxa - smean) / sscale @ sw + sb)))
    labels = ((x - mean) / scale @ w + b).argmax(axis=1)
    threshold, most = choose_evidence(rows, prob, np.array(owner), labels)
    evidence_model = {
        "names": list(SENTENCE_FEATURES),
        "mean": smean.round(6).tolist(),
        "scale": sscale.round(6).tolist(),
        "bias": round(sb, 6),
        "weights": sw.round(6).tolist(),
    }
    write(args.out, label_model, evidence_model, threshold, most, l2)


def choose_evidence(
    rows: list[tuple[Example, Scored]],
    prob: Array,
    owner: npt.NDArray[np.int64],
    labels: npt.NDArray[np.int64],
) -> tuple[float, int]:
    """The threshold and count that maximise evidence F1 on the fitting half (evidence is named only for
    a claim the label model does not call not-enough-info)."""
    gold = sum(len(ex.rationale) for ex, _ in {id(ex): (ex, s) for ex, s in rows}.values())
    best = (-1.0, 0.5, 1)
    for threshold in [t / 20 for t in range(2, 19)]:
        for most in (1, 2, 3):
            named = right = 0
            found: dict[int, set[str]] = {}
            for i, (ex, scored) in enumerate(rows):
                if labels[i] == CLASSES.index("not_enough_info"):
                    continue
                mine = [(prob[j], j) for j in np.flatnonzero(owner == i) if prob[j] >= threshold]
                for _, j in sorted(mine, reverse=True)[:most]:
                    text = scored.rows[j - int(np.flatnonzero(owner == i)[0])].text
                    named += 1
                    right += gold_evidence(ex, text)
                    s = _norm(text)
                    found.setdefault(id(ex), set()).update(
                        g for g in (_norm(r) for r in ex.rationale) if s in g or g in s
                    )
            recall = sum(len(v) for v in found.values()) / max(gold, 1)
            precision = right / max(named, 1)
            f1 = 2 * precision * recall / max(precision + recall, 1e-9)
            if f1 > best[0] + 1e-9:
                best = (f1, threshold, most)
    print(f"evidence: threshold {best[1]}, at most {best[2]} (fitting-half F1 {best[0]:.3f})")
    return best[1], best[2]


def write(
    out: Path, label: dict[str, object], evidence: dict[str, object], threshold: float, most: int, l2: float
) -> None:
    out.write_text(
        '"""Weights of the learned grounding verifier, written by bench/fit_grounding.py (do not edit).\n\n'
        f"Fitted on the even-id half of SciFact train; label model L2 {l2} (5-fold cross-validation\n"
        "inside that half). Refit: ``.venv/bin/python bench/fit_grounding.py``.\n" + '"""\n\n'
        f"LABEL_MODEL = {pprint.pformat(label, width=110, compact=True, sort_dicts=False)}\n\n"
        f"EVIDENCE_MODEL = {pprint.pformat(evidence, width=110, compact=True, sort_dicts=False)}\n\n"
        f"EVIDENCE_MIN = {threshold}\n"
        f"MAX_EVIDENCE = {most}\n"
    )
    subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", str(out)], check=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
