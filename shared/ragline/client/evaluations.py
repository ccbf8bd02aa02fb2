"""The client's answer evaluation jobs: queue one (its questions through chat under one or two
configurations, every answer scored), follow it, and read its report as JSON or as the HTML page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragline.domain.evaluations import EvaluationList, EvaluationReport, EvaluationRequest, EvaluationView

from .api_errors import api_error
from .transport import ApiTransport, _json, _seg


class EvaluationRequests(ApiTransport):
    """Answer evaluation jobs (README "Evaluating answers")."""

    def create_evaluation(self, job: EvaluationRequest | Mapping[str, Any]) -> EvaluationView:
        """Queue a job: its questions through chat under one or two configurations, every answer
        scored (README "Evaluating answers"); poll :meth:`get_evaluation` until ``completed``."""
        body = job.model_dump(mode="json", by_alias=True) if isinstance(job, EvaluationRequest) else job
        return self._call(EvaluationView, "POST", "/v1/evaluations", body)

    def list_evaluations(self) -> EvaluationList:
        return self._call(EvaluationList, "GET", "/v1/evaluations")

    def get_evaluation(self, evaluation_id: str) -> EvaluationView:
        return self._call(EvaluationView, "GET", f"/v1/evaluations/{_seg(evaluation_id)}")

    def evaluation_report(self, evaluation_id: str) -> EvaluationReport:
        """A completed job's report (``evaluation_not_complete`` before then)."""
        path = f"/v1/evaluations/{_seg(evaluation_id)}/report"
        return self._call(EvaluationReport, "GET", path, params={"format": "json"})

    def evaluation_report_html(self, evaluation_id: str) -> str:
        """The report as the one self-contained HTML page."""
        response = self._http.get(f"/v1/evaluations/{_seg(evaluation_id)}/report", headers=self._user)
        if response.status_code >= 400:
            raise api_error(response.status_code, _json(response))
        return response.text
