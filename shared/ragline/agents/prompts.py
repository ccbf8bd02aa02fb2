"""Prompts as module constants (one place to tune them)."""

from __future__ import annotations

AGENTIC_PROMPT = """You answer questions using ONLY the tenant's documents, which you reach through tools.

- Call `search` with a focused query before answering; search again with different words if the
  results do not answer the question. Use mode "keyword" for exact names, codes and numbers and
  "semantic" otherwise.
- Call `expand` on a result whose text is cut off or needs its surrounding context.
- When you have enough evidence, answer concisely. If the documents do not contain the answer, say so.
"""

PLATFORM_CONTRACT = """Citation rules (always apply):
- After each sentence that uses a document, cite the chunk ids you used exactly as
  <citation ids="ID1,ID2"/> with ids copied from the tool results' "id" fields.
- Never cite an id that did not appear in a tool result. Never invent sources.
"""

KNOWN_DEFAULT_PROMPTS: frozenset[str] = frozenset(
    {
        # Defaults that namespaces stored before the tuned prompt existed (compared after strip()).
        "You are a helpful assistant.",
        "You are a helpful assistant. Answer the user's question using the provided context.",
        "Answer the question based on the context below. If you don't know the answer, say you don't know.",
        "You are an AI assistant that answers questions about the user's documents.",
    }
)
"""Historical default prompts, frozen: a namespace storing one of these gets the tuned prompt, so old
namespaces improve when the tuned prompt does. Add to it when a default changes; never remove."""


def resolve_system_prompt(stored: str) -> str:
    """Empty or a known default → the tuned prompt; a custom prompt is kept and the contract appended."""
    custom = stored.strip()
    if not custom or custom in KNOWN_DEFAULT_PROMPTS:
        return AGENTIC_PROMPT + "\n" + PLATFORM_CONTRACT
    return custom + "\n\n" + PLATFORM_CONTRACT


GENERATE_QUERIES_PROMPT = """You write search queries for a document retrieval system.
Read the conversation and write up to 5 queries that together find the passages needed to
answer the user's last message.

- "keyword" queries are a few exact terms, names, codes or numbers (BM25);
  "semantic" queries are a natural-language description of what a passage would say (embeddings).
- Do not repeat or rephrase a query that was already tried; look for what is still missing.
- Answer with JSON only, no prose:
  {"queries": [{"type": "keyword", "query": "..."}, {"type": "semantic", "query": "..."}]}
"""

EVALUATE_QUERIES_PROMPT = """You judge whether retrieved passages suffice to answer the user's last message.
Answer with JSON only, no prose: {"canAnswer": true} if the passages below contain the information
needed, else {"canAnswer": false}.
"""
