"""How a scenario reaches the built stack: API Gateway's REST events to the function the template routes
them to, and the operator's CLI against the world's tables."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from typing import Any

from tests.rehearsal.cloudformation import ACCOUNT, REGION
from tests.rehearsal.host import ROOT
from tests.rehearsal.world import World
from tests.support.lambda_harness import path_parameters


def rest_event(
    method: str,
    path: str,
    resource: str,
    context: dict[str, Any],
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    params = path_parameters(resource, path)
    sent = {"Content-Type": "application/json", "Host": "api.rehearsal.test", **(headers or {})}
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": sent,
        "multiValueHeaders": {k: [v] for k, v in sent.items()},
        "queryStringParameters": None,
        "pathParameters": params or None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": method,
            "path": f"/dev{path}",
            "stage": "dev",
            "requestId": uuid.uuid4().hex,
            "accountId": ACCOUNT,
            "authorizer": context,
            "identity": {"sourceIp": "127.0.0.1"},
            "requestTimeEpoch": int(time.time() * 1000),
        },
        "body": None if body is None else json.dumps(body),
        "isBase64Encoded": False,
    }


def answer(result: dict[str, Any]) -> tuple[int, Any]:
    return result["statusCode"], json.loads(result.get("body") or "null")


def cli(world: World, *args: str, env: dict[str, str] | None = None) -> str:
    """The operator's ``ragline`` against the world's tables and bucket (``env``: settings added)."""
    env = {
        **os.environ,
        **(env or {}),
        "RAGLINE_BACKEND": "aws",
        "AWS_ENDPOINT_URL": world.moto,
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "operator",
        "AWS_SECRET_ACCESS_KEY": "operator",
        "RAGLINE_TENANTS_TABLE": world.tables["TenantsTable"],
        "RAGLINE_USAGE_TABLE": world.tables["UsageTable"],
        "RAGLINE_DOCUMENTS_TABLE": world.tables["DocumentsTable"],
        "RAGLINE_DOCUMENTS_BUCKET": world.bucket,
    }
    done = subprocess.run(
        [str(ROOT / ".venv/bin/ragline"), *args], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def call(
    w: World,
    fn: str,
    method: str,
    path: str,
    resource: str,
    ctx: dict[str, Any],
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """One API request through the function the template routes it to: (status, JSON body)."""
    status, raw = w.api(fn, rest_event(method, path, resource, ctx, body, headers))
    result = json.loads(raw or b"null")
    if status != 200 or (isinstance(result, dict) and "errorType" in result):
        raise AssertionError(f"{fn} failed: HTTP {status} {raw[:500]!r}")
    return result["statusCode"], json.loads(result.get("body") or "null")
