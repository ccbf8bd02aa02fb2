"""API Gateway REST REQUEST authorizer: ``Authorization: Bearer rl_…`` → tenant context, or 401.

The policy allows the whole API stage (not just the called route) so API Gateway can cache it per
key; handlers still check scopes and namespaces themselves. Kept minimal on purpose: it runs in front
of every request, so it imports no Powertools, no pydantic model and no SDK — the key is read through
the backend's :class:`~ragline.ports.ApiKeyLookup` (boto3 loads on the first request), and a test's
container is read through its registry by the same :func:`authenticate`.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ragline import errors, snapstart, wiring
from ragline.services.authentication import authenticate

if TYPE_CHECKING:
    from ragline.ports import ApiKeyLookup
    from ragline.wiring import Container


@cache
def api_keys() -> ApiKeyLookup:
    """Built on the first request and kept by the Lambda container."""
    return wiring.api_key_lookup()


def stage_arn(method_arn: str) -> str:
    """``arn:…:api-id/stage/VERB/path`` → ``arn:…:api-id/stage/*``."""
    arn, _, path = method_arn.partition("/")
    stage = path.split("/", 1)[0]
    return f"{arn}/{stage}/*"


def lambda_handler(event: dict[str, Any], context: Any, container: Container | None = None) -> dict[str, Any]:
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    authorization = headers.get("authorization")
    try:
        if container is None:
            principal = authenticate(api_keys(), authorization)
        else:
            principal = container.tenancy.authenticate(authorization)
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


snapstart.prepare(container=False)  # a SnapStart init's warm-up and hooks; nothing otherwise
