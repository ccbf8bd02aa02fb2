"""The namespace item's two partial writes (pure request builders, unit-tested as dicts): a settings
update that never touches the metadata schema, and the schema's atomic growth.

The schema lives in the namespace item (``settings.metadata_schema``, a map of key → type) and only
:func:`extend_schema_request` writes it, so a read-modify-write of the other settings (a PATCH, the
embedding claim) can never drop a key a concurrent document typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragline.adapters.aws.tenant_items import encode, namespace_key
from ragline.domain.attributes import MAX_SCHEMA_KEYS
from ragline.domain.tenancy import Namespace


def update_namespace_request(table_name: str, namespace: Namespace) -> dict[str, Any]:
    """``UpdateItem`` of every field of an existing namespace *but* its metadata schema, which only
    :func:`extend_schema_request` writes (a read-modify-write of the settings must not drop a key a
    concurrent document added). A field now ``None`` is removed (absent, as ``model_to_item`` writes it)."""
    names: dict[str, str] = {"#pk": "pk", "#settings": "settings"}
    values: dict[str, Any] = {}
    sets: list[str] = []
    removes: list[str] = []

    def assign(path: str, field: str, value: Any, n: int) -> None:
        names[f"#f{n}"] = field
        if value is None:
            removes.append(f"{path}#f{n}")
        else:
            values[f":f{n}"] = encode(value)
            sets.append(f"{path}#f{n} = :f{n}")

    fields = namespace.model_dump()
    settings = fields.pop("settings")
    settings.pop("metadata_schema")
    for n, (field, value) in enumerate([*fields.items(), *settings.items()]):
        assign("#settings." if n >= len(fields) else "", field, value, n)
    expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
    return {
        "TableName": table_name,
        "Key": namespace_key(namespace.tenant_id, namespace.namespace_id),
        "UpdateExpression": expression,
        "ConditionExpression": "attribute_exists(#pk)",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
        "ReturnValues": "ALL_NEW",
    }


PER_KEY_WRITE = 25
"""New keys written one condition each (a document's few); more are one compare-and-set of the whole
map (a declaration): DynamoDB bounds an expression to 4 KB."""


def extend_schema_request(
    table_name: str,
    tenant_id: str,
    namespace_id: str,
    new: Mapping[str, str],
    *,
    stored: Mapping[str, str] | None,
) -> dict[str, Any]:
    """``UpdateItem`` adding ``new`` key types to a namespace's metadata schema ``stored`` (as read),
    all or none, never past :data:`~ragline.domain.attributes.MAX_SCHEMA_KEYS` keys.

    A few keys: each is set only where it is absent or already of that type, so documents typing
    different keys at once do not conflict. Many keys, or a namespace with no schema map yet (an
    item written before it existed): the whole map is set only while it is still the one read."""
    names: dict[str, str] = {"#pk": "pk", "#s": "settings", "#m": "metadata_schema"}
    request: dict[str, Any] = {
        "TableName": table_name,
        "Key": namespace_key(tenant_id, namespace_id),
        "ExpressionAttributeNames": names,
        "ReturnValues": "ALL_NEW",
    }
    if stored is None or len(new) > PER_KEY_WRITE:
        unchanged = "attribute_not_exists(#s.#m)" if stored is None else "#s.#m = :stored"
        values = {":whole": encode({**(stored or {}), **new})}
        if stored is not None:
            values[":stored"] = encode(dict(stored))
        return request | {
            "UpdateExpression": "SET #s.#m = :whole",
            "ConditionExpression": f"attribute_exists(#pk) AND {unchanged}",
            "ExpressionAttributeValues": values,
        }
    values = {":room": {"N": str(MAX_SCHEMA_KEYS - len(new))}}
    sets, conditions = [], ["attribute_exists(#pk)", "size(#s.#m) <= :room"]
    for n, (key, kind) in enumerate(new.items()):
        names[f"#k{n}"] = key
        values[f":t{n}"] = {"S": kind}
        sets.append(f"#s.#m.#k{n} = :t{n}")
        conditions.append(f"(attribute_not_exists(#s.#m.#k{n}) OR #s.#m.#k{n} = :t{n})")
    return request | {
        "UpdateExpression": "SET " + ", ".join(sets),
        "ConditionExpression": " AND ".join(conditions),
        "ExpressionAttributeValues": values,
    }
