"""The rehearsal's checks after the scenario: every route called, streaming only on chat, IAM for every
recorded call (also against a created domain), and traces joined to their invocations."""

from __future__ import annotations

from dataclasses import replace

from tests.rehearsal.aoss import DataAccessPolicy, collection_calls
from tests.rehearsal.cloudformation import ACCOUNT, REGION, AwsCall
from tests.rehearsal.deliveries import refused
from tests.rehearsal.grants import ALLOWED, resource_grants, role_grants, unused
from tests.rehearsal.signed_proxy import SignedProxy
from tests.rehearsal.stack_checks import created_domain_stack, uncovered
from tests.rehearsal.steps import EVENT_SOURCES, ROUTES
from tests.rehearsal.world import BEDROCK_CHAT_MODEL, DOMAIN_ARN, FUNCTIONS, TRACED, World

STORE_USERS = (
    "SearchFunction",
    "HostingSearchFunction",
    "ChatFunction",
    "DocumentsFunction",
    "IngestionFunction",
)
"""The functions whose roles the template lets into the store."""


def check_routes(w: World) -> None:
    """Every route of the API and every event source is in the rehearsal's table (and nothing else
    is), and this run called each one through the function the template wires it to."""
    lines = uncovered(ROUTES, w.routes) + uncovered(EVENT_SOURCES, w.sources)
    assert not lines, "the rehearsal's tables and the template differ:\n" + "\n".join(lines)
    assert not set(w.routes) - w.called, f"routes never called: {sorted(set(w.routes) - w.called)}"
    assert not set(w.sources) - w.delivered, f"event sources never invoked: {set(w.sources) - w.delivered}"


def check_streaming(w: World) -> None:
    """Exactly the chat function's routes stream (API Gateway is not emulated: its integration is
    read): it answers through the Web Adapter's response stream, JSON bodies too."""
    streaming = {key for key, route in w.routes.items() if route.streams}
    chat = {key for key, route in w.routes.items() if route.function == "ChatFunction"}
    assert ("POST", "/v1/chat") in chat and streaming == chat, f"streaming: {streaming}, chat's: {chat}"


def check_created_domain(w: World, calls: list[AwsCall]) -> None:
    """The template's other branch, resolved without running anything again: no ``OpenSearchEndpoint``
    (the template creates the domain): every function's environment and role resolve, the functions
    that use OpenSearch are pointed at the created domain, and the calls this run made would be
    allowed against the created domain's ARN."""
    stack, domain_arn = created_domain_stack(w.stack)
    specs = {fn: stack.function(fn) for fn in FUNCTIONS}
    endpoint = f"https://{stack.attributes['OpenSearchDomain.DomainEndpoint']}"
    urls = {
        fn: s.environment["RAGLINE_OPENSEARCH_URL"]
        for fn, s in specs.items()
        if "RAGLINE_OPENSEARCH_URL" in s.environment
    }
    assert urls and set(urls.values()) == {endpoint}, urls
    moved = [replace(c, resource=c.resource.replace(DOMAIN_ARN, domain_arn)) for c in calls]
    assert any(c.action.startswith("es:") and c.resource.startswith(domain_arn) for c in moved)
    denied = sorted(
        {
            (c.function, c.action, c.resource)
            for c in moved
            if not specs[c.function].allows(c.action, c.resource, c.context)
        }
    )
    assert not denied, "with a created domain, actions outside the roles:\n" + "\n".join(map(str, denied))
    # Within the account the domain's access policy alone lets a role in (IAM: identity OR resource
    # policy): what it grants each role must be what that role used, as for the roles' own policies.
    principals = {str(stack.resolve({"Fn::GetAtt": [role, "Arn"]})): fn for fn, role in w.roles.items()}
    access = stack.resolve(stack.template["Resources"]["OpenSearchDomain"]["Properties"]["AccessPolicies"])
    lines = unused(resource_grants("domain access policy", access, principals), moved)
    assert not lines, "the domain's access policy grants what the role never used:\n" + "\n".join(lines)


def check_iam(w: World, proxy: SignedProxy) -> list[AwsCall]:
    """Every AWS action each function performed is allowed by its role in the translated template."""
    calls = w.aws_calls(proxy)
    assert not proxy.refused, f"unsigned OpenSearch requests: {proxy.refused}"
    # Signed for the store's service: a domain's es:ESHttp* actions, or a collection's one IAM action
    wanted, other = ("aoss:", "es:") if w.mode == "serverless" else ("es:", "aoss:")
    signed_os = {c.function for c in calls if c.action.startswith(wanted)}
    assert signed_os >= {"SearchFunction", "HostingSearchFunction", "IngestionFunction", "ChatFunction"}, (
        signed_os
    )
    assert not [c for c in calls if c.action.startswith(other)], (
        f"{other} actions with OpenSearchMode={w.mode}"
    )
    denied = sorted(
        {
            (c.function, c.action, c.resource)
            for c in calls
            if not w.stack.function(c.function).allows(c.action, c.resource, c.context)
        }
    )
    assert not denied, "actions outside the functions' roles:\n" + "\n".join(map(str, denied))
    performed = {c.action for c in calls}
    assert {"dynamodb:PutItem", "bedrock:InvokeModel", "bedrock:Rerank"} <= performed
    # the LLM key's secret (a data source's credentials are read by its syncs, whatever the provider)
    read_llm_key = any(
        c.action == "secretsmanager:GetSecretValue" and c.resource == w.secret_arn for c in calls
    )
    if w.provider == "bedrock":  # chat streamed through ConverseStream; no key to read
        assert "bedrock:InvokeModelWithResponseStream" in performed
        assert not read_llm_key
        models = {c.resource for c in calls if c.action == "bedrock:InvokeModelWithResponseStream"}
        assert f"arn:aws:bedrock:{REGION}:{ACCOUNT}:inference-profile/{BEDROCK_CHAT_MODEL}" in models, models
    else:
        assert read_llm_key
    return calls


def check_data_access(w: World, proxy: SignedProxy) -> None:
    """Serverless: every signed request to the collection was also allowed by the template's data access
    policy for the calling function's role (AOSS checks both IAM and this policy), and the policy names
    no principal besides the roles of the functions that use the store."""
    by_key = {key: fn for fn, key in w.keys.items()}
    resources = w.art.translated["Resources"]
    policy = DataAccessPolicy(
        w.stack.resolve(resources["OpenSearchDataAccessPolicy"]["Properties"]["Policy"])
    )
    principal = {fn: str(w.stack.resolve({"Fn::GetAtt": [role, "Arn"]})) for fn, role in w.roles.items()}
    needed = [
        d
        for c in proxy.calls
        if c.key in by_key
        for d in collection_calls(by_key[c.key], c.method, c.path, c.body, w.collection_name)[1]
    ]
    assert {d.permission for d in needed} >= {"aoss:ReadDocument", "aoss:WriteDocument"}, needed
    denied = sorted(
        {
            (d.function, d.permission, d.resource)
            for d in needed
            if not policy.allows(principal[d.function], d.permission, d.resource)
        }
    )
    assert not denied, "requests the data access policy refuses:\n" + "\n".join(map(str, denied))
    users = {d.function for d in needed}
    assert users >= {"SearchFunction", "HostingSearchFunction", "IngestionFunction", "ChatFunction"}, users
    assert policy.principals <= {principal[fn] for fn in STORE_USERS}, policy.principals
    by_role = {arn: fn for fn, arn in principal.items()}
    lines = sorted(
        {
            f"{by_role[p]}: {permission} (data access policy)"
            for entry in policy.entries
            for p in entry["Principal"]
            for rule in entry["Rules"]
            for permission in rule["Permission"]
            if permission not in ALLOWED
            and not any(d.function == by_role[p] and d.permission == permission for d in needed)
        }
    )
    assert not lines, "the data access policy grants what the role never used:\n" + "\n".join(lines)


def check_traces(w: World) -> None:
    """Each traced function's calls joined the X-Ray trace of the invocation that made them: the
    handler's own subsegment (zip functions), its AWS calls, and its OpenSearch and model requests as
    remote calls, each to the endpoint the template gives it; and no document text in any of it."""
    assert not w.xray.malformed, w.xray.malformed[:3]
    model = [w.llm.base_url] if w.provider == "openai" else []  # Bedrock's calls are AWS calls
    talks_to = {
        "SearchFunction": [w.proxy_url],
        "HostingSearchFunction": [w.proxy_url, *model],
        "IngestionFunction": [w.proxy_url],
        "ChatFunction": [w.proxy_url, *model],
    }
    for fn in TRACED:
        assert w.stack.function(fn).tracing == "Active", f"{fn}: X-Ray tracing is not Active in the template"
        assert w.taps[fn].injected, f"{fn}: no event carried a trace header (Runtime API proxy bypassed?)"
        docs = w.xray.of_trace(w.running[fn].trace_ids)
        assert docs, f"{fn} sent nothing to the X-Ray daemon (no tracer?)\n{w.running[fn].log_tail()}"
        if fn != "ChatFunction":  # chat is a web app: its calls join the trace without a handler subsegment
            assert "## lambda_handler" in {d.get("name") for d in docs}, (fn, docs)
        assert any(d.get("namespace") == "aws" and d.get("name") == "dynamodb" for d in docs), (fn, docs)
        remote = [d for d in docs if d.get("namespace") == "remote"]
        urls = [d.get("http", {}).get("request", {}).get("url", "") for d in remote]
        for endpoint in talks_to.get(fn, []):
            assert any(u.startswith(endpoint) for u in urls), f"{fn}: no traced call to {endpoint}: {urls}"
    assert "Northwind Cycles frequently asked questions" not in w.xray.raw(), "document text in a trace"


NOT_REHEARSED = {
    "ApiGatewayAccountFunction": "CloudFormation's custom resource, run at deploy time only; its "
    "handler runs against a local API Gateway in tests/deploy/test_apigateway_account.py",
}
"""Functions of the template the rehearsal does not run, each with its reason."""


def check_least_privilege(w: World, calls: list[AwsCall]) -> None:
    """Every action each function's role grants (its statements and managed policies) was used by a
    call of this run, or is on ``grants.ALLOWED`` with its reason; and every function of the template
    is one the rehearsal runs, or is on :data:`NOT_REHEARSED` with its reason."""
    kinds = ("AWS::Serverless::Function", "AWS::Lambda::Function")
    template = {name for name, r in w.stack.template["Resources"].items() if r["Type"] in kinds}
    assert template - set(FUNCTIONS) == set(NOT_REHEARSED), template - set(FUNCTIONS)
    grants = [g for fn in FUNCTIONS for g in role_grants(w.stack.function(fn))]
    lines = unused(grants, calls)
    assert not lines, "granted but never used by a rehearsal step (nor in grants.ALLOWED):\n" + "\n".join(
        lines
    )


def check_deliveries(w: World) -> None:
    """Every service delivery into the stack's queues (S3 notifications, each rule's target and its
    dead-letter queue) is allowed by that queue's policy, from that sender only."""
    lines = refused(w.stack)
    assert not lines, "deliveries the queues' policies refuse:\n" + "\n".join(lines)
