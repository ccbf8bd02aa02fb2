"""InvokeModel (Titan V2) and Rerank requests on the local Bedrock server: each body checked as the
service checks it; Rerank's scores from the offline MiniLM model, optional pages joined by ``nextToken``."""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from tests.support.bedrock_wire import ServiceError

if TYPE_CHECKING:
    from tests.support.bedrock_server import BedrockServer

RERANK_MODELS = ("amazon.rerank-v1:0", "cohere.rerank-v3-5:0")
RERANK_REGIONS = {
    "amazon.rerank-v1:0": ("ap-northeast-1", "ca-central-1", "eu-central-1", "us-west-2"),
    "cohere.rerank-v3-5:0": ("ap-northeast-1", "ca-central-1", "eu-central-1", "us-east-1", "us-west-2"),
}
"""Where Bedrock offers each reranking model (docs: "Supported Regions and models for reranking"), kept apart
from the application's own table so the server stays an independent oracle."""
_TITAN_KEYS = {"inputText", "dimensions", "normalize", "embeddingTypes"}

_MODEL_ARN = re.compile(
    r"^(arn:aws(-[^:]+)?:(bedrock|sagemaker):[a-z0-9-]{1,20}:([0-9]{12})?:([a-z-]+/)?)?"
    r"([a-z0-9.-]{1,63}){0,2}(([:][a-z0-9-]{1,63}){0,2})?(/[a-z0-9]{1,12})?$"
)  # BedrockModelArn's pattern in the bedrock-agent-runtime service model


def rerank(body: Any, bedrock: BedrockServer, region: str) -> dict[str, Any]:
    """``region`` is the request's SigV4 credential scope: a model not offered there is refused, as
    Bedrock refuses an unknown model identifier (amazon.rerank-v1:0 called in us-east-1)."""
    query, texts, arn, wanted = _rerank_request(body)
    model_id = arn.rsplit("/", 1)[-1]
    if model_id not in RERANK_MODELS:
        raise ServiceError("ValidationException", f"The model {arn} does not support reranking")
    if region not in RERANK_REGIONS[model_id] or arn.split(":")[3:4] not in ([region], [""], []):
        raise ServiceError("ValidationException", "The provided model identifier is invalid.")
    from tests.support.bedrock_server import minilm

    model = minilm()
    vectors = model.embed_documents([query, *texts])
    scores = (1.0 + vectors[1:] @ vectors[0]) / 2.0
    order = sorted(range(len(texts)), key=lambda i: (-float(scores[i]), i))[:wanted]
    results = [{"index": i, "relevanceScore": float(scores[i])} for i in order]
    size = bedrock.rerank_page_size
    if size is None:
        return {"results": results}
    fingerprint = hashlib.sha256(
        json.dumps({k: v for k, v in body.items() if k != "nextToken"}, sort_keys=True).encode()
    ).hexdigest()[:16]
    start = 0
    if "nextToken" in body:
        token_fingerprint, _, offset = str(body["nextToken"]).partition(".")
        if token_fingerprint != fingerprint or not offset.isdigit():
            raise ServiceError("ValidationException", "nextToken does not belong to this request")
        start = int(offset)
    page: dict[str, Any] = {"results": results[start : start + size]}
    if start + size < len(results):
        page["nextToken"] = f"{fingerprint}.{start + size}"
    return page


def _rerank_request(body: Any) -> tuple[str, list[str], str, int]:
    """``(query, texts, modelArn, numberOfResults)``, checked against the service model's shapes."""

    def invalid(what: str) -> ServiceError:
        return ServiceError("ValidationException", f"1 validation error detected: {what}")

    if not isinstance(body, dict):
        raise invalid("the body is not a JSON object")
    queries = body.get("queries")
    if not isinstance(queries, list) or len(queries) != 1:
        raise invalid("queries must hold exactly one query")
    query = queries[0]
    if query.get("type") != "TEXT" or not _text_ok(query.get("textQuery")):
        raise invalid("queries[0] must be a TEXT query of 1 to 32000 characters")
    sources = body.get("sources")
    if not isinstance(sources, list) or not 1 <= len(sources) <= 1000:
        raise invalid("sources must hold 1 to 1000 sources")
    texts: list[str] = []
    for n, source in enumerate(sources):
        if not isinstance(source, dict) or source.get("type") != "INLINE":
            raise invalid(f"sources[{n}] must be an INLINE source")
        document = source.get("inlineDocumentSource")
        if not isinstance(document, dict) or document.get("type") != "TEXT":
            raise invalid(f"sources[{n}] must be an INLINE TEXT document")
        if not _text_ok(document.get("textDocument")):
            raise invalid(f"sources[{n}].textDocument.text must be 1 to 32000 characters")
        texts.append(document["textDocument"]["text"])
    config = body.get("rerankingConfiguration") or {}
    bedrock_config = config.get("bedrockRerankingConfiguration") or {}
    arn = (bedrock_config.get("modelConfiguration") or {}).get("modelArn")
    if config.get("type") != "BEDROCK_RERANKING_MODEL" or not isinstance(arn, str):
        raise invalid("rerankingConfiguration must be a BEDROCK_RERANKING_MODEL with a modelArn")
    if not _MODEL_ARN.match(arn):
        raise invalid(f"modelArn {arn!r} does not match the model ARN pattern")
    wanted = bedrock_config.get("numberOfResults", len(texts))
    if not isinstance(wanted, int) or not 1 <= wanted <= len(texts):
        raise invalid("numberOfResults must be between 1 and the number of sources")
    return query["textQuery"]["text"], texts, arn, wanted


def _text_ok(document: Any) -> bool:
    text = document.get("text") if isinstance(document, dict) else None
    return isinstance(text, str) and 1 <= len(text) <= 32_000


def titan_request(body: Any) -> tuple[str, int, bool]:
    """``(inputText, dimensions, normalize)`` of a Titan V2 body, checked as Titan V2 checks it."""
    if not isinstance(body, dict):
        raise ServiceError("ValidationException", "Malformed input request, please reformat your input")
    extra = sorted(set(body) - _TITAN_KEYS)
    if extra:
        raise ServiceError("ValidationException", f"extraneous key [{extra[0]}] is not permitted")
    text = body.get("inputText")
    if not isinstance(text, str) or not 1 <= len(text) <= 50_000:
        raise ServiceError("ValidationException", "inputText must be a string of 1 to 50000 characters")
    dimensions = body.get("dimensions", 1024)
    if dimensions not in (256, 512, 1024):
        raise ServiceError("ValidationException", f"{dimensions} is not a valid enum value")
    normalize = body.get("normalize", True)
    if not isinstance(normalize, bool):
        raise ServiceError("ValidationException", "normalize must be a boolean")
    return text, int(dimensions), normalize
