"""The least-privilege checks on their own, without a run: what makes a grant used, too wide or
allowed, what a resource policy grants a role, and which service deliveries the template's queue
policies let through (on the translated template, with one fault injected at a time)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.deploy.translated import ROOT, StandInStack, translate
from tests.rehearsal import faults
from tests.rehearsal.cloudformation import AwsCall, FunctionSpec
from tests.rehearsal.deliveries import refused
from tests.rehearsal.grants import resource_grants, role_grants, unused

pytestmark = pytest.mark.unit
TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/t"
LIMITS = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["LIMIT#*"]}}


@pytest.fixture(scope="module")
def translated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return translate(ROOT / "template.yaml", tmp_path_factory.mktemp("sam") / "translated.json")


def role(*statements: dict[str, Any], managed: tuple[str, ...] = ()) -> FunctionSpec:
    return FunctionSpec("F", "app.h", [], {}, list(statements), 30, 1024, "Active", list(managed))


def statement(sid: str, action: Any, resource: Any = TABLE, **extra: Any) -> dict[str, Any]:
    return {"Sid": sid, "Effect": "Allow", "Action": action, "Resource": resource, **extra}


def call(action: str, resource: str = TABLE, pk: str | None = None) -> AwsCall:
    return AwsCall("F", action, resource, (("dynamodb:LeadingKeys", pk),) if pk else ())


def test_a_grant_is_used_only_by_a_call_its_own_statement_allows() -> None:
    spec = role(
        statement("FairShare", ["dynamodb:UpdateItem", "dynamodb:GetItem"], Condition=LIMITS),
        statement("Elsewhere", "dynamodb:UpdateItem", f"{TABLE}-other"),  # the same action, another table
    )
    calls = [call("dynamodb:UpdateItem", pk="LIMIT#acme")]
    assert unused(role_grants(spec), calls) == [
        "F: dynamodb:GetItem (role FairShare) is never used",
        "F: dynamodb:UpdateItem (role Elsewhere) is never used",
    ]
    # a call outside the statement's condition (another key family) does not use it
    other = [call("dynamodb:UpdateItem", pk="TENANT#acme"), call("dynamodb:GetItem", pk="LIMIT#acme")]
    assert "F: dynamodb:UpdateItem (role FairShare) is never used" in unused(role_grants(spec), other)


def test_a_used_grant_on_every_resource_is_too_wide_but_rerank() -> None:
    spec = role(statement("Poll", "sqs:ReceiveMessage", "*"), statement("Rerank", "bedrock:Rerank", "*"))
    calls = [call("sqs:ReceiveMessage", "arn:aws:sqs:us-east-1:1:q"), call("bedrock:Rerank", "*")]
    assert unused(role_grants(spec), calls) == [
        "F: sqs:ReceiveMessage (role Poll) is granted on every resource"
    ]


def test_the_allow_list_names_an_action_or_one_statements_action() -> None:
    spec = role(
        statement("OpenSearchRead", "es:ESHttpPut", "arn:aws:es:us-east-1:1:domain/d/*"),
        statement("Other", "es:ESHttpPut", "arn:aws:es:us-east-1:1:domain/d/*"),
        managed=("arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",),
    )
    # logs: allowed by action; PUT allowed for the OpenSearchRead statement only
    assert unused(role_grants(spec), []) == ["F: es:ESHttpPut (role Other) is never used"]


def test_a_wildcard_action_or_an_unknown_managed_policy_cannot_be_shown_used() -> None:
    with pytest.raises(AssertionError, match="wildcard"):
        role_grants(role(statement("All", "dynamodb:*")))
    with pytest.raises(AssertionError, match="not in the rehearsal's MANAGED"):
        role_grants(role(managed=("arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess",)))


def test_a_resource_policy_grants_the_roles_it_names_every_action_it_lists() -> None:
    domain = "arn:aws:es:us-east-1:1:domain/d/*"
    policy = {"Statement": [{"Sid": "Everyone", "Effect": "Allow", "Action": "es:ESHttp*", "Resource": domain,
                             "Principal": {"AWS": ["arn:role/search", "arn:role/stranger"]}}]}  # fmt: skip
    grants = resource_grants("domain access policy", policy, {"arn:role/search": "F"})
    assert {g.function for g in grants} == {"F"}  # a principal that is no function of ours: not ours
    used = [AwsCall("F", f"es:ESHttp{m}", "arn:aws:es:us-east-1:1:domain/d/i") for m in ("Get", "Post")]
    assert unused(grants, used) == [
        f"F: es:ESHttp{m} (domain access policy Everyone) is never used"
        for m in ("Delete", "Head", "Patch", "Put")
    ]


def test_every_service_delivery_of_the_template_is_let_through_by_its_queue_policy(
    translated: dict[str, Any],
) -> None:
    assert refused(StandInStack(translated, {})) == []


@pytest.mark.parametrize(
    ("fault", "named"),
    [
        (faults.dead_letters_dropped, "WebhookEventsRule dead-letter queue"),
        (lambda t: _without(t, "WebhookDeliveryQueuePolicy"), "WebhookEventsRule target"),
        (lambda t: _without(t, "IngestQueuePolicy"), "DocumentsBucket"),
        (lambda t: _any_rule(t, "WebhookDeliveryDeadLetterQueuePolicy"), "dead-letter queue"),
    ],
)
def test_a_delivery_without_its_queue_policy_is_refused(
    translated: dict[str, Any], fault: Any, named: str
) -> None:
    lines = refused(StandInStack(fault(translated), {}))
    assert lines and all(named in line for line in lines), lines


def _without(template: dict[str, Any], logical: str) -> dict[str, Any]:
    faulty = copy.deepcopy(template)
    del faulty["Resources"][logical]
    return faulty


def _any_rule(template: dict[str, Any], logical: str) -> dict[str, Any]:
    """The queue policy without its ``aws:SourceArn`` condition: any rule of any account could send."""
    faulty = copy.deepcopy(template)
    for st in faulty["Resources"][logical]["Properties"]["PolicyDocument"]["Statement"]:
        st.pop("Condition", None)
    return faulty
