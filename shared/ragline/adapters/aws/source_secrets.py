"""Source credentials in AWS Secrets Manager: one secret per source, named
``<prefix>/<tenant>/<namespace>/<source>`` (the prefix is the stack's, so the functions' IAM grants
reach exactly these), its value the credentials' JSON. A deletion skips the recovery window: a removed
source's token must stop existing now, not in 30 days."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragline import errors
from ragline.adapters.aws.errors import AlreadyExists, Missing, call, missing_or_exists
from ragline.adapters.boto import LazyClient

NOT_FOUND = "ResourceNotFoundException"
EXISTS = "ResourceExistsException"


_condition = missing_or_exists(NOT_FOUND, EXISTS)


class SecretsManagerSourceSecrets:
    def __init__(self, prefix: str, *, client: Any = None, region: str | None = None) -> None:
        self.prefix = prefix.rstrip("/")
        self._client = LazyClient("secretsmanager", client=client, region=region)

    def _name(self, tenant_id: str, namespace_id: str, source_id: str) -> str:
        return f"{self.prefix}/{tenant_id}/{namespace_id}/{source_id}"

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return call(self._client(), action, request, _condition, service="SecretsManager")

    def put(self, tenant_id: str, namespace_id: str, source_id: str, values: Mapping[str, str]) -> None:
        name = self._name(tenant_id, namespace_id, source_id)
        text = json.dumps(dict(values))
        try:
            self._send("put_secret_value", {"SecretId": name, "SecretString": text})
        except Missing:
            try:
                self._send(
                    "create_secret",
                    {
                        "Name": name,
                        "SecretString": text,
                        "Tags": [{"Key": "ragline:tenant", "Value": tenant_id}],
                    },
                )
            except AlreadyExists:  # created meanwhile by a concurrent put: this one's value wins
                self._send("put_secret_value", {"SecretId": name, "SecretString": text})

    def get(self, tenant_id: str, namespace_id: str, source_id: str) -> dict[str, str]:
        try:
            response = self._send(
                "get_secret_value", {"SecretId": self._name(tenant_id, namespace_id, source_id)}
            )
        except Missing:
            raise errors.NotFound("the source has no credentials", source_id=source_id) from None
        value = json.loads(response.get("SecretString") or "{}")
        return {str(k): str(v) for k, v in value.items()}

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None:
        name = self._name(tenant_id, namespace_id, source_id)
        try:
            self._send("delete_secret", {"SecretId": name, "ForceDeleteWithoutRecovery": True})
        except Missing:
            return

    def purge_tenant(self, tenant_id: str) -> int:
        request: dict[str, Any] = {
            "Filters": [{"Key": "name", "Values": [f"{self.prefix}/{tenant_id}/"]}],
            "MaxResults": 100,
        }
        names: list[str] = []
        while True:
            response = self._send("list_secrets", request)
            names += [
                s["Name"]
                for s in response.get("SecretList", [])
                if s["Name"].startswith(f"{self.prefix}/{tenant_id}/")
            ]
            if not response.get("NextToken"):
                break
            request["NextToken"] = response["NextToken"]
        for name in names:
            try:
                self._send("delete_secret", {"SecretId": name, "ForceDeleteWithoutRecovery": True})
            except Missing:
                continue
        return len(names)
