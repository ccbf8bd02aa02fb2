"""Answer evaluation jobs through the built chat function under the real Web Adapter (issue 43): a job
is accepted (202) and queued on the runs queue, whose message is the chat function's SQS event (the
adapter's ``/events`` path); it answers every question under both configurations of an A/B, the
deployment's model judges the answers that have a reference, and the job's answers and reports land in
the template's evaluations bucket. Its view, its listing, its HTML report (nothing in it may load
anything) and its JSON are read back through the API. Each answer and each judging is charged once."""

from __future__ import annotations

import json
from typing import Any

from tests.rehearsal.api_calls import rest_event
from tests.rehearsal.host import split_stream
from tests.rehearsal.runs_step import chat_fn, deliver_runs
from tests.rehearsal.steps import runs_charged
from tests.rehearsal.world import World
from tests.support.openai_replay import text, tool_call

ONE = "/v1/evaluations/{evaluation_id}"
JOB = {
    "name": "returns",
    "questions": [
        {"id": "used", "question": "Can I return a used bike?", "gold": ["faq.txt"],
         "reference": "Yes, used bikes can be returned within 30 days."},
        {"id": "hours", "question": "When does the Leeds store open?", "gold": ["stores.json"]},
    ],
    "configs": [{"label": "A"}, {"label": "B", "fusion": "rrf"}],
}  # fmt: skip
VERDICT = '{"correctness": "correct", "completeness": "partial", "reason": "it omits the 30 days"}'


def evaluations(w: World, ctx: dict[str, Any]) -> None:
    before = runs_charged(w, ctx)
    answer = text("Used bikes can be returned ", '<citation ids="faq.txt#0"/>.')
    # question by question, each configuration: the run's two turns, then the judge (reference only)
    w.model.script(
        [tool_call("search", {"query": "return a used bike"}), answer, text(VERDICT)] * 2
        + [tool_call("search", {"query": "Leeds opening hours"}), text("I could not find it.")] * 2
    )
    status, _, body = chat_fn(w, "POST", "/v1/evaluations", "/v1/evaluations", ctx, JOB)
    queued = json.loads(body)
    assert status == 202 and queued["status"] == "queued" and queued["answers"] == 4, queued
    job = queued["evaluationId"]
    assert deliver_runs(w) == {"ran": [job], "failed": []}
    assert not w.model.remaining, "the job did not ask the model what was scripted"

    path = f"/v1/evaluations/{job}"
    status, _, body = chat_fn(w, "GET", path, ONE, ctx)
    done = json.loads(body)
    assert status == 200 and done["status"] == "completed" and done["done"] == 4, done
    assert done["judge"].startswith("model:") and set(done["summary"]) == {"A", "B"}, done
    assert done["summary"]["A"]["correctness"] == 1.0 and done["summary"]["A"]["completeness"] == 0.5
    status, _, body = chat_fn(w, "GET", "/v1/evaluations", "/v1/evaluations", ctx)
    assert status == 200 and job in [e["evaluationId"] for e in json.loads(body)["evaluations"]]

    status, headers, page = chat_fn(w, "GET", f"{path}/report", f"{ONE}/report", ctx)
    assert status == 200 and headers["content-type"].startswith("text/html"), headers
    assert "default-src 'none'" in headers["content-security-policy"]
    assert b"Can I return a used bike?" in page and b"https://" not in page
    event = rest_event("GET", f"{path}/report", f"{ONE}/report", ctx)
    event |= {
        "queryStringParameters": {"format": "json"},
        "multiValueQueryStringParameters": {"format": ["json"]},
    }
    status, raw = w.api("ChatFunction", event)
    prelude, body = split_stream(raw)
    assert status == 200 and prelude["statusCode"] == 200, raw[:300]
    report = json.loads(body)
    used = report["results"][0]
    assert used["judgeReason"] == "it omits the 30 days" and used["scores"]["correctness"] == 1.0, used
    assert used["plan"]["retrievals"][0]["query"] == "return a used bike", used
    assert [d["metric"] for d in report["comparison"]][-2:] == ["correctness", "completeness"]

    kept = w.s3.list_objects_v2(Bucket=w.evaluations_bucket, Prefix=f"{ctx['tenantId']}/{job}/")
    names = sorted(o["Key"].split(f"{job}/", 1)[1] for o in kept.get("Contents", []))
    assert names == [*(f"answers/{i:05d}.json" for i in range(4)), "job.json", "report.html", "report.json"]
    assert runs_charged(w, ctx) == before + 6  # four answers, two judgings
