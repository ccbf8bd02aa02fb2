"""The GroundingScorer contract against each scorer: the offline verifier and overlap scorers, the chat
model as judge (the real OpenAI adapter on the scripted replay server) and the Bedrock guardrail (real
boto3 on the local Bedrock server's ApplyGuardrail)."""

from __future__ import annotations

import json

import pytest

from ragline.adapters.bedrock.guardrail import BedrockGuardrailGroundingScorer
from ragline.adapters.grounding.judge import ChatJudgeGroundingScorer
from ragline.adapters.grounding.overlap import OverlapGroundingScorer
from ragline.adapters.grounding.verifier import LexicalVerifierGroundingScorer
from ragline.adapters.openai.chat import OpenAIChatModel
from ragline.ports import GroundingScorer
from tests.contract.grounding_scorer_contract import GroundingScorerContract
from tests.support.bedrock_server import BedrockServer
from tests.support.openai_replay import OpenAIReplay, text

pytestmark = pytest.mark.contract


class TestOverlapScorer(GroundingScorerContract):
    @pytest.fixture
    def scorer(self) -> GroundingScorer:
        return OverlapGroundingScorer()


class TestLexicalVerifierScorer(GroundingScorerContract):
    @pytest.fixture
    def scorer(self) -> GroundingScorer:
        return LexicalVerifierGroundingScorer()


class TestChatJudgeScorer(GroundingScorerContract):
    @pytest.fixture
    def scorer(self, openai_replay: OpenAIReplay) -> GroundingScorer:
        verdicts = [
            {"n": 1, "label": "supported", "score": 0.95, "evidence": ["P1.0"]},
            {"n": 2, "label": "contradicted", "score": 0.05, "evidence": ["P2.0"]},
            {"n": 3, "label": "not_enough_info", "score": 0.2, "evidence": []},
        ]
        openai_replay.script([text(json.dumps({"verdicts": verdicts}))])
        return ChatJudgeGroundingScorer(
            OpenAIChatModel(model="judge", client=openai_replay.client(max_retries=0))
        )


class TestBedrockGuardrailScorer(GroundingScorerContract):
    @pytest.fixture
    def scorer(self, bedrock_server: BedrockServer) -> GroundingScorer:
        client = bedrock_server.client("bedrock-runtime")
        return BedrockGuardrailGroundingScorer(guardrail_id="grounded-75", client=client)
