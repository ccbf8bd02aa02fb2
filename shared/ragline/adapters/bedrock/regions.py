"""Where Bedrock offers the reranking models on demand, so that a model called in a Region that does not
offer it fails at startup with a ``configuration_error`` naming the model, the Region and where it is
offered — not on every search as a rerank that always falls back (Bedrock answers ValidationException).

Source: "Supported Regions and models for reranking in Amazon Bedrock" (Bedrock user guide). The template
picks the Region's default from the same table (``Mappings: RegionModels``, ``Rules`` in template.yaml).
Only what the docs state is here: an unknown model (an ARN) or a Region missing from a model's row where
the docs are silent passes unchecked.
"""

from __future__ import annotations

from ragline import errors

RERANK_MODEL_REGIONS: dict[str, frozenset[str]] = {
    "amazon.rerank-v1:0": frozenset({"ap-northeast-1", "ca-central-1", "eu-central-1", "us-west-2"}),
    "cohere.rerank-v3-5:0": frozenset(
        {"ap-northeast-1", "ca-central-1", "eu-central-1", "us-east-1", "us-west-2"}
    ),
}
"""Model id → the Regions whose Bedrock offers it for Rerank."""


def require_rerank_model_offered(model: str, region: str) -> None:
    """Raise :class:`~ragline.errors.ConfigurationError` when Bedrock is known not to offer ``model``
    for reranking in ``region``; models outside the table pass."""
    offered = RERANK_MODEL_REGIONS.get(model)
    if offered is None or region in offered:
        return
    where = ", ".join(sorted(offered))
    others = sorted(m for m, regions in RERANK_MODEL_REGIONS.items() if region in regions)
    instead = f"; in {region} use {', '.join(others)}" if others else f"; {region} has no Bedrock Rerank"
    raise errors.ConfigurationError(
        f"Bedrock does not offer the rerank model {model} in {region} (offered in {where}){instead}",
        model=model,
        region=region,
        offered_in=sorted(offered),
        offered_here=others,
    )


def default_rerank_model(region: str) -> str:
    """The Region's rerank model: Amazon Rerank 1.0 where offered (half the price per query), else
    Cohere Rerank 3.5; :class:`~ragline.errors.ConfigurationError` where Bedrock offers neither."""
    for model in ("amazon.rerank-v1:0", "cohere.rerank-v3-5:0"):
        if region in RERANK_MODEL_REGIONS[model]:
            return model
    offered = sorted(set().union(*RERANK_MODEL_REGIONS.values()))
    raise errors.ConfigurationError(
        f"Bedrock Rerank is not offered in {region} (offered in {', '.join(offered)}): "
        "set RAGLINE_BEDROCK_RERANK_MODEL to a model ARN Bedrock offers there, or choose another reranker",
        region=region,
        offered_in=offered,
    )
