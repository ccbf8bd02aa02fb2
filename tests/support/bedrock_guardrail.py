"""``ApplyGuardrail`` (bedrock-runtime) as the local Bedrock server answers it
(``POST /guardrail/{guardrailIdentifier}/version/{guardrailVersion}/apply``).

The request is checked against the service model's shapes as Bedrock checks them for a contextual
grounding check: ``source`` INPUT or OUTPUT, ``outputScope`` INTERVENTIONS or FULL, 1+ text blocks whose
qualifiers are ``grounding_source`` / ``query`` / ``guard_content``, at most one source and one query
(source ≤ 100,000 characters, query ≤ 1,000, guarded content ≤ 5,000). A guardrail id in
:data:`GUARDRAILS` has a contextual grounding policy with that GROUNDING threshold; ``no-grounding``
has none (the response carries no contextual grounding assessment); any other id is 404
``ResourceNotFoundException``.

The GROUNDING score is the share of the guarded content's words (lowercased ``\\w+``, 3+ letters) that
occur in the grounding source: deterministic, so tests can predict it. RELEVANCE is reported at 1.0.
"""

from __future__ import annotations

import re
from typing import Any

from tests.support.bedrock_wire import ServiceError

GUARDRAILS = {"grounded-75": 0.75, "grounded-50": 0.5}
NO_GROUNDING = "no-grounding"
PATH = re.compile(r"^/guardrail/(?P<id>[^/]+)/version/(?P<version>[^/]+)/apply$")
_WORDS = re.compile(r"\w{3,}")


def grounding_score(source: str, content: str) -> float:
    wanted = set(_WORDS.findall(content.lower()))
    if not wanted:
        return 0.0
    return round(len(wanted & set(_WORDS.findall(source.lower()))) / len(wanted), 4)


def _blocks(body: Any) -> dict[str, list[str]]:
    if not isinstance(body, dict) or body.get("source") not in ("INPUT", "OUTPUT"):
        raise ServiceError("ValidationException", "source must be INPUT or OUTPUT")
    if body.get("outputScope", "INTERVENTIONS") not in ("INTERVENTIONS", "FULL"):
        raise ServiceError("ValidationException", "invalid outputScope")
    content = body.get("content")
    if not isinstance(content, list) or not content:
        raise ServiceError("ValidationException", "content must hold at least one block")
    found: dict[str, list[str]] = {"grounding_source": [], "query": [], "guard_content": []}
    for block in content:
        text = block.get("text") if isinstance(block, dict) else None
        if not isinstance(text, dict) or not isinstance(text.get("text"), str):
            raise ServiceError("ValidationException", "every block must be a text block")
        qualifiers = text.get("qualifiers") or ["guard_content"]
        for qualifier in qualifiers:
            if qualifier not in found:
                raise ServiceError("ValidationException", f"unknown qualifier {qualifier}")
            found[qualifier].append(text["text"])
    if len(found["grounding_source"]) > 1 or len(found["query"]) > 1:
        raise ServiceError("ValidationException", "at most one grounding source and one query")
    limits = {"grounding_source": 100_000, "query": 1_000, "guard_content": 5_000}
    for qualifier, limit in limits.items():
        if any(len(t) > limit for t in found[qualifier]):
            raise ServiceError("ValidationException", f"{qualifier} is longer than {limit} characters")
    return found


def apply_guardrail(path: str, body: Any) -> dict[str, Any]:
    """The response body for one request (raises :class:`ServiceError` for an error answer)."""
    match = PATH.match(path)
    assert match is not None
    guardrail = match["id"]
    found = _blocks(body)
    if guardrail != NO_GROUNDING and guardrail not in GUARDRAILS:
        raise ServiceError("ResourceNotFoundException", f"guardrail {guardrail} not found")
    content = " ".join(found["guard_content"])
    usage = {
        "topicPolicyUnits": 0,
        "contentPolicyUnits": 0,
        "wordPolicyUnits": 0,
        "sensitiveInformationPolicyUnits": 0,
        "sensitiveInformationPolicyFreeUnits": 0,
        "contextualGroundingPolicyUnits": 0,
    }
    answer: dict[str, Any] = {"usage": usage, "action": "NONE", "outputs": [], "assessments": [{}]}
    if guardrail == NO_GROUNDING or not found["grounding_source"] or not found["query"]:
        return answer
    threshold = GUARDRAILS[guardrail]
    score = grounding_score(found["grounding_source"][0], content)
    blocked = score < threshold
    usage["contextualGroundingPolicyUnits"] = 1 + len(found["grounding_source"][0]) // 1000
    answer["assessments"] = [
        {
            "contextualGroundingPolicy": {
                "filters": [
                    {"type": "GROUNDING", "threshold": threshold, "score": score,
                     "action": "BLOCKED" if blocked else "NONE", "detected": blocked},
                    {"type": "RELEVANCE", "threshold": threshold, "score": 1.0, "action": "NONE",
                     "detected": False},
                ]
            }
        }
    ]  # fmt: skip
    if blocked:
        answer["action"] = "GUARDRAIL_INTERVENED"
        answer["outputs"] = [{"text": "Sorry, the model cannot answer this question."}]
    return answer
