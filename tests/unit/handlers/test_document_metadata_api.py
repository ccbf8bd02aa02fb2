"""Issue 29 #1/#3: document metadata and access through the documents, namespaces and search APIs.

Metadata is typed per namespace (inferred on first sight, then fixed; dates declared), checked
against its limits, carried by every chunk of the document and shown on hits and document views —
the readers never on a hit. A refused request (a clash, a bad key, value or principal) changes
nothing already stored: not the document, not its chunks, not the namespace's schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder, CountingEmbedder
from tests.support.lambda_harness import authorizer_context, call_rest, load_handler

pytestmark = pytest.mark.unit
DOCUMENTS = load_handler("documents")
NAMESPACES = load_handler("namespaces")
SEARCH = load_handler("search")
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
PUMP = "# Pump\n\n" + "\n\n".join(
    f"Step {i}: prime the pump with clean water, check seal {i}, never run it dry." for i in range(60)
)
"""Long enough for several chunks."""


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def container(tmp_path: Path, embedder: CountingEmbedder) -> Container:
    c = Container(Settings(home=tmp_path), embedder=embedder, tokenizer=BowEmbedder())
    c.registry.create_namespace(new_namespace("acme", "docs"))
    return c


def docs(container: Container, method: str, path: str = "", body: Any = None) -> tuple[int, Any]:
    full = "/v1/namespaces/docs/documents" + path
    resource = "/v1/namespaces/{namespace}/documents" + ("/{document_id}" if path else "")
    return call_rest(
        DOCUMENTS, container, method, full, resource=resource,
        authorizer=authorizer_context("acme", scopes="search,ingest"), body=body,
    )  # fmt: skip


def namespace(container: Container, method: str, body: Any = None) -> tuple[int, Any]:
    return call_rest(
        NAMESPACES, container, method, "/v1/namespaces/docs", resource="/v1/namespaces/{namespace}",
        authorizer=authorizer_context("acme", scopes="admin"), body=body,
    )  # fmt: skip


def search(container: Container, query: str) -> tuple[int, Any]:
    return call_rest(
        SEARCH, container, "POST", "/v1/namespaces/docs/search", resource="/v1/namespaces/{namespace}/search",
        authorizer=authorizer_context("acme", scopes="search"), body={"query": query, "mode": "keyword"},
    )  # fmt: skip


def add(container: Container, metadata: Any = None, access: Any = None, name: str = "pump.md") -> Any:
    body: dict[str, Any] = {"filename": name, "text": PUMP}
    if metadata is not None:
        body["metadata"] = metadata
    if access is not None:
        body["access"] = access
    return docs(container, "POST", body=body)


def chunks(container: Container, document_id: str = "pump.md") -> list[Any]:
    return container.stores.scoped(SCOPE).neighbors(document_id, 0, before=0, after=1000)


def schema(container: Container) -> dict[str, str]:
    return dict(container.registry.get_namespace("acme", "docs").settings.metadata_schema)


def test_a_documents_metadata_and_access_are_typed_stored_stamped_and_shown(container: Container) -> None:
    status, doc = add(
        container,
        {"year": 2024, "draft": False, "tags": ["pumps", "safety", "pumps"], "team": "ops", "gone": None},
        {"users": ["ann"], "groups": ["ops", "eng"]},
    )
    assert status == 201, doc
    assert doc["metadata"] == {"year": 2024.0, "draft": False, "tags": ["pumps", "safety"], "team": "ops"}
    assert doc["access"] == {"users": ["ann"], "groups": ["eng", "ops"], "everyone": False}
    types = {"year": "number", "draft": "boolean", "tags": "string_list", "team": "string"}
    assert schema(container) == types
    stored = chunks(container)
    assert len(stored) >= 2
    assert all(c.metadata.attributes == doc["metadata"] for c in stored)
    assert all(c.metadata.readers == ("g:eng", "g:ops", "u:ann") for c in stored)
    status, view = docs(container, "GET", "/pump.md")
    assert status == 200 and view["metadata"] == doc["metadata"] and view["access"] == doc["access"]
    status, found = search(container, "pump")
    assert status == 200 and found["hits"]
    assert all(h["metadata"] == doc["metadata"] for h in found["hits"])
    assert "readers" not in str(found) and "g:ops" not in str(found)  # the ACL never leaves on a hit


def test_a_document_without_metadata_is_open_to_everyone(container: Container) -> None:
    status, doc = add(container)
    assert status == 201
    assert doc["metadata"] == {} and doc["access"] == {"users": [], "groups": [], "everyone": True}
    assert all(c.metadata.readers == () and c.metadata.attributes == {} for c in chunks(container))


def test_a_type_clash_is_a_409_and_nothing_stored_changes(container: Container) -> None:
    assert add(container, {"year": 2024, "team": "ops"})[0] == 201
    before = container.documents.get("acme", "docs", "pump.md")
    status, error = add(container, {"year": "2024", "owner": "bob"})  # replaces pump.md: refused
    assert status == 409
    assert error["error"]["code"] == "metadata_type_clash"
    assert error["error"]["details"] == {"key": "year", "declared": "number", "got": "string"}
    assert container.documents.get("acme", "docs", "pump.md") == before
    assert schema(container) == {"year": "number", "team": "string"}  # "owner" was not added
    assert all(c.metadata.attributes == {"year": 2024.0, "team": "ops"} for c in chunks(container))
    status, error = add(container, {"year": "2024"}, name="other.md")
    assert status == 409 and container.documents.get("acme", "docs", "other.md") is None


@pytest.mark.parametrize(
    ("metadata", "access"),
    [
        ({"team": "ops", "bad key": 1}, None),
        ({"team": "ops", "=x": 1}, None),
        ({f"k{i}": i for i in range(51)}, None),
        ({"team": "ops", "long": "x" * 1025}, None),
        ({"team": "ops", "mixed": ["a", 1]}, None),
        ({"team": "ops", "nested": {"a": 1}}, None),
        ({"team": "ops", "huge": 2**60}, None),
        ({"team": "ops"}, {"users": ["a,b"]}),
        ({"team": "ops"}, {"groups": [" ops"]}),
        ({"team": "ops"}, {"users": [f"u{i}" for i in range(101)]}),
        ({"team": "ops"}, {"roles": ["x"]}),
    ],
    ids=[
        "space-in-key", "equals-in-key", "51-keys", "long-string", "mixed-list", "object", "huge-int",
        "comma-user", "spaced-group", "101-users", "unknown-access-field",
    ],
)  # fmt: skip
def test_bad_metadata_or_access_is_a_400_and_nothing_is_stored(
    container: Container, metadata: dict[str, Any], access: Any
) -> None:
    status, error = add(container, metadata, access)
    assert status == 400 and error["error"]["code"] == "invalid_request", error
    assert container.documents.get("acme", "docs", "pump.md") is None
    assert schema(container) == {}  # not even the good key "team"


def test_metadata_over_16_kib_is_refused(container: Container) -> None:
    status, error = add(container, {f"k{i}": "x" * 1000 for i in range(20)})
    assert status == 400 and "16 KiB" in error["error"]["message"]
    assert schema(container) == {}


def test_a_date_is_declared_then_canonical_and_a_non_date_is_refused(container: Container) -> None:
    status, ns = namespace(container, "PATCH", {"metadataSchema": {"published": "date"}})
    assert status == 200 and ns["metadataSchema"] == {"published": "date"}
    status, doc = add(container, {"published": "2024-05-01"})
    assert status == 201 and doc["metadata"] == {"published": "2024-05-01T00:00:00Z"}
    status, error = add(container, {"published": "last spring"}, name="b.md")
    assert status == 400 and error["error"]["details"]["type"] == "date"


def test_declaring_a_key_of_another_type_is_a_409_and_the_patch_changes_nothing(container: Container) -> None:
    assert add(container, {"year": 2024})[0] == 201
    status, error = namespace(
        container, "PATCH", {"description": "changed", "metadataSchema": {"region": "string", "year": "date"}}
    )
    assert status == 409 and error["error"]["code"] == "metadata_type_clash"
    got = container.registry.get_namespace("acme", "docs")
    assert got.description == "" and dict(got.settings.metadata_schema) == {"year": "number"}
    status, ns = namespace(container, "PATCH", {"metadataSchema": {"year": "number", "region": "string"}})
    assert status == 200 and ns["metadataSchema"] == {"year": "number", "region": "string"}
    status, error = namespace(container, "PATCH", {"metadataSchema": {"bad key": "string"}})
    assert status == 400 and schema(container) == {"year": "number", "region": "string"}


def test_patching_metadata_re_labels_every_chunk_as_a_new_version_without_embedding(
    container: Container, embedder: CountingEmbedder
) -> None:
    assert add(container, {"year": 2024, "team": "ops"}, {"groups": ["ops"]})[0] == 201
    before = container.documents.get("acme", "docs", "pump.md")
    assert before is not None
    texts = sorted(c.text for c in chunks(container))
    embedder.embedded.clear()
    status, done = docs(container, "PATCH", "/pump.md", {"metadata": {"year": 2025, "reviewed": True}})
    assert status == 200, done
    assert done["status"] == "updated"
    assert done["document"]["metadata"] == {"year": 2025.0, "reviewed": True}
    assert done["document"]["access"]["groups"] == ["ops"]  # access not named: kept
    assert embedder.embedded == []  # stored vectors reused: nothing embedded
    after = container.documents.get("acme", "docs", "pump.md")
    assert after is not None and after.generation == before.generation + 1
    assert (after.status, after.indexed_generation) == ("ready", after.generation)
    assert after.content_hash == before.content_hash
    served = chunks(container)
    assert sorted(c.text for c in served) == texts
    assert all(c.metadata.attributes == {"year": 2025.0, "reviewed": True} for c in served)
    assert all(c.metadata.readers == ("g:ops",) for c in served)
    status, found = search(container, "pump")
    assert status == 200 and {h["metadata"]["year"] for h in found["hits"]} == {2025.0}

    status, done = docs(container, "PATCH", "/pump.md", {"access": {"users": [], "groups": []}})
    assert status == 200 and done["document"]["access"]["everyone"]
    assert done["document"]["metadata"] == {"year": 2025.0, "reviewed": True}  # metadata kept
    assert all(c.metadata.readers == () for c in chunks(container))


def test_numbers_keep_their_type_from_request_to_document_to_hit(container: Container) -> None:
    # Given a document whose metadata has an integer and a fractional number (and one written as 7.0)
    status, added = add(container, {"year": 2024, "rating": 4.5, "weight": 7.0})
    assert status == 201, added
    # Then every view of it gives them back as written: 2024, not 2024.0
    shown = [added["metadata"], docs(container, "GET", "/pump.md")[1]["metadata"]]
    shown += [hit["metadata"] for hit in search(container, "pump")[1]["hits"]]
    assert len(shown) > 2
    for metadata in shown:
        assert metadata == {"year": 2024, "rating": 4.5, "weight": 7.0}
        assert [type(metadata[k]) for k in ("year", "rating", "weight")] == [int, float, float], metadata
    # And the stored chunks keep the integer too, which a range filter still compares as a number
    assert all(type(c.metadata.attributes["year"]) is int for c in chunks(container))
    for low, found in ((2024, True), (2024.5, False)):
        status, body = call_rest(
            SEARCH, container, "POST", "/v1/namespaces/docs/search",
            resource="/v1/namespaces/{namespace}/search",
            authorizer=authorizer_context("acme", scopes="search"),
            body={"query": "pump", "mode": "keyword",
                  "filter": {"greaterThanOrEquals": {"key": "year", "value": low}}},
        )  # fmt: skip
        assert status == 200 and bool(body["hits"]) is found, (low, body)


def test_a_refused_patch_changes_nothing(container: Container) -> None:
    assert add(container, {"year": 2024}, {"users": ["ann"]})[0] == 201
    before = container.documents.get("acme", "docs", "pump.md")
    for body, code in (
        ({"metadata": {"year": "soon", "extra": 1}}, 409),
        ({"metadata": {"bad key": 1}}, 400),
        ({"access": {"users": ["a,b"]}}, 400),
        ({"metadata": {"year": 1}, "tenantId": "globex"}, 400),
    ):
        status, error = docs(container, "PATCH", "/pump.md", body)
        assert status == code, (body, error)
        assert container.documents.get("acme", "docs", "pump.md") == before
        assert schema(container) == {"year": "number"}
        assert all(c.metadata.attributes == {"year": 2024.0} for c in chunks(container))
    status, error = docs(container, "PATCH", "/ghost.md", {"metadata": {}})
    assert status == 404 and error["error"]["code"] == "not_found"
    assert docs(container, "DELETE", "/pump.md")[0] == 200
    status, error = docs(container, "PATCH", "/pump.md", {"metadata": {"year": 2030}})
    assert status == 404 and error["error"]["code"] == "not_found"


def test_a_version_that_serves_nothing_shows_no_metadata(container: Container) -> None:
    assert add(container, {"year": 2024}, {"users": ["ann"]})[0] == 201
    status, error = docs(container, "POST", body={"filename": "pump.md", "text": "   \n  "})
    assert status >= 400 and error["error"]["code"] == "empty_document"
    status, view = docs(container, "GET", "/pump.md")
    assert view["serving"] == "nothing" and view["metadata"] == {} and view["access"]["everyone"]


def test_two_documents_typing_a_new_key_differently_at_once_exactly_one_is_indexed(
    container: Container,
) -> None:
    import threading

    from ragline import errors
    from ragline.domain.document_metadata import MetadataInput

    start = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def ingest(name: str, year: object) -> None:
        start.wait()
        try:
            container.ingest.ingest(
                SCOPE, filename=name, data=PUMP.encode(), metadata=MetadataInput({"year": year})
            )
            outcomes[name] = "indexed"
        except errors.MetadataTypeClash:
            outcomes[name] = "clash"

    threads = [threading.Thread(target=ingest, args=a) for a in (("a.md", 2024), ("b.md", "2024"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes.values()) == ["clash", "indexed"]
    winner = next(n for n, o in outcomes.items() if o == "indexed")
    assert schema(container) == {"year": "number" if winner == "a.md" else "string"}
    loser = "b.md" if winner == "a.md" else "a.md"
    assert container.documents.get("acme", "docs", loser) is None  # refused before its claim
