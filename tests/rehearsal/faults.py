"""Faults the rehearsal's least-privilege checks must catch, injected into a copy of the translated
template after a run: the same checks, over the same recorded calls, must then fail. Each returns the
faulty template (the original is left alone)."""

from __future__ import annotations

import copy
from typing import Any


def readers_may_delete(template: dict[str, Any]) -> dict[str, Any]:
    """The domain's access policy grants every HTTP method to the read-only roles (as it once did)."""
    faulty = copy.deepcopy(template)
    for statement in faulty["Resources"]["OpenSearchDomain"]["Properties"]["AccessPolicies"]["Statement"]:
        if statement["Sid"] == "OpenSearchRead":
            statement["Action"] = "es:ESHttp*"
    return faulty


def an_unused_grant(template: dict[str, Any]) -> dict[str, Any]:
    """Search's role may also Scan the tenants table (as SAM's DynamoDBReadPolicy let it)."""
    faulty = copy.deepcopy(template)
    scan = {"Sid": "Extra", "Effect": "Allow", "Action": "dynamodb:Scan",
            "Resource": {"Fn::GetAtt": ["TenantsTable", "Arn"]}}  # fmt: skip
    policies = faulty["Resources"]["SearchFunctionRole"]["Properties"]["Policies"]
    policies.append({"PolicyName": "extra", "PolicyDocument": {"Statement": [scan]}})
    return faulty


def dead_letters_dropped(template: dict[str, Any]) -> dict[str, Any]:
    """The EventBridge rule's dead-letter queue without the policy that lets EventBridge write to it."""
    faulty = copy.deepcopy(template)
    del faulty["Resources"]["WebhookDeliveryDeadLetterQueuePolicy"]
    return faulty
