"""Issue 25 #3: issuing a key never widens — the rule, and the keys service that applies it.

The oracle is independent of the rule's wording: a key's *reach* is the set of (scope, namespace)
pairs it may use, where a key without an allow-list also reaches every namespace created later
(``FUTURE``). A request is non-widening exactly when its reach lies inside the issuer's.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline import errors
from ragline.config import Settings
from ragline.domain.api import NewKey
from ragline.domain.authority import Grant, may_change_tenant_wide, may_issue, widening
from ragline.domain.tenancy import ALL_SCOPES
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.unit
NAMESPACES = ("docs", "support", "private")
FUTURE = "<a namespace created later>"

scopes = st.frozensets(st.sampled_from(ALL_SCOPES), min_size=1)
allow_lists = st.frozensets(st.sampled_from(NAMESPACES))
grants = st.builds(Grant, scopes, allow_lists)


def reach(key: Grant | Principal) -> set[tuple[str, str]]:
    spaces = key.namespaces or {*NAMESPACES, FUTURE}
    return {(s, n) for s in key.scopes for n in spaces}


@given(issuer=grants, requested=grants)
def test_the_rule_grants_exactly_the_requests_that_do_not_widen(issuer: Grant, requested: Grant) -> None:
    assert may_issue(issuer, requested) == (reach(requested) <= reach(issuer))


@given(issuer=grants, requested=grants)
def test_a_refusal_names_what_would_widen(issuer: Grant, requested: Grant) -> None:
    refused = widening(issuer, requested)
    if refused is None:
        return
    assert refused.scopes == requested.scopes - issuer.scopes
    assert refused.namespaces <= requested.namespaces - issuer.namespaces
    assert refused.every_namespace == (bool(issuer.namespaces) and not requested.namespaces)
    assert refused.scopes or refused.namespaces or refused.every_namespace


@given(key=grants)
def test_only_an_unrestricted_admin_makes_tenant_wide_changes(key: Grant) -> None:
    assert may_change_tenant_wide(key) == ("admin" in key.scopes and not key.namespaces)


@pytest.fixture(scope="module")
def container(tmp_path_factory: pytest.TempPathFactory) -> Container:
    c = Container(
        Settings(home=tmp_path_factory.mktemp("issuance")), embedder=BowEmbedder(), tokenizer=BowEmbedder()
    )
    c.tenancy.create_tenant("acme")
    for ns in NAMESPACES:
        c.registry.create_namespace(new_namespace("acme", ns))
    return c


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(issuer=st.builds(Grant, scopes.map(lambda s: s | {"admin"}), allow_lists), requested=grants)
def test_the_keys_service_never_issues_a_wider_key_and_refuses_no_narrower_one(
    container: Container, issuer: Grant, requested: Grant
) -> None:
    # Given an admin key of any reach and any requested key
    principal = Principal(tenant_id="acme", scopes=issuer.scopes, namespaces=issuer.namespaces)
    body = NewKey(name="p", scopes=sorted(requested.scopes), namespaces=sorted(requested.namespaces))
    before = len(container.tenancy.list_keys("acme"))
    try:
        made = container.tenancy.issue_key(principal, body)
    except (errors.Forbidden, errors.NamespaceNotFound):
        # Then a refusal is for a widening request only, and nothing was stored
        assert not reach(requested) <= reach(issuer)
        assert len(container.tenancy.list_keys("acme")) == before
        return
    # Then a granted key authenticates to a reach inside the issuer's
    granted = container.tenancy.authenticate(f"Bearer {made.api_key}")
    assert reach(granted) <= reach(issuer)
    assert (granted.scopes, granted.namespaces) == (requested.scopes, requested.namespaces)
