""":class:`~ragline.ports.Reranker` over the Bedrock ``Rerank`` API (``bedrock-agent-runtime``).

One ``Rerank`` call ranks the query against the hits' texts with a Bedrock reranking model (Amazon
Rerank 1.0 by default, or Cohere Rerank 3.5) and returns ``numberOfResults`` of them with a
``relevanceScore``. ``max_candidates`` (100) bounds the documents per call: Bedrock's pricing counts a
Rerank query per 100 documents (check the current price list).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ragline import errors
from ragline.adapters.bedrock.client import bedrock_client, translate
from ragline.adapters.bedrock.regions import require_rerank_model_offered
from ragline.domain.models import RunUsage, SearchHit
from ragline.domain.retrieval import Reranked, with_rerank_scores
from ragline.errors import RerankFailed

AMAZON_RERANK_V1 = "amazon.rerank-v1:0"
COHERE_RERANK_V3_5 = "cohere.rerank-v3-5:0"
RERANK_MODELS = frozenset({AMAZON_RERANK_V1, COHERE_RERANK_V3_5})
MAX_SOURCES = 1000
MAX_TEXT_CHARS = 32_000
"""Rerank's limits: at most 1000 sources per call, 1 to 32,000 characters per query or document."""
MAX_PAGES = 20


def model_arn(model: str, region: str) -> str:
    """The foundation-model ARN Rerank wants (an ARN passes through unchanged)."""
    if model.startswith("arn:"):
        return model
    partition = (
        "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"
    )
    return f"arn:{partition}:bedrock:{region}::foundation-model/{model}"


def rerank_request(
    query: str, texts: Sequence[str], *, model_arn: str, number_of_results: int, next_token: str | None = None
) -> dict[str, Any]:
    """The ``Rerank`` keyword arguments (pure); texts are clipped to Rerank's 32,000 characters."""
    request: dict[str, Any] = {
        "queries": [{"type": "TEXT", "textQuery": {"text": query[:MAX_TEXT_CHARS]}}],
        "sources": [
            {
                "type": "INLINE",
                "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": text[:MAX_TEXT_CHARS]}},
            }
            for text in texts
        ],
        "rerankingConfiguration": {
            "type": "BEDROCK_RERANKING_MODEL",
            "bedrockRerankingConfiguration": {
                "numberOfResults": number_of_results,
                "modelConfiguration": {"modelArn": model_arn},
            },
        },
    }
    if next_token is not None:
        request["nextToken"] = next_token
    return request


class _Result(BaseModel):
    index: int
    relevanceScore: float


class _Page(BaseModel):
    results: list[_Result]
    nextToken: str | None = None


def ranked_order(results: Sequence[_Result], count: int) -> list[tuple[int, float]]:
    """``(index, score)`` best first (ties keep fused order); an index out of range or repeated is a
    malformed answer and raises :class:`RerankFailed`."""
    seen: set[int] = set()
    for result in results:
        if not 0 <= result.index < count or result.index in seen:
            raise RerankFailed(
                "Bedrock Rerank answered with an unknown or repeated index", index=result.index
            )
        seen.add(result.index)
    ordered = sorted(results, key=lambda r: (-r.relevanceScore, r.index))
    return [(r.index, r.relevanceScore) for r in ordered]


class BedrockReranker:
    """Ranks the first ``max_candidates`` hits with one Bedrock ``Rerank`` call.

    Returns at most ``top_n`` of them, best first, ``rerank_score`` = the model's ``relevanceScore``;
    hits beyond ``max_candidates`` are not returned. Usage is ``reranks=1`` per call. Throttling
    and outages raise ``Throttled``/``DependencyUnavailable``; everything else that goes wrong
    (refused request, missing model access, malformed answer) raises :class:`RerankFailed` — so the
    retrieval service falls back to fused order, visibly, instead of failing the search.

    ``client`` is a ``bedrock-agent-runtime`` client; ``None`` builds one on first use in ``region``.
    The model ARN uses ``region`` or, when None, the client's region (reranking models are not offered
    in every region: pass the region the model is in).
    """

    def __init__(
        self,
        *,
        model: str = AMAZON_RERANK_V1,
        region: str | None = None,
        client: Any = None,
        max_candidates: int = 100,
    ) -> None:
        if model not in RERANK_MODELS and not model.startswith("arn:"):
            raise errors.ConfigurationError(
                f"unknown Bedrock rerank model {model!r}: use one of {sorted(RERANK_MODELS)} or an ARN",
                model=model,
            )
        if not 1 <= max_candidates <= MAX_SOURCES:
            raise errors.ConfigurationError(
                f"max_candidates must be within 1..{MAX_SOURCES}", max_candidates=max_candidates
            )
        if region:
            require_rerank_model_offered(model, region)
        self.model = model
        self.name = f"bedrock:{model}"
        self.region = region
        self.max_candidates = max_candidates
        self._client = bedrock_client("bedrock-agent-runtime", client=client, region=region)

    def rerank(self, query: str, hits: Sequence[SearchHit], top_n: int) -> Reranked:
        if top_n <= 0 or not hits:
            return Reranked(hits=[])
        candidates = list(hits[: self.max_candidates])
        wanted = min(top_n, len(candidates))
        client = self._client()
        region = self.region or client.meta.region_name
        if not region:
            raise RerankFailed("no AWS region for the Bedrock rerank model", model=self.model)
        require_rerank_model_offered(self.model, region)
        arn = model_arn(self.model, region)
        texts = [hit.chunk.text for hit in candidates]
        results = self._send(client, query, texts, arn, wanted)
        order = ranked_order(results, len(candidates))[:wanted]
        return Reranked(
            hits=with_rerank_scores([candidates[i] for i, _ in order], [s for _, s in order], wanted),
            usage=RunUsage(reranks=1),
        )

    def _send(self, client: Any, query: str, texts: list[str], arn: str, wanted: int) -> list[_Result]:
        """Every result page: the API declares ``nextToken`` pagination, so tokens are followed."""
        results: list[_Result] = []
        token: str | None = None
        for _ in range(MAX_PAGES):
            request = rerank_request(query, texts, model_arn=arn, number_of_results=wanted, next_token=token)
            with translate("Rerank", rejected=RerankFailed, misconfigured=RerankFailed):
                response = client.rerank(**request)
            try:
                page = _Page.model_validate(response)
            except ValidationError as exc:
                raise RerankFailed("Bedrock Rerank answered without results") from exc
            results.extend(page.results)
            token = page.nextToken
            if token is None or len(results) >= wanted:
                return results
        raise RerankFailed(f"Bedrock Rerank still had pages after {MAX_PAGES}", pages=MAX_PAGES)
