"""The scoping docs/deploy.md ("Permissions") promises, read off the translated template: what the
rehearsal's "every grant used" check cannot see, because a statement wider than its calls is still
used by them (documents' object writes, the domain's access policy, the queue pollers' reach)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.modes import READERS, WRITERS
from tests.deploy.translated import StandInStack
from tests.rehearsal.cloudformation import listed

pytestmark = pytest.mark.deploy
BUCKET = "arn:aws:s3:::DocumentsBucket"
DOMAIN = "arn:aws:es:us-east-1:123456789012:domain/rl-dev-0f1e2d3c"


def test_documents_writes_objects_only_as_sidecars_and_kept_originals(translated: dict[str, Any]) -> None:
    spec = StandInStack(translated, {}).function("DocumentsFunction")
    assert spec.allows("s3:PutObject", f"{BUCKET}/acme/docs/guide.pdf.metadata.json")
    assert spec.allows("s3:PutObject", f"{BUCKET}/acme/docs/.ragline/originals/ab12/v1")
    assert not spec.allows("s3:PutObject", f"{BUCKET}/acme/docs/guide.pdf")  # never a tenant's document
    originals = (("s3:prefix", "acme/docs/.ragline/originals/ab12/"),)
    assert spec.allows("s3:ListBucket", BUCKET, originals)
    assert not spec.allows("s3:ListBucket", BUCKET, (("s3:prefix", "acme/"),))
    assert not spec.allows("s3:ListBucket", BUCKET)  # a listing of the whole bucket


def test_the_domain_policy_lets_readers_in_without_delete_and_names_only_the_store_roles(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, {})
    policy = stack.resolve(translated["Resources"]["OpenSearchDomain"]["Properties"]["AccessPolicies"])
    granted: dict[str, set[str]] = {}
    for st in policy["Statement"]:
        actions = listed(st["Action"])
        assert all("*" not in a for a in actions), actions
        for role in st["Principal"]["AWS"]:
            granted.setdefault(role.removesuffix("Role.Arn"), set()).update(actions)
    assert set(granted) == set(READERS) | set(WRITERS)
    for fn in READERS:
        assert "es:ESHttpDelete" not in granted[fn], fn
        assert not stack.function(fn).allows("es:ESHttpDelete", f"{DOMAIN}/index"), fn
    for fn in WRITERS:
        assert "es:ESHttpDelete" in granted[fn], fn


@pytest.mark.parametrize(
    ("fn", "queue"),
    [
        ("IngestionFunction", "IngestQueue"),
        ("WebhookDeliveryFunction", "WebhookDeliveryQueue"),
        ("ChatFunction", "RunsQueue"),
    ],
)
def test_an_sqs_triggered_function_polls_its_own_queue_only(
    translated: dict[str, Any], fn: str, queue: str
) -> None:
    spec = StandInStack(translated, {}).function(fn)
    assert not any("SQSQueueExecutionRole" in arn for arn in spec.managed_policies), spec.managed_policies
    for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"):
        assert spec.allows(action, f"{queue}.Arn"), action
        assert not spec.allows(action, "arn:aws:sqs:us-east-1:123456789012:someone-elses"), action
