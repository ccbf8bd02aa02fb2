"""Answer evaluation jobs: a question set run through the served chat pipeline under one or two
configurations (an A/B), each answer scored.

A job is what ``POST /v1/evaluations`` accepts and ``ragline eval answers`` runs: questions (with an
optional reference answer and optional gold passages), one or two :class:`EvalConfig` (agent, mode,
namespaces, fusion), and whether a judge model scores correctness and completeness. Each answer is one
metered chat run; its :class:`AnswerResult` keeps the answer, its citations, the sources it was shown,
its query plan and its :class:`AnswerScores`. The metrics, each in [0, 1] or absent (``None``) when the
answer gives nothing to score:

- ``faithfulness``: the grounding scorer's mean support of the answer's cited sentences;
- ``citationPrecision``: of the citations checked, those whose chunk gave the evidence for a supported
  sentence;
- ``citationCoverage``: of the answer's sentences, those that cite a chunk;
- ``goldRecall``: of the question's gold passages, those among the chunks the run retrieved and showed
  the model (cited or not);
- ``correctness`` and ``completeness``: the judge's verdict against the reference answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator
from pydantic.alias_generators import to_snake

from ragline.domain.api import ApiModel, ApiRequest, ChatAgent, Usage
from ragline.domain.models import FusionName, RunUsage
from ragline.domain.plans import QueryPlan

METRICS = (
    "faithfulness",
    "citationPrecision",
    "citationCoverage",
    "goldRecall",
    "correctness",
    "completeness",
)
"""Every metric of an answer, in report order, by its name in the API (:meth:`AnswerScores.get`)."""

MAX_QUESTIONS = 500
"""Questions in one job at most (each answered once per configuration)."""
EvalStatus = Literal["queued", "running", "completed", "failed"]
Label = Annotated[str, StringConstraints(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_.:-]+$")]
EvaluationId = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class EvalQuestion(ApiRequest):
    """One question of a set. ``gold``: the passages that answer it, each a document id, a file name or
    a chunk id (``document#sequence``); ``namespaces``: where it is asked (else the configuration's)."""

    id: Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
    question: str = Field(min_length=1, max_length=4000)
    reference: str | None = Field(default=None, max_length=8000)
    gold: list[Annotated[str, StringConstraints(min_length=1, max_length=512)]] = Field(
        default_factory=list, max_length=50
    )
    namespaces: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] | None = Field(
        default=None, max_length=20
    )


class EvalConfig(ApiRequest):
    """One configuration of the pipeline: what a chat request would set, and the hybrid fusion its
    searches use (``None``: the deployment's)."""

    label: Label = "A"
    agent: ChatAgent = "agentic"
    mode: Literal["accurate", "fast"] = "accurate"
    namespaces: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=20
    )
    fusion: FusionName | None = None
    alpha: float | None = Field(default=None, ge=0.0, le=1.0)
    """The semantic weight of ``convex`` fusion (``None``: the deployment's)."""


class EvaluationRequest(ApiRequest):
    """``POST /v1/evaluations``: the questions and one configuration, or two to compare (A/B)."""

    name: str = Field(default="", max_length=100)
    questions: list[EvalQuestion] = Field(min_length=1, max_length=MAX_QUESTIONS)
    configs: list[EvalConfig] = Field(default_factory=lambda: [EvalConfig()], min_length=1, max_length=2)
    judge: bool = True
    """Score correctness and completeness with the judge model (questions with a reference only)."""

    @model_validator(mode="after")
    def _distinct(self) -> EvaluationRequest:
        labels = [c.label for c in self.configs]
        if len(set(labels)) != len(labels):
            raise ValueError("configs need distinct labels")
        ids = [q.id for q in self.questions]
        if len(set(ids)) != len(ids):
            raise ValueError("question ids must be distinct")
        return self


class AnswerScores(ApiModel):
    faithfulness: float | None = None
    citation_precision: float | None = None
    citation_coverage: float | None = None
    gold_recall: float | None = None
    correctness: float | None = None
    completeness: float | None = None

    def get(self, metric: str) -> float | None:
        """A metric by its name in :data:`METRICS`."""
        value: float | None = getattr(self, to_snake(metric))
        return value


class SourceRef(ApiModel):
    """A chunk the run was shown: enough to read it in a report, not its whole text."""

    id: str
    namespace: str
    document_id: str
    filename: str = ""
    cited: bool = False
    """The answer cites it."""
    gold: bool = False
    """It is one of the question's gold passages."""
    excerpt: str = ""


class AnswerResult(ApiModel):
    """One question answered under one configuration, scored."""

    question_id: str
    config: str
    question: str
    reference: str | None = None
    run_id: str = ""
    answer: str = ""
    exit_reason: str = ""
    citations: list[str] = Field(default_factory=list)
    """The chunk ids the answer cites, in order of first use."""
    sources: list[SourceRef] = Field(default_factory=list)
    """Every chunk the run was shown, in order (what ``goldRecall`` counts)."""
    plan: QueryPlan | None = None
    scores: AnswerScores = Field(default_factory=AnswerScores)
    judge_reason: str = ""
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)


class MetricSummary(ApiModel):
    """One metric under one configuration: its mean over the answers that have it, with a bootstrap
    95 % confidence interval, and its distribution (``histogram``: counts in ten equal bins of [0, 1])."""

    metric: str
    n: int
    mean: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    histogram: list[int] = Field(default_factory=list)


class MetricDifference(ApiModel):
    """B minus A on one metric, over the questions both scored (paired), with a paired bootstrap 95 %
    confidence interval; ``significant``: the interval excludes 0."""

    metric: str
    n: int
    a_mean: float | None = None
    b_mean: float | None = None
    difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    significant: bool = False


class EvaluationView(ApiModel):
    """A job as its owner sees it (``GET /v1/evaluations/{id}``)."""

    evaluation_id: str
    name: str = ""
    status: EvalStatus
    created_at: float
    updated_at: float
    questions: int
    configs: list[str]
    answers: int
    """Answers to score: questions x configurations."""
    done: int = 0
    judge: str = ""
    summary: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    """Per configuration, each metric's mean (``None``: no answer had it)."""
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    report: str | None = None
    """Where the HTML report is (``…/report``; ``?format=json`` for the JSON), once completed."""


class EvaluationList(ApiModel):
    evaluations: list[EvaluationView]


class EvaluationReport(ApiModel):
    """The report's content (its JSON form; the HTML renders exactly this)."""

    evaluation: EvaluationView
    judge: str = ""
    summaries: dict[str, list[MetricSummary]] = Field(default_factory=dict)
    """Per configuration label, one entry per metric in :data:`METRICS` order."""
    comparison: list[MetricDifference] = Field(default_factory=list)
    """B − A per metric, when the job had two configurations."""
    results: list[AnswerResult] = Field(default_factory=list)


@dataclass(frozen=True)
class JudgeVerdict:
    """A judge's scores of one answer against its reference (``None``: the judge could not tell),
    why, and what judging it spent."""

    correctness: float | None
    completeness: float | None
    reason: str = ""
    usage: RunUsage = field(default_factory=RunUsage)


class EvaluationJob(ApiModel):
    """A job as stored (``job.json``): its request, who submitted it (the worker answers as them) and
    its progress. Readers see :meth:`view`."""

    tenant_id: str
    evaluation_id: str
    owner: str
    """:func:`~ragline.domain.runs.owner_of` the submitter: an end user reads only their own jobs."""
    key_id: str
    principal: dict[str, Any]
    request: EvaluationRequest
    status: EvalStatus = "queued"
    created_at: float
    updated_at: float
    done: int = 0
    judge: str = ""
    summary: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    retries: int = 0
    """Slices in a row that ended on a store or model that was down (reset by a scored answer)."""

    @property
    def pairs(self) -> list[tuple[EvalConfig, EvalQuestion]]:
        """Every answer to score, in order: each question under each configuration."""
        return [(c, q) for q in self.request.questions for c in self.request.configs]

    def view(self) -> EvaluationView:
        done = self.status == "completed"
        return EvaluationView(
            evaluation_id=self.evaluation_id,
            name=self.request.name,
            status=self.status,
            created_at=self.created_at,
            updated_at=self.updated_at,
            questions=len(self.request.questions),
            configs=[c.label for c in self.request.configs],
            answers=len(self.pairs),
            done=self.done,
            judge=self.judge,
            summary=self.summary,
            error=self.error,
            usage=self.usage,
            report=f"/v1/evaluations/{self.evaluation_id}/report" if done else None,
        )
