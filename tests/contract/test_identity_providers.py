"""Tenant identity providers in the tenant registry and the authorizer's lookup, on SQLite and
DynamoDB (moto server): an issuer belongs to one tenant, replacing or deleting a provider leaves no
index entry of an issuer the tenant no longer has, and the lookup reads exactly what the registry wrote.
"""

from __future__ import annotations

import pytest

from ragline import errors
from ragline.domain.identity import IdentityProvider
from ragline.domain.keys import KeyGrant
from tests.contract.test_api_key_lookup import Store, store, tenants_table  # noqa: F401  (fixtures)
from tests.contract.tenant_registry_contract import api_key

pytestmark = pytest.mark.contract
JWK = {"kty": "RSA", "kid": "k1", "n": "sXch", "e": "AQAB"}


def provider(issuer: str, **kw: object) -> IdentityProvider:
    return IdentityProvider(issuer=issuer, audiences=("app",), jwks=(JWK,), **kw)  # type: ignore[arg-type]


def test_a_provider_is_stored_read_and_found_by_its_issuer(store: Store) -> None:
    idp = provider("https://idp.acme.test/", user_claim="email", groups_claim="cognito:groups",
                   algorithms=("RS256", "ES256"), namespaces=("docs",), max_lifetime=3600, leeway=5)  # fmt: skip
    store.registry.put_identity_provider("acme", idp)
    assert store.registry.get_identity_provider("acme") == idp
    assert store.registry.find_identity_provider("https://idp.acme.test/") == ("acme", idp)
    assert store.lookup.find_identity_provider("https://idp.acme.test/") == ("acme", idp)
    # the issuer exactly: another spelling of it is another issuer
    assert store.lookup.find_identity_provider("https://idp.acme.test") is None
    assert store.registry.get_identity_provider("globex") is None


def test_an_issuer_belongs_to_one_tenant(store: Store) -> None:
    store.registry.put_identity_provider("acme", provider("https://idp.shared.test/"))
    with pytest.raises(errors.Conflict):
        store.registry.put_identity_provider("globex", provider("https://idp.shared.test/"))
    assert store.lookup.find_identity_provider("https://idp.shared.test/") == (
        "acme", provider("https://idp.shared.test/"),
    )  # fmt: skip
    assert store.registry.get_identity_provider("globex") is None


def test_replacing_a_provider_forgets_its_old_issuer(store: Store) -> None:
    store.registry.put_identity_provider("acme", provider("https://old.acme.test/"))
    store.registry.put_identity_provider("acme", provider("https://new.acme.test/", scopes=("search",)))
    assert store.lookup.find_identity_provider("https://old.acme.test/") is None
    assert store.lookup.find_identity_provider("https://new.acme.test/") == (
        "acme", provider("https://new.acme.test/", scopes=("search",)),
    )  # fmt: skip
    # the old issuer is free for another tenant now
    store.registry.put_identity_provider("globex", provider("https://old.acme.test/"))
    assert store.lookup.find_identity_provider("https://old.acme.test/") is not None


def test_deleting_and_purging_remove_the_provider_and_its_issuer(store: Store) -> None:
    store.registry.put_identity_provider("acme", provider("https://idp.acme.test/"))
    assert store.registry.delete_identity_provider("acme") is True
    assert store.registry.delete_identity_provider("acme") is False
    assert store.lookup.find_identity_provider("https://idp.acme.test/") is None
    store.registry.put_identity_provider("acme", provider("https://idp.acme.test/"))
    store.registry.purge_tenant("acme")
    assert store.registry.get_identity_provider("acme") is None
    assert store.lookup.find_identity_provider("https://idp.acme.test/") is None


def test_a_keys_right_to_assert_a_user_is_stored_and_read(store: Store) -> None:
    asserting = api_key("acme", "key_1", may_assert_user=True)
    requiring = api_key("acme", "key_2", may_assert_user=True, requires_user=True)
    for record in (asserting, requiring):
        store.registry.put_api_key(record)
    assert store.lookup.find_grant(asserting.key_hash) == KeyGrant(
        tenant_id="acme", key_id="key_1", scopes=frozenset({"chat", "search"}), may_assert_user=True
    )
    grant = store.lookup.find_grant(requiring.key_hash)
    assert grant is not None and grant.may_assert_user and grant.requires_user
    found = store.registry.find_api_key(requiring.key_hash)
    assert found is not None and (found.may_assert_user, found.requires_user) == (True, True)
