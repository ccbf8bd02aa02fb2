"""Prompts as module constants (one place to tune them)."""

from __future__ import annotations

from collections.abc import Sequence

AGENTIC_PROMPT = """You answer questions using ONLY the tenant's documents.
When you have enough evidence, answer concisely. If the documents do not contain the answer, say so.
"""

TOOL_RULES = """Tool rules (always apply):
- Call `search` with a focused query before answering; search again with different words if the
  results do not answer the question. Use mode "keyword" for exact names, codes and numbers and
  "semantic" otherwise.
- Call `expand` on a result whose text is cut off or needs its surrounding context.
- Call tools only through the tool-calling interface: never write a tool call, a tool result or
  tool markup as text in your answer.
- Use only what the tools returned; do not answer from memory.
"""

EVIDENCE_RULES = """Evidence rules (always apply):
- The search results in this conversation are your only source: use nothing else.
- If they do not contain the answer, say so.
"""

CITATION_RULES = """Citation rules (always apply):
- After each sentence that uses a document, cite the chunk ids you used exactly as
  <citation ids="ID1,ID2"/> with ids copied from the tool results (the [id] that starts a result,
  or its "id" field).
- Never cite an id that did not appear in a tool result. Never invent sources.
"""

PLATFORM_CONTRACT = TOOL_RULES + "\n" + CITATION_RULES
"""Appended to every system prompt of a run where the model calls the tools (``agentic``)."""
ANSWER_CONTRACT = EVIDENCE_RULES + "\n" + CITATION_RULES
"""Appended when the agent retrieved for the model and it only writes the answer (``deep_search``,
``chain_of_rag``)."""

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


def resolve_system_prompt(stored: str, *, tools: bool = True) -> str:
    """Empty or a known default → the tuned prompt; a custom prompt is kept. Either way the platform's
    rules are appended: the tool and citation rules (``tools``), or the evidence and citation rules."""
    contract = PLATFORM_CONTRACT if tools else ANSWER_CONTRACT
    custom = stored.strip()
    if not custom or custom in KNOWN_DEFAULT_PROMPTS:
        return AGENTIC_PROMPT + "\n" + contract
    return custom + "\n\n" + contract


def run_system_prompt(stored: Sequence[tuple[str, str]], *, tools: bool = True) -> str:
    """The system prompt of a run over the namespaces ``stored`` (namespace id, its stored prompt).

    Every namespace's own prompt applies: one custom prompt (however many namespaces set it) is used as
    :func:`resolve_system_prompt` would; several different ones are all kept, in the run's namespace
    order, each introduced by the namespaces that set it; none (empty or known defaults) gives the tuned
    prompt. The platform's rules are appended once either way."""
    customs: dict[str, list[str]] = {}
    for namespace_id, prompt in stored:
        custom = prompt.strip()
        if custom and custom not in KNOWN_DEFAULT_PROMPTS:
            customs.setdefault(custom, []).append(namespace_id)
    if len(customs) <= 1:
        return resolve_system_prompt(next(iter(customs), ""), tools=tools)
    blocks = [
        f"Instructions set for namespace{'s' if len(ids) > 1 else ''} {', '.join(ids)}:\n{custom}"
        for custom, ids in customs.items()
    ]
    return resolve_system_prompt("\n\n".join(blocks), tools=tools)


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


# -- routing (DeepSearcher's RAG router and collection router) ----------------------------------

AGENT_ROUTER_PROMPT = """You route a user's question to the agent best suited to answer it from the
user's documents. The agents, numbered:

{agents}

Answer with the number of one agent only (a single integer from 1 to {count}), nothing else.
"""

COLLECTION_ROUTER_PROMPT = """You choose which document collections to search for a user's question.
The collections, as "name: description":

{collections}

List every collection that may hold documents relevant to the question (when unsure, include it).
Answer with JSON only, no prose: {{"namespaces": ["name", ...]}}
"""

# -- deep_search -----------------------------------------------------------------------------------

DECOMPOSE_PROMPT = """You plan a document search. Split the user's last message into at most 4 short,
self-contained search questions that together cover everything it asks (just one if it asks one thing).
Resolve references to earlier turns ("it", "that one") so each question stands alone.
Answer with JSON only, no prose: {"subQueries": ["...", "..."]}
"""

RELEVANCE_PROMPT = """You filter search results. List the ids of the passages below that help answer the
user's question, fully or in part. Leave out passages that are off topic.
Answer with JSON only, no prose: {"relevant": ["id", ...]} (an empty list if none helps).
"""

REFLECT_PROMPT = """You decide whether a document search must go on. Given the user's question, the
searches already run and the relevant passages found, write up to 3 new search questions for
information that is still missing, different from the searches already run. If the passages already
answer the question, write none.
Answer with JSON only, no prose: {"gapQueries": ["...", ...]}
"""

# -- chain_of_rag ------------------------------------------------------------------------------------

FOLLOW_UP_PROMPT = """You answer a complex question one retrieval at a time. Given the question and the
intermediate questions and answers so far, write the next simple search question: the one fact still
needed, standing alone (names resolved from the earlier answers).
Answer with JSON only, no prose: {"query": "..."}
"""

INTERMEDIATE_PROMPT = """Answer the intermediate question from the passages below only, in one or two
sentences (write "unknown" if they do not say). List the ids of the passages that support your answer.
Then judge whether the original question can now be answered in full from all the intermediate
answers so far.
Answer with JSON only, no prose:
{"answer": "...", "supportingIds": ["id", ...], "questionAnswered": true}
"""
