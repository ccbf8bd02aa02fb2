"""From what a function did to the IAM actions and resources its role must allow."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.rehearsal.cloudformation import ACCOUNT, PARTITION, REGION, AwsCall

_PREFIX = {"bedrock-runtime": "bedrock", "bedrock-agent-runtime": "bedrock"}
_TRANSACT = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


_RUNTIME_ACTION = {"Converse": "InvokeModel", "ConverseStream": "InvokeModelWithResponseStream"}
"""Bedrock Runtime operations authorised by another operation's IAM action."""
_PROFILE_ID = re.compile(r"^(?:[a-z]{2}|apac|global|us-gov)\.(?P<model>.+)$")
"""A cross-Region inference-profile id: a geography prefix (``us.``, ``eu.``, ``apac.``, ``global.``…)
before the model id. Provider prefixes (``amazon.``, ``ai21.``…) are never two letters alone."""


def bedrock_model_calls(function: str, action: str, model_id: str) -> list[AwsCall]:
    """What IAM checks for one model invocation. A model id: the foundation model. An inference-profile
    id: the profile in this Region, and the foundation model it routes to with the profile's ARN in the
    request context (``bedrock:InferenceProfileArn``), which only a statement conditioned on it grants."""
    bedrock = f"bedrock:{action}"
    if model_id.startswith("arn:"):
        return [AwsCall(function, bedrock, model_id)]
    profile = _PROFILE_ID.match(model_id)
    if not profile:
        return [AwsCall(function, bedrock, f"arn:{PARTITION}:bedrock:{REGION}::foundation-model/{model_id}")]
    profile_arn = f"arn:{PARTITION}:bedrock:{REGION}:{ACCOUNT}:inference-profile/{model_id}"
    routed = f"arn:{PARTITION}:bedrock:{REGION}::foundation-model/{profile.group('model')}"
    return [
        AwsCall(function, bedrock, profile_arn),
        AwsCall(function, bedrock, routed, (("bedrock:InferenceProfileArn", profile_arn),)),
    ]


def table_arn(name: str) -> str:
    return f"arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


def calls_from_log(function: str, path: Path, secret_arns: dict[str, str]) -> list[AwsCall]:
    """The IAM view of the botocore calls recorded by ``recorder/sitecustomize.py``."""
    if not path.exists():
        return []
    out: list[AwsCall] = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        out.extend(_iam_calls(function, entry["service"], entry["operation"], entry["params"], secret_arns))
    return out


def _iam_calls(
    function: str, service: str, operation: str, params: dict[str, Any], secret_arns: dict[str, str]
) -> list[AwsCall]:
    prefix = _PREFIX.get(service, service)
    if service == "dynamodb" and operation == "TransactWriteItems":
        # No IAM action of its own: each item needs the permission of its operation.
        return [
            AwsCall(function, f"dynamodb:{_TRANSACT[kind]}", table_arn(body["TableName"]))
            for item in params["TransactItems"]
            for kind, body in item.items()
        ]
    if service == "dynamodb":
        return [AwsCall(function, f"dynamodb:{operation}", table_arn(params["TableName"]))]
    if service == "s3":
        action = {"ListObjectsV2": "ListBucket"}.get(operation, operation)
        resource = f"arn:{PARTITION}:s3:::{params['Bucket']}"
        if "Key" in params:
            resource += f"/{params['Key']}"
        return [AwsCall(function, f"s3:{action}", resource)]
    if service == "secretsmanager":
        secret = params["SecretId"]
        return [AwsCall(function, f"secretsmanager:{operation}", secret_arns.get(secret, secret))]
    if service == "bedrock-runtime":
        return bedrock_model_calls(function, _RUNTIME_ACTION.get(operation, operation), params["modelId"])
    if service == "bedrock-agent-runtime" and operation == "Rerank":
        model = params["rerankingConfiguration"]["bedrockRerankingConfiguration"]["modelConfiguration"]
        # Rerank is authorised on "*" and, in addition, InvokeModel on the reranking model.
        return [
            AwsCall(function, "bedrock:Rerank", "*"),
            AwsCall(function, "bedrock:InvokeModel", model["modelArn"]),
        ]
    return [AwsCall(function, f"{prefix}:{operation}", "*")]


def opensearch_call(function: str, method: str, path: str, domain_arn: str) -> AwsCall:
    action = "es:ESHttp" + method.capitalize()
    return AwsCall(function, action, f"{domain_arn}{path.split('?', 1)[0]}")
