"""The rehearsal's view of OpenSearch Serverless: what a signed request to a collection needs — IAM's
``aoss:APIAccessAll`` on the collection, and the data access policy's permission on each index it names
(AWS's table, "Supported operations and plugins in Amazon OpenSearch Serverless") — and whether the
template's data access policy grants it to the calling function's role."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.rehearsal.cloudformation import ACCOUNT, PARTITION, REGION, AwsCall

COLLECTION_ID = "rh0collection0id"
COLLECTION_ARN = f"arn:{PARTITION}:aoss:{REGION}:{ACCOUNT}:collection/{COLLECTION_ID}"


@dataclass(frozen=True)
class DataAccess:
    """One permission a request needs from the collection's data access policy."""

    function: str
    permission: str
    resource: str
    """``index/<collection name>/<index>``."""


class UnmappedRequest(KeyError):
    """A request the mapper cannot place in AWS's table: a new operation must be mapped (and be one
    AOSS supports) before the rehearsal can vouch for the policy that allows it."""


_ON_INDEX = {
    ("PUT", ""): "aoss:CreateIndex",
    ("HEAD", ""): "aoss:DescribeIndex",
    ("GET", ""): "aoss:DescribeIndex",
    ("GET", "_mapping"): "aoss:DescribeIndex",
    ("GET", "_settings"): "aoss:DescribeIndex",
    ("PUT", "_mapping"): "aoss:UpdateIndex",
    ("PUT", "_settings"): "aoss:UpdateIndex",
    ("DELETE", ""): "aoss:DeleteIndex",
    ("GET", "_search"): "aoss:ReadDocument",
    ("POST", "_search"): "aoss:ReadDocument",
    ("GET", "_analyze"): "aoss:ReadDocument",  # AWS's table lists GET only: a POST stays unmapped
    ("GET", "_count"): "aoss:ReadDocument",
    ("POST", "_count"): "aoss:ReadDocument",
    ("GET", "_msearch"): "aoss:ReadDocument",
    ("POST", "_msearch"): "aoss:ReadDocument",
    ("GET", "_mget"): "aoss:ReadDocument",
    ("POST", "_mget"): "aoss:ReadDocument",
    ("GET", "_doc"): "aoss:ReadDocument",
    ("PUT", "_doc"): "aoss:WriteDocument",
    ("POST", "_doc"): "aoss:WriteDocument",
    ("DELETE", "_doc"): "aoss:WriteDocument",
    ("POST", "_update"): "aoss:WriteDocument",
    ("POST", "_bulk"): "aoss:WriteDocument",
}
"""(method, the operation after ``<index>/``) → the permission on that index."""
_INDEX_LESS = {
    ("POST", "_bulk"): "aoss:WriteDocument",
    ("POST", "_msearch"): "aoss:ReadDocument",
    ("GET", "_msearch"): "aoss:ReadDocument",
    ("POST", "_mget"): "aoss:ReadDocument",
    ("GET", "_mget"): "aoss:ReadDocument",
}
"""Operations whose indexes are named in the body, each needing the permission on each."""


def permissions(method: str, path: str, body: bytes | None) -> list[tuple[str, str]]:
    """(permission, index) for every index the request touches; ``UnmappedRequest`` for anything else
    (``_refresh``, ``_delete_by_query``, ``_cluster``… are not in the table: never a silent pass)."""
    parts = [unquote(p) for p in urlsplit(path).path.strip("/").split("/") if p]
    if parts and parts[0].startswith("_"):
        permission = _INDEX_LESS.get((method, parts[0]))
        if permission is None or len(parts) != 1:
            raise UnmappedRequest(f"{method} {path}")
        return [(permission, index) for index in sorted(_body_indexes(parts[0], body))]
    if not parts:
        raise UnmappedRequest(f"{method} {path}")
    operation = parts[1] if len(parts) > 1 else ""
    permission = _ON_INDEX.get((method, operation))
    if permission is None:
        raise UnmappedRequest(f"{method} {path}")
    named = _body_indexes(operation, body) if operation in ("_bulk", "_mget", "_msearch") else set()
    return [(permission, index) for index in sorted(set(parts[0].split(",")) | named)]


def _body_indexes(operation: str, body: bytes | None) -> set[str]:
    text = (body or b"").decode()
    if operation == "_mget":
        return {doc["_index"] for doc in json.loads(text or "{}").get("docs", []) if "_index" in doc}
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    if operation == "_msearch":  # header, body, header, body…
        return {str(h["index"]) for h in lines[0::2] if "index" in h}
    found = set()  # _bulk: an action line (then a source line, except for delete)
    i = 0
    while i < len(lines):
        ((action, meta),) = lines[i].items()
        if "_index" in meta:
            found.add(meta["_index"])
        i += 1 if action == "delete" else 2
    return found


def collection_calls(
    function: str, method: str, path: str, body: bytes | None, collection: str
) -> tuple[list[AwsCall], list[DataAccess]]:
    """What one signed request to collection ``collection`` (its name) needs: IAM, then data access."""
    iam = [AwsCall(function, "aoss:APIAccessAll", COLLECTION_ARN)]
    data = [
        DataAccess(function, p, f"index/{collection}/{index}") for p, index in permissions(method, path, body)
    ]
    return iam, data


class DataAccessPolicy:
    """A resolved ``AWS::OpenSearchServerless::AccessPolicy`` of type ``data`` (its JSON document)."""

    def __init__(self, document: str) -> None:
        self.entries: list[dict[str, Any]] = json.loads(document)

    @property
    def principals(self) -> set[str]:
        return {p for e in self.entries for p in e["Principal"]}

    def allows(self, principal: str, permission: str, resource: str) -> bool:
        """Whether a rule of an entry naming ``principal`` grants ``permission`` on ``resource`` (AOSS's
        patterns: ``*`` anywhere, ``aoss:*`` for every permission)."""
        kind = resource.split("/", 1)[0]
        for entry in self.entries:
            if principal not in entry["Principal"]:
                continue
            for rule in entry["Rules"]:
                if rule["ResourceType"] != kind:
                    continue
                if any(fnmatch.fnmatchcase(resource, r) for r in rule["Resource"]) and any(
                    fnmatch.fnmatchcase(permission, p) for p in rule["Permission"]
                ):
                    return True
        return False
