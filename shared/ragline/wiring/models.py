"""The models the container builds: embedders and their tokenizer, the chat model, the reranker, the
grounding scorer and answer judge, and OCR.

The bottom of the container's layers (see :mod:`ragline.wiring`): a model needs only the settings,
and each choice is read here once, so a deployment's vendor SDK (Bedrock, OpenAI, onnxruntime) is
imported by the branch that builds it and by no other.
"""

from __future__ import annotations

import importlib.util
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing the wiring costs no pydantic
    from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
    from ragline.config import Settings
    from ragline.ports import (
        AnswerJudge,
        ChatModel,
        Embedder,
        GroundingScorer,
        Reranker,
        TextRecognizer,
        Tokenizer,
    )


class ModelParts:
    """The model parts of :class:`~ragline.wiring.Container`, each built on first use."""

    settings: Settings
    _overrides: frozenset[str]
    """The parts the caller passed in (a test's chat model counts as a configured one)."""

    @cached_property
    def embedder(self) -> Embedder:
        """Offline by default; vectors are cached (re-embedding unchanged text costs nothing)."""
        from ragline.adapters.embedded.embedding_cache import EmbeddingCache

        s = self.settings
        inner: Embedder
        if s.embedding_provider == "openai":
            from ragline.adapters.openai.embedder import OpenAIEmbedder

            inner = OpenAIEmbedder.from_settings(s)
        elif s.embedding_provider == "bedrock":
            from ragline.adapters.bedrock.embedder import BedrockEmbedder

            inner = BedrockEmbedder(
                model=s.bedrock_embedding_model, dimension=s.embedding_dimension, region=s.aws_region
            )
        else:
            inner = self.local_model
        path = s.home / "cache" / "embeddings.sqlite"
        return EmbeddingCache(inner, path, max_bytes=s.embedding_cache_mib * 1024 * 1024)

    @cached_property
    def tokenizer(self) -> Tokenizer:
        """The chunker counts in the embedder's own tokens: the local model's tokenizer (each distinct
        word encoded once), or the endpoint embedder's own count (no local model loaded)."""
        from ragline.documents.chunker import EmbedderTokenCounter, WordCachedCounter

        if self.settings.embedding_provider != "local":
            return EmbedderTokenCounter(self.embedder)
        return WordCachedCounter(self.local_model)

    @cached_property
    def local_model(self) -> LocalOnnxEmbedder:
        """The offline MiniLM (embedder and tokenizer); built only when embeddings are local."""
        from ragline.adapters.local_models.embedder import LocalOnnxEmbedder

        return LocalOnnxEmbedder(batch_size=self.settings.embed_batch_size)

    @cached_property
    def chat_model(self) -> ChatModel:
        """The model of every agent, router and hosting search (``settings.chat_backend``); a turn
        whose conversation does not fit its context window is pruned and asked once more."""
        from ragline.agents.fitting import ContextFitting

        return ContextFitting(self._chat_backend())

    def _chat_backend(self) -> ChatModel:
        s = self.settings
        if s.chat_backend == "bedrock":
            from ragline.adapters.bedrock.chat import BedrockChatModel

            return BedrockChatModel(
                model=s.bedrock_chat_model,
                region=s.aws_region,
                cache_points=s.bedrock_cache_points,
                retries=s.llm_max_retries,
                read_timeout_s=s.llm_timeout_s or 60.0,
            )
        if s.chat_backend == "openai":
            from ragline.adapters.openai.chat import OpenAIChatModel

            return OpenAIChatModel.from_settings(self.llm_settings)
        from ragline.adapters.local_models.extractive_chat import ExtractiveChatModel

        return ExtractiveChatModel()

    @cached_property
    def llm_settings(self) -> Settings:
        """The settings with the LLM key filled in from Secrets Manager when one is named."""
        s = self.settings
        if not s.llm_api_key_secret or s.openai_api_key.get_secret_value():
            return s
        from pydantic import SecretStr

        from ragline.adapters.aws.secrets import SecretsManagerSecret

        key = SecretsManagerSecret(s.llm_api_key_secret).value()
        return s.model_copy(update={"openai_api_key": SecretStr(key)})

    @cached_property
    def reranker(self) -> Reranker | None:
        """``auto``: the LLM listwise reranker when a model endpoint is configured, else none."""
        choice = self.settings.reranker
        if choice == "auto":
            choice = "llm" if self.settings.llm_configured else "none"
        if choice == "none":
            return None
        if choice == "bedrock":
            from ragline.adapters.bedrock.regions import default_rerank_model
            from ragline.adapters.bedrock.reranker import BedrockReranker

            region = self.settings.aws_region
            model = self.settings.bedrock_rerank_model or default_rerank_model(region)
            return BedrockReranker(model=model, region=region)
        if choice == "cross-encoder":
            from ragline.adapters.local_models.cross_encoder import OnnxCrossEncoderReranker

            s = self.settings
            return OnnxCrossEncoderReranker(s.cross_encoder_model, s.cross_encoder_tokenizer)
        from ragline.adapters.rerank import LlmListwiseReranker

        return LlmListwiseReranker(self.chat_model)

    @cached_property
    def grounding_scorer(self) -> GroundingScorer | None:
        """``settings.resolved_grounding``'s scorer (None: grounding off)."""
        s = self.settings
        choice = s.resolved_grounding
        if choice == "none":
            return None
        if choice == "bedrock":
            from ragline.adapters.bedrock.guardrail import BedrockGuardrailGroundingScorer

            return BedrockGuardrailGroundingScorer(
                guardrail_id=s.grounding_guardrail_id,
                version=s.grounding_guardrail_version,
                region=s.aws_region,
            )
        if choice == "judge":
            from ragline import errors
            from ragline.adapters.grounding.judge import ChatJudgeGroundingScorer

            # the offline extractive model judges nothing: refused here, not "unavailable" per answer
            if not s.llm_configured and "chat_model" not in self._overrides:
                raise errors.ConfigurationError(
                    "the judge grounding scorer needs a chat model: set RAGLINE_CHAT_PROVIDER (bedrock) or "
                    "an OpenAI-compatible endpoint (OPENAI_API_KEY, RAGLINE_OPENAI_BASE_URL), or choose "
                    "RAGLINE_GROUNDING=verifier"
                )
            return ChatJudgeGroundingScorer(self.chat_model)
        if choice == "overlap":
            from ragline.adapters.grounding.overlap import OverlapGroundingScorer

            return OverlapGroundingScorer()
        from ragline.adapters.grounding.verifier import LexicalVerifierGroundingScorer

        return LexicalVerifierGroundingScorer()

    @cached_property
    def answer_judge(self) -> AnswerJudge:
        """``settings.evaluation_judge``: the chat model, or the offline reference-overlap judge."""
        from ragline.adapters.grounding.answer_judges import ModelAnswerJudge, ReferenceOverlapJudge

        choice = self.settings.evaluation_judge
        if choice == "auto":
            model = self.settings.llm_configured or "chat_model" in self._overrides
            choice = "model" if model else "offline"
        return ModelAnswerJudge(self.chat_model) if choice == "model" else ReferenceOverlapJudge()

    @cached_property
    def text_recognizer(self) -> TextRecognizer | None:
        """The OCR engine (``RAGLINE_OCR``): offline PP-OCRv4, Amazon Textract, or none."""
        s = self.settings
        if s.ocr == "off" or (s.ocr == "auto" and importlib.util.find_spec("rapidocr_onnxruntime") is None):
            return None
        if s.ocr == "textract":
            from ragline.adapters.aws.textract import TextractRecognizer

            return TextractRecognizer(region=s.aws_region)
        from ragline.adapters.local_models.ocr import RapidOcrRecognizer

        return RapidOcrRecognizer()
