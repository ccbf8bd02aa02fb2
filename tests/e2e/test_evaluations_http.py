"""``POST /v1/evaluations`` over real HTTP (``ragline serve``'s app), on the embedded backend and on
DynamoDB + S3 (moto): a job runs without its client, its report is one self-contained HTML page and
its JSON, every answer is charged once, and a job is its submitter's to read."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.grounding.answer_judges import ReferenceOverlapJudge
from tests.support.run_world import World, world

pytestmark = pytest.mark.e2e
__all__ = ["world"]  # the fixture

ANSWER = 'Acme rockets launch at dawn from pad 39. <citation ids="rockets.txt#0"/>'
JOB = {
    "name": "rockets <b>v2</b>",
    "questions": [
        {"id": "q1", "question": "When do rockets launch?", "reference": "At dawn, from pad 39.",
         "gold": ["rockets.txt"]},
        {"id": "q2", "question": "Where do <script>alert(1)</script> rockets launch?", "gold": ["pads.txt"]},
    ],
    "configs": [{"label": "A"}, {"label": "B", "fusion": "rrf", "namespaces": ["docs"]}],
}  # fmt: skip


def offline_judge(world: World) -> None:
    world.model.answer = ANSWER
    world.c.__dict__["answer_judge"] = ReferenceOverlapJudge()


def wait(world: World, evaluation_id: str, key: str = "operator", seconds: float = 30) -> dict[str, Any]:
    ends = time.monotonic() + seconds
    while True:
        view = world.api.client.get(f"/v1/evaluations/{evaluation_id}", headers=world.headers(key)).json()
        if view["status"] in ("completed", "failed") or time.monotonic() > ends:
            return dict(view)
        time.sleep(0.05)


def test_a_job_runs_without_its_client_and_reports(world: World) -> None:
    offline_judge(world)
    client = world.api.client
    accepted = client.post("/v1/evaluations", json=JOB, headers=world.headers())
    assert accepted.status_code == 202, accepted.text
    job = accepted.json()
    assert job["status"] in ("queued", "running", "completed") and job["answers"] == 4
    assert job["configs"] == ["A", "B"] and job["judge"] == "reference-overlap"
    done = wait(world, job["evaluationId"])
    assert done["status"] == "completed", done
    assert done["done"] == 4 and done["report"] == f"/v1/evaluations/{job['evaluationId']}/report"
    assert set(done["summary"]) == {"A", "B"} and done["summary"]["A"]["goldRecall"] == 0.5
    assert world.runs() == 4  # one chat run per answer, each charged once; the offline judge is free

    html = client.get(done["report"], headers=world.headers())
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in html.headers["content-security-policy"]
    page = html.text
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "rockets &lt;b&gt;v2&lt;/b&gt;" in page
    assert "http://" not in page and "https://" not in page  # nothing loads from anywhere

    report = client.get(done["report"], params={"format": "json"}, headers=world.headers()).json()
    assert [(r["questionId"], r["config"]) for r in report["results"]] == [
        ("q1", "A"), ("q1", "B"), ("q2", "A"), ("q2", "B"),
    ]  # fmt: skip
    q1 = report["results"][0]
    assert q1["citations"] == ["rockets.txt#0"] and q1["scores"]["faithfulness"] == 1.0
    assert q1["scores"]["correctness"] == 1.0 and q1["plan"]["retrievals"]
    assert [d["metric"] for d in report["comparison"]][:2] == ["faithfulness", "citationPrecision"]
    listed = client.get("/v1/evaluations", headers=world.headers()).json()["evaluations"]
    assert [e["evaluationId"] for e in listed] == [job["evaluationId"]]


def test_a_job_is_its_submitters_to_read(world: World) -> None:
    offline_judge(world)
    client = world.api.client
    job = client.post("/v1/evaluations", json=JOB, headers=world.headers("limited")).json()
    done = wait(world, job["evaluationId"], "limited")
    assert done["status"] == "completed"
    assert client.get(f"/v1/evaluations/{job['evaluationId']}", headers=world.headers()).status_code == 200
    for key in ("globex",):
        for path in (
            f"/v1/evaluations/{job['evaluationId']}",
            f"/v1/evaluations/{job['evaluationId']}/report",
        ):
            other = client.get(path, headers=world.headers(key))
            assert other.status_code == 404 and other.json()["error"]["code"] == "evaluation_not_found"
    assert client.get("/v1/evaluations", headers=world.headers("globex")).json() == {"evaluations": []}
    # an end user evaluates nothing, and reads no job
    for method, path in (("POST", "/v1/evaluations"), ("GET", "/v1/evaluations"),
                         ("GET", f"/v1/evaluations/{job['evaluationId']}")):  # fmt: skip
        refused = client.request(method, path, json=JOB, headers=world.headers("users", user="alice"))
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "user_context_forbidden"
    denied = client.post("/v1/evaluations", json=JOB, headers=world.headers("search"))
    assert denied.status_code == 403


def test_a_bad_job_is_refused_before_anything_runs(world: World) -> None:
    client = world.api.client
    text = client.post(
        "/v1/evaluations", content=b"{}", headers={**world.headers(), "content-type": "text/plain"}
    )
    assert text.status_code == 415 and text.json()["error"]["code"] == "unsupported_media_type"
    for body, status in (
        ({**JOB, "questions": [JOB["questions"][0]] * 2}, 400),  # ids repeat
        ({**JOB, "configs": [{"label": "A"}] * 3}, 400),  # three configurations
        ({**JOB, "configs": [{"label": "A", "fusion": "magic"}]}, 400),
        ({**JOB, "extra": 1}, 400),
        ({**JOB, "configs": [{"label": "A", "namespaces": ["nope"]}]}, 404),  # before it is queued
    ):
        refused = client.post("/v1/evaluations", json=body, headers=world.headers())
        assert refused.status_code == status, (body, refused.text)
        assert set(refused.json()) == {"error"}
    assert client.get("/v1/evaluations", headers=world.headers()).json() == {"evaluations": []}
    assert world.runs() == 0
    bad_format = client.get("/v1/evaluations/x/report", params={"format": "pdf"}, headers=world.headers())
    assert bad_format.status_code == 400


def test_the_python_client_submits_polls_and_reads_the_report(world: World) -> None:
    from ragline.client import RaglineClient

    offline_judge(world)
    with RaglineClient(world.api.base, world.keys["operator"]) as client:
        job = client.create_evaluation(JOB)
        ends = time.monotonic() + 30
        while client.get_evaluation(job.evaluation_id).status != "completed" and time.monotonic() < ends:
            time.sleep(0.05)
        report = client.evaluation_report(job.evaluation_id)
        assert report.evaluation.status == "completed" and len(report.results) == 4
        assert [d.metric for d in report.comparison][-1] == "completeness"
        assert "&lt;script&gt;" in client.evaluation_report_html(job.evaluation_id)
        assert [e.evaluation_id for e in client.list_evaluations().evaluations] == [job.evaluation_id]
        with pytest.raises(errors.EvaluationNotFound):
            client.get_evaluation("missing")
