"""The tenants table's items as the authorizer reads them too: keys, the attribute codec, the
consistent read and the conditional touch. Pure (request builders return the boto3 call's kwargs) and
free of the registry's models, so :mod:`ragline.adapters.aws.api_keys` imports no pydantic.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from typing import Any

from ragline.adapters.aws.batch import Key
from ragline.domain.identity import IdentityProvider, issuer_digest
from ragline.domain.keys import TOUCH_INTERVAL, timestamp, touch_cutoff

KEY_ATTRIBUTES = ("pk", "sk")
_INTEGER = re.compile(r"^-?\d+$")


# -- keys -----------------------------------------------------------------------------------------
def tenant_key(tenant_id: str) -> Key:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "TENANT"}}


def namespace_key(tenant_id: str, namespace_id: str) -> Key:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": f"NS#{namespace_id}"}}


def api_key_key(key_hash: str) -> Key:
    return {"pk": {"S": f"KEY#{key_hash}"}, "sk": {"S": "KEY"}}


def key_ref_key(tenant_id: str, key_id: str) -> Key:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": f"KEY#{key_id}"}}


def identity_provider_key(tenant_id: str) -> Key:
    """The tenant's identity provider: ``TENANT#<tenant>`` / ``IDP``."""
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "IDP"}}


def issuer_key(issuer: str) -> Key:
    """The issuer index: ``ISSUER#<sha256 of the issuer>`` / ``ISSUER`` (one item: one tenant)."""
    return {"pk": {"S": f"ISSUER#{issuer_digest(issuer)}"}, "sk": {"S": "ISSUER"}}


def identity_provider_fields(tenant_id: str, provider: IdentityProvider) -> dict[str, Any]:
    """What both items hold: the tenant, the issuer and the provider as JSON text."""
    return {
        "tenant_id": {"S": tenant_id},
        "issuer": {"S": provider.issuer},
        "body": {"S": provider.to_json()},
    }


def provider_of_issuer_item(issuer: str, item: dict[str, Any] | None) -> tuple[str, IdentityProvider] | None:
    """An issuer index item read back (its issuer compared in full, not only its digest)."""
    if not item or item.get("issuer", {}).get("S") != issuer:
        return None
    return item["tenant_id"]["S"], IdentityProvider.from_json(item["body"]["S"])


# -- item codec -----------------------------------------------------------------------------------
def encode(value: Any) -> dict[str, Any]:
    """A Python value as a DynamoDB attribute value (datetimes as fixed-width UTC ISO-8601 text)."""
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"DynamoDB cannot store {value!r}")
        return {"N": str(value)}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, datetime):
        return {"S": timestamp(value)}
    if isinstance(value, list | tuple):
        return {"L": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"M": {str(k): encode(v) for k, v in value.items() if v is not None}}
    if value is None:
        return {"NULL": True}
    raise TypeError(f"no DynamoDB encoding for {type(value).__name__}")


def decode(attribute: dict[str, Any]) -> Any:
    ((kind, value),) = attribute.items()
    if kind == "N":
        return int(value) if _INTEGER.match(value) else float(value)
    if kind == "L":
        return [decode(v) for v in value]
    if kind == "M":
        return {k: decode(v) for k, v in value.items()}
    if kind == "NULL":
        return None
    if kind in ("S", "BOOL"):
        return value
    raise ValueError(f"unexpected DynamoDB attribute type {kind!r}")


def item_fields(item: dict[str, Any]) -> dict[str, Any]:
    return {k: decode(v) for k, v in item.items() if k not in KEY_ATTRIBUTES}


# -- requests -------------------------------------------------------------------------------------
def get_request(table_name: str, key: Key) -> dict[str, Any]:
    return {"TableName": table_name, "Key": key, "ConsistentRead": True}


def touch_request(
    table_name: str, key_hash: str, at: datetime, interval: timedelta = TOUCH_INTERVAL
) -> dict[str, Any]:
    """Set ``last_used_at`` of an existing key unless it was set less than ``interval`` ago."""
    return {
        "TableName": table_name,
        "Key": api_key_key(key_hash),
        "ConditionExpression": (
            "attribute_exists(#pk) AND (attribute_not_exists(#last_used_at) OR #last_used_at < :stale_before)"
        ),
        "UpdateExpression": "SET #last_used_at = :at",
        "ExpressionAttributeNames": {"#pk": "pk", "#last_used_at": "last_used_at"},
        "ExpressionAttributeValues": {
            ":at": {"S": timestamp(at)},
            ":stale_before": {"S": touch_cutoff(at, interval)},
        },
    }
