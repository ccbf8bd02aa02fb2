"""A deterministic exact-match retrieval set: prose documents that each carry one identifier.

Each document is a short paragraph from a bicycle retailer's world (an order, a store, a spare part,
a fault, a frame) built from one shared pool of sentences, so the prose says little about *which*
document it is: only its identifier does — an order number (``NW-48213``), a UK postcode
(``LS11 5PS``), a part number (``KX-4471-B``), an error code (``E-2043``) or a frame serial
(``SN 7731-0042``). Identifiers come in families that share parts (``KX-4471-B`` and ``KX-4471-C``,
``LS11 5PS`` and ``LS11 7QT``), as real catalogues do. Each query names one identifier — bare, or in a
question — and exactly one chunk (its document) is relevant.

    .venv/bin/python bench/exact_match.py --out .ragline/exact-match      # writes a BEIR folder
    .venv/bin/ragline eval .ragline/exact-match --split train --home .ragline/eval-exact

The same seed always writes the same files (``build`` is also imported by ``bench/fusion_alpha.py``).
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
from collections.abc import Callable
from pathlib import Path

from ragline.services.evaluation import BeirDataset

FILLER = (
    "The team checked the paperwork twice before closing the ticket.",
    "Customers are asked to keep the receipt for warranty claims.",
    "The workshop opens at eight and closes at six on weekdays.",
    "Our riders test every bike on the road before it is handed over.",
    "A follow-up email is sent once the job is finished.",
    "Spare parts are ordered from the central warehouse in Leeds.",
    "Staff log every change in the service history of the bike.",
    "Delivery usually takes three to five working days.",
    "Questions can be sent to the help desk at any time.",
    "The note was added by the shift manager at the end of the day.",
    "Payment was taken by card at the counter.",
    "The customer asked to be called when the work is complete.",
)

KINDS: dict[str, tuple[str, ...]] = {
    "order": (
        "Order {id} was placed online for a gravel bike and two bottle cages.",
        "The courier collected order {id} from the warehouse on Tuesday.",
    ),
    "postcode": (
        "Our store at {id} has a workshop with three service bays.",
        "The branch with the postcode {id} offers free test rides at weekends.",
    ),
    "part": (
        "Part {id} is the rear derailleur hanger for the aluminium frames.",
        "The brake caliper with part number {id} fits both road models.",
    ),
    "error": (
        "Error code {id} on the e-bike display means the battery is too cold to charge.",
        "When the motor reports {id}, the speed sensor magnet has moved.",
    ),
    "serial": (
        "Frame serial {id} was registered to its owner after the first service.",
        "The frame with serial number {id} was checked after a crash report.",
    ),
}

QUESTIONS: dict[str, tuple[str, ...]] = {
    "order": ("{id}", "Where is order {id}?", "What was bought in order {id}?"),
    "postcode": ("{id}", "Which store is at {id}?", "Is there a workshop at {id}?"),
    "part": ("{id}", "What does part {id} fit?", "Which component is part number {id}?"),
    "error": ("{id}", "What does error {id} mean?", "My display shows {id}, what is wrong?"),
    "serial": ("{id}", "Who owns frame {id}?", "What happened to frame serial {id}?"),
}


def _families(rng: random.Random) -> dict[str, Callable[[], list[str]]]:
    """Per kind, a maker of one family of related identifiers (sharing all but one part)."""
    up = string.ascii_uppercase

    def orders() -> list[str]:
        stem = rng.randint(100, 999)
        return [f"NW-{stem}{rng.randint(10, 99)}" for _ in range(3)]

    def postcodes() -> list[str]:
        area = f"{rng.choice('LMBSN')}{rng.choice('SEN')}{rng.randint(1, 28)}"
        return [f"{area} {rng.randint(1, 9)}{rng.choice(up)}{rng.choice(up)}" for _ in range(3)]

    def parts() -> list[str]:
        stem = f"{rng.choice(up)}{rng.choice(up)}-{rng.randint(1000, 9999)}"
        return [f"{stem}-{c}" for c in rng.sample("ABCDEFGH", 3)]

    def errors() -> list[str]:
        return [f"E-{rng.randint(1000, 9999)}" for _ in range(3)]

    def serials() -> list[str]:
        stem = rng.randint(1000, 9999)
        return [f"SN {stem}-{rng.randint(0, 9999):04d}" for _ in range(3)]

    return {"order": orders, "postcode": postcodes, "part": parts, "error": errors, "serial": serials}


def build(seed: int = 24, families: int = 40) -> BeirDataset:
    """``families`` identifier families per kind, three documents each; one query per document."""
    rng = random.Random(seed)
    makers = _families(rng)
    corpus: dict[str, tuple[str, str]] = {}
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    seen: set[str] = set()
    for kind, make in makers.items():
        for _ in range(families):
            for ident in make():
                if ident in seen:
                    continue
                seen.add(ident)
                doc = f"{kind}-{len(corpus):04d}"
                sentences = [rng.choice(KINDS[kind]).format(id=ident), *rng.sample(FILLER, 3)]
                rng.shuffle(sentences)
                corpus[doc] = ("", " ".join(sentences))
                qid = f"q{len(queries):04d}"
                queries[qid] = rng.choice(QUESTIONS[kind]).format(id=ident)
                qrels[qid] = {doc: 1}
    return BeirDataset(corpus, queries, qrels)


def write(data: BeirDataset, out: Path, split: str) -> None:
    """The set as a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``)."""
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for doc, (title, text) in data.corpus.items():
            fh.write(json.dumps({"_id": doc, "title": title, "text": text}) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for qid, text in data.queries.items():
            fh.write(json.dumps({"_id": qid, "text": text}) + "\n")
    with (out / "qrels" / f"{split}.tsv").open("w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for qid, rel in data.qrels.items():
            fh.writelines(f"{qid}\t{doc}\t{score}\n" for doc, score in rel.items())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--families", type=int, default=40)
    ap.add_argument("--split", default="train")
    args = ap.parse_args()
    data = build(args.seed, args.families)
    write(data, args.out, args.split)
    print(f"{len(data.corpus)} documents, {len(data.queries)} queries → {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
