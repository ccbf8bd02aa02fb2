"""The TenantRegistry contract: every backend subclasses :class:`TenantRegistryContract`.

Given a ``registry`` over a fresh, empty store, every test here must pass unchanged. Each clause of the
:class:`~ragline.ports.TenantRegistry` docstring has a test, and a property test drives random
operations over several tenants against a reference model, checking after every call that no method
returned or changed another tenant's data.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline import errors
from ragline.domain.attributes import MAX_SCHEMA_KEYS, AttributeType
from ragline.domain.tenancy import ApiKeyRecord, Namespace, NamespaceSettings, Tenant
from ragline.ports import TenantRegistry
from ragline.services.namespaces import new_namespace

AT = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def key_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def api_key(tenant_id: str, key_id: str, secret: str | None = None, **kw: object) -> ApiKeyRecord:
    return ApiKeyRecord(
        key_id=key_id,
        key_hash=key_hash(secret or f"rl_{tenant_id}_{key_id}"),
        tenant_id=tenant_id,
        **kw,  # type: ignore[arg-type]
    )


# -- the isolation property's reference model ------------------------------------------------------
TENANTS = ("a", "b")
NAMESPACES = ("docs", "hr")
KEY_IDS = ("k1", "k2")
SHARED_NAMESPACE, SHARED_KEY_ID = "docs", "k1"
"""Every tenant starts with these, so each call finds the same ids in the other tenants too."""
SECRETS = ("0", "1", "2", *(f"{t}-init" for t in TENANTS))
"""Fewer secrets than (tenant, key id) pairs: hash collisions across tenants happen."""

READ_ONLY = frozenset({"get_ns", "find"})

_t = st.sampled_from(TENANTS)
_secret = st.sampled_from(SECRETS)
OPERATIONS = st.one_of(
    st.tuples(st.just("create_tenant"), _t),
    st.tuples(st.just("create_ns"), _t, st.sampled_from(NAMESPACES), st.sampled_from(["x", "y"])),
    st.tuples(st.just("update_ns"), _t, st.sampled_from(NAMESPACES), st.sampled_from(["u", "v"])),
    st.tuples(st.just("delete_ns"), _t, st.sampled_from(NAMESPACES)),
    st.tuples(st.just("get_ns"), _t, st.sampled_from(NAMESPACES)),
    st.tuples(st.just("put_key"), _t, st.sampled_from(KEY_IDS), _secret),
    st.tuples(st.just("revoke"), _t, st.sampled_from(KEY_IDS)),
    st.tuples(st.just("touch"), _secret),
    st.tuples(st.just("find"), _secret),
)


@dataclass
class ModelKey:
    tenant: str
    key_id: str
    key_hash: str
    revoked_at: datetime | None = None
    touched: bool = False


@dataclass
class Model:
    run: str
    tenants: set[str] = field(default_factory=set)
    namespaces: dict[tuple[str, str], str] = field(default_factory=dict)  # (tenant, ns) -> description
    keys: dict[str, ModelKey] = field(default_factory=dict)  # by hash

    def tid(self, t: str) -> str:
        return f"{t}-{self.run}"

    def hash(self, secret: str) -> str:
        return key_hash(f"rl_{self.run}_{secret}")

    def key_by_id(self, t: str, key_id: str) -> ModelKey | None:
        return next((k for k in self.keys.values() if (k.tenant, k.key_id) == (t, key_id)), None)

    def apply(self, registry: TenantRegistry, op: tuple[str, ...]) -> None:
        """Run ``op`` against ``registry`` and the model; the call must answer what the model says."""
        kind, *args = op
        getattr(self, f"_{kind}")(registry, *args)

    def _create_tenant(self, registry: TenantRegistry, t: str) -> None:
        if t in self.tenants:
            with pytest.raises(errors.Conflict):
                registry.create_tenant(Tenant(tenant_id=self.tid(t), name="other"))
        else:
            registry.create_tenant(Tenant(tenant_id=self.tid(t), name=t))
            self.tenants.add(t)

    def _create_ns(self, registry: TenantRegistry, t: str, ns: str, desc: str) -> None:
        if (t, ns) in self.namespaces:
            with pytest.raises(errors.Conflict):
                registry.create_namespace(new_namespace(self.tid(t), ns, desc))
        else:
            registry.create_namespace(new_namespace(self.tid(t), ns, desc))
            self.namespaces[(t, ns)] = desc

    def _update_ns(self, registry: TenantRegistry, t: str, ns: str, desc: str) -> None:
        if (t, ns) in self.namespaces:
            registry.update_namespace(new_namespace(self.tid(t), ns, desc))
            self.namespaces[(t, ns)] = desc
        else:
            with pytest.raises(errors.NamespaceNotFound):
                registry.update_namespace(new_namespace(self.tid(t), ns, desc))

    def _delete_ns(self, registry: TenantRegistry, t: str, ns: str) -> None:
        if (t, ns) in self.namespaces:
            registry.delete_namespace(self.tid(t), ns)
            del self.namespaces[(t, ns)]
        else:
            with pytest.raises(errors.NamespaceNotFound):
                registry.delete_namespace(self.tid(t), ns)

    def _get_ns(self, registry: TenantRegistry, t: str, ns: str) -> None:
        if (t, ns) in self.namespaces:
            got = registry.get_namespace(self.tid(t), ns)
            assert (got.tenant_id, got.namespace_id) == (self.tid(t), ns)
            assert got.description == self.namespaces[(t, ns)]
        else:
            with pytest.raises(errors.NamespaceNotFound):
                registry.get_namespace(self.tid(t), ns)

    def _put_key(self, registry: TenantRegistry, t: str, key_id: str, secret: str) -> None:
        record = ApiKeyRecord(key_id=key_id, key_hash=self.hash(secret), tenant_id=self.tid(t))
        if record.key_hash in self.keys or self.key_by_id(t, key_id):
            with pytest.raises(errors.Conflict):
                registry.put_api_key(record)
        else:
            registry.put_api_key(record)
            self.keys[record.key_hash] = ModelKey(t, key_id, record.key_hash)

    def _revoke(self, registry: TenantRegistry, t: str, key_id: str) -> None:
        mine = self.key_by_id(t, key_id)
        if mine is None:
            with pytest.raises(errors.NotFound):
                registry.revoke_api_key(self.tid(t), key_id)
            return
        revoked = registry.revoke_api_key(self.tid(t), key_id)
        assert (revoked.tenant_id, revoked.key_id, revoked.key_hash) == (self.tid(t), key_id, mine.key_hash)
        assert revoked.revoked_at is not None
        assert mine.revoked_at in (None, revoked.revoked_at)
        mine.revoked_at = revoked.revoked_at

    def _touch(self, registry: TenantRegistry, secret: str) -> None:
        registry.touch_api_key(self.hash(secret))
        if self.hash(secret) in self.keys:
            self.keys[self.hash(secret)].touched = True

    def _find(self, registry: TenantRegistry, secret: str) -> None:
        found = registry.find_api_key(self.hash(secret))
        expected = self.keys.get(self.hash(secret))
        if expected is None:
            assert found is None
        else:
            assert found is not None
            assert (found.tenant_id, found.key_id) == (self.tid(expected.tenant), expected.key_id)

    def check_all(self, registry: TenantRegistry) -> None:
        """Every tenant's whole state still equals the model (so no call touched another tenant)."""
        for t in TENANTS:
            if t in self.tenants:
                assert registry.get_tenant(self.tid(t)).name == t
            else:
                with pytest.raises(errors.NotFound):
                    registry.get_tenant(self.tid(t))
            assert [
                (n.tenant_id, n.namespace_id, n.description) for n in registry.list_namespaces(self.tid(t))
            ] == [(self.tid(t), ns, desc) for (tt, ns), desc in sorted(self.namespaces.items()) if tt == t]
            listed = registry.list_api_keys(self.tid(t))
            expected = sorted((k for k in self.keys.values() if k.tenant == t), key=lambda k: k.key_id)
            assert [(k.tenant_id, k.key_id, k.key_hash, k.revoked_at) for k in listed] == [
                (self.tid(t), k.key_id, k.key_hash, k.revoked_at) for k in expected
            ]
            assert [k.last_used_at is not None for k in listed] == [k.touched for k in expected]


class TenantRegistryContract:
    """Subclasses provide the ``registry`` fixture."""

    @pytest.fixture
    def registry(self) -> TenantRegistry:
        raise NotImplementedError

    # -- tenants --------------------------------------------------------------------------------
    def test_given_a_created_tenant_when_got_then_every_field_round_trips(
        self, registry: TenantRegistry
    ) -> None:
        tenant = Tenant(
            tenant_id="acme", name="Acme Inc.", plan="pro", max_runs_per_period=500, created_at=AT
        )
        assert registry.create_tenant(tenant) == tenant
        assert registry.get_tenant("acme") == tenant
        unlimited = Tenant(tenant_id="globex", created_at=AT)
        registry.create_tenant(unlimited)
        assert registry.get_tenant("globex") == unlimited
        assert registry.get_tenant("globex").max_runs_per_period is None

    def test_given_a_tenant_when_created_again_then_conflict_and_the_first_is_kept(
        self, registry: TenantRegistry
    ) -> None:
        registry.create_tenant(Tenant(tenant_id="acme", name="first"))
        with pytest.raises(errors.Conflict):
            registry.create_tenant(Tenant(tenant_id="acme", name="second"))
        assert registry.get_tenant("acme").name == "first"

    def test_purging_a_tenant_removes_its_namespaces_and_keys_and_keeps_its_tombstone(
        self, registry: TenantRegistry
    ) -> None:
        for tenant in ("acme", "globex"):
            registry.create_tenant(Tenant(tenant_id=tenant, created_at=AT))
            for ns in ("docs", "hr"):
                registry.create_namespace(new_namespace(tenant, ns))
            for key_id in ("k1", "k2", "k3"):
                registry.put_api_key(api_key(tenant, key_id))
        registry.revoke_api_key("acme", "k2")

        registry.purge_tenant("acme")

        assert registry.list_namespaces("acme") == [] and registry.list_api_keys("acme") == []
        for key_id in ("k1", "k2", "k3"):  # the records by hash went too, revoked ones included
            assert registry.find_api_key(key_hash(f"rl_acme_{key_id}")) is None
        assert registry.get_tenant("acme").tenant_id == "acme"  # the tombstone stays
        assert [n.namespace_id for n in registry.list_namespaces("globex")] == ["docs", "hr"]
        assert len(registry.list_api_keys("globex")) == 3
        assert registry.find_api_key(key_hash("rl_globex_k1")) is not None
        registry.purge_tenant("acme")  # idempotent
        # The freed ids may be used again (a namespace id, a key id within the tenant)
        registry.create_namespace(new_namespace("acme", "docs"))
        registry.put_api_key(api_key("acme", "k1", secret="a new secret"))

    def test_given_no_tenant_when_got_then_not_found(self, registry: TenantRegistry) -> None:
        registry.create_tenant(Tenant(tenant_id="acme"))
        with pytest.raises(errors.NotFound):
            registry.get_tenant("globex")

    def test_given_a_tenant_when_updated_then_its_status_round_trips_and_others_are_untouched(
        self, registry: TenantRegistry
    ) -> None:
        acme = registry.create_tenant(Tenant(tenant_id="acme", max_runs_per_period=5, created_at=AT))
        registry.create_tenant(Tenant(tenant_id="globex", created_at=AT))
        suspended = acme.model_copy(update={"status": "suspended"})
        assert registry.update_tenant(suspended) == suspended
        assert registry.get_tenant("acme") == suspended
        assert registry.get_tenant("globex").status == "active"
        with pytest.raises(errors.NotFound):
            registry.update_tenant(Tenant(tenant_id="initech"))
        with pytest.raises(errors.NotFound):
            registry.get_tenant("initech")  # an update never creates

    # -- namespaces -----------------------------------------------------------------------------
    def test_create_get_list_update(self, registry: TenantRegistry) -> None:
        registry.create_namespace(new_namespace("acme", "docs", "Product docs", default=True))
        registry.create_namespace(new_namespace("acme", "hr"))
        registry.create_namespace(new_namespace("globex", "docs"))
        got = registry.get_namespace("acme", "docs")
        assert got.description == "Product docs" and got.default
        assert [n.namespace_id for n in registry.list_namespaces("acme")] == ["docs", "hr"]
        changed = got.model_copy(update={"description": "new"})
        assert registry.update_namespace(changed) == changed
        assert registry.get_namespace("acme", "docs").description == "new"
        assert registry.get_namespace("globex", "docs").description == ""

    def test_given_a_namespace_when_got_then_every_field_round_trips(self, registry: TenantRegistry) -> None:
        ns = Namespace(
            tenant_id="acme",
            namespace_id="docs",
            description="Product docs",
            default=True,
            settings=NamespaceSettings(
                embedding_model="bge-small", embedding_dimension=384, system_prompt="Be brief."
            ),
            created_at=AT,
        )
        assert registry.create_namespace(ns) == ns
        assert registry.get_namespace("acme", "docs") == ns
        assert registry.list_namespaces("acme") == [ns]

    def test_namespaces_are_listed_by_id_and_only_the_tenants_own(self, registry: TenantRegistry) -> None:
        for ns in ("zeta", "alpha", "m.x", "B", "alpha-2"):
            registry.create_namespace(new_namespace("acme", ns))
        registry.create_namespace(new_namespace("globex", "beta"))
        registry.create_namespace(new_namespace("acme2", "gamma"))  # a tenant id sharing a prefix
        assert [n.namespace_id for n in registry.list_namespaces("acme")] == sorted(
            ["zeta", "alpha", "m.x", "B", "alpha-2"]
        )
        assert all(n.tenant_id == "acme" for n in registry.list_namespaces("acme"))
        assert [n.namespace_id for n in registry.list_namespaces("globex")] == ["beta"]
        assert registry.list_namespaces("initech") == []

    def test_namespaces_do_not_need_their_tenant_to_exist(self, registry: TenantRegistry) -> None:
        registry.create_namespace(new_namespace("local", "docs"))  # the CLI's tenant is never created
        assert registry.get_namespace("local", "docs").namespace_id == "docs"
        with pytest.raises(errors.NotFound):
            registry.get_tenant("local")

    def test_duplicates_conflict_and_missing_is_not_found(self, registry: TenantRegistry) -> None:
        registry.create_namespace(new_namespace("acme", "docs", "first"))
        with pytest.raises(errors.Conflict):
            registry.create_namespace(new_namespace("acme", "docs", "second"))
        assert registry.get_namespace("acme", "docs").description == "first"
        with pytest.raises(errors.NamespaceNotFound):
            registry.get_namespace("globex", "docs")
        with pytest.raises(errors.NamespaceNotFound):
            registry.update_namespace(new_namespace("acme", "ghost"))
        with pytest.raises(errors.NamespaceNotFound):
            registry.get_namespace("acme", "ghost")  # a failed update creates nothing

    def test_update_of_another_tenants_namespace_is_not_found_and_changes_nothing(
        self, registry: TenantRegistry
    ) -> None:
        registry.create_namespace(new_namespace("acme", "docs", "acme's"))
        with pytest.raises(errors.NamespaceNotFound):
            registry.update_namespace(new_namespace("globex", "docs", "hijacked"))
        assert registry.get_namespace("acme", "docs").description == "acme's"
        assert registry.list_namespaces("globex") == []

    # -- metadata schema (issue 29 #1) -----------------------------------------------------------
    def test_the_metadata_schema_grows_by_key_and_is_idempotent(self, registry: TenantRegistry) -> None:
        registry.create_namespace(new_namespace("acme", "docs"))
        registry.create_namespace(new_namespace("globex", "docs"))
        assert registry.extend_metadata_schema("acme", "docs", {"year": "number"}) == {"year": "number"}
        both = registry.extend_metadata_schema("acme", "docs", {"year": "number", "on": "date"})
        assert both == {"year": "number", "on": "date"}
        assert registry.extend_metadata_schema("acme", "docs", {}) == both
        assert registry.get_namespace("acme", "docs").settings.metadata_schema == both
        assert registry.get_namespace("globex", "docs").settings.metadata_schema == {}
        with pytest.raises(errors.NamespaceNotFound):
            registry.extend_metadata_schema("acme", "ghost", {"year": "number"})

    def test_a_clash_adds_no_key_at_all(self, registry: TenantRegistry) -> None:
        registry.create_namespace(new_namespace("acme", "docs"))
        registry.extend_metadata_schema("acme", "docs", {"year": "number"})
        with pytest.raises(errors.MetadataTypeClash) as raised:
            registry.extend_metadata_schema("acme", "docs", {"team": "string", "year": "string"})
        assert raised.value.details["declared"] == "number"
        assert registry.get_namespace("acme", "docs").settings.metadata_schema == {"year": "number"}

    def test_the_schema_is_bounded(self, registry: TenantRegistry) -> None:
        registry.create_namespace(new_namespace("acme", "docs"))
        full = {f"k{i}": "string" for i in range(MAX_SCHEMA_KEYS)}
        assert len(registry.extend_metadata_schema("acme", "docs", full)) == MAX_SCHEMA_KEYS
        with pytest.raises(errors.InvalidRequest):
            registry.extend_metadata_schema("acme", "docs", {"one_more": "string"})
        assert "one_more" not in registry.get_namespace("acme", "docs").settings.metadata_schema

    def test_an_update_of_the_settings_keeps_the_stored_schema(self, registry: TenantRegistry) -> None:
        """A read-modify-write of the settings (a PATCH) never drops a key typed meanwhile."""
        registry.create_namespace(new_namespace("acme", "docs"))
        read = registry.get_namespace("acme", "docs")
        registry.extend_metadata_schema("acme", "docs", {"year": "number"})
        changed = read.model_copy(update={"description": "new"})
        saved = registry.update_namespace(changed)
        assert saved.settings.metadata_schema == {"year": "number"} and saved.description == "new"
        got = registry.get_namespace("acme", "docs")
        assert got.settings.metadata_schema == {"year": "number"} and got.description == "new"

    def test_two_writers_typing_one_key_differently_exactly_one_wins(self, registry: TenantRegistry) -> None:
        registry.create_namespace(new_namespace("acme", "docs"))
        start = threading.Barrier(8)
        outcomes: list[str] = []

        def extend(kind: AttributeType) -> None:
            start.wait()
            try:
                registry.extend_metadata_schema("acme", "docs", {"year": kind, f"k_{kind}": kind})
                outcomes.append(kind)
            except errors.MetadataTypeClash:
                outcomes.append("clash")

        kinds: list[AttributeType] = ["number", "string"] * 4
        threads = [threading.Thread(target=extend, args=(k,)) for k in kinds]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        schema = registry.get_namespace("acme", "docs").settings.metadata_schema
        winner = schema["year"]
        assert sorted(outcomes) == sorted([winner] * 4 + ["clash"] * 4)
        assert schema == {"year": winner, f"k_{winner}": winner}  # the loser added nothing

    def test_clearing_the_default_changes_that_flag_alone_and_only_there(
        self, registry: TenantRegistry
    ) -> None:
        # Given a default namespace, stored with settings, and another tenant's of the same name
        ns = Namespace(
            tenant_id="acme",
            namespace_id="docs",
            description="Product docs",
            default=True,
            settings=NamespaceSettings(embedding_model="bge-small", embedding_dimension=384),
            created_at=AT,
        )
        registry.create_namespace(ns)
        registry.create_namespace(new_namespace("globex", "docs", default=True))
        # When its default is cleared: Then that flag alone changed, and only in acme
        registry.clear_default_namespace("acme", "docs")
        assert registry.get_namespace("acme", "docs") == ns.model_copy(update={"default": False})
        assert registry.get_namespace("globex", "docs").default
        # and clearing a missing namespace is a no-op that creates nothing
        registry.clear_default_namespace("acme", "ghost")
        assert [n.namespace_id for n in registry.list_namespaces("acme")] == ["docs"]

    def test_delete_removes_only_that_namespace(self, registry: TenantRegistry) -> None:
        for tenant, ns in (("acme", "docs"), ("acme", "hr"), ("globex", "docs")):
            registry.create_namespace(new_namespace(tenant, ns))
        registry.delete_namespace("acme", "docs")
        with pytest.raises(errors.NamespaceNotFound):
            registry.get_namespace("acme", "docs")
        assert [n.namespace_id for n in registry.list_namespaces("acme")] == ["hr"]
        assert registry.get_namespace("globex", "docs").tenant_id == "globex"
        registry.create_namespace(new_namespace("acme", "docs", "again"))  # the id is free again
        assert registry.get_namespace("acme", "docs").description == "again"

    def test_delete_of_a_missing_or_another_tenants_namespace_is_not_found(
        self, registry: TenantRegistry
    ) -> None:
        registry.create_namespace(new_namespace("acme", "docs"))
        with pytest.raises(errors.NamespaceNotFound):
            registry.delete_namespace("acme", "ghost")
        with pytest.raises(errors.NamespaceNotFound):
            registry.delete_namespace("globex", "docs")
        assert registry.get_namespace("acme", "docs").tenant_id == "acme"
        registry.delete_namespace("acme", "docs")
        with pytest.raises(errors.NamespaceNotFound):
            registry.delete_namespace("acme", "docs")

    # -- API keys: store and find -----------------------------------------------------------------
    def test_given_a_stored_key_when_found_by_hash_then_every_field_round_trips(
        self, registry: TenantRegistry
    ) -> None:
        key = api_key(
            "acme", "key_1", name="CI", scopes=("search", "ingest"), namespaces=("docs", "hr"), created_at=AT
        )
        assert registry.put_api_key(key) == key
        assert registry.find_api_key(key.key_hash) == key
        assert registry.find_api_key(key_hash("rl_unknown")) is None

    def test_a_key_with_usage_and_revocation_round_trips(self, registry: TenantRegistry) -> None:
        key = api_key("acme", "key_1", created_at=AT, last_used_at=AT, revoked_at=AT + timedelta(hours=1))
        registry.put_api_key(key)
        assert registry.find_api_key(key.key_hash) == key

    def test_keys_are_found_only_by_their_sha256_hash(self, registry: TenantRegistry) -> None:
        secret = "rl_live_secret"
        registry.put_api_key(api_key("acme", "key_1", secret))
        assert registry.find_api_key(secret) is None  # the plaintext is no lookup key
        assert registry.find_api_key(key_hash(secret).upper()) is None

    def test_a_record_whose_hash_is_not_a_sha256_digest_is_refused(self, registry: TenantRegistry) -> None:
        plaintext = ApiKeyRecord(key_id="key_1", key_hash="rl_live_secret", tenant_id="acme")
        with pytest.raises(ValueError, match="SHA-256"):
            registry.put_api_key(plaintext)
        assert registry.list_api_keys("acme") == []

    def test_a_taken_hash_conflicts_even_in_another_tenant(self, registry: TenantRegistry) -> None:
        first = api_key("acme", "key_1", "rl_same")
        registry.put_api_key(first)
        with pytest.raises(errors.Conflict):
            registry.put_api_key(api_key("globex", "key_9", "rl_same"))
        assert registry.find_api_key(first.key_hash) == first
        assert registry.list_api_keys("globex") == []

    def test_a_taken_key_id_conflicts_within_the_tenant_and_nothing_is_stored(
        self, registry: TenantRegistry
    ) -> None:
        first = api_key("acme", "key_1", "rl_first")
        registry.put_api_key(first)
        second = api_key("acme", "key_1", "rl_second")
        with pytest.raises(errors.Conflict):
            registry.put_api_key(second)
        assert registry.find_api_key(second.key_hash) is None
        assert registry.list_api_keys("acme") == [first]

    def test_key_ids_are_scoped_by_tenant(self, registry: TenantRegistry) -> None:
        a, b = api_key("acme", "key_1"), api_key("globex", "key_1")
        registry.put_api_key(a)
        registry.put_api_key(b)
        assert registry.list_api_keys("acme") == [a] and registry.list_api_keys("globex") == [b]
        registry.revoke_api_key("acme", "key_1")
        assert registry.find_api_key(b.key_hash) == b

    def test_keys_are_listed_by_id_and_only_the_tenants_own_revoked_ones_too(
        self, registry: TenantRegistry
    ) -> None:
        for kid in ("key_c", "key_a", "key_b"):
            registry.put_api_key(api_key("acme", kid, created_at=AT))
        registry.put_api_key(api_key("globex", "key_z"))
        registry.put_api_key(api_key("acme2", "key_y"))  # a tenant id sharing a prefix
        registry.revoke_api_key("acme", "key_b")
        listed = registry.list_api_keys("acme")
        assert [k.key_id for k in listed] == ["key_a", "key_b", "key_c"]
        assert all(k.tenant_id == "acme" for k in listed)
        assert [k.active for k in listed] == [True, False, True]
        assert [k.key_id for k in registry.list_api_keys("globex")] == ["key_z"]
        assert registry.list_api_keys("initech") == []

    # -- API keys: revoke -----------------------------------------------------------------------
    def test_revoke_marks_the_key_revoked_and_find_still_returns_it(self, registry: TenantRegistry) -> None:
        key = api_key("acme", "key_1", name="CI", created_at=AT)
        registry.put_api_key(key)
        before = datetime.now(UTC)
        revoked = registry.revoke_api_key("acme", "key_1")
        assert not revoked.active and revoked.revoked_at is not None
        assert before - timedelta(seconds=5) <= revoked.revoked_at <= datetime.now(UTC) + timedelta(seconds=5)
        assert revoked == key.model_copy(update={"revoked_at": revoked.revoked_at})
        assert registry.find_api_key(key.key_hash) == revoked

    def test_revoke_is_idempotent_and_keeps_the_first_revocation_time(self, registry: TenantRegistry) -> None:
        registry.put_api_key(api_key("acme", "key_1"))
        first = registry.revoke_api_key("acme", "key_1")
        again = registry.revoke_api_key("acme", "key_1")
        assert again == first and again.revoked_at == first.revoked_at

    def test_revoke_of_an_unknown_key_id_is_not_found(self, registry: TenantRegistry) -> None:
        registry.put_api_key(api_key("acme", "key_1"))
        with pytest.raises(errors.NotFound):
            registry.revoke_api_key("acme", "key_2")

    def test_revoke_of_another_tenants_key_is_not_found_and_changes_nothing(
        self, registry: TenantRegistry
    ) -> None:
        key = api_key("acme", "key_1")
        registry.put_api_key(key)
        for _ in range(2):
            with pytest.raises(errors.NotFound):
                registry.revoke_api_key("globex", "key_1")
        assert registry.find_api_key(key.key_hash) == key
        assert registry.find_api_key(key.key_hash).active  # type: ignore[union-attr]
        assert registry.list_api_keys("globex") == []

    # -- API keys: touch ------------------------------------------------------------------------
    def test_touch_records_the_last_use_and_changes_nothing_else(self, registry: TenantRegistry) -> None:
        key = api_key("acme", "key_1", name="CI", scopes=("chat",), created_at=AT)
        registry.put_api_key(key)
        before = datetime.now(UTC)
        registry.touch_api_key(key.key_hash)
        touched = registry.find_api_key(key.key_hash)
        assert touched is not None and touched.last_used_at is not None
        assert (
            before - timedelta(seconds=5) <= touched.last_used_at <= datetime.now(UTC) + timedelta(seconds=5)
        )
        assert touched == key.model_copy(update={"last_used_at": touched.last_used_at})

    def test_touch_updates_a_last_use_older_than_a_few_minutes(self, registry: TenantRegistry) -> None:
        long_ago = datetime.now(UTC) - timedelta(hours=1)
        key = api_key("acme", "key_1", last_used_at=long_ago)
        registry.put_api_key(key)
        registry.touch_api_key(key.key_hash)
        touched = registry.find_api_key(key.key_hash)
        assert touched is not None and touched.last_used_at is not None
        assert touched.last_used_at > long_ago + timedelta(minutes=30)

    def test_touch_of_an_unknown_hash_is_a_silent_no_op(self, registry: TenantRegistry) -> None:
        registry.touch_api_key(key_hash("rl_unknown"))
        registry.touch_api_key("not-a-hash")
        assert registry.find_api_key(key_hash("rl_unknown")) is None

    def test_touch_of_a_revoked_key_keeps_it_revoked(self, registry: TenantRegistry) -> None:
        key = api_key("acme", "key_1")
        registry.put_api_key(key)
        revoked = registry.revoke_api_key("acme", "key_1")
        registry.touch_api_key(key.key_hash)
        touched = registry.find_api_key(key.key_hash)
        assert touched is not None and touched.revoked_at == revoked.revoked_at

    # -- isolation ------------------------------------------------------------------------------
    @settings(
        max_examples=15,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
    )
    @given(ops=st.lists(OPERATIONS, min_size=4, max_size=10))
    def test_property_no_call_returns_or_changes_another_tenants_data(
        self, registry: TenantRegistry, ops: list[tuple[str, ...]]
    ) -> None:
        # The fixture is shared by all examples: ids carry a per-example prefix/salt.
        model = Model(uuid.uuid4().hex[:8])
        for t in TENANTS:
            model.apply(registry, ("create_ns", t, SHARED_NAMESPACE, "init"))
            model.apply(registry, ("put_key", t, SHARED_KEY_ID, f"{t}-init"))
        model.check_all(registry)
        for op in ops:
            model.apply(registry, op)
            if op[0] not in READ_ONLY:  # a read that changed something is caught by the next check
                model.check_all(registry)
        model.check_all(registry)
