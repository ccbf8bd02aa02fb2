"""The rehearsal's fair-sharing step: a tenant over its request rate is refused by the built functions
— 429 in the one shape with ``Retry-After``, on a REST route and on chat (through the real Web Adapter)
before its stream starts — while the scenario's own tenant, under the template's default limits, is
never refused; every limiter call the functions make is then checked against their roles."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.rehearsal.api_calls import cli, rest_event
from tests.rehearsal.cloudformation import ACCOUNT, REGION
from tests.rehearsal.host import split_stream
from tests.rehearsal.world import World
from tests.support.openai_replay import text


def noisy_tenant(w: World) -> dict[str, Any]:
    """A tenant the operator limits to one request now and one every 100 s, and its admin key's
    authorizer context."""
    cli(w, "tenants", "create", "noisy", "--rps", "0.01", "--burst", "1", "--max-runs", "1")
    created = cli(w, "keys", "create", "--tenant", "noisy", "--scopes", "chat,search,admin")
    key = re.search(r"rl_[A-Za-z0-9_-]{40,}", created)
    assert key, created
    arn = f"arn:aws:execute-api:{REGION}:{ACCOUNT}:api/dev/GET/v1/usage"
    event = {"type": "REQUEST", "methodArn": arn, "headers": {"Authorization": f"Bearer {key.group(0)}"}}
    return dict(w.start("AuthorizerFunction").invoke_json(event)["context"])


def rest(
    w: World, fn: str, method: str, path: str, resource: str, ctx: dict[str, Any], body: Any = None
) -> Any:
    """(status, headers, JSON body) of one request through the built function."""
    status, raw = w.api(fn, rest_event(method, path, resource, ctx, body))
    result = json.loads(raw or b"null")
    assert status == 200 and "errorType" not in result, raw[:500]
    headers = {k.lower(): v[0] for k, v in (result.get("multiValueHeaders") or {}).items()}
    headers |= {k.lower(): v for k, v in (result.get("headers") or {}).items()}
    return result["statusCode"], headers, json.loads(result.get("body") or "null")


def fair_sharing(w: World) -> None:
    ctx = noisy_tenant(w)
    status, _, usage = rest(w, "KeysFunction", "GET", "/v1/usage", "/v1/usage", ctx)
    assert status == 200 and usage["limits"] == {
        "requestsPerSecond": 0.01,
        "burst": 1,
        "maxConcurrentRuns": 1,
    }

    body = {"query": "Can I return a used bike?"}
    search = ("POST", "/v1/namespaces/docs/search", "/v1/namespaces/{namespace}/search")
    status, headers, refused = rest(w, "SearchFunction", *search, ctx, body)
    assert status == 429 and refused["error"]["code"] == "rate_limited", refused
    assert 90 <= int(headers["retry-after"]) <= 100, headers

    question = {"messages": [{"role": "user", "content": "hi"}], "namespaces": ["docs"]}
    status_code, raw = w.api("ChatFunction", rest_event("POST", "/v1/chat", "/v1/chat", ctx, question))
    prelude, payload = split_stream(raw)
    assert status_code == 200 and prelude and prelude.get("statusCode") == 429, raw[:300]
    prelude_headers = {k.lower(): v for k, v in (prelude.get("headers") or {}).items()}
    assert int(prelude_headers["retry-after"]) >= 90, prelude
    assert json.loads(payload)["error"]["code"] == "rate_limited"


QUOTA_RUNS = {
    "SearchFunction": ("/v1/namespaces/docs/search", "/v1/namespaces/{namespace}/search"),
    "HostingSearchFunction": ("/v1/hosting-search", "/v1/hosting-search"),
    "ChatFunction": ("/v1/chat", "/v1/chat"),
}
"""The functions that charge runs, and the route each is asked through."""


def quota_thresholds(w: World) -> None:
    """A tenant with a quota of one run, per run-charging function: its one run takes it to 80 % and
    100 % at once, and the function announces both (``usage.quota_threshold``, once each: a once-mark,
    then the event) through the template's bus and rule to the delivery queue."""
    ask = {"messages": [{"role": "user", "content": "Can I return a used bike?"}], "namespaces": ["docs"]}
    bodies = {
        "SearchFunction": {"query": "Can I return a used bike?", "k": 3},
        "HostingSearchFunction": {**ask, "topK": 3},
        "ChatFunction": {**ask, "stream": False},
    }
    tenants = {}
    for fn, (path, resource) in QUOTA_RUNS.items():
        tenant = tenants[fn] = f"q{fn[:5].lower()}{w.suffix}"
        cli(w, "tenants", "create", tenant, "--quota", "1")
        ctx = {"tenantId": tenant, "scopes": "admin,chat,ingest,search", "namespaces": "", "keyId": "k-quota"}
        status, _, made = rest(w, "NamespacesFunction", "POST", "/v1/namespaces", "/v1/namespaces", ctx,
                               {"namespaceId": "docs"})  # fmt: skip
        assert status == 201, made
        if fn == "HostingSearchFunction":  # the planner's queries, then its verdict
            w.model.script([text(json.dumps({"queries": [{"type": "keyword", "query": "return bike"}]})),
                            text(json.dumps({"canAnswer": True}))])  # fmt: skip
        if fn == "ChatFunction":
            w.model.script([text("Nothing here says so.")])
        status, raw = w.api(fn, rest_event("POST", path, resource, ctx, bodies[fn]))
        assert status == 200, raw[:300]
        assert not w.model.remaining, f"{fn} did not ask the model its scripted turns"
    announced: dict[str, set[int]] = {}
    for _ in range(10):
        got = w.sqs.receive_message(QueueUrl=w.delivery_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for message in got.get("Messages", []):
            event = json.loads(message["Body"])
            if event["detail-type"] == "usage.quota_threshold":
                detail = event["detail"]
                percent = int(detail["detail"]["threshold_percent"])
                announced.setdefault(detail["tenant"], set()).add(percent)
        if set(announced) >= set(tenants.values()):
            break
    assert {t: announced.get(t) for t in tenants.values()} == {t: {80, 100} for t in tenants.values()}
