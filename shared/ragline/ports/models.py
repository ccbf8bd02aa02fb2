"""The models the core calls: embedding, token counting, OCR, reranking, chat, and the two
judges (grounding, answer correctness).

Part of :mod:`ragline.ports` (which re-exports every port); the docstrings are the contracts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    import numpy as np
    from numpy.typing import NDArray

    from ragline.domain.chat import ChatMessage, ChatOptions, ModelEvent, ToolSpec
    from ragline.domain.evaluations import JudgeVerdict
    from ragline.domain.grounding import Checked, CitedClaim
    from ragline.domain.models import SearchHit
    from ragline.domain.ocr import TextLine
    from ragline.domain.retrieval import Reranked


class Embedder(Protocol):
    """Turns text into unit-length float32 vectors of a fixed ``dimension``.

    ``model_id`` names the model *and* its settings (truncation, pooling), so a namespace can refuse
    vectors from a different embedding space.
    """

    model_id: str
    dimension: int

    def embed_query(self, text: str) -> NDArray[np.float32]: ...

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Shape ``(len(texts), dimension)``; batches internally."""
        ...

    def count_tokens(self, text: str) -> int: ...


class TextRecognizer(Protocol):
    """Reads the printed text off one page image (OCR): the offline recogniser, or Amazon Textract.

    ``recognize`` takes one encoded image (PNG or JPEG bytes, already checked against the parse limits
    by the caller) and returns the lines it found, each with its box in that image's pixels, in any
    order (:func:`ragline.documents.page_text.page_text` lays them out); an image without text gives
    ``[]``. It raises only Ragline errors: :class:`~ragline.errors.UnreadableDocument` for an image it
    cannot decode, :class:`~ragline.errors.DocumentTooLarge` for one over the engine's own limits, and
    a transient failure as :class:`~ragline.errors.Throttled` or
    :class:`~ragline.errors.DependencyUnavailable` (the caller's queue retries it). Safe to call from
    several threads. ``name`` names the engine (logs, benchmarks).

    ``reads_files``: ``False`` — ``recognize`` is sent a PNG the parser decoded and bounded (images
    through Pillow, PDF pages rendered by PDFium); ``True`` — it is sent the page as a file holds it (a
    PNG, JPEG or TIFF image as uploaded, or a one-page PDF cut by pypdf) and decodes and bounds it
    itself, so the parser needs neither Pillow nor PDFium.
    """

    name: str
    reads_files: bool

    def recognize(self, image: bytes) -> list[TextLine]: ...


class Tokenizer(Protocol):
    """Counts text in model tokens (the chunker's unit of size); one call per document."""

    def count_many(self, texts: Sequence[str]) -> list[int]: ...


class Reranker(Protocol):
    """Reorders hits by relevance to the query.

    Contract: returns at most ``top_n`` of the given hits (no duplicates, nothing new), best first,
    each with ``breakdown.rerank_score`` set and never increasing down the list, the rest of each hit
    unchanged; plus what the call cost (``reranks``, LLM tokens). A reranker that cannot rank raises
    ``RerankFailed`` (carrying the tokens it spent) or a dependency error; the caller falls back.
    """

    name: str

    def rerank(self, query: str, hits: Sequence[SearchHit], top_n: int) -> Reranked: ...


class ChatModel(Protocol):
    """A tool-calling chat model that streams.

    Contract: ``stream`` yields zero or more :class:`TextDelta`, then at most one
    :class:`ToolCallsReady` (arguments fully assembled), then one :class:`TokenUsage`, then one
    :class:`TurnEnd`. Vendor errors surface as Ragline errors.
    """

    name: str

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]: ...


class GroundingScorer(Protocol):
    """Checks each cited sentence of an answer against the chunks it cites.

    Contract: ``check(claims)`` returns :class:`~ragline.domain.grounding.Checked` with exactly one
    verdict per claim, in order: ``supported`` (the passages entail the sentence), ``contradicted``
    (they say otherwise) or ``not_enough_info``, a support score in [0, 1], and the passages' sentences
    (``chunk_id`` + index into ``Passage.sentences``) that decided, where the scorer can tell. It
    checks only what it is given (the caller has already applied the limits) and spends no tokens on an
    empty list. Whatever it spent (model tokens) is in ``Checked.usage``. Any failure raises
    :class:`~ragline.errors.GroundingFailed` (carrying what it spent); the caller degrades to
    "grounding unavailable" and never fails the answer. No I/O at construction.
    """

    name: str

    def check(self, claims: Sequence[CitedClaim]) -> Checked: ...


class AnswerJudge(Protocol):
    """Grades an answer against a reference answer (answer evaluation's correctness and completeness).

    Contract: ``judge(question, reference, answer)`` returns a
    :class:`~ragline.domain.evaluations.JudgeVerdict` with correctness and completeness each in
    [0, 1] — or ``None`` when it cannot tell (a reply it cannot read) — a short reason, and what it spent
    (model tokens; nothing for an offline judge). An answer with no text is incorrect and incomplete
    (0, 0) and spends nothing. Citation markers in the answer are not graded. Model failures raise
    Ragline errors. No I/O at construction.
    """

    name: str

    def judge(self, question: str, reference: str, answer: str) -> JudgeVerdict: ...
