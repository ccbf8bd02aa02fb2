"""API Gateway REST REQUEST authorizer: ``Authorization: Bearer rl_…`` → tenant context, or 401.

The policy allows the whole API stage (not just the called route) so API Gateway can cache it per
key; handlers still check scopes and namespaces themselves. Kept light on purpose (no Powertools, no
SDK at import): it runs in front of every request.
"""

from __future__ import annotations

from typing import Any

from ragline import errors, wiring
from ragline.wiring import Container


def stage_arn(method_arn: str) -> str:
    """``arn:…:api-id/stage/VERB/path`` → ``arn:…:api-id/stage/*``."""
    arn, _, path = method_arn.partition("/")
    stage = path.split("/", 1)[0]
    return f"{arn}/{stage}/*"


def lambda_handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    try:
        principal = (container or wiring.container()).tenancy.authenticate(headers.get("authorization"))
    except errors.Unauthorized:
        # API Gateway turns exactly this message into a 401 with its own body.
        raise Exception("Unauthorized") from None
    return {
        "principalId": principal.tenant_id,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": stage_arn(event["methodArn"])}
            ],
        },
        "context": principal.to_context(),
    }
