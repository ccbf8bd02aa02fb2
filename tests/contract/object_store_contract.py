"""The ObjectStore contract: every backend subclasses :class:`ObjectStoreContract` with one fixture.

Given ``objects`` (a fresh, empty :class:`~ragline.ports.ObjectStore`), every test here must pass
unchanged. The rules, beyond the port's docstring:

- ``get`` returns exactly the bytes of the last ``put`` of the key (any bytes, empty included) and
  raises ``NotFound`` for a key never put or deleted.
- ``delete`` is idempotent: deleting a missing key is a no-op, as S3's ``DeleteObject`` is.
- ``list(prefix)`` returns the keys under the *folder* ``prefix``, sorted: ``t/ns`` and ``t/ns/``
  list ``t/ns/…`` and never a sibling such as ``t/ns2/…`` (another tenant or namespace).
- ``get(key, limit=n)`` returns an object of at most ``n`` bytes and refuses a longer one with
  ``DocumentTooLarge`` naming the key (issue 24 #4: the worker's reads are bounded by the limit).
- A key is never an alias of another key: a hostile key (``..`` segments, absolute paths) is either
  refused with ``InvalidRequest`` or stored under exactly itself; it never reads or overwrites
  another key's object.
"""

from __future__ import annotations

import random

import pytest

from ragline import errors
from ragline.ports import ObjectStore

LARGE = random.Random(7).randbytes(3 * 1024 * 1024 + 17)
"""Larger than one socket buffer or one read chunk, not a multiple of any block size."""

PAYLOADS = {
    "empty": b"",
    "text": "Hello, wörld.\n".encode(),
    "binary": bytes(range(256)) * 4 + b"\x00\xff\x00",
    "large": LARGE,
}

TREE = {
    "t/ns/a.txt": b"a",
    "t/ns/sub dir/b c.txt": b"spaces",
    "t/ns/deep/er/ünïcødé ✓.md": b"unicode",
    "t/ns2/sibling.txt": b"another namespace",
    "t/nsx": b"a sibling object, not a folder",
    "u/ns/other-tenant.txt": b"another tenant",
}

HOSTILE_KEYS = [
    "../outside.txt",
    "t/../../outside.txt",
    "/tmp/absolute.txt",
    "t/ns2/../ns/a.txt",
    "evil/ns/../../t/ns/a.txt",
]


class ObjectStoreContract:
    """Subclasses provide the ``objects`` fixture."""

    @pytest.fixture
    def objects(self) -> ObjectStore:
        raise NotImplementedError

    # -- get / put ------------------------------------------------------------------------------
    @pytest.mark.parametrize("kind", sorted(PAYLOADS))
    def test_given_bytes_when_put_then_get_returns_them_exactly(
        self, objects: ObjectStore, kind: str
    ) -> None:
        # Given / When
        objects.put(f"acme/docs/{kind}.bin", PAYLOADS[kind])
        # Then
        got = objects.get(f"acme/docs/{kind}.bin")
        assert type(got) is bytes
        assert got == PAYLOADS[kind]

    def test_given_an_object_when_put_again_then_the_last_write_wins(self, objects: ObjectStore) -> None:
        # Given
        objects.put("acme/docs/a.txt", b"first version, longer than the second")
        # When
        objects.put("acme/docs/a.txt", b"second")
        # Then
        assert objects.get("acme/docs/a.txt") == b"second"
        assert objects.list("acme/docs") == ["acme/docs/a.txt"]

    def test_a_bounded_get_returns_an_object_up_to_the_limit_and_refuses_a_longer_one(
        self, objects: ObjectStore
    ) -> None:
        objects.put("acme/docs/big.bin", LARGE)
        assert objects.get("acme/docs/big.bin", limit=len(LARGE)) == LARGE
        for limit in (len(LARGE) - 1, 1024, 0):
            with pytest.raises(errors.DocumentTooLarge) as refused:
                objects.get("acme/docs/big.bin", limit=limit)
            assert refused.value.details["filename"] == "acme/docs/big.bin"
            assert refused.value.details["limit"] == limit
        objects.put("acme/docs/empty.txt", b"")
        assert objects.get("acme/docs/empty.txt", limit=0) == b""
        with pytest.raises(errors.NotFound):
            objects.get("acme/docs/never.txt", limit=10)

    @pytest.mark.parametrize("key", ["acme/docs/never.txt", "acme/docs", "acme"])
    def test_given_no_object_at_a_key_when_get_then_not_found(self, objects: ObjectStore, key: str) -> None:
        # Given an object nearby, but none at ``key`` (a bare folder is no object)
        objects.put("acme/docs/present/x.txt", b"x")
        # When / Then
        with pytest.raises(errors.NotFound) as missing:
            objects.get(key)
        assert missing.value.code == "not_found"

    def test_keys_with_spaces_and_unicode_round_trip(self, objects: ObjectStore) -> None:
        for key, data in TREE.items():
            objects.put(key, data)
        for key, data in TREE.items():
            assert objects.get(key) == data

    # -- delete ---------------------------------------------------------------------------------
    def test_given_an_object_when_deleted_then_it_is_gone_and_others_stay(self, objects: ObjectStore) -> None:
        # Given
        objects.put("acme/docs/a.txt", b"a")
        objects.put("acme/docs/b.txt", b"b")
        # When
        objects.delete("acme/docs/a.txt")
        # Then
        with pytest.raises(errors.NotFound):
            objects.get("acme/docs/a.txt")
        assert objects.get("acme/docs/b.txt") == b"b"
        assert objects.list("acme/docs") == ["acme/docs/b.txt"]

    def test_given_a_missing_key_when_deleted_then_nothing_happens(self, objects: ObjectStore) -> None:
        # Given an object that was deleted once, and one that never existed
        objects.put("acme/docs/a.txt", b"a")
        objects.delete("acme/docs/a.txt")
        # When deleted (again)
        objects.delete("acme/docs/a.txt")
        objects.delete("acme/docs/never-existed.txt")
        # Then no error, and an empty store stays empty
        assert objects.list("") == []

    def test_given_a_deleted_object_when_put_again_then_it_is_back(self, objects: ObjectStore) -> None:
        objects.put("acme/docs/a.txt", b"old")
        objects.delete("acme/docs/a.txt")

        objects.put("acme/docs/a.txt", b"new")

        assert objects.get("acme/docs/a.txt") == b"new"

    # -- list -----------------------------------------------------------------------------------
    def test_given_an_empty_store_then_every_list_is_empty(self, objects: ObjectStore) -> None:
        assert objects.list("") == []
        assert objects.list("t/ns") == []

    @pytest.mark.parametrize("prefix", ["t/ns", "t/ns/"])
    def test_list_returns_exactly_the_keys_under_the_folder_sorted(
        self, objects: ObjectStore, prefix: str
    ) -> None:
        # Given a tree with a sibling namespace (t/ns2), a sibling object (t/nsx) and another tenant
        for key, data in TREE.items():
            objects.put(key, data)
        # When
        listed = objects.list(prefix)
        # Then
        assert listed == sorted(["t/ns/a.txt", "t/ns/deep/er/ünïcødé ✓.md", "t/ns/sub dir/b c.txt"])

    def test_list_of_a_nested_folder_and_of_everything(self, objects: ObjectStore) -> None:
        for key, data in TREE.items():
            objects.put(key, data)

        assert objects.list("t/ns/deep") == ["t/ns/deep/er/ünïcødé ✓.md"]
        assert objects.list("t/ns/sub dir") == ["t/ns/sub dir/b c.txt"]
        assert objects.list("t") == sorted(k for k in TREE if k.startswith("t/"))
        assert objects.list("") == sorted(TREE)
        assert objects.list("t/n") == []  # a partial name is not a folder

    def test_list_names_only_objects_not_folders(self, objects: ObjectStore) -> None:
        objects.put("t/ns/a/b/c.txt", b"c")

        assert objects.list("t/ns") == ["t/ns/a/b/c.txt"]
        assert objects.list("t/ns/a/b/c.txt") == []  # an object is no folder

    # -- hostile keys ---------------------------------------------------------------------------
    @pytest.mark.parametrize("key", HOSTILE_KEYS)
    def test_a_hostile_key_is_refused_or_stored_as_itself_never_as_another_key(
        self, objects: ObjectStore, key: str
    ) -> None:
        # Given a victim object that a path-normalising store would alias
        objects.put("t/ns/a.txt", b"victim")
        # When a hostile key is written
        try:
            objects.put(key, b"evil")
        except errors.InvalidRequest:
            refused = True
        else:
            refused = False
        # Then the victim is untouched, and the key is nowhere or exactly itself
        assert objects.get("t/ns/a.txt") == b"victim"
        assert objects.list("t/ns") == ["t/ns/a.txt"]
        if refused:
            assert objects.list("") == ["t/ns/a.txt"]
            with pytest.raises((errors.InvalidRequest, errors.NotFound)):
                objects.get(key)
        else:
            assert objects.get(key) == b"evil"
            assert sorted(objects.list("")) == sorted(["t/ns/a.txt", key])
            objects.delete(key)
            assert objects.get("t/ns/a.txt") == b"victim"

    # -- purge (a tenant's deletion) ------------------------------------------------------------
    def test_purge_removes_the_folder_and_nothing_beside_it(self, objects: ObjectStore) -> None:
        for key, data in TREE.items():
            objects.put(key, data)
        objects.put("t/ns/a.txt", b"a second version")
        assert objects.purge("t/ns") >= 3
        assert objects.list("t/ns") == []
        with pytest.raises(errors.NotFound):
            objects.get("t/ns/a.txt")
        assert objects.list("") == sorted(k for k in TREE if not k.startswith("t/ns/"))
        assert objects.get("t/nsx") == TREE["t/nsx"]
        assert objects.purge("t/ns/") == 0  # idempotent

    def test_purge_refuses_an_empty_prefix(self, objects: ObjectStore) -> None:
        objects.put("t/ns/a.txt", b"a")
        for prefix in ("", "/"):
            with pytest.raises(errors.InvalidRequest):
                objects.purge(prefix)
        assert objects.list("") == ["t/ns/a.txt"]
