"""The OpenSearch modes the deploy tests resolve the template in, the functions that use the store, and
helpers to read a resolved stack's roles and resources."""

from __future__ import annotations

from typing import Any

from tests.deploy.translated import StandInStack
from tests.rehearsal.cloudformation import listed

SERVERLESS = {"OpenSearchMode": "serverless"}
EXISTING = {
    "OpenSearchEndpoint": "https://search-x.us-east-1.es.amazonaws.com",
    "ExistingOpenSearchDomainArn": "arn:aws:es:us-east-1:123456789012:domain/x",
}
MODES = {"created domain": {}, "existing domain": EXISTING, "serverless": SERVERLESS}
SNAPSTART = (
    "NamespacesFunction",
    "KeysFunction",
    "SearchFunction",
    "HostingSearchFunction",
    "DocumentsFunction",
    "IngestionFunction",
    "WebhookDeliveryFunction",
)
"""The functions the template runs with SnapStart (``SnapStart=true``)."""
READERS = ("SearchFunction", "HostingSearchFunction", "ChatFunction")
WRITERS = ("DocumentsFunction", "IngestionFunction")
STORE_USERS = READERS + WRITERS
FENCES = ("GetItem", "BatchGetItem", "UpdateItem")
"""What the store's writers do to the documents table in aoss mode (its document fences live there):
read, and raise by a conditional update. A tenant's purge (Query, DeleteItem) is the operator CLI's
(``ragline tenants delete``), never a function's."""
SERVERLESS_RESOURCES = (
    "OpenSearchCollection",
    "OpenSearchEncryptionPolicy",
    "OpenSearchNetworkPolicy",
    "OpenSearchDataAccessPolicy",
)
TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/DocumentsTable"
STACK_A = (
    "arn:aws:cloudformation:us-east-1:123456789012:stack/ragline-dev/6f1c2a30-1111-11ef-9a7b-0a1b2c3d4e5f"
)
STACK_B = (
    "arn:aws:cloudformation:us-east-1:123456789012:stack/ragline-dev/b83e9d40-2222-11ef-8c6d-0f9e8d7c6b5a"
)


class TableArnStack(StandInStack):
    """Stand-ins where a table's ``GetAtt Arn`` is the ARN its name gives, as SAM's policy templates
    (``DynamoDBCrudPolicy``) build it: both ways of naming the documents table compare equal."""

    def _attribute(self, logical: str, attr: str) -> str:
        if (
            attr == "Arn"
            and self.template["Resources"].get(logical, {}).get("Type") == "AWS::DynamoDB::Table"
        ):
            return f"arn:aws:dynamodb:us-east-1:123456789012:table/{logical}"
        return super()._attribute(logical, attr)


def functions(translated: dict[str, Any]) -> list[str]:
    """The stack's own functions: every Lambda function but those only CloudFormation invokes (a
    custom resource's, e.g. the one setting API Gateway's account: deploy-time, no alarms, no store)."""
    return sorted(
        k
        for k, r in translated["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function" and k not in custom_resource_functions(translated)
    )


def custom_resource_functions(translated: dict[str, Any]) -> set[str]:
    """The functions some custom resource names as its ``ServiceToken``."""
    tokens = [
        r["Properties"].get("ServiceToken", {})
        for r in translated["Resources"].values()
        if r["Type"].startswith("Custom::") or r["Type"] == "AWS::CloudFormation::CustomResource"
    ]
    return {t["Fn::GetAtt"][0] for t in tokens if isinstance(t, dict) and "Fn::GetAtt" in t}


def actions(stack: StandInStack, fn: str) -> set[str]:
    spec = stack.function(fn)
    found: set[str] = set()
    for st in spec.statements:
        found |= set(listed(st["Action"]))
    return found


def resolved(stack: StandInStack, logical: str) -> dict[str, Any]:
    props: dict[str, Any] = stack.resolve(stack.template["Resources"][logical]["Properties"])
    return props
