"""What an operator relies on, in the translated template: alarms on every function, route and the
OpenSearch domain's health, one dashboard, a queue that outlives its function's retries, a bucket
that does not keep every old version forever, and a domain that survives losing a zone. Computed
from the template itself, so a new function or route without its alarms fails here."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.deploy.modes import functions
from tests.deploy.translated import StandInStack
from tests.support.cfn_tables import load_template

pytestmark = pytest.mark.deploy
TOPIC = "arn:aws:sns:us-east-1:123456789012:ops"
EXISTING = {
    "OpenSearchEndpoint": "https://search-x.us-east-1.es.amazonaws.com",
    "ExistingOpenSearchDomainArn": "arn:aws:es:us-east-1:123456789012:domain/x",
}


def alarms(stack: StandInStack) -> dict[str, dict[str, Any]]:
    """The alarms this parameter set creates, resolved."""
    return {
        logical: stack.resolve(res["Properties"])
        for logical, res in stack.template["Resources"].items()
        if res["Type"] == "AWS::CloudWatch::Alarm" and stack.exists(logical)
    }


def watching(found: dict[str, dict[str, Any]], namespace: str, metric: str, **dims: str) -> dict[str, Any]:
    """The one alarm on ``metric`` with exactly these dimensions."""
    hits = [
        a
        for a in found.values()
        if (a.get("Namespace"), a.get("MetricName")) == (namespace, metric)
        and {d["Name"]: d["Value"] for d in a.get("Dimensions", [])} == dims
    ]
    assert len(hits) == 1, f"{len(hits)} alarms on {namespace} {metric} {dims}"
    return hits[0]


def lambda_functions(translated: dict[str, Any]) -> list[str]:
    """The stack's functions (a custom resource's, invoked by CloudFormation at deploy time, has no
    alarms: a failure there fails the deployment itself)."""
    return functions(translated)


def test_every_function_has_an_errors_and_a_throttles_alarm(translated: dict[str, Any]) -> None:
    found = alarms(StandInStack(translated, {}))
    functions = lambda_functions(translated)
    assert len(functions) >= 8
    for fn in functions:
        for metric in ("Errors", "Throttles"):
            alarm = watching(found, "AWS/Lambda", metric, FunctionName=fn)
            assert (alarm["Statistic"], alarm["Threshold"]) == ("Sum", 0), (fn, metric)
            assert alarm["ComparisonOperator"] == "GreaterThanThreshold", (fn, metric)


def api_routes() -> list[tuple[str, str]]:
    """(METHOD, path) of every API event in template.yaml."""
    routes = []
    for res in load_template()["Resources"].values():
        for event in (res.get("Properties") or {}).get("Events", {}).values():
            if event["Type"] == "Api":
                routes.append((event["Properties"]["Method"].upper(), event["Properties"]["Path"]))
    return routes


def test_every_route_has_a_p95_latency_alarm(translated: dict[str, Any]) -> None:
    stack = StandInStack(translated, {"Stage": "prod"})
    found = alarms(stack)
    routes = api_routes()
    assert ("POST", "/v1/chat") in routes and len(routes) >= 16
    api_settings = [r for r in translated["Resources"].values() if r["Type"] == "AWS::ApiGateway::Stage"]
    (stage,) = api_settings
    assert all(m["MetricsEnabled"] for m in stage["Properties"]["MethodSettings"])  # per-method metrics
    api = stack.resolve(translated["Resources"]["RaglineApi"]["Properties"]["Name"])
    assert api.startswith("ragline-prod-")  # the stack id follows (tests/deploy/test_names.py)
    for method, path in routes:
        dims = {"ApiName": api, "Stage": "prod", "Resource": path, "Method": method}
        alarm = watching(found, "AWS/ApiGateway", "Latency", **dims)
        assert alarm["ExtendedStatistic"] == "p95" and alarm["Threshold"] > 0, (method, path)


OPENSEARCH = {
    "ClusterStatus.red": ("Maximum", 1, "GreaterThanOrEqualToThreshold"),
    "ClusterStatus.yellow": ("Maximum", 1, "GreaterThanOrEqualToThreshold"),
    "JVMMemoryPressure": ("Maximum", 80, "GreaterThanThreshold"),
    "ClusterIndexWritesBlocked": ("Maximum", 1, "GreaterThanOrEqualToThreshold"),
}


def test_a_created_multi_node_domain_is_watched_and_spread_over_two_zones(translated: dict[str, Any]) -> None:
    stack = StandInStack(translated, {"OpenSearchInstanceCount": "2", "OpenSearchVolumeGiB": "40"})
    found = alarms(stack)
    domain = {"DomainName": "OpenSearchDomain", "ClientId": "123456789012"}
    for metric, (statistic, threshold, operator) in OPENSEARCH.items():
        alarm = watching(found, "AWS/ES", metric, **domain)
        assert (alarm["Statistic"], alarm["Threshold"], alarm["ComparisonOperator"]) == (
            statistic,
            threshold,
            operator,
        ), metric
    (storage,) = [a for a in found.values() if "Metrics" in a]
    stat = next(m for m in storage["Metrics"] if "MetricStat" in m)["MetricStat"]
    assert stat["Metric"]["MetricName"] == "FreeStorageSpace" and stat["Stat"] == "Minimum"
    expression = next(m for m in storage["Metrics"] if "Expression" in m)["Expression"]
    # FreeStorageSpace is in MB: the share of the 40 GiB volume per node, in %.
    assert expression == "100 * free / (40 * 1024)" and storage["Threshold"] == 25
    assert storage["ComparisonOperator"] == "LessThanOrEqualToThreshold"
    cluster = stack.resolve(translated["Resources"]["OpenSearchDomain"]["Properties"])["ClusterConfig"]
    assert cluster["ZoneAwarenessEnabled"] is True
    assert cluster["ZoneAwarenessConfig"] == {"AvailabilityZoneCount": 2}
    assert stack.function("IngestionFunction").environment["RAGLINE_OPENSEARCH_REPLICAS"] == "1"
    assert stack.function("IngestionFunction").environment["RAGLINE_OPENSEARCH_SHARDS"] == "2"


def test_one_node_has_no_replicas_no_zones_and_no_yellow_alarm(translated: dict[str, Any]) -> None:
    stack = StandInStack(translated, {})
    found = alarms(stack)
    assert not [a for a in found.values() if a.get("MetricName") == "ClusterStatus.yellow"]  # always yellow
    watching(found, "AWS/ES", "ClusterStatus.red", DomainName="OpenSearchDomain", ClientId="123456789012")
    cluster = stack.resolve(translated["Resources"]["OpenSearchDomain"]["Properties"])["ClusterConfig"]
    assert cluster["ZoneAwarenessEnabled"] is False and "ZoneAwarenessConfig" not in cluster
    for fn in lambda_functions(translated):
        assert stack.function(fn).environment["RAGLINE_OPENSEARCH_REPLICAS"] == "0", fn
        assert stack.function(fn).environment["RAGLINE_OPENSEARCH_SHARDS"] == "1", fn


def test_a_domains_chunk_indexes_are_faiss_in_every_function(translated: dict[str, Any]) -> None:
    """The engine is read when an index is created, by whichever function creates it first."""
    from ragline.config import Settings

    stack = StandInStack(translated, {})
    for fn in lambda_functions(translated):
        env = stack.function(fn).environment
        assert Settings.from_env(env).opensearch_engine == "faiss", fn


def test_growth_thresholds_reach_every_function_as_parameters_and_default_to_the_stores_own(
    translated: dict[str, Any],
) -> None:
    from ragline.config import Settings

    given = {"OpenSearchShardMaxChunks": "400000", "OpenSearchSiloChunks": "20000"}
    stack = StandInStack(translated, {**given, "OpenSearchSiloTenants": '["acme", "globex"]'})
    defaults = StandInStack(translated, {})
    for fn in lambda_functions(translated):
        env = stack.function(fn).environment
        assert env["RAGLINE_OPENSEARCH_SHARD_MAX_CHUNKS"] == "400000", fn
        assert env["RAGLINE_OPENSEARCH_SILO_CHUNKS"] == "20000", fn
        read = Settings.from_env(env)  # as the function reads its environment
        assert read.opensearch_silo_tenants == ["acme", "globex"], fn
        assert (read.opensearch_shard_max_chunks, read.opensearch_silo_chunks) == (400_000, 20_000), fn
        base = defaults.function(fn).environment
        assert (base["RAGLINE_OPENSEARCH_SHARD_MAX_CHUNKS"], base["RAGLINE_OPENSEARCH_SILO_CHUNKS"]) == (
            "0",
            "0",
        )
        assert base["RAGLINE_OPENSEARCH_SILO_TENANTS"] == "[]", fn


def test_an_existing_domain_has_no_domain_alarms_but_keeps_the_rest(translated: dict[str, Any]) -> None:
    stack = StandInStack(translated, {**EXISTING, "OpenSearchInstanceCount": "2"})
    found = alarms(stack)
    assert not [a for a in found.values() if a.get("Namespace") == "AWS/ES" or "Metrics" in a]
    watching(
        found, "AWS/SQS", "ApproximateNumberOfMessagesVisible", QueueName="IngestDeadLetterQueue.QueueName"
    )
    assert stack.function("SearchFunction").environment["RAGLINE_OPENSEARCH_REPLICAS"] == "1"
    outputs = {k: stack.resolve(v["Value"]) for k, v in translated["Outputs"].items() if "Condition" not in v}
    for fn in ("Search", "HostingSearch", "Chat", "Documents", "Ingestion"):
        assert outputs[f"{fn}FunctionRoleArn"] == f"{fn}FunctionRole.Arn"


@pytest.mark.parametrize("parameters", [{}, EXISTING], ids=["created domain", "existing domain"])
def test_every_alarm_notifies_the_topic_and_quota_exhaustion_is_one(
    translated: dict[str, Any], parameters: dict[str, str]
) -> None:
    found = alarms(StandInStack(translated, {**parameters, "AlarmTopicArn": TOPIC}))
    assert all(a["AlarmActions"] == [TOPIC] for a in found.values()), [
        k for k, a in found.items() if a.get("AlarmActions") != [TOPIC]
    ]
    quota = watching(found, "Ragline", "QuotaExceeded", service="ragline")
    assert (quota["Statistic"], quota["Threshold"]) == ("Sum", 0)
    assert not any("AlarmActions" in a for a in alarms(StandInStack(translated, parameters)).values())


@pytest.mark.parametrize("parameters", [{}, EXISTING], ids=["created domain", "existing domain"])
def test_the_dashboard_is_json_with_every_function_and_route(
    translated: dict[str, Any], parameters: dict[str, str]
) -> None:
    stack = StandInStack(translated, parameters)
    body = json.loads(
        stack.resolve(translated["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"])
    )
    metrics = [m for w in body["widgets"] for m in w["properties"]["metrics"]]
    functions = {m[3] for m in metrics if m[:2] in (["AWS/Lambda", "Errors"], ["AWS/Lambda", "Throttles"])}
    assert functions == set(lambda_functions(translated))
    latency = {(m[9], m[7]) for m in metrics if m[:2] == ["AWS/ApiGateway", "Latency"]}
    assert latency == set(api_routes())
    on_domain = any(m[0] == "AWS/ES" for m in metrics)
    assert on_domain == (not parameters)


@pytest.mark.parametrize(
    ("function", "queue"),
    [
        ("IngestionFunction", "IngestQueue"),
        ("WebhookDeliveryFunction", "WebhookDeliveryQueue"),
        ("ChatFunction", "RunsQueue"),
    ],
)
def test_the_queue_outlives_six_function_timeouts_and_the_batching_window(
    translated: dict[str, Any], function: str, queue: str
) -> None:
    """AWS's guidance for an SQS event source: visibility >= 6 x timeout + MaximumBatchingWindow."""
    stack, resources = StandInStack(translated, {}), translated["Resources"]
    timeout = stack.resolve(resources[function]["Properties"]["Timeout"])
    mappings = [
        stack.resolve(r["Properties"])
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    ]
    assert len(mappings) == 3
    (mapping,) = [m for m in mappings if m["EventSourceArn"] == stack.resolve({"Fn::GetAtt": [queue, "Arn"]})]
    window = mapping.get("MaximumBatchingWindowInSeconds", 0)
    assert stack.resolve(resources[queue]["Properties"]["VisibilityTimeout"]) >= 6 * timeout + window


def test_the_versioned_bucket_expires_old_versions_uploads_and_delete_markers(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, {"NoncurrentVersionDays": "14"})
    bucket = stack.resolve(translated["Resources"]["DocumentsBucket"]["Properties"])
    assert bucket["VersioningConfiguration"]["Status"] == "Enabled"
    rules = [r for r in bucket["LifecycleConfiguration"]["Rules"] if r["Status"] == "Enabled"]
    expiring = [
        r["NoncurrentVersionExpiration"]["NoncurrentDays"]
        for r in rules
        if "NoncurrentVersionExpiration" in r
    ]
    assert [int(days) for days in expiring] == [14]
    aborting = [
        r["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"]
        for r in rules
        if "AbortIncompleteMultipartUpload" in r
    ]
    assert aborting == [7]
    assert [r for r in rules if r.get("ExpiredObjectDeleteMarker") is True]
    assert StandInStack(translated, {}).values["NoncurrentVersionDays"] == "30"


def test_every_alarm_says_what_missing_data_means(translated: dict[str, Any]) -> None:
    """Without ``TreatMissingData`` an alarm on a metric that is only emitted on activity (a route's
    latency, a function's errors) sits in INSUFFICIENT_DATA on a quiet stage and never returns to OK."""
    found = {
        k: r["Properties"]
        for k, r in translated["Resources"].items()
        if r["Type"] == "AWS::CloudWatch::Alarm"
    }
    assert len(found) >= 40
    unset = sorted(k for k, props in found.items() if "TreatMissingData" not in props)
    assert not unset, f"alarms without TreatMissingData: {unset}"
    values = {props["TreatMissingData"] for props in found.values()}
    assert values <= {"breaching", "notBreaching", "ignore", "missing"}, values
