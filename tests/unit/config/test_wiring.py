"""The composition root: one backend choice, parts that follow the settings, overrides by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.bedrock.reranker import BedrockReranker
from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.backends import AwsBackend, EmbeddedBackend
from ragline.config import Settings
from ragline.documents.chunker import EmbedderTokenCounter, WordCachedCounter
from ragline.domain.models import TenantScope
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.unit


def test_the_aws_deployment_wires_bedrock_and_no_local_model(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, backend="aws", embedding_provider="bedrock", reranker="bedrock")
    c = Container(settings)
    assert isinstance(c.backend, AwsBackend)
    assert isinstance(c.embedder, EmbeddingCache) and c.embedder.model_id.startswith("bedrock:")
    assert isinstance(c.tokenizer, EmbedderTokenCounter)
    assert isinstance(c.reranker, BedrockReranker)
    assert "local_model" not in c.__dict__  # the MiniLM was never built


@pytest.mark.parametrize(
    ("region", "model"),
    [
        ("us-east-1", "cohere.rerank-v3-5:0"),
        ("us-west-2", "amazon.rerank-v1:0"),
        ("eu-central-1", "amazon.rerank-v1:0"),
    ],
)
def test_bedrock_reranks_with_a_model_its_region_offers_unless_one_is_configured(
    tmp_path: Path, region: str, model: str
) -> None:
    settings = Settings(home=tmp_path, backend="aws", reranker="bedrock", aws_region=region)
    reranker = Container(settings).reranker
    assert isinstance(reranker, BedrockReranker) and reranker.model == model
    chosen = settings.model_copy(update={"bedrock_rerank_model": "cohere.rerank-v3-5:0"})
    assert Container(chosen).reranker.name == "bedrock:cohere.rerank-v3-5:0"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("region", "model", "named"),
    [("eu-west-1", "", "eu-west-1"), ("us-east-1", "amazon.rerank-v1:0", "amazon.rerank-v1:0")],
)
def test_a_region_without_the_rerank_model_is_a_configuration_error_when_the_reranker_is_built(
    tmp_path: Path, region: str, model: str, named: str
) -> None:
    settings = Settings(
        home=tmp_path, backend="aws", reranker="bedrock", aws_region=region, bedrock_rerank_model=model
    )
    with pytest.raises(errors.ConfigurationError, match=named) as refused:
        Container(settings).reranker  # noqa: B018
    assert refused.value.code == "configuration_error" and refused.value.details["region"] == region


def test_the_embedded_default_counts_chunks_in_the_local_models_tokens(tmp_path: Path) -> None:
    c = Container(Settings(home=tmp_path))
    assert isinstance(c.backend, EmbeddedBackend)
    assert isinstance(c.tokenizer, WordCachedCounter) and c.reranker is None


def test_overrides_replace_parts_by_name_and_refuse_unknown_names(tmp_path: Path) -> None:
    embedder = BowEmbedder()
    c = Container(Settings(home=tmp_path), embedder=embedder)
    assert c.embedder is embedder and c.retrieval is c.retrieval
    with pytest.raises(TypeError, match="no part named 'embeder'"):
        Container(Settings(home=tmp_path), embeder=embedder)


def test_building_the_aws_parts_loads_no_offline_model_library(tmp_path: Path) -> None:
    code = (
        "import sys; from ragline.config import Settings; from ragline.wiring import Container\n"
        f"c = Container(Settings(home={str(tmp_path)!r}, backend='aws', embedding_provider='bedrock',"
        " reranker='bedrock', documents_table='d', tenants_table='t', usage_table='u', documents_bucket='b',"
        " opensearch_url='http://127.0.0.1:9'))\n"
        "c.search; c.chat; c.ingest; c.tokenizer.count_many(['a b c'])\n"
        "print(sorted(m for m in ('onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("settings", "backend"),
    [
        ({}, "ExtractiveChatModel"),
        ({"openai_base_url": "http://127.0.0.1:9/v1", "chat_model": "m"}, "OpenAIChatModel"),
        ({"chat_provider": "bedrock"}, "BedrockChatModel"),
        # Bedrock wins over a configured key: the deployment chose it (the template's default)
        ({"chat_provider": "bedrock", "openai_api_key": "sk-x"}, "BedrockChatModel"),
        ({"chat_provider": "offline", "openai_api_key": "sk-x"}, "ExtractiveChatModel"),
    ],
)
def test_the_chat_model_follows_the_chat_provider(
    tmp_path: Path, settings: dict[str, str], backend: str
) -> None:
    from ragline.agents.fitting import ContextFitting

    c = Container(Settings(home=tmp_path, **settings))  # type: ignore[arg-type]
    assert isinstance(c.chat_model, ContextFitting)  # every backend's turns are fitted to its window
    assert type(c.chat_model.inner).__name__ == backend
    assert c.settings.llm_configured is (backend != "ExtractiveChatModel")


def test_bedrock_chat_reads_no_llm_key_secret(tmp_path: Path) -> None:
    """With Bedrock as the model the stack has no key secret; one named anyway is never read."""
    c = Container(Settings(home=tmp_path, chat_provider="bedrock", llm_api_key_secret="arn:aws:secret:none"))
    assert c.chat_model.name == "amazon.nova-pro-v1:0"
    assert "llm_settings" not in c.__dict__


@pytest.mark.parametrize(
    ("service", "provider"),
    [("es", "OpenSearchVectorStoreProvider"), ("aoss", "ServerlessVectorStoreProvider")],
)
def test_the_opensearch_service_chooses_the_store_mode(tmp_path: Path, service: str, provider: str) -> None:
    """``RAGLINE_OPENSEARCH_SERVICE=aoss`` selects the Serverless mode, its fences in the documents table."""
    settings = Settings(
        home=tmp_path,
        store="opensearch",
        opensearch_url="http://127.0.0.1:9",
        opensearch_service=service,  # type: ignore[arg-type]
        documents_table="docs",
    )
    c = Container(settings, embedder=BowEmbedder())
    stores = c.stores
    assert type(stores).__name__ == provider
    if service == "aoss":
        assert stores.fences.table == "docs"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("settings", "scorer"),
    [
        ({}, "LexicalVerifierGroundingScorer"),
        ({"grounding_guardrail_id": "abc123"}, "BedrockGuardrailGroundingScorer"),
        ({"grounding": "overlap", "grounding_guardrail_id": "abc123"}, "OverlapGroundingScorer"),
        ({"grounding": "verifier", "grounding_guardrail_id": "abc123"}, "LexicalVerifierGroundingScorer"),
        (
            {"grounding": "judge", "openai_base_url": "http://127.0.0.1:9/v1", "chat_model": "m"},
            "ChatJudgeGroundingScorer",
        ),
        ({"grounding": "none"}, None),
    ],
)
def test_the_grounding_scorer_follows_the_setting(
    tmp_path: Path, settings: dict[str, str], scorer: str | None
) -> None:
    c = Container(Settings(home=tmp_path, **settings))  # type: ignore[arg-type]
    assert type(c.grounding_scorer).__name__ == (scorer or "NoneType")
    bedrock = scorer == "BedrockGuardrailGroundingScorer"
    assert ("bedrock-runtime" in c.aws_services()) == bedrock  # its service model is warmed at init


def test_the_judge_scorer_without_a_chat_model_is_a_configuration_error(tmp_path: Path) -> None:
    # Given RAGLINE_GROUNDING=judge and no model but the offline extractive one (which judges nothing:
    # every answer's grounding was "unavailable", blaming the model's JSON), then the setting is refused
    with pytest.raises(errors.ConfigurationError, match="judge grounding scorer needs a chat model"):
        _ = Container(Settings(home=tmp_path, grounding="judge")).grounding_scorer


@pytest.mark.parametrize("service", ["es", "aoss"])
def test_a_function_deployed_without_the_store_url_builds_a_space_and_refuses_only_a_store_use(
    tmp_path: Path, service: str
) -> None:
    """The template gives ``RAGLINE_OPENSEARCH_URL`` only to the functions that use the store (the rest
    must not wait for the domain to be created). The namespaces function still starts a reindex, which
    needs the model's space (its dimension) but never the store: that builds, and a use of the store
    is the configuration error naming the variable."""
    settings = Settings(
        home=tmp_path,
        store="opensearch",
        opensearch_url="",
        opensearch_service=service,  # type: ignore[arg-type]
        documents_table="docs",
    )
    c = Container(settings, embedder=BowEmbedder())
    space = c.catalog.default_space()  # what ReindexService.begin builds
    assert space.embedder.dimension == c.embedder.dimension
    with pytest.raises(errors.ConfigurationError, match="RAGLINE_OPENSEARCH_URL"):
        space.stores.scoped(TenantScope(tenant_id="acme", namespace_id="docs"))
    with pytest.raises(errors.ConfigurationError, match="RAGLINE_OPENSEARCH_URL"):
        space.stores.purge_tenant("acme")
    c.close()  # nothing to close
