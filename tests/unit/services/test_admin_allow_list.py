"""Issue 12 #4: an admin key limited to some namespaces stays inside its list."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline import errors
from ragline.config import Settings
from ragline.domain.api import NewKey
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.unit


@pytest.fixture
def c(tmp_path: Path) -> Container:
    container = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    container.tenancy.create_tenant("acme")
    for ns in ("docs", "support", "private"):
        container.registry.create_namespace(new_namespace("acme", ns))
    return container


def admin(namespaces: tuple[str, ...] = ()) -> Principal:
    return Principal(
        tenant_id="acme", scopes=frozenset({"admin", "search"}), namespaces=frozenset(namespaces)
    )


def test_a_limited_admin_cannot_mint_an_unrestricted_key(c: Container) -> None:
    with pytest.raises(errors.Forbidden):
        c.tenancy.issue_key(admin(("docs",)), NewKey(name="x", scopes=["search"]))
    assert c.tenancy.list_keys("acme") == []


@pytest.mark.parametrize("outside", ["private", "ghost"])
def test_a_limited_admin_cannot_mint_keys_outside_its_list(c: Container, outside: str) -> None:
    with pytest.raises(errors.NamespaceNotFound):
        c.tenancy.issue_key(
            admin(("docs",)), NewKey(name="x", scopes=["search"], namespaces=["docs", outside])
        )
    assert c.tenancy.list_keys("acme") == []


def test_a_limited_admin_mints_keys_for_a_subset_of_its_list(c: Container) -> None:
    made = c.tenancy.issue_key(
        admin(("docs", "support")), NewKey(name="x", scopes=["search"], namespaces=["docs"])
    )
    assert made.namespaces == ["docs"]


def test_a_limited_admin_lists_and_revokes_only_keys_within_its_reach(c: Container) -> None:
    _, everything = c.tenancy.create_key("acme", scopes=["search"])
    _, private = c.tenancy.create_key("acme", scopes=["search"], namespaces=["private"])
    _, mixed = c.tenancy.create_key("acme", scopes=["search"], namespaces=["docs", "private"])
    _, own = c.tenancy.create_key("acme", scopes=["search"], namespaces=["docs"])
    limited = admin(("docs", "support"))
    assert [k.key_id for k in c.tenancy.keys(limited).keys] == [own.key_id]
    for key_id in (everything.key_id, private.key_id, mixed.key_id):
        with pytest.raises(errors.NotFound):
            c.tenancy.revoke(limited, key_id)
    assert all(k.active for k in c.tenancy.list_keys("acme"))
    assert c.tenancy.revoke(limited, own.key_id).revoked is True
    assert len(c.tenancy.keys(admin()).keys) == 4  # an unrestricted admin reaches every key


def test_tenant_wide_usage_needs_an_unrestricted_admin(c: Container) -> None:
    with pytest.raises(errors.Forbidden):
        c.metering.usage_report(admin(("docs",)))
    assert c.metering.usage_report(admin()).runs == 0
