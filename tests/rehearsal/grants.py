"""Least privilege, proven the other way round: every action a function's role grants — its own
statements, the AWS managed policies attached to it, and every resource policy that names the role — is
one the rehearsal saw the function use, or is on :data:`ALLOWED` with its reason. A grant nobody uses
fails the rehearsal, so a role can only grow with a step that needs it.

A grant is a (function, statement, action) triple and is used when some call the function made is that
action and the statement alone allows it (resource and conditions): a statement no call reaches is
reported even when another statement grants the same action elsewhere."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.rehearsal.cloudformation import AwsCall, FunctionSpec, listed, statement_allows

MANAGED = {
    "AWSLambdaBasicExecutionRole": ("logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"),
    "AWSXrayWriteOnlyAccess": (
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
        "xray:GetSamplingRules",
        "xray:GetSamplingTargets",
        "xray:GetSamplingStatisticSummaries",
    ),
    "AWSLambdaSQSQueueExecutionRole": (
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "logs:CreateLogGroup",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
    ),
}
"""The AWS managed policies a role may carry, by name, with their actions (all on ``*``), as AWS
publishes them. Any other managed policy fails :func:`granted`: its actions must be listed here first."""

ES_HTTP = (
    "es:ESHttpGet",
    "es:ESHttpHead",
    "es:ESHttpPost",
    "es:ESHttpPut",
    "es:ESHttpDelete",
    "es:ESHttpPatch",
)
"""The one wildcard expanded: a domain's HTTP actions (``es:ESHttp*``), all six."""

ALLOWED: dict[str, str] = {
    "logs:CreateLogGroup": "Lambda's platform writes the function's logs with its role, not the code",
    "logs:CreateLogStream": "Lambda's platform writes the function's logs with its role, not the code",
    "logs:PutLogEvents": "Lambda's platform writes the function's logs with its role, not the code",
    "xray:PutTraceSegments": "active tracing: Lambda's X-Ray daemon sends the segments with the role",
    "xray:PutTelemetryRecords": "active tracing: the X-Ray daemon's own telemetry",
    "xray:GetSamplingRules": "active tracing: the X-Ray daemon reads the sampling rules",
    "xray:GetSamplingTargets": "active tracing: the X-Ray daemon reads the sampling targets",
    "xray:GetSamplingStatisticSummaries": "part of AWSXrayWriteOnlyAccess, which SAM attaches for Tracing",
    "OpenSearchRead es:ESHttpPut": "a reader creates the pooled index when it is first to touch it",
    "OpenSearch es:ESHttpPut": "a writer creates the pooled index when it is first (here: ingestion)",
    "OpenSearch es:ESHttpGet": "a writer finding the pooled index made reads its mapping (ensure_fields)",
    "aoss:CreateIndex": "whichever function first touches the pooled index creates it (readers too)",
    "aoss:UpdateIndex": "adds the filter fields to an index made before chunks carried them (upgrades)",
    "BedrockChatModel bedrock:InvokeModel": "Converse, for a chat model that cannot stream tool use",
    "BedrockChatProfileRoutes bedrock:InvokeModel": "Converse, for a chat model that cannot stream tool use",
    "ReadDocumentObjects s3:GetObjectVersion": "a read at an event's versionId (moto's events carry none)",
    "QuotaThresholdMarks dynamodb:DeleteItem": "the once-mark undone when EventBridge refuses the event",
}
"""Grants kept without a rehearsal step using them, each with its one reason: an action (any statement
granting it), or ``"<Sid> <action>"`` (that statement's). The platform's (logs, traces), and code paths
the scenario does not reach; everything else the code calls is seen by the recorder."""

ANY_RESOURCE = {
    "bedrock:Rerank": "Rerank has no resource-level permission (InvokeModel names the model)",
    "textract:DetectDocumentText": "Textract's synchronous operations have no resource-level permission",
}
"""Actions a statement may grant on ``*``, each with its reason; any other on ``*`` is too wide."""


@dataclass(frozen=True)
class Grant:
    """One action one statement grants one function: where it comes from, and the statement itself."""

    function: str
    source: str
    """``role <Sid or policy name>``, ``managed <name>``, or ``<resource policy> <Sid or index>``."""
    action: str
    statement: dict[str, Any]

    @property
    def allowed(self) -> bool:
        """On :data:`ALLOWED`, by its action or by its statement's Sid and action."""
        sid = self.statement.get("Sid", "")
        return self.action in ALLOWED or f"{sid} {self.action}" in ALLOWED

    def used_by(self, call: AwsCall) -> bool:
        if call.function != self.function or call.action.lower() != self.action.lower():
            return False
        return statement_allows(self.statement, call.action, call.resource, call.context)


def actions(statement: dict[str, Any]) -> list[str]:
    """A statement's actions, ``es:ESHttp*`` expanded; any other wildcard raises: a grant must say
    what it grants, so that each action can be shown to be used."""
    out: list[str] = []
    for action in listed(statement["Action"]):
        if action == "es:ESHttp*":
            out.extend(ES_HTTP)
        elif "*" in action or "?" in action:
            raise AssertionError(f"a wildcard action {action!r}: list the actions it is meant to grant")
        else:
            out.append(action)
    return out


def role_grants(spec: FunctionSpec) -> list[Grant]:
    """What the function's role grants: its statements, then its managed policies' actions."""
    out = [
        Grant(spec.logical, f"role {st.get('Sid', '?')}", action, st)
        for st in spec.statements
        if st.get("Effect") == "Allow"
        for action in actions(st)
    ]
    for arn in spec.managed_policies:
        name = arn.rsplit("/", 1)[-1]
        if name not in MANAGED:
            raise AssertionError(f"{spec.logical}: managed policy {arn} is not in the rehearsal's MANAGED")
        everything = {"Effect": "Allow", "Action": list(MANAGED[name]), "Resource": "*"}
        out.extend(Grant(spec.logical, f"managed {name}", a, everything) for a in MANAGED[name])
    return out


def resource_grants(policy: str, document: dict[str, Any], principals: dict[str, str]) -> list[Grant]:
    """What a resource policy grants each function whose role it names (``principals``: role ARN →
    function). Within one account, a resource policy naming a role allows it on its own, whatever the
    role's identity policies say (IAM's evaluation: identity OR resource policy, no explicit deny)."""
    out = []
    for i, st in enumerate(document["Statement"]):
        if st.get("Effect") != "Allow":
            continue
        named = st.get("Principal", {})
        arns = named.get("AWS", []) if isinstance(named, dict) else []
        for arn in listed(arns):
            if arn in principals:
                fn = principals[arn]
                out.extend(Grant(fn, f"{policy} {st.get('Sid', i)}", a, st) for a in actions(st))
    return out


def unused(grants: list[Grant], calls: list[AwsCall]) -> list[str]:
    """One line per grant no call used, or granted on every resource (``*``) though the action has
    resource-level permissions; :data:`ALLOWED` actions excepted."""
    lines = set()
    for g in grants:
        if g.allowed:
            continue
        if not any(g.used_by(c) for c in calls):
            lines.add(f"{g.function}: {g.action} ({g.source}) is never used")
        elif "*" in listed(g.statement.get("Resource")) and g.action not in ANY_RESOURCE:
            lines.add(f"{g.function}: {g.action} ({g.source}) is granted on every resource")
    return sorted(lines)
