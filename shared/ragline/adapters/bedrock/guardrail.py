""":class:`~ragline.ports.GroundingScorer` over Bedrock Guardrails' contextual grounding check.

One ``ApplyGuardrail`` call (``bedrock-runtime``) per cited sentence: the cited passages as the
``grounding_source``, the sentence as the ``guard_content`` (``source: OUTPUT``) and, as the ``query``,
the sentence again (Ragline reads only the GROUNDING filter; the RELEVANCE filter the query feeds is
ignored). The guardrail must have a contextual grounding policy; its GROUNDING ``score`` is the
sentence's score and its own ``threshold`` decides ``supported`` (at or above) or ``not_enough_info``.
The check measures support only: it never says ``contradicted``. Guardrail text units are billed to
the AWS account by Bedrock; they are not part of a tenant's run usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ragline import errors
from ragline.adapters.bedrock.client import bedrock_client, translate
from ragline.domain.grounding import Checked, CitedClaim, GroundingLabel, Verdict

MAX_SOURCE_CHARS = 100_000
MAX_QUERY_CHARS = 1_000
MAX_CONTENT_CHARS = 5_000
"""ApplyGuardrail's contextual grounding limits: source, query and guarded content, in characters."""


def apply_guardrail_request(claim: CitedClaim, *, guardrail_id: str, version: str) -> dict[str, Any]:
    """The ``ApplyGuardrail`` keyword arguments for one sentence (pure)."""
    source = "\n\n".join(p.text for p in claim.passages)[:MAX_SOURCE_CHARS]
    return {
        "guardrailIdentifier": guardrail_id,
        "guardrailVersion": version,
        "source": "OUTPUT",
        "outputScope": "FULL",
        "content": [
            {"text": {"text": source, "qualifiers": ["grounding_source"]}},
            {"text": {"text": claim.text[:MAX_QUERY_CHARS], "qualifiers": ["query"]}},
            {"text": {"text": claim.text[:MAX_CONTENT_CHARS], "qualifiers": ["guard_content"]}},
        ],
    }


class _Filter(BaseModel):
    type: str
    threshold: float
    score: float


class _Policy(BaseModel):
    filters: list[_Filter] = []


class _Assessment(BaseModel):
    contextualGroundingPolicy: _Policy | None = None


class _Response(BaseModel):
    assessments: list[_Assessment]


def grounding_verdict(response: Any) -> Verdict:
    """The sentence's verdict from the GROUNDING filter of an ``ApplyGuardrail`` response; a response
    without one (a guardrail with no contextual grounding policy) raises ``GroundingFailed``."""
    try:
        parsed = _Response.model_validate(response)
    except ValidationError as exc:
        raise errors.GroundingFailed("Bedrock ApplyGuardrail answered without assessments") from exc
    for assessment in parsed.assessments:
        policy = assessment.contextualGroundingPolicy
        for found in policy.filters if policy else []:
            if found.type == "GROUNDING":
                score = min(max(found.score, 0.0), 1.0)
                label: GroundingLabel = "supported" if score >= found.threshold else "not_enough_info"
                return Verdict(label, score)
    raise errors.GroundingFailed(
        "the guardrail returned no contextual grounding score: give it a contextual grounding policy"
    )


class BedrockGuardrailGroundingScorer:
    """See the module docstring. ``client`` is a ``bedrock-runtime`` client; None builds one on first
    use in ``region``."""

    def __init__(
        self, *, guardrail_id: str, version: str = "DRAFT", region: str | None = None, client: Any = None
    ) -> None:
        if not guardrail_id:
            raise errors.ConfigurationError("the Bedrock grounding scorer needs a guardrail id")
        self.guardrail_id, self.version = guardrail_id, version
        self.name = f"bedrock-guardrail:{guardrail_id}"
        self._client = bedrock_client("bedrock-runtime", client=client, region=region)

    def check(self, claims: Sequence[CitedClaim]) -> Checked:
        verdicts: list[Verdict] = []
        for claim in claims:
            request = apply_guardrail_request(claim, guardrail_id=self.guardrail_id, version=self.version)
            with translate(
                "ApplyGuardrail", rejected=errors.GroundingFailed, misconfigured=errors.GroundingFailed
            ):
                response = self._client().apply_guardrail(**request)
            verdicts.append(grounding_verdict(response))
        return Checked(verdicts=verdicts)
