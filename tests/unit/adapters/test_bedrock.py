"""Bedrock adapters: pure request builders, error translation per AWS code (scripted failures through
the local Bedrock server and real botocore), concurrency, SigV4, lazy clients and local token counts."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from botocore.exceptions import ClientError

from ragline import errors
from ragline.adapters.bedrock.embedder import (
    TITAN_TEXT_V2,
    BedrockEmbedder,
    estimate_tokens,
    invoke_model_request,
)
from ragline.adapters.bedrock.reranker import (
    AMAZON_RERANK_V1,
    COHERE_RERANK_V3_5,
    MAX_TEXT_CHARS,
    BedrockReranker,
    model_arn,
    rerank_request,
)
from ragline.services.retrieval import FALLBACK_ERRORS
from tests.contract.reranker_contract import HITS, QUERY, make_hits
from tests.support.bedrock_server import BedrockServer, minilm, titan_vector

pytestmark = pytest.mark.unit

ROOT = Path(__file__).parents[3]


def embedder(
    server: BedrockServer, *, dimension: int = 256, concurrency: int = 2, **client: Any
) -> BedrockEmbedder:
    return BedrockEmbedder(
        dimension=dimension, client=server.client("bedrock-runtime", **client), max_concurrency=concurrency
    )


def reranker(server: BedrockServer, **client: Any) -> BedrockReranker:
    """Amazon Rerank 1.0 (the reranker's default model) from a region that offers it."""
    return BedrockReranker(client=server.client("bedrock-agent-runtime", region="us-west-2", **client))


# -- request builders (pure) ----------------------------------------------------------------------


def test_invoke_model_request_is_titan_v2_json_for_one_text() -> None:
    request = invoke_model_request(TITAN_TEXT_V2, "Zürich 東京", 512)

    assert {k: v for k, v in request.items() if k != "body"} == {
        "modelId": "amazon.titan-embed-text-v2:0",
        "contentType": "application/json",
        "accept": "application/json",
    }
    assert json.loads(request["body"]) == {"inputText": "Zürich 東京", "dimensions": 512, "normalize": True}
    assert "Zürich 東京".encode() in request["body"]  # UTF-8, not \\u escapes


def test_rerank_request_has_one_text_query_inline_text_sources_and_the_model_arn() -> None:
    arn = "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"

    request = rerank_request("bees?", ["a", "b"], model_arn=arn, number_of_results=2)

    assert request == {
        "queries": [{"type": "TEXT", "textQuery": {"text": "bees?"}}],
        "sources": [
            {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": "a"}}},
            {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": "b"}}},
        ],
        "rerankingConfiguration": {
            "type": "BEDROCK_RERANKING_MODEL",
            "bedrockRerankingConfiguration": {"numberOfResults": 2, "modelConfiguration": {"modelArn": arn}},
        },
    }


def test_rerank_request_clips_texts_to_the_api_limit_and_carries_a_next_token() -> None:
    request = rerank_request("q" * 40_000, ["d" * 40_000], model_arn="m", number_of_results=1, next_token="t")

    assert len(request["queries"][0]["textQuery"]["text"]) == MAX_TEXT_CHARS
    assert len(request["sources"][0]["inlineDocumentSource"]["textDocument"]["text"]) == MAX_TEXT_CHARS
    assert request["nextToken"] == "t"


@pytest.mark.parametrize(
    ("region", "arn"),
    [
        ("us-west-2", "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"),
        ("cn-north-1", "arn:aws-cn:bedrock:cn-north-1::foundation-model/amazon.rerank-v1:0"),
        ("us-gov-west-1", "arn:aws-us-gov:bedrock:us-gov-west-1::foundation-model/amazon.rerank-v1:0"),
    ],
)
def test_model_arn_is_the_foundation_model_in_the_region_and_partition(region: str, arn: str) -> None:
    assert model_arn(AMAZON_RERANK_V1, region) == arn
    assert model_arn(arn, "eu-central-1") == arn  # an ARN passes through


# -- identity and configuration -------------------------------------------------------------------


def test_model_id_names_the_model_and_the_dimension() -> None:
    assert (
        BedrockEmbedder(dimension=512, client=object()).model_id == "bedrock:amazon.titan-embed-text-v2:0@512"
    )
    assert BedrockEmbedder(client=object()).dimension == 1024


@pytest.mark.parametrize("bad", [{"dimension": 384}, {"max_concurrency": 0}])
def test_embedder_settings_titan_cannot_honour_are_refused(bad: dict[str, int]) -> None:
    with pytest.raises(errors.ConfigurationError):
        BedrockEmbedder(client=object(), **bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad", [{"model": "cohere.rerank-v9:0"}, {"max_candidates": 0}, {"max_candidates": 1001}]
)
def test_reranker_settings_rerank_cannot_honour_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(errors.ConfigurationError):
        BedrockReranker(client=object(), **bad)


# -- token counting is local ----------------------------------------------------------------------


def test_token_estimate_is_four_utf8_bytes_per_token_at_least_one() -> None:
    assert [estimate_tokens(t) for t in ("", "a", "abcd", "abcde", "東京")] == [1, 1, 1, 2, 2]


def test_count_tokens_loads_no_model_and_no_sdk() -> None:
    # Given a fresh interpreter that imports and builds the embedder without a client
    script = textwrap.dedent(
        """
        import sys
        from ragline.adapters.bedrock.embedder import BedrockEmbedder
        embedder = BedrockEmbedder()
        texts = ("Honey bees pollinate flowers.", "東京は日本の首都です。")
        counts = [embedder.count_tokens(t) for t in texts]
        heavy = sorted(m for m in ("onnxruntime", "tokenizers", "boto3", "botocore") if m in sys.modules)
        print(counts, heavy)
        """
    )
    # When it counts tokens
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT / 'shared'}", "PATH": "/usr/bin:/bin"},
    )
    # Then it counted without loading a model, a tokenizer or even boto3
    assert done.stdout.strip() == "[8, 9] []"


# -- real vectors, lazily built clients -----------------------------------------------------------


def test_vectors_are_the_servers_minilm_vectors(bedrock_server: BedrockServer) -> None:
    vector = embedder(bedrock_server, dimension=1024).embed_query("How do bees make honey?")

    np.testing.assert_allclose(vector[:384], minilm().embed_query("How do bees make honey?"), atol=1e-5)
    assert not vector[384:].any()
    np.testing.assert_allclose(vector, titan_vector("How do bees make honey?", 1024), atol=1e-6)


def test_without_a_client_one_is_built_on_first_use_from_the_environment(
    bedrock_server: BedrockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an environment that sends boto3 to the local server, and no injected client
    for name, value in {
        "AWS_ENDPOINT_URL": bedrock_server.url,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    embed = BedrockEmbedder(region="us-east-1", dimension=256)
    rank = BedrockReranker(region="eu-central-1")

    # When they are used
    vector = embed.embed_query("bees")
    ranked = rank.rerank(QUERY, HITS, 2)

    # Then each built its client, signed its calls, and the ARN names the configured region
    assert vector.shape == (256,)
    assert len(ranked.hits) == 2
    sent = bedrock_server.recorded("Rerank")[0].body
    arn = sent["rerankingConfiguration"]["bedrockRerankingConfiguration"]["modelConfiguration"]["modelArn"]
    assert arn == "arn:aws:bedrock:eu-central-1::foundation-model/amazon.rerank-v1:0"


# -- concurrency ----------------------------------------------------------------------------------


def test_concurrent_calls_that_finish_out_of_order_keep_input_order(bedrock_server: BedrockServer) -> None:
    # Given texts whose answers come back slowest first
    texts = [
        f"passage number {i} about {topic}" for i, topic in enumerate(["bees", "rust", "sun", "tea", "ice"])
    ]
    bedrock_server.embed_delays = {text: 0.05 * (len(texts) - i) for i, text in enumerate(texts)}
    subject = embedder(bedrock_server, concurrency=3)

    # When embedded together, and one by one
    together = subject.embed_documents(texts)
    alone = np.stack([titan_vector(text, 256) for text in texts])

    # Then each row is its own text's vector, and calls overlapped up to the bound
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert bedrock_server.max_in_flight == 3


def test_equal_texts_are_sent_once(bedrock_server: BedrockServer) -> None:
    vectors = embedder(bedrock_server).embed_documents(["bees", "rust", "bees", "bees"])

    assert [r.body["inputText"] for r in bedrock_server.recorded("InvokeModel")].count("bees") == 1
    np.testing.assert_array_equal(vectors[0], vectors[3])


def test_a_failure_among_concurrent_calls_raises_the_translated_error(bedrock_server: BedrockServer) -> None:
    bedrock_server.fail("ValidationException", operation="InvokeModel")

    with pytest.raises(errors.DependencyFailed) as caught:
        embedder(bedrock_server, concurrency=4).embed_documents(["a", "b", "c", "d", "e"])

    assert caught.value.details["aws_code"] == "ValidationException"


# -- error translation, by code, through botocore -------------------------------------------------

EMBEDDER_ERRORS = [
    ("ThrottlingException", errors.Throttled),
    ("ServiceQuotaExceededException", errors.Throttled),
    ("ServiceUnavailableException", errors.DependencyUnavailable),
    ("InternalServerException", errors.DependencyUnavailable),
    ("ModelNotReadyException", errors.DependencyUnavailable),
    ("ModelTimeoutException", errors.DependencyUnavailable),
    ("ModelErrorException", errors.DependencyUnavailable),
    ("AccessDeniedException", errors.ConfigurationError),
    ("ResourceNotFoundException", errors.ConfigurationError),
    ("ValidationException", errors.DependencyFailed),
]


@pytest.mark.parametrize("via", ["header", "type"])
@pytest.mark.parametrize(("code", "expected"), EMBEDDER_ERRORS)
def test_embedder_translates_each_bedrock_error_code(
    bedrock_server: BedrockServer, code: str, expected: type[errors.RaglineError], via: str
) -> None:
    # Given Bedrock answering every InvokeModel with this error (code in the header or in __type)
    bedrock_server.fail(code, times=None, via=via)  # type: ignore[arg-type]

    # When a text is embedded
    with pytest.raises(errors.RaglineError) as caught:
        embedder(bedrock_server).embed_query("bees")

    # Then the Ragline error a caller can act on, chained to botocore's
    assert type(caught.value) is expected
    assert caught.value.details["aws_code"] == code
    assert isinstance(caught.value.__cause__, ClientError)


RERANKER_ERRORS = [
    ("ThrottlingException", errors.Throttled),
    ("ServiceUnavailableException", errors.DependencyUnavailable),
    ("InternalServerException", errors.DependencyUnavailable),
    ("BadGatewayException", errors.DependencyUnavailable),
    ("DependencyFailedException", errors.DependencyUnavailable),
    ("ValidationException", errors.RerankFailed),
    ("ConflictException", errors.RerankFailed),
    ("AccessDeniedException", errors.RerankFailed),
    ("ResourceNotFoundException", errors.RerankFailed),
]


@pytest.mark.parametrize(("code", "expected"), RERANKER_ERRORS)
def test_reranker_translates_each_bedrock_error_code_into_one_the_search_falls_back_on(
    bedrock_server: BedrockServer, code: str, expected: type[errors.RaglineError]
) -> None:
    bedrock_server.fail(code, times=None)

    with pytest.raises(errors.RaglineError) as caught:
        reranker(bedrock_server).rerank(QUERY, HITS, 3)

    assert type(caught.value) is expected
    assert caught.value.details["aws_code"] == code
    assert isinstance(caught.value, FALLBACK_ERRORS)  # the retrieval service falls back to fused order


def test_retryable_errors_are_retried_by_botocore_and_others_are_not(bedrock_server: BedrockServer) -> None:
    subject = embedder(bedrock_server, max_attempts=2)

    # Given a call throttled once, when it is made, then botocore retries it into a vector
    bedrock_server.fail("ThrottlingException")
    assert subject.embed_query("bees").shape == (256,)

    # Given a call refused as invalid once, when it is made, then it fails without a retry
    bedrock_server.fail("ValidationException")
    with pytest.raises(errors.DependencyFailed):
        subject.embed_query("rust")

    assert [r.body["inputText"] for r in bedrock_server.recorded("InvokeModel")] == ["bees", "bees", "rust"]


def test_an_unreachable_endpoint_is_dependency_unavailable() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=1),
    )
    with pytest.raises(errors.DependencyUnavailable) as caught:
        BedrockEmbedder(client=client).embed_query("bees")
    assert type(caught.value.__cause__).__name__ == "EndpointConnectionError"


def test_a_read_timeout_is_dependency_unavailable(bedrock_server: BedrockServer) -> None:
    bedrock_server.embed_delays = {"slow": 1.0}

    with pytest.raises(errors.DependencyUnavailable) as caught:
        embedder(bedrock_server, max_attempts=1, read_timeout=0.2).embed_query("slow")

    assert type(caught.value.__cause__).__name__ == "ReadTimeoutError"


# -- SigV4 ----------------------------------------------------------------------------------------


def test_calls_carry_a_sigv4_authorization_for_bedrock(bedrock_server: BedrockServer) -> None:
    embedder(bedrock_server).embed_query("bees")
    reranker(bedrock_server).rerank(QUERY, HITS, 2)

    signed_for = {"InvokeModel": "us-east-1", "Rerank": "us-west-2"}  # each client's own region
    for request in bedrock_server.requests:
        assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=test/")
        assert f"/{signed_for[request.operation]}/bedrock/aws4_request" in request.headers["authorization"]
        assert request.headers["x-amz-date"]


def test_an_unsigned_request_is_refused_and_translated(bedrock_server: BedrockServer) -> None:
    with pytest.raises(errors.ConfigurationError) as refused_embedding:
        embedder(bedrock_server, signed=False).embed_query("bees")
    with pytest.raises(errors.RerankFailed) as refused_rerank:
        reranker(bedrock_server, signed=False).rerank(QUERY, HITS, 2)

    assert refused_embedding.value.details["aws_code"] == "AccessDeniedException"
    assert refused_rerank.value.details["aws_code"] == "AccessDeniedException"
    assert all("authorization" not in r.headers for r in bedrock_server.requests)


# -- rerank behaviour beyond the contract ----------------------------------------------------------


def test_rerank_asks_for_at_most_top_n_of_at_most_max_candidates(bedrock_server: BedrockServer) -> None:
    hits = make_hits([f"passage {i} about bees" for i in range(8)])
    subject = BedrockReranker(
        client=bedrock_server.client("bedrock-agent-runtime", region="us-west-2"), max_candidates=5
    )

    out = subject.rerank(QUERY, hits, 50)

    sent = bedrock_server.recorded("Rerank")[0].body
    assert len(sent["sources"]) == 5
    assert sent["rerankingConfiguration"]["bedrockRerankingConfiguration"]["numberOfResults"] == 5
    assert {h.chunk.id for h in out.hits} == {h.chunk.id for h in hits[:5]}


def test_rerank_follows_next_token_pages(bedrock_server: BedrockServer) -> None:
    whole = reranker(bedrock_server).rerank(QUERY, HITS, 5)
    bedrock_server.reset()
    bedrock_server.rerank_page_size = 2

    paged = reranker(bedrock_server).rerank(QUERY, HITS, 5)

    assert paged.hits == whole.hits
    assert len(bedrock_server.recorded("Rerank")) == 3
    assert paged.usage.reranks == 1


def test_cohere_rerank_is_addressed_by_its_own_arn(bedrock_server: BedrockServer) -> None:
    BedrockReranker(model=COHERE_RERANK_V3_5, client=bedrock_server.client("bedrock-agent-runtime")).rerank(
        QUERY, HITS, 1
    )

    config = bedrock_server.recorded("Rerank")[0].body["rerankingConfiguration"]
    arn = config["bedrockRerankingConfiguration"]["modelConfiguration"]["modelArn"]
    assert arn == "arn:aws:bedrock:us-east-1::foundation-model/cohere.rerank-v3-5:0"


# -- malformed answers (a fake client: the real server never sends these) --------------------------


class _CannedRuntime:
    """A bedrock-runtime stand-in that answers InvokeModel with a fixed body."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def invoke_model(self, **request: Any) -> dict[str, Any]:
        return {"body": io.BytesIO(self.body), "contentType": "application/json"}


class _CannedAgentRuntime:
    """A bedrock-agent-runtime stand-in that answers Rerank with a fixed response."""

    class meta:
        region_name = "us-west-2"

    def __init__(self, response: dict[str, Any]) -> None:
        self.response = response

    def rerank(self, **request: Any) -> dict[str, Any]:
        return self.response


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"not json", errors.DependencyFailed),
        (b'{"inputTextTokenCount": 3}', errors.DependencyFailed),
        (json.dumps({"embedding": [0.0] * 256}).encode(), errors.DependencyFailed),
        (json.dumps({"embedding": [0.1] * 1024}).encode(), errors.EmbeddingMismatch),
    ],
)
def test_a_malformed_embedding_answer_is_refused(body: bytes, expected: type[errors.RaglineError]) -> None:
    with pytest.raises(expected):
        BedrockEmbedder(dimension=256, client=_CannedRuntime(body)).embed_query("bees")


@pytest.mark.parametrize(
    "response",
    [
        {},
        {"results": [{"index": 7, "relevanceScore": 0.9}]},
        {"results": [{"index": 1, "relevanceScore": 0.9}, {"index": 1, "relevanceScore": 0.8}]},
        {"results": [{"index": "first", "relevanceScore": 0.9}]},
    ],
)
def test_a_malformed_rerank_answer_is_rerank_failed(response: dict[str, Any]) -> None:
    with pytest.raises(errors.RerankFailed):
        BedrockReranker(client=_CannedAgentRuntime(response)).rerank(QUERY, HITS, 3)


def test_rerank_results_are_ordered_by_score_whatever_order_they_arrive_in() -> None:
    arriving = {"results": [{"index": 0, "relevanceScore": 0.1}, {"index": 3, "relevanceScore": 0.7}]}

    out = BedrockReranker(client=_CannedAgentRuntime(arriving)).rerank(QUERY, HITS, 3)

    assert [(h.chunk.id, h.breakdown.rerank_score) for h in out.hits] == [("d3#0", 0.7), ("d0#0", 0.1)]


def test_an_empty_passage_is_refused_by_botocore_before_sending_as_rerank_failed(
    bedrock_server: BedrockServer,
) -> None:
    # Given a hit whose text is empty (Rerank's documents are 1..32,000 characters)
    hits = make_hits(["Honey bees turn nectar into honey.", ""])

    # When reranked, then botocore's parameter validation refuses it and the search can fall back
    with pytest.raises(errors.RerankFailed):
        reranker(bedrock_server).rerank(QUERY, hits, 2)
    assert bedrock_server.recorded("Rerank") == []


@pytest.mark.parametrize(
    ("model", "region", "offered"),
    [
        (AMAZON_RERANK_V1, "us-east-1", False),
        (AMAZON_RERANK_V1, "us-west-2", True),
        (COHERE_RERANK_V3_5, "us-east-1", True),
        (COHERE_RERANK_V3_5, "eu-west-1", False),
    ],
)
def test_the_local_bedrock_refuses_a_rerank_model_not_offered_in_the_callers_region(
    bedrock_server: BedrockServer, model: str, region: str, offered: bool
) -> None:
    # Given a bedrock-agent-runtime client signing for a region (the region Bedrock answers from)
    client = bedrock_server.client("bedrock-agent-runtime", region=region, max_attempts=1)
    request = rerank_request(
        QUERY, [h.chunk.text for h in HITS], model_arn=model_arn(model, region), number_of_results=2
    )

    # When it reranks, Then Bedrock answers only where it offers the model (else ValidationException)
    if offered:
        assert client.rerank(**request)["results"]
    else:
        with pytest.raises(ClientError) as refused:
            client.rerank(**request)
        assert refused.value.response["Error"]["Code"] == "ValidationException"


@pytest.mark.parametrize(
    ("model", "region", "offered_here"),
    [(AMAZON_RERANK_V1, "us-east-1", [COHERE_RERANK_V3_5]), (COHERE_RERANK_V3_5, "eu-west-1", [])],
)
def test_a_rerank_model_not_offered_in_its_region_is_a_configuration_error_before_any_call(
    bedrock_server: BedrockServer, model: str, region: str, offered_here: list[str]
) -> None:
    # Given the model configured for a Region whose Bedrock does not offer it
    client = bedrock_server.client("bedrock-agent-runtime", region=region)

    # When the reranker is built with that Region, or first reranks with a client in it
    with pytest.raises(errors.ConfigurationError) as at_startup:
        BedrockReranker(model=model, region=region)
    with pytest.raises(errors.ConfigurationError) as at_first_use:
        BedrockReranker(model=model, client=client).rerank(QUERY, HITS, 2)

    # Then the error names the model, the Region, where it is offered and what is offered here
    for refused in (at_startup.value, at_first_use.value):
        assert refused.code == "configuration_error"
        assert model in refused.message and region in refused.message
        assert refused.details["offered_here"] == offered_here
        assert region not in refused.details["offered_in"]
    assert not bedrock_server.recorded("Rerank")  # no wasted call
