"""How large a run's recorded events and a conversation's kept turns are, against their bounds
(``MAX_RUN_LOG_BYTES``, ``MAX_RUN_EVENTS``, ``MAX_CONVERSATION_BYTES``): each agent answering one
question over the northwind samples, offline (the extractive model streams the answer word by word,
as a hosted model's deltas arrive), and a conversation of ``--turns`` turns.

    .venv/bin/python -m bench.run_logs --turns 20
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ragline.config import Settings
from ragline.domain.api import ChatRequest
from ragline.domain.conversations import MAX_CONVERSATION_BYTES, turns_json
from ragline.domain.models import TenantScope
from ragline.domain.runs import MAX_RUN_EVENTS, MAX_RUN_LOG_BYTES
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container

ROOT = Path(__file__).parents[1]
QUESTION = "How long is the warranty on the frame, and how do I claim it?"
FOLLOW_UPS = ["And the chain?", "How often should I lubricate it?", "Can I return a used bike?"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        c = Container(Settings(home=Path(tmp)))
        scope = TenantScope(tenant_id="local", namespace_id="northwind")
        c.registry.create_namespace(new_namespace("local", "northwind", default=True))
        for path in sorted((ROOT / "samples" / "northwind").iterdir()):
            c.ingest.ingest(scope, filename=path.name, data=path.read_bytes())
        caller = Principal.operator("local")
        print("| run | events | text events | bytes recorded | of the bound |")
        print("|---|---:|---:|---:|---:|")
        for agent in ("agentic", "deep_search", "chain_of_rag"):
            body = {"messages": [{"role": "user", "content": QUESTION}], "agent": agent}
            final = None
            for event in c.chat.answer_chat(caller, ChatRequest.model_validate(body)):
                final = event
            assert final is not None and final.type == "final"
            logged = c.run_log.events("local", final.run_id, 0, MAX_RUN_EVENTS)
            size = sum(len(e.data.encode()) for e in logged)
            texts = sum(1 for e in logged if e.type == "text")
            print(f"| {agent} | {len(logged)} | {texts} | {size:,} | {size / MAX_RUN_LOG_BYTES:.1%} |")
        conversation = None
        for turn in range(args.turns):
            question = QUESTION if turn == 0 else FOLLOW_UPS[turn % len(FOLLOW_UPS)]
            body = {"messages": [{"role": "user", "content": question}]}
            if conversation:
                body["conversationId"] = conversation
            for event in c.chat.answer_chat(caller, ChatRequest.model_validate(body)):
                if event.type == "final":
                    conversation = event.conversation_id
        assert conversation is not None
        kept = c.conversation_store.get("local", conversation)
        assert kept is not None
        size = len(turns_json(kept.turns).encode())
        print()
        print("| conversation | turns kept | bytes kept | per turn | of the bound |")
        print("|---|---:|---:|---:|---:|")
        print(f"| {args.turns} turns | {len(kept.turns)} | {size:,} | {size // len(kept.turns):,} |"
              f" {size / MAX_CONVERSATION_BYTES:.1%} |")  # fmt: skip
        c.close()


if __name__ == "__main__":
    main()
