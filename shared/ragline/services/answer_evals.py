"""Answer evaluation jobs (``POST /v1/evaluations``, ``ragline eval answers``): see
:mod:`ragline.domain.evaluations` for what is scored.

A job is stored as objects of its own (``<tenant>/<evaluation id>/…`` in the evaluations store: local
files, or the evaluations bucket on AWS): ``job.json`` (request, submitter, progress), one
``answers/<n>.json`` per scored answer, and, once complete, ``report.json`` and ``report.html``.
:meth:`AnswerEvaluations.submit` checks the request as its runs will be checked and queues the job on
the runs queue (threads locally, SQS on AWS); :meth:`AnswerEvaluations.work` scores the answers not yet
stored, in order, within a time slice, and queues the job again when the slice ends first — a Lambda
invocation never outlives its timeout, and a crashed worker's message comes back to resume where the
stored answers end.

A job is its tenant's developers' (a ``chat`` key acting for no end user); a key limited to some
namespaces reads only the jobs it submitted. Each answer is one chat run as the submitter, under the
run id ``eval-<job>-<n>``; its judge call is a run of its own (``…-judge``, charged what the judge
model spent; an offline judge spends nothing).
Run ids are deterministic, so the ledger makes a redelivered or resumed answer a replay: never charged
twice, never run twice at once (a run in progress elsewhere ends this slice; the job is queued again).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from typing import Literal

from ragline import errors
from ragline.agents.events import ChatResponse
from ragline.domain.api import ChatRequest, ChunkView, Usage
from ragline.domain.evaluations import (
    AnswerResult,
    EvalConfig,
    EvalQuestion,
    EvaluationJob,
    EvaluationList,
    EvaluationReport,
    EvaluationRequest,
    EvaluationView,
    JudgeVerdict,
    SourceRef,
)
from ragline.domain.models import RunUsage
from ragline.domain.runs import owner_of
from ragline.ports import AnswerJudge, ObjectStore, RunQueue
from ragline.services.answer_scores import is_gold, score_answer
from ragline.services.authentication import Principal
from ragline.services.background import principal_from, principal_json
from ragline.services.chat import ChatService
from ragline.services.eval_report import build_report, render_html
from ragline.services.grounding import answer_sentences
from ragline.services.metering import Metering
from ragline.services.runs import may_read_owned

logger = logging.getLogger(__name__)
JOB = "job.json"
REPORT_JSON = "report.json"
REPORT_HTML = "report.html"
MAX_RETRIES = 3
"""Slices in a row a job may end on a store or model that is down before it fails."""
LISTED = 50
"""Jobs a listing shows at most (the newest)."""
EXCERPT_CHARS = 300
"""Characters of each source's text kept in an answer's result."""
ReportFormat = Literal["html", "json"]


def is_evaluation(message: str) -> bool:
    """Whether a runs-queue message is an evaluation job's (else it is a background chat run's)."""
    try:
        return bool(json.loads(message).get("evaluation"))
    except (ValueError, AttributeError):
        return False


class AnswerEvaluations:
    def __init__(
        self,
        *,
        chat: ChatService,
        metering: Metering,
        objects: ObjectStore,
        judge: AnswerJudge,
        queue: RunQueue | None = None,
        clock: Callable[[], float] = time.time,
        slice_s: float | None = None,
    ) -> None:
        """``objects``: the evaluations store; ``queue``: where a submitted job goes (None: run it only
        with :meth:`run`); ``slice_s``: how long one :meth:`work` call scores before it queues the rest
        (None: to the end)."""
        self._chat = chat
        self._metering = metering
        self._objects = objects
        self._judge = judge
        self._queue = queue
        self._clock = clock
        self._slice_s = slice_s

    # -- submitting and reading ------------------------------------------------------------------

    def submit(self, principal: Principal, request: EvaluationRequest) -> EvaluationView:
        """Check, store and queue the job (202); its answers are scored by :meth:`work`."""
        if self._queue is None:
            raise errors.ConfigurationError("this deployment runs no evaluation jobs")
        job = self._new(principal, request)
        self._queue.submit(principal.tenant_id, job.evaluation_id, json.dumps({"evaluation": True}))
        return job.view()

    def run(
        self, principal: Principal, request: EvaluationRequest, progress: Callable[[int], None] | None = None
    ) -> EvaluationReport:
        """The whole job here and now (the CLI); ``progress``: called after each answer."""
        job = self._new(principal, request)
        self._work(job, deadline=None, progress=progress)
        return self._report(job.tenant_id, job.evaluation_id)

    def list(self, principal: Principal) -> EvaluationList:
        _developer(principal)
        ids = sorted({k.split("/")[1] for k in self._objects.list(principal.tenant_id) if k.endswith(JOB)})
        mine: list[EvaluationView] = []
        for evaluation_id in reversed(ids):  # ids begin with their creation time: newest first
            job = self._load(principal.tenant_id, evaluation_id)
            if job is not None and may_read_owned(principal, job.owner, job.key_id):
                mine.append(job.view())
                if len(mine) == LISTED:
                    break
        return EvaluationList(evaluations=mine)

    def get(self, principal: Principal, evaluation_id: str) -> EvaluationView:
        return self._readable(principal, evaluation_id).view()

    def report(self, principal: Principal, evaluation_id: str, fmt: ReportFormat = "html") -> bytes:
        """The report's HTML or JSON; 409 ``evaluation_not_complete`` before the job completes."""
        job = self._readable(principal, evaluation_id)
        if job.status != "completed":
            raise errors.EvaluationNotComplete(
                f"evaluation {evaluation_id} is {job.status}: its report is written when it completes"
            )
        return self._objects.get(self._key(job, REPORT_HTML if fmt == "html" else REPORT_JSON))

    # -- the worker ------------------------------------------------------------------------------

    def work(self, tenant_id: str, evaluation_id: str) -> bool:
        """Score the job's next answers within one slice (a runs-queue message); False when there is
        no such job or it has ended."""
        job = self._load(tenant_id, evaluation_id)
        if job is None or job.status in ("completed", "failed"):
            return False
        deadline = None if self._slice_s is None else self._clock() + self._slice_s
        if not self._work(job, deadline=deadline, retry=True) and self._queue is not None:
            self._queue.submit(tenant_id, evaluation_id, json.dumps({"evaluation": True}))
        return True

    def _work(
        self,
        job: EvaluationJob,
        *,
        deadline: float | None,
        progress: Callable[[int], None] | None = None,
        retry: bool = False,
    ) -> bool:
        """Score what is not stored yet; True when the job ended (completed or failed). ``retry`` (a
        queued slice): a store or model that is down or throttling ends the slice instead of the job,
        :data:`MAX_RETRIES` times in a row at most."""
        principal = principal_from(job.principal)
        if principal.tenant_id != job.tenant_id:
            raise errors.InvalidRequest("an evaluation job names another tenant")
        stored = {k.rsplit("/", 1)[1] for k in self._objects.list(self._key(job, "answers"))}
        job = self._save(job, status="running", judge=self._judge.name if job.request.judge else "")
        scored = 0
        try:
            for index, (config, question) in enumerate(job.pairs):
                if _answer_name(index) in stored:
                    continue
                if scored and deadline is not None and self._clock() >= deadline:
                    return False  # every slice scores one answer at least: a job always progresses
                try:
                    result = self._answer(job, principal, index, config, question)
                except errors.RunInProgress:  # another worker is on it: leave it to them, come back
                    return False
                self._objects.put(self._key(job, f"answers/{_answer_name(index)}"), _dump(result))
                job, scored = self._save(job, done=len(stored) + scored + 1, retries=0), scored + 1
                if progress is not None:
                    progress(job.done)
            self._complete(job)
        except (errors.DependencyUnavailable, errors.Throttled) as exc:
            if not retry or job.retries >= MAX_RETRIES:
                self._failed(job, exc)
                return True
            logger.warning("evaluation slice ended: %s", exc.code, extra={"evaluation_id": job.evaluation_id})
            self._save(job, retries=job.retries + 1)
            return False
        except errors.RaglineError as exc:
            self._failed(job, exc)
        return True

    def _failed(self, job: EvaluationJob, exc: errors.RaglineError) -> None:
        logger.warning("evaluation failed: %s", exc.code, extra={"evaluation_id": job.evaluation_id})
        self._save(job, status="failed", error=f"{exc.code}: {exc.message}")

    def _complete(self, job: EvaluationJob) -> None:
        results = [
            AnswerResult.model_validate_json(self._objects.get(k))
            for k in self._objects.list(self._key(job, "answers"))
        ]
        usage = Usage()
        for r in results:
            _add(usage, r.usage)
        view = job.model_copy(update={"status": "completed", "usage": usage, "done": len(results)}).view()
        report = build_report(view, results, job.judge)
        summary = {
            label: {s.metric: s.mean for s in summaries} for label, summaries in report.summaries.items()
        }
        report.evaluation.summary = summary
        self._objects.put(self._key(job, REPORT_JSON), report.model_dump_json().encode())
        self._objects.put(self._key(job, REPORT_HTML), render_html(report).encode())
        self._save(job, status="completed", summary=summary, usage=usage, done=len(results))

    # -- one answer ------------------------------------------------------------------------------

    def _answer(
        self, job: EvaluationJob, principal: Principal, index: int, config: EvalConfig, question: EvalQuestion
    ) -> AnswerResult:
        run_id = f"eval-{job.evaluation_id}-{index}"
        result = AnswerResult(
            question_id=question.id,
            config=config.label,
            question=question.question,
            reference=question.reference,
            run_id=run_id,
        )
        shown: list[ChunkView] = []
        chat = self._chat.variant(fusion=config.fusion, alpha=config.alpha, shown=shown.extend)
        try:
            events = chat.answer_chat(principal, _chat_request(config, question), run_id=run_id)
            response = ChatResponse.collect(events)
        except errors.RunInProgress:
            raise
        except errors.RaglineError as exc:  # refused (quota, a namespace gone): this answer's error
            result.error = f"{exc.code}: {exc.message}"
            return result
        result.answer, result.exit_reason, result.plan = response.answer, response.exit_reason, response.plan
        result.usage = response.usage
        if response.error is not None:
            result.error = f"{response.error.code}: {response.error.message}"
        result.citations = list(dict.fromkeys(c for _, ids in answer_sentences(response.answer) for c in ids))
        cited, gold = set(result.citations), set(question.gold)
        result.sources = [
            SourceRef(
                id=c.id,
                namespace=c.namespace,
                document_id=c.document_id,
                filename=c.filename,
                cited=c.id in cited,
                gold=is_gold(gold, c.id, c.document_id, c.filename),
                excerpt=c.text[:EXCERPT_CHARS],
            )
            for c in shown or response.sources  # a replay shows only what it cited
        ]
        result.scores = score_answer(response.grounding, result.sources, question)
        if job.request.judge and question.reference:
            verdict = self._judged(job.tenant_id, run_id, question, response.answer)
            result.scores.correctness, result.scores.completeness = verdict.correctness, verdict.completeness
            result.judge_reason = verdict.reason
            _add(result.usage, verdict.usage)
        return result

    def _judged(self, tenant_id: str, run_id: str, question: EvalQuestion, answer: str) -> JudgeVerdict:
        """The judge's verdict as a metered run of its own: a replay returns the recorded verdict."""
        inputs = json.dumps([self._judge.name, question.question, question.reference, answer])
        run = self._metering.start(tenant_id, f"{run_id}-judge", hashlib.sha256(inputs.encode()).hexdigest())
        if run.replay is not None and run.replay.result:
            recorded = json.loads(run.replay.result)
            return JudgeVerdict(recorded["correctness"], recorded["completeness"], recorded["reason"])
        verdict: JudgeVerdict | None = None
        try:
            verdict = self._judge.judge(question.question, question.reference or "", answer)
            run.usage.add(verdict.usage)
        finally:
            run.finish(None if verdict is None else json.dumps(asdict(verdict) | {"usage": None}))
        return verdict

    # -- storage ---------------------------------------------------------------------------------

    def _new(self, principal: Principal, request: EvaluationRequest) -> EvaluationJob:
        _developer(principal)
        checked: set[str] = set()
        for config in request.configs:  # a bad configuration is this request's 4xx, not a failed job
            for q in request.questions:
                chat_request = _chat_request(config, q)
                asked = chat_request.model_dump_json(exclude={"messages"})  # what the check reads
                if asked not in checked:
                    checked.add(asked)
                    self._chat.check(principal, chat_request)
        now = self._clock()
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(now))
        job = EvaluationJob(
            tenant_id=principal.tenant_id,
            evaluation_id=f"ev{stamp}{uuid.uuid4().hex[:10]}",
            owner=owner_of(principal.user.user_id if principal.user else None),
            key_id=principal.key_id,
            principal=principal_json(principal),
            request=request,
            created_at=now,
            updated_at=now,
            judge=self._judge.name if request.judge else "",
        )
        self._objects.put(self._key(job, JOB), _dump(job))
        return job

    def _save(self, job: EvaluationJob, **changes: object) -> EvaluationJob:
        job = job.model_copy(update={**changes, "updated_at": self._clock()})
        self._objects.put(self._key(job, JOB), _dump(job))
        return job

    def _load(self, tenant_id: str, evaluation_id: str) -> EvaluationJob | None:
        try:
            return EvaluationJob.model_validate_json(self._objects.get(f"{tenant_id}/{evaluation_id}/{JOB}"))
        except errors.NotFound:
            return None

    def _readable(self, principal: Principal, evaluation_id: str) -> EvaluationJob:
        _developer(principal)
        job = self._load(principal.tenant_id, evaluation_id) if _valid_id(evaluation_id) else None
        if job is None or not may_read_owned(principal, job.owner, job.key_id):
            raise errors.EvaluationNotFound(f"no evaluation {evaluation_id!r}")
        return job

    def _report(self, tenant_id: str, evaluation_id: str) -> EvaluationReport:
        body = self._objects.get(f"{tenant_id}/{evaluation_id}/{REPORT_JSON}")
        return EvaluationReport.model_validate_json(body)

    @staticmethod
    def _key(job: EvaluationJob, name: str) -> str:
        return f"{job.tenant_id}/{job.evaluation_id}/{name}"


def _developer(principal: Principal) -> None:
    """An evaluation is the tenant's developers' tool: a ``chat`` key, and no end user (403
    ``user_context_forbidden``): a job runs hundreds of chats and its report quotes whatever they read."""
    if principal.acts_for_user:
        raise errors.UserContextForbidden(
            "evaluation jobs are the tenant's, not an end user's: send the request without Ragline-User-Id,"
            " with a key that does not require a user",
            header="Ragline-User-Id",
        )
    principal.require("chat")


def _chat_request(config: EvalConfig, question: EvalQuestion) -> ChatRequest:
    return ChatRequest.model_validate(
        {
            "messages": [{"role": "user", "content": question.question}],
            "namespaces": question.namespaces if question.namespaces is not None else config.namespaces,
            "mode": config.mode,
            "agent": config.agent,
            "stream": False,
        }
    )


def _add(total: Usage, part: Usage | RunUsage) -> None:
    """``part``'s counts added to ``total``'s (the same fields: an answer's, a judging's)."""
    for name, value in part:
        setattr(total, name, getattr(total, name) + value)


def _answer_name(index: int) -> str:
    return f"{index:05d}.json"


def _dump(model: AnswerResult | EvaluationJob) -> bytes:
    return model.model_dump_json().encode()


def _valid_id(evaluation_id: str) -> bool:
    return 0 < len(evaluation_id) <= 64 and all(c.isalnum() or c in "-_" for c in evaluation_id)
