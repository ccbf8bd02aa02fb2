""":class:`~ragline.ports.Embedder` over Amazon Titan Text Embeddings V2 (``bedrock-runtime`` InvokeModel).

Titan V2 embeds one text per call, so ``embed_documents`` sends one InvokeModel per distinct text from
a small bounded thread pool and puts the vectors back in input order. Token counting is a local
estimate (no model, no call), so chunking in AWS needs neither the offline model nor Bedrock.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ValidationError

from ragline import errors
from ragline.adapters.bedrock.client import bedrock_client, translate

TITAN_TEXT_V2 = "amazon.titan-embed-text-v2:0"
TITAN_V2_DIMENSIONS = (256, 512, 1024)
DEFAULT_DIMENSION = 1024
DEFAULT_CONCURRENCY = 4
BYTES_PER_TOKEN = 4


def invoke_model_request(model: str, text: str, dimension: int) -> dict[str, Any]:
    """The ``InvokeModel`` keyword arguments for one text (pure): Titan V2's body, JSON both ways."""
    body = {"inputText": text, "dimensions": dimension, "normalize": True}
    return {
        "modelId": model,
        "contentType": "application/json",
        "accept": "application/json",
        "body": json.dumps(body, ensure_ascii=False).encode("utf-8"),
    }


def estimate_tokens(text: str) -> int:
    """About four bytes of UTF-8 per token, at least 1 — an *estimate*, not Titan's tokenizer.

    Bytes rather than characters so that scripts with more tokens per character (CJK: three bytes,
    about one token each) are not undercounted as badly as with ``len(text) / 4``. Deterministic and
    never smaller for a longer text, which is all the chunker needs of it.
    """
    return max(1, math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN))


class _TitanEmbedding(BaseModel):
    embedding: list[float]
    inputTextTokenCount: int = 0


class BedrockEmbedder:
    """Titan Text Embeddings V2 at ``dimension`` 256, 512 or 1024 (``model_id`` names both).

    Vectors are requested normalised and renormalised here in float32 (JSON rounding). Equal texts in
    one ``embed_documents`` call are embedded once. A vector of another length than ``dimension``
    raises :class:`~ragline.errors.EmbeddingMismatch`; a body that is not Titan's answer raises
    :class:`~ragline.errors.DependencyFailed`. Vendor errors are translated by code (see
    :func:`ragline.adapters.bedrock.client.translate`): throttling → ``Throttled``, a down or cold
    model and timeouts → ``DependencyUnavailable``, missing access or model → ``ConfigurationError``,
    a refused request (e.g. an empty text) → ``DependencyFailed``.

    ``client`` is a ``bedrock-runtime`` client; ``None`` builds one on first use in ``region``.
    """

    def __init__(
        self,
        *,
        model: str = TITAN_TEXT_V2,
        dimension: int = DEFAULT_DIMENSION,
        region: str | None = None,
        client: Any = None,
        max_concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        if dimension not in TITAN_V2_DIMENSIONS:
            raise errors.ConfigurationError(
                f"Titan Text Embeddings V2 supports dimensions {TITAN_V2_DIMENSIONS}", dimension=dimension
            )
        if max_concurrency < 1:
            raise errors.ConfigurationError(
                "max_concurrency must be at least 1", max_concurrency=max_concurrency
            )
        self.model = model
        self.dimension = dimension
        self.model_id = f"bedrock:{model}@{dimension}"
        self.max_concurrency = max_concurrency
        self._client = bedrock_client(
            "bedrock-runtime", client=client, region=region, max_pool_connections=max(10, max_concurrency)
        )

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self._embed_one(self._client(), text)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        distinct = list(dict.fromkeys(texts))
        vectors = dict(zip(distinct, self._embed_all(distinct), strict=True))
        for row, text in enumerate(texts):
            out[row] = vectors[text]
        return out

    def count_tokens(self, text: str) -> int:
        """An estimate (:func:`estimate_tokens`); loads no model and calls nothing."""
        return estimate_tokens(text)

    def _embed_all(self, texts: list[str]) -> list[NDArray[np.float32]]:
        client = self._client()
        workers = min(self.max_concurrency, len(texts))
        if workers == 1:
            return [self._embed_one(client, text) for text in texts]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bedrock-embed") as pool:
            futures: list[Future[NDArray[np.float32]]] = [
                pool.submit(self._embed_one, client, text) for text in texts
            ]
            try:
                return [future.result() for future in futures]  # input order; first failure raises
            except BaseException:
                for future in futures:
                    future.cancel()  # texts not started yet are not sent after a failure
                raise

    def _embed_one(self, client: Any, text: str) -> NDArray[np.float32]:
        request = invoke_model_request(self.model, text, self.dimension)
        with translate("InvokeModel"):
            response = client.invoke_model(**request)
            raw = response["body"].read()
        return self._vector(raw)

    def _vector(self, raw: bytes) -> NDArray[np.float32]:
        try:
            parsed = _TitanEmbedding.model_validate_json(raw)
        except ValidationError as exc:
            raise errors.DependencyFailed(
                "Bedrock answered InvokeModel with a body that is not a Titan embedding", model=self.model
            ) from exc
        vector = np.asarray(parsed.embedding, dtype=np.float32)
        if vector.shape != (self.dimension,):
            raise errors.EmbeddingMismatch(
                "Bedrock returned a vector of another dimension", expected=self.dimension, got=vector.size
            )
        norm = float(np.linalg.norm(vector))
        if not math.isfinite(norm) or norm == 0.0:
            raise errors.DependencyFailed("Bedrock returned a zero or non-finite vector", model=self.model)
        return np.asarray(vector / norm, dtype=np.float32)
