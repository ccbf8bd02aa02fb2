"""A stage that can be deployed again and in a fresh account or Region: what ``sam delete`` keeps (the
bucket, the domain, a deleted secret's name) never collides with the next deployment's names, and API
Gateway gets the CloudWatch Logs role its access logging needs before the stage is created."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.deploy.translated import StandInStack

pytestmark = pytest.mark.deploy

STACK_A = (
    "arn:aws:cloudformation:us-east-1:123456789012:stack/ragline-dev/6f1c2a30-1111-11ef-9a7b-0a1b2c3d4e5f"
)
STACK_B = (
    "arn:aws:cloudformation:us-east-1:123456789012:stack/ragline-dev/b83e9d40-2222-11ef-8c6d-0f9e8d7c6b5a"
)
NAME_PROPERTIES = ("BucketName", "DomainName", "Name", "TableName", "RoleName", "QueueName", "TopicName")
LONGEST = {"Stage": "x" * 16, "AWS::Region": "ap-southeast-5"}
"""The longest stage the template allows, in a Region with one of the longest codes."""
OUTLIVES_DELETE = {"AWS::SecretsManager::Secret"}
"""Deleted, but its name stays taken for the 7-30 day recovery window."""


def named_leftovers(template: dict[str, Any]) -> dict[str, str]:
    """Resources that outlive ``sam delete`` (retained, or a secret) and have a name: id → name property."""
    found = {}
    for logical, resource in template["Resources"].items():
        if resource.get("DeletionPolicy") == "Retain" or resource["Type"] in OUTLIVES_DELETE:
            for prop in NAME_PROPERTIES:
                if prop in resource.get("Properties", {}):
                    found[logical] = prop
    return found


def names(translated: dict[str, Any], stack_id: str, **parameters: str) -> dict[str, str]:
    stack = StandInStack(translated, {"AWS::StackId": stack_id, "ChatProvider": "openai", **parameters})
    return {
        logical: stack.resolve(translated["Resources"][logical]["Properties"][prop])
        for logical, prop in named_leftovers(translated).items()
        if stack.exists(logical)
    }


def test_what_sam_delete_leaves_behind_is_named_apart_from_the_next_deployment(
    translated: dict[str, Any],
) -> None:
    # Given the same stage deployed, deleted (bucket and domain retained, the secret recoverable) and
    # deployed again: a new stack id
    first, second = names(translated, STACK_A), names(translated, STACK_B)

    # Then every name that outlives the first stack differs in the second (no "already exists")
    assert {"DocumentsBucket", "OpenSearchDomain", "LlmApiKeySecret"} <= set(first)
    for logical, name in first.items():
        assert name != second[logical], logical
    # while an update of one stack keeps them (a changed name would replace the bucket and domain)
    assert names(translated, STACK_A) == first


def test_unique_names_stay_within_each_services_limits(translated: dict[str, Any]) -> None:
    longest = names(translated, STACK_A, **LONGEST)
    assert re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", longest["DocumentsBucket"]), longest
    assert re.fullmatch(r"[a-z][a-z0-9-]{2,27}", longest["OpenSearchDomain"]), longest
    assert len(longest["LlmApiKeySecret"]) <= 512


def test_the_queue_policy_and_every_role_name_the_bucket_and_domain_actually_created(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, {"AWS::StackId": STACK_B})
    created = names(translated, STACK_B)
    bucket, domain = created["DocumentsBucket"], created["OpenSearchDomain"]
    (queue_statement,) = stack.resolve(translated["Resources"]["IngestQueuePolicy"]["Properties"])[
        "PolicyDocument"
    ]["Statement"]
    assert queue_statement["Condition"]["ArnEquals"]["aws:SourceArn"] == f"arn:aws:s3:::{bucket}"
    domain_arn = f"arn:aws:es:us-east-1:123456789012:domain/{domain}"
    access = stack.resolve(translated["Resources"]["OpenSearchDomain"]["Properties"]["AccessPolicies"])
    assert access["Statement"][0]["Resource"] == f"{domain_arn}/*"
    for fn in (
        "SearchFunction",
        "HostingSearchFunction",
        "ChatFunction",
        "DocumentsFunction",
        "IngestionFunction",
    ):
        assert stack.function(fn).allows("es:ESHttpPost", f"{domain_arn}/idx/_search"), fn


# -- API Gateway's account-level CloudWatch Logs role -------------------------------------------------

PUSH_TO_LOGS = "arn:aws:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"


SETTING = ("ApiGatewayAccountSetting", "ApiGatewayAccountFunction", "ApiGatewayAccountFunctionRole")
"""The custom resource that sets the account's role, and its function and role."""
CREATED = ("ApiGatewayCloudWatchRole", *SETTING, "ApiGatewayAccountFunctionLogGroup")


def test_by_default_the_stack_sets_api_gateways_logs_role_before_creating_the_stage(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, {})
    assert all(stack.exists(logical) for logical in CREATED)
    setting = stack.resolve(translated["Resources"]["ApiGatewayAccountSetting"]["Properties"])
    assert setting["CloudWatchRoleArn"] == "ApiGatewayCloudWatchRole.Arn"
    assert setting["ServiceToken"] == "ApiGatewayAccountFunction.Arn"
    # an answer lost (the function killed) fails the stack in minutes, not CloudFormation's hour
    function = stack.resolve(translated["Resources"]["ApiGatewayAccountFunction"]["Properties"])
    assert function["Timeout"] < int(setting["ServiceTimeout"]) <= 600
    role = stack.resolve(translated["Resources"]["ApiGatewayCloudWatchRole"]["Properties"])
    assert role["ManagedPolicyArns"] == [PUSH_TO_LOGS]
    # The trust policy exactly as AWS documents it for API Gateway's CloudWatch role (no condition)
    assert role["AssumeRolePolicyDocument"]["Statement"] == [
        {"Effect": "Allow", "Principal": {"Service": "apigateway.amazonaws.com"}, "Action": "sts:AssumeRole"}
    ]
    # The stage (which turns access logging on) is created after the account setting names the role
    (stage,) = [r for r, res in translated["Resources"].items() if res["Type"] == "AWS::ApiGateway::Stage"]
    assert "AccessLogSetting" in translated["Resources"][stage]["Properties"]
    assert {"ApiGatewayAccountSetting", "ApiGatewayCloudWatchRole"} <= stack.dependencies(stage)
    # and the setting outlives the stack: other APIs of the account log through it
    for logical in ("ApiGatewayAccountSetting", "ApiGatewayCloudWatchRole"):
        assert translated["Resources"][logical]["DeletionPolicy"] == "Retain", logical
    assert "ApiGatewayAccount" not in translated["Resources"]  # CloudFormation's racing resource is gone


def test_the_function_may_set_the_account_and_pass_only_that_role(translated: dict[str, Any]) -> None:
    stack = StandInStack(translated, {})
    spec = stack.function("ApiGatewayAccountFunction")
    account = "arn:aws:apigateway:us-east-1::/account"
    assert spec.allows("apigateway:PATCH", account)
    assert not spec.allows("apigateway:PATCH", "arn:aws:apigateway:us-east-1::/restapis/x")
    passed = (("iam:PassedToService", "apigateway.amazonaws.com"),)
    assert spec.allows("iam:PassRole", "ApiGatewayCloudWatchRole.Arn", passed)
    assert not spec.allows("iam:PassRole", "arn:aws:iam::123456789012:role/admin", passed)
    assert not spec.allows("iam:PassRole", "ApiGatewayCloudWatchRole.Arn", (("iam:PassedToService", "x"),))


def test_an_account_that_keeps_its_own_logs_role_gets_nothing_created_and_nothing_waits_for_it(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, {"CreateApiGatewayCloudWatchRole": "false"})
    assert not any(stack.exists(logical) for logical in CREATED)
    created = [r for r in translated["Resources"] if stack.exists(r)]
    for logical in created:  # a reference to a resource not created would fail the deployment
        assert not set(CREATED) & stack.dependencies(logical), logical
