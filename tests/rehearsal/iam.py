"""From what a function did to the IAM actions and resources its role must allow."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.rehearsal.cloudformation import ACCOUNT, PARTITION, REGION, AwsCall, Context

_TRANSACT = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


_RUNTIME_ACTION = {
    "InvokeModel": "InvokeModel",
    "InvokeModelWithResponseStream": "InvokeModelWithResponseStream",
    "Converse": "InvokeModel",
    "ConverseStream": "InvokeModelWithResponseStream",
}
"""Bedrock Runtime operations → their IAM action (Converse's are another operation's)."""
_PROFILE_ID = re.compile(r"^(?:[a-z]{2}|apac|global|us-gov)\.(?P<model>.+)$")
"""A cross-Region inference-profile id: a geography prefix (``us.``, ``eu.``, ``apac.``, ``global.``…)
before the model id. Provider prefixes (``amazon.``, ``ai21.``…) are never two letters alone."""


def bedrock_model_calls(function: str, action: str, model_id: str, region: str = REGION) -> list[AwsCall]:
    """What IAM checks for one model invocation from ``region``. A model id: the foundation model. An
    inference-profile id: the profile in this Region, and the foundation model it routes to with the
    profile's ARN in the request context (``bedrock:InferenceProfileArn``), which only a statement
    conditioned on it grants."""
    bedrock = f"bedrock:{action}"
    if model_id.startswith("arn:"):
        return [AwsCall(function, bedrock, model_id)]
    profile = _PROFILE_ID.match(model_id)
    if not profile:
        return [AwsCall(function, bedrock, f"arn:{PARTITION}:bedrock:{region}::foundation-model/{model_id}")]
    profile_arn = f"arn:{PARTITION}:bedrock:{region}:{ACCOUNT}:inference-profile/{model_id}"
    routed = f"arn:{PARTITION}:bedrock:{region}::foundation-model/{profile.group('model')}"
    return [
        AwsCall(function, bedrock, profile_arn),
        AwsCall(function, bedrock, routed, (("bedrock:InferenceProfileArn", profile_arn),)),
    ]


def table_arn(name: str, index: str = "") -> str:
    arn = f"arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT}:table/{name}"
    return f"{arn}/index/{index}" if index else arn


def bus_arn(name: str) -> str:
    return name if name.startswith("arn:") else f"arn:{PARTITION}:events:{REGION}:{ACCOUNT}:event-bus/{name}"


def queue_arn(url: str) -> str:
    """The ARN of a queue from its URL (``…/<account>/<name>``, as SQS and moto give it)."""
    account, name = url.rstrip("/").split("/")[-2:]
    return f"arn:{PARTITION}:sqs:{REGION}:{account}:{name}"


class UnmappedCalls(Exception):
    """Calls whose IAM action and resource the mapper does not know: a new operation (or a new shape
    of a known one) must be mapped before the rehearsal can vouch for the role that allows it."""


def calls_from_log(function: str, path: Path, secret_arns: dict[str, str]) -> list[AwsCall]:
    """The IAM view of the botocore calls recorded by ``recorder/sitecustomize.py``; raises
    ``UnmappedCalls`` listing every operation it cannot map (never a silent ``*``)."""
    if not path.exists():
        return []
    out: list[AwsCall] = []
    unknown: set[str] = set()
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        try:
            out.extend(
                iam_calls(function, entry["service"], entry["operation"], entry["params"], secret_arns)
            )
        except (KeyError, TypeError, AttributeError) as exc:
            unknown.add(f"{entry['service']}:{entry['operation']} ({type(exc).__name__}: {exc})")
    if unknown:
        raise UnmappedCalls(f"{function}: the IAM mapper cannot map: " + ", ".join(sorted(unknown)))
    return out


_DYNAMODB_ONE_TABLE = {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "DescribeTable"}
_DYNAMODB_BATCH = {"BatchGetItem", "BatchWriteItem"}
"""Batch calls have IAM actions of their own, on each table named in ``RequestItems``."""
_TRANSACT_GET = {"Get": "GetItem"}
_S3_ON_BUCKET = {
    "ListObjectsV2": "ListBucket",
    "ListObjects": "ListBucket",
    "ListObjectVersions": "ListBucketVersions",
}
_S3_ON_OBJECT = {
    "GetObject": "GetObject",
    "HeadObject": "GetObject",
    "PutObject": "PutObject",
    "DeleteObject": "DeleteObject",
}
"""S3 operations → the IAM action on the object (``…Version`` when the call names a ``VersionId``)."""


_SECRET_BY_NAME = {
    "GetSecretValue": "SecretId",
    "PutSecretValue": "SecretId",
    "DeleteSecret": "SecretId",
    "CreateSecret": "Name",
}
"""Secrets Manager operations on one secret → the parameter that names it."""
_SCHEDULE_ACTIONS = {"CreateSchedule", "UpdateSchedule", "DeleteSchedule", "GetSchedule"}


def secret_arn(name: str) -> str:
    """A secret's ARN from its name: Secrets Manager adds ``-`` and six random characters."""
    return f"arn:{PARTITION}:secretsmanager:{REGION}:{ACCOUNT}:secret:{name}-Rh0123"


def guardrail_arn(guardrail_id: str) -> str:
    return f"arn:{PARTITION}:bedrock:{REGION}:{ACCOUNT}:guardrail/{guardrail_id}"


def iam_calls(
    function: str, service: str, operation: str, params: dict[str, Any], secret_arns: dict[str, str]
) -> list[AwsCall]:
    """The IAM action(s) and resource(s) one API call needs; ``KeyError`` for an operation (or a
    shape) the mapper does not know."""
    if service == "dynamodb":
        return _dynamodb(function, operation, params)
    if service == "s3":
        return _s3(function, operation, params)
    if service == "secretsmanager" and operation in _SECRET_BY_NAME:
        secret = params[_SECRET_BY_NAME[operation]]
        arn = secret_arns.get(secret) or (secret if secret.startswith("arn:") else secret_arn(secret))
        return [AwsCall(function, f"secretsmanager:{operation}", arn)]
    if service == "scheduler" and operation in _SCHEDULE_ACTIONS:
        schedule = (
            f"arn:{PARTITION}:scheduler:{REGION}:{ACCOUNT}:schedule/{params['GroupName']}/{params['Name']}"
        )
        out = [AwsCall(function, f"scheduler:{operation}", schedule)]
        if "Target" in params:  # the schedule's role is passed to the scheduler
            passed = (("iam:PassedToService", "scheduler.amazonaws.com"),)
            out.append(AwsCall(function, "iam:PassRole", params["Target"]["RoleArn"], passed))
        return out
    if service == "events" and operation == "PutEvents":  # on each entry's bus (by name or ARN)
        return [AwsCall(function, "events:PutEvents", bus_arn(e["EventBusName"])) for e in params["Entries"]]
    if service == "sqs" and operation == "SendMessage":
        return [AwsCall(function, "sqs:SendMessage", queue_arn(params["QueueUrl"]))]
    if service == "bedrock-runtime" and operation == "ApplyGuardrail":
        guardrail = params["guardrailIdentifier"]
        arn = guardrail if guardrail.startswith("arn:") else guardrail_arn(guardrail)
        return [AwsCall(function, "bedrock:ApplyGuardrail", arn)]
    if service == "bedrock-runtime":
        return bedrock_model_calls(function, _RUNTIME_ACTION[operation], params["modelId"])
    if service == "textract" and operation == "DetectDocumentText":  # no resource-level permission
        return [AwsCall(function, "textract:DetectDocumentText", "*")]
    if service == "bedrock-agent-runtime" and operation == "Rerank":
        model = params["rerankingConfiguration"]["bedrockRerankingConfiguration"]["modelConfiguration"]
        # Rerank is authorised on "*" and, in addition, InvokeModel on the reranking model.
        return [
            AwsCall(function, "bedrock:Rerank", "*"),
            AwsCall(function, "bedrock:InvokeModel", model["modelArn"]),
        ]
    raise KeyError(f"{service}:{operation}")


def leading_key(params: dict[str, Any]) -> str | None:
    """The partition key value a one-table call names (IAM's ``dynamodb:LeadingKeys``): its ``Key`` or
    ``Item``, or a query's ``pk = :value``; None when the call names none (a scan)."""
    for part in ("Key", "Item"):
        if "pk" in params.get(part, {}):
            return str(params[part]["pk"]["S"])
    match = re.search(r"\bpk\s*=\s*(:\w+)", params.get("KeyConditionExpression", ""))
    if match:
        return str(params["ExpressionAttributeValues"][match.group(1)]["S"])
    return None


def _dynamodb(function: str, operation: str, params: dict[str, Any]) -> list[AwsCall]:
    if operation in _DYNAMODB_ONE_TABLE:
        resource = table_arn(params["TableName"], params.get("IndexName", ""))
        pk = leading_key(params)
        context = (("dynamodb:LeadingKeys", pk),) if pk is not None else ()
        return [AwsCall(function, f"dynamodb:{operation}", resource, context)]
    if operation in _DYNAMODB_BATCH:  # on each table, once per key family (LeadingKeys: all must match)
        tables = params["RequestItems"]
        return [
            AwsCall(function, f"dynamodb:{operation}", table_arn(t), _family_context(family))
            for t in sorted(tables)
            for family in (tables[t] if isinstance(tables, dict) else [None])
        ]
    # Transactions have no IAM action of their own: each item needs the permission of its operation.
    kinds = {"TransactWriteItems": _TRANSACT, "TransactGetItems": _TRANSACT_GET}[operation]
    return [
        AwsCall(
            function, f"dynamodb:{kinds[kind]}", table_arn(body["TableName"]), _family_context(body.get("pk"))
        )
        for item in params["TransactItems"]
        for kind, body in item.items()
    ]


def _family_context(family: str | None) -> Context:
    """A batch's or transaction's key family (``KEY#``, recorded without the rest of the key) as the
    value IAM's ``dynamodb:LeadingKeys`` would compare: ``KEY#…`` matches ``KEY#*`` and nothing else."""
    return (("dynamodb:LeadingKeys", f"{family}…"),) if family and family != "?" else ()


def _s3(function: str, operation: str, params: dict[str, Any]) -> list[AwsCall]:
    bucket = f"arn:{PARTITION}:s3:::{params['Bucket']}"
    if operation in _S3_ON_BUCKET:  # a listing's prefix is IAM's s3:prefix
        prefix = (("s3:prefix", params["Prefix"]),) if "Prefix" in params else ()
        return [AwsCall(function, f"s3:{_S3_ON_BUCKET[operation]}", bucket, prefix)]
    if operation == "DeleteObjects":  # DeleteObject (or …Version) on each key
        objects = params["Delete"]["Objects"]
        return [_on_object(function, "DeleteObject", bucket, o["Key"], o.get("VersionId")) for o in objects]
    return [_on_object(function, _S3_ON_OBJECT[operation], bucket, params["Key"], params.get("VersionId"))]


def _on_object(function: str, action: str, bucket: str, key: str, version: str | None) -> AwsCall:
    return AwsCall(function, f"s3:{action}{'Version' if version else ''}", f"{bucket}/{key}")


def opensearch_call(function: str, method: str, path: str, domain_arn: str) -> AwsCall:
    action = "es:ESHttp" + method.capitalize()
    return AwsCall(function, action, f"{domain_arn}{path.split('?', 1)[0]}")
