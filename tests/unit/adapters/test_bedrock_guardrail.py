"""The Bedrock Guardrails grounding scorer through real boto3/botocore (SigV4, REST-JSON, retries, error
parsing) against the local Bedrock server's ``ApplyGuardrail``."""

from __future__ import annotations

import pytest

from ragline import errors
from ragline.adapters.bedrock.guardrail import BedrockGuardrailGroundingScorer, apply_guardrail_request
from ragline.domain.grounding import CitedClaim, Passage
from ragline.domain.models import RunUsage
from ragline.services.grounding import GroundingService
from tests.support.bedrock_guardrail import NO_GROUNDING, grounding_score
from tests.support.bedrock_server import BedrockServer

pytestmark = pytest.mark.unit

PASSAGE = Passage("returns.md#0", ("Bicycles can be returned within thirty days.", "Keep the receipt."))
STATED = CitedClaim("Bicycles can be returned within thirty days.", ("returns.md#0",), (PASSAGE,))
INVENTED = CitedClaim("Helmets ship free to Norway overnight.", ("returns.md#0",), (PASSAGE,))


def scorer(server: BedrockServer, guardrail: str = "grounded-75") -> BedrockGuardrailGroundingScorer:
    client = server.client("bedrock-runtime")
    return BedrockGuardrailGroundingScorer(guardrail_id=guardrail, version="3", client=client)


def test_each_sentence_is_checked_against_its_passages_with_the_grounding_qualifiers(
    bedrock_server: BedrockServer,
) -> None:
    checked = scorer(bedrock_server).check([STATED, INVENTED])

    sent = bedrock_server.recorded("ApplyGuardrail")
    assert [r.path for r in sent] == ["/guardrail/grounded-75/version/3/apply"] * 2
    blocks = [(b["text"]["qualifiers"], b["text"]["text"]) for b in sent[0].body["content"]]
    assert blocks == [
        (["grounding_source"], PASSAGE.text),
        (["query"], STATED.text),
        (["guard_content"], STATED.text),
    ]
    assert sent[0].body["source"] == "OUTPUT"
    assert [(v.label, v.score) for v in checked.verdicts] == [
        ("supported", 1.0),
        ("not_enough_info", grounding_score(PASSAGE.text, INVENTED.text)),
    ]
    assert checked.usage == RunUsage()  # guardrail units are billed to the account, not the tenant


def test_the_guardrails_own_threshold_decides_supported(bedrock_server: BedrockServer) -> None:
    half = CitedClaim("Bicycles can be returned within ninety weeks anywhere.", ("r",), (PASSAGE,))
    score = grounding_score(PASSAGE.text, half.text)
    assert 0.5 <= score < 0.75

    strict = scorer(bedrock_server, "grounded-75").check([half]).verdicts[0]
    lenient = scorer(bedrock_server, "grounded-50").check([half]).verdicts[0]

    assert (strict.label, lenient.label) == ("not_enough_info", "supported")


def test_a_guardrail_without_a_grounding_policy_fails_and_the_answer_degrades(
    bedrock_server: BedrockServer,
) -> None:
    with pytest.raises(errors.GroundingFailed, match="contextual grounding policy"):
        scorer(bedrock_server, NO_GROUNDING).check([STATED])

    result = GroundingService(scorer(bedrock_server, NO_GROUNDING)).assess(
        'Returns in thirty days <citation ids="returns.md#0"/>.', {"returns.md#0": PASSAGE.text}, RunUsage()
    )
    assert result.grounding.status == "unavailable"
    assert [w.code for w in result.warnings] == ["grounding_unavailable"]


@pytest.mark.parametrize(
    ("code", "raised"),
    [
        ("ResourceNotFoundException", errors.GroundingFailed),
        ("ThrottlingException", errors.Throttled),
        ("ServiceUnavailableException", errors.DependencyUnavailable),
    ],
)
def test_bedrock_errors_become_ragline_errors(
    bedrock_server: BedrockServer, code: str, raised: type[errors.RaglineError]
) -> None:
    bedrock_server.fail(code, times=None, operation="ApplyGuardrail")

    with pytest.raises(raised):
        scorer(bedrock_server).check([STATED])


def test_an_unknown_guardrail_is_a_grounding_failure(bedrock_server: BedrockServer) -> None:
    with pytest.raises(errors.GroundingFailed):
        scorer(bedrock_server, "nope").check([STATED])


def test_the_request_clips_source_query_and_content_to_the_apis_limits() -> None:
    huge = CitedClaim("w" * 6000, ("x",), (Passage("x", ("s" * 120_000,)),))

    request = apply_guardrail_request(huge, guardrail_id="g", version="1")

    sizes = [len(b["text"]["text"]) for b in request["content"]]
    assert sizes == [100_000, 1_000, 5_000]
