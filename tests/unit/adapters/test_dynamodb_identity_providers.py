"""The identity provider items' requests as plain dicts: the index item is claimed only for no tenant
or this one, the provider item changes only from the issuer read before, and a changed issuer's old
index item goes in the same transaction."""

from __future__ import annotations

import pytest

from ragline.adapters.aws.identity_providers import delete_provider_request, put_provider_request
from ragline.domain.identity import IdentityProvider, issuer_digest

pytestmark = pytest.mark.unit
NEW = IdentityProvider(issuer="https://new.test/", audiences=("app",), jwks_uri="https://new.test/jwks")
MINE = {":tenant": {"S": "acme"}}


def test_a_first_provider_claims_its_issuer_for_the_tenant() -> None:
    provider, index = put_provider_request("T", "acme", NEW, previous=None)["TransactItems"]
    assert provider["Put"]["Item"]["pk"] == {"S": "TENANT#acme"} and provider["Put"]["Item"]["sk"] == {
        "S": "IDP"
    }
    assert provider["Put"]["ConditionExpression"] == "attribute_not_exists(pk)"
    assert index["Put"]["Item"]["pk"] == {"S": f"ISSUER#{issuer_digest('https://new.test/')}"}
    assert index["Put"]["Item"]["tenant_id"] == {"S": "acme"}
    assert index["Put"]["Item"]["issuer"] == {"S": "https://new.test/"}
    assert index["Put"]["ConditionExpression"] == "attribute_not_exists(pk) OR tenant_id = :tenant"
    assert index["Put"]["ExpressionAttributeValues"] == MINE


def test_a_changed_issuer_releases_the_old_one_in_the_same_transaction() -> None:
    provider, _, release = put_provider_request("T", "acme", NEW, previous="https://old.test/")[
        "TransactItems"
    ]
    assert provider["Put"]["ConditionExpression"] == "issuer = :old"
    assert provider["Put"]["ExpressionAttributeValues"] == {":old": {"S": "https://old.test/"}}
    assert release["Delete"]["Key"]["pk"] == {"S": f"ISSUER#{issuer_digest('https://old.test/')}"}
    assert release["Delete"]["ExpressionAttributeValues"] == MINE
    # the same issuer again: nothing to release
    assert len(put_provider_request("T", "acme", NEW, previous="https://new.test/")["TransactItems"]) == 2


def test_deleting_removes_both_items_only_while_they_are_the_tenants() -> None:
    provider, index = delete_provider_request("T", "acme", "https://old.test/")["TransactItems"]
    assert provider["Delete"]["ConditionExpression"] == "issuer = :old"
    assert index["Delete"]["ConditionExpression"] == "attribute_not_exists(pk) OR tenant_id = :tenant"
