"""A cross-encoder reranker from a local ONNX file (ms-marco style), configured by the operator.

No cross-encoder ships with Ragline (none is carried by a PyPI wheel; see MODELS.md), so this is built
only when ``RAGLINE_CROSS_ENCODER_MODEL`` and ``RAGLINE_CROSS_ENCODER_TOKENIZER`` point at files.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragline import errors
from ragline.domain.models import RunUsage, SearchHit
from ragline.domain.retrieval import Reranked, with_rerank_scores
from ragline.errors import RerankFailed


class OnnxCrossEncoderReranker:
    """An ms-marco-style cross-encoder from operator-supplied files (none ships with Ragline).

    Each hit is scored as ``[CLS] query [SEP] passage [SEP]`` (``token_type_ids`` 0/1, pair truncated
    to ``max_length`` tokens) in batches of ``batch_size``; ``rerank_score`` is the model's logit
    (the last column when it emits several). Ties keep fused order.

    Missing files raise :class:`~ragline.errors.ConfigurationError` at construction; the session
    loads on first use, once, under a lock. A file onnxruntime cannot load, or a model whose output is
    not one score per pair, raises :class:`RerankFailed` (so a run falls back rather than fails).
    """

    name = "cross-encoder"

    def __init__(
        self,
        model_path: str | Path,
        tokenizer_path: str | Path,
        *,
        batch_size: int = 16,
        max_length: int = 512,
        intra_op_threads: int | None = None,
    ) -> None:
        self.model_path, self.tokenizer_path = Path(model_path), Path(tokenizer_path)
        for what, path in (("model", self.model_path), ("tokenizer", self.tokenizer_path)):
            if not path.is_file():
                raise errors.ConfigurationError(
                    f"Cross-encoder {what} file not found: {path}. No cross-encoder ships with Ragline; "
                    "configure the paths of an ONNX ms-marco-style model and its tokenizer.json, "
                    "or choose another reranker.",
                    **{f"{what}_path": str(path)},
                )
        if batch_size < 1 or not 3 <= max_length <= 4096:
            raise errors.ConfigurationError(
                "batch_size must be at least 1 and max_length within 3..4096",
                batch_size=batch_size,
                max_length=max_length,
            )
        self.batch_size, self.max_length, self.intra_op_threads = batch_size, max_length, intra_op_threads
        self._loaded: tuple[Any, Any, int] | None = None
        self._lock = threading.Lock()

    def rerank(self, query: str, hits: Sequence[SearchHit], top_n: int) -> Reranked:
        if top_n <= 0 or not hits:
            return Reranked(hits=[])
        scores = self.score(query, [hit.chunk.text for hit in hits])
        order = sorted(range(len(hits)), key=lambda i: -scores[i])  # stable: ties keep fused order
        return Reranked(
            hits=with_rerank_scores([hits[i] for i in order], [scores[i] for i in order], top_n),
            usage=RunUsage(reranks=1),
        )

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance logit per passage, in input order."""
        session, tokenizer, pad_id = self._load()
        from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

        wanted = {i.name for i in session.get_inputs()}
        scores: list[float] = []
        for start in range(0, len(passages), self.batch_size):
            batch = [(query, p) for p in passages[start : start + self.batch_size]]
            feed = _pair_batch(tokenizer.encode_batch(batch), pad_id)
            try:
                (logits,) = session.run([session.get_outputs()[0].name], {k: feed[k] for k in wanted})
            except (
                ort_errors.Fail,
                ort_errors.InvalidArgument,
                ort_errors.RuntimeException,
                KeyError,
            ) as exc:
                raise RerankFailed(f"the cross-encoder could not run: {exc}") from exc
            out = np.asarray(logits, dtype=np.float32)
            if out.ndim == 1:
                out = out[:, None]
            if out.ndim != 2 or out.shape[0] != len(batch):
                raise RerankFailed(
                    f"the model at {self.model_path} is not a cross-encoder: output shape {out.shape}"
                )
            scores.extend(float(x) for x in out[:, -1])
        return scores

    def _load(self) -> tuple[Any, Any, int]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._build()
            return self._loaded

    def _build(self) -> tuple[Any, Any, int]:
        import onnxruntime as ort
        from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        except Exception as exc:  # tokenizers raises a bare Exception for unreadable files
            raise RerankFailed(f"cannot read the cross-encoder tokenizer {self.tokenizer_path}") from exc
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_length)
        pad_id = tokenizer.token_to_id("[PAD]") or 0
        options = ort.SessionOptions()
        if self.intra_op_threads is not None:
            options.intra_op_num_threads = self.intra_op_threads
        try:
            session = ort.InferenceSession(
                str(self.model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except (
            ort_errors.Fail,
            ort_errors.InvalidGraph,
            ort_errors.InvalidProtobuf,
            ort_errors.NoSuchFile,
        ) as exc:
            raise RerankFailed(f"onnxruntime cannot load the cross-encoder {self.model_path}") from exc
        return session, tokenizer, pad_id


def _pair_batch(encodings: Sequence[Any], pad_id: int) -> dict[str, np.ndarray[Any, Any]]:
    width = max(len(e.ids) for e in encodings)
    input_ids = np.full((len(encodings), width), pad_id, dtype=np.int64)
    attention_mask = np.zeros_like(input_ids)
    token_type_ids = np.zeros_like(input_ids)
    for row, e in enumerate(encodings):
        n = len(e.ids)
        input_ids[row, :n], attention_mask[row, :n], token_type_ids[row, :n] = e.ids, 1, e.type_ids
    return {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
