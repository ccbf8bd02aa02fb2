"""The deploy rehearsal: the built artifacts (``infra/sam/build`` for this host's architecture) run as
Lambda runs them, configured exactly as the translated template says, driven like a user.

Every zip function runs under the real Runtime Interface Emulator with awslambdaric on python3.12 in a
read-only task directory with the layer on /opt; chat runs under the real Lambda Web Adapter started
through ``run.sh``. AWS calls go to moto, Bedrock calls to the local Bedrock server, OpenSearch calls —
only if SigV4-signed — through a recording proxy to the local node. The whole scenario runs twice: with
the template's defaults, Bedrock (Converse; a cross-Region inference profile) and an OpenSearch domain
(signed for ``es``); and with an OpenAI-compatible endpoint (the replay server, its key in Secrets
Manager) and a serverless collection (``OpenSearchMode=serverless``: signed for ``aoss``, through the
AOSS proxy in front of the node). Then every AWS action each function performed is checked against its
role in the template and, for the collection, every request against its data access policy.
"""

from __future__ import annotations

import uuid

import pytest

from tests.rehearsal import faults
from tests.rehearsal.api_calls import call
from tests.rehearsal.checks import (
    check_created_domain,
    check_data_access,
    check_deliveries,
    check_iam,
    check_least_privilege,
    check_routes,
    check_streaming,
    check_traces,
)
from tests.rehearsal.cloudformation import AwsCall
from tests.rehearsal.evaluations_step import evaluations
from tests.rehearsal.host import blame
from tests.rehearsal.limits_step import fair_sharing, quota_thresholds
from tests.rehearsal.runs_step import runs_and_conversations
from tests.rehearsal.signed_proxy import SignedProxy
from tests.rehearsal.steps import (
    bootstrap_tenant,
    chat_agents,
    chat_streams,
    data_sources,
    delete_from_s3,
    document_writes,
    end_users,
    hosting_search,
    ingest_from_s3,
    key_lifecycle,
    namespace_lifecycle,
    read_a_scan,
    reindex_namespace,
    webhooks,
)
from tests.rehearsal.world import World

pytestmark = [pytest.mark.rehearsal, pytest.mark.opensearch]


def test_the_built_stack_serves_a_tenant_end_to_end(world: tuple[World, SignedProxy]) -> None:
    w, proxy = world
    with blame(w.running.values()):  # a failed check shows the log of the function that failed
        scenario(w, proxy)


def scenario(w: World, proxy: SignedProxy) -> None:
    check_streaming(w)
    ctx = bootstrap_tenant(w)
    status, body = call(w, "NamespacesFunction", "POST", "/v1/namespaces", "/v1/namespaces", ctx,
                        {"namespaceId": "docs", "default": True})  # fmt: skip
    assert status == 201 and body["namespaceId"] == "docs", body
    ingest_from_s3(w, ctx)

    # Search (reranked by Bedrock) finds it; a retry with its Idempotency-Key replays it, uncharged.
    retry = {"Idempotency-Key": f"rehearsal-{uuid.uuid4().hex}"}
    search = ("POST", "/v1/namespaces/docs/search", "/v1/namespaces/{namespace}/search", ctx,
              {"query": "Can I return a used bike?", "k": 3, "rerank": True}, retry)  # fmt: skip
    status, found = call(w, "SearchFunction", *search)
    assert status == 200 and found["hits"] and found["hits"][0]["documentId"] == "faq.txt", found
    assert found["rerank"] == {"reranker": "bedrock:cohere.rerank-v3-5:0", "fellBack": False}
    status, again = call(w, "SearchFunction", *search)
    assert status == 200 and again["replayed"] is True and again["runId"] == found["runId"], again
    assert again["hits"][0]["documentId"] == "faq.txt", again

    chat_streams(w, ctx)

    # Usage: the search and the chat, each charged once.
    status, usage = call(w, "KeysFunction", "GET", "/v1/usage", "/v1/usage", ctx)
    assert status == 200 and usage["runs"] == 2, usage
    chat_agents(w, ctx)
    hosting_search(w, ctx)
    reindex_namespace(w, ctx)
    delete_from_s3(w, ctx)
    namespace_lifecycle(w, ctx)
    key_lifecycle(w, ctx)
    end_users(w, ctx)
    document_writes(w, ctx)
    data_sources(w, ctx)
    webhooks(w, ctx)
    quota_thresholds(w)
    fair_sharing(w)
    runs_and_conversations(w, ctx)
    evaluations(w, ctx)
    if w.textract is not None:  # DocumentOcr=textract: a screenshot read through Textract (its own
        read_a_scan(w, ctx)  # namespace, last: earlier steps route chat over the tenant's namespaces)
    check_routes(w)
    calls = check_iam(w, proxy)
    check_least_privilege(w, calls)
    check_deliveries(w)
    if w.mode == "serverless":
        check_data_access(w, proxy)
    else:
        check_created_domain(w, calls)
    check_traces(w)
    checks_fail_on_faults(w, calls)
    # Metrics left in each function's log as CloudWatch EMF lines.
    for fn, metric in (("SearchFunction", "LatencyMs"), ("ChatFunction", "Exit_answered"),
                       ("HostingSearchFunction", "Exit_can_answer"),
                       ("IngestionFunction", "IngestChunks")):  # fmt: skip
        log = (w.art.logs / f"{fn}.log").read_text(errors="replace")
        assert "CloudWatchMetrics" in log and f'"{metric}"' in log, f"{fn} wrote no {metric} metric"


def checks_fail_on_faults(w: World, calls: list[AwsCall]) -> None:
    """The least-privilege checks, given this run's calls and a template with one fault injected,
    fail: a read-only role may DELETE through the domain's policy, a granted action is never used, the
    EventBridge rule's dead-letter queue lacks its policy."""
    injected = [
        (faults.an_unused_grant, lambda v: check_least_privilege(v, calls), "Extra"),
        (faults.dead_letters_dropped, check_deliveries, "WebhookDeliveryDeadLetterQueue"),
    ]
    if w.mode == "domain":  # the created domain's branch, resolved beside the run's existing domain
        injected.append((faults.readers_may_delete, lambda v: check_created_domain(v, calls), "ESHttpDelete"))
    for fault, check, named in injected:
        with pytest.raises(AssertionError, match=named):
            check(w.with_template(fault(w.art.translated)))
