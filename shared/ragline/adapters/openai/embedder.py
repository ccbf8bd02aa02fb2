""":class:`~ragline.ports.Embedder` over an OpenAI-compatible ``/embeddings`` endpoint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ragline import errors
from ragline.config import Settings

if TYPE_CHECKING:
    from openai import OpenAI

_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


class OpenAIEmbedder:
    def __init__(
        self, *, model: str, client: OpenAI, dimension: int | None = None, batch_size: int = 256
    ) -> None:
        if dimension is None and model not in _DIMENSIONS:
            raise errors.ConfigurationError(f"unknown dimension for embedding model {model!r}")
        self.model_id = f"openai:{model}"
        self.dimension = dimension or _DIMENSIONS[model]
        self._model = model
        self._client = client
        self._batch = batch_size

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIEmbedder:
        from ragline.adapters.openai.chat import openai_client

        return cls(model=settings.openai_embedding_model, client=openai_client(settings))

    def embed_query(self, text: str) -> NDArray[np.float32]:
        vectors: NDArray[np.float32] = self.embed_documents([text])[0]
        return vectors

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import openai

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), self._batch):
            batch = list(texts[start : start + self._batch])
            try:
                resp = self._client.embeddings.create(model=self._model, input=batch)
            except openai.RateLimitError as exc:
                raise errors.Throttled("the embedding endpoint is rate limiting") from exc
            except (openai.APITimeoutError, openai.APIConnectionError, openai.InternalServerError) as exc:
                raise errors.DependencyUnavailable("the embedding endpoint is unavailable") from exc
            except openai.APIStatusError as exc:
                raise errors.DependencyFailed(
                    "the embedding endpoint refused the request", status=exc.status_code
                ) from exc
            for item in resp.data:
                v = np.asarray(item.embedding, dtype=np.float32)
                if v.shape != (self.dimension,):
                    raise errors.EmbeddingMismatch(
                        "endpoint returned vectors of another dimension", got=v.size
                    )
                out[start + item.index] = v / (np.linalg.norm(v) or 1.0)
        return out

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)
