"""Deleting a tenant leaves nothing of it in any store, on both backends (issue 12, tenant lifecycle).

Each backend gets two tenants with namespaces, keys, uploaded objects (several versions), indexed
chunks, a namespace deleted earlier (its records and fences outlive it), and a search run whose
recorded result quotes a chunk. After ``TenantDeletion.delete("acme")`` every store is read *raw* —
every SQLite table, every DynamoDB item, every S3 version and delete marker, both OpenSearch indexes —
for anything of acme's: only the tombstone and the billing record (charges and counters, with no
recorded result) may remain, and globex must be untouched.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from ragline import errors
from ragline.adapters.aws.documents import DynamoDbDocumentRegistry
from ragline.adapters.aws.ledger import DynamoDbUsageLedger
from ragline.adapters.aws.objects import S3ObjectStore
from ragline.adapters.aws.runs import DynamoDbConversationStore, DynamoDbRunLog
from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
from ragline.adapters.opensearch.requests import fences_index
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.api import ChatRequest, SearchRequest
from ragline.domain.models import TenantScope
from ragline.services.ingest import ObjectEvent
from ragline.services.namespaces import new_namespace
from ragline.services.originals import original_folder, original_version
from ragline.wiring import Container
from tests.support.cfn_tables import create_table_from_template
from tests.support.fakes import BowEmbedder
from tests.support.moto_server import REGION

pytestmark = [pytest.mark.e2e]
SECRET = "quokkazebra"
"""A word only acme's documents hold: found anywhere afterwards, something of acme's was left."""


@dataclass
class Backend:
    container: Container
    raw_rows: Any  # () -> list of (store, row as text) for every row/item/document of every store


def populate(c: Container) -> dict[str, str]:
    """Two tenants with everything a tenant can leave behind; returns each tenant's admin key."""
    keys = {}
    for tenant in ("acme", "globex"):
        c.tenancy.create_tenant(tenant, name=f"{tenant} Inc.")
        for ns in ("docs", "old"):
            c.registry.create_namespace(new_namespace(tenant, ns, description=f"{tenant} {ns}"))
        keys[tenant], _ = c.tenancy.create_key(tenant, scopes=["search", "admin", "chat"])
        c.tenancy.create_key(tenant, scopes=["search"], namespaces=["docs"], name="reader")
        word = SECRET if tenant == "acme" else "wombat"
        for version in range(2):  # two versions of the object, each indexed
            body = f"Version {version}: the {word} handbook says {word} {version}.".encode()
            c.objects.put(f"{tenant}/docs/guide.txt", body)
            c.ingest.ingest(
                TenantScope(tenant_id=tenant, namespace_id="docs"), filename="guide.txt", data=body
            )
        old = TenantScope(tenant_id=tenant, namespace_id="old")
        c.ingest.ingest(old, filename="gone.txt", data=f"An old {word} note.".encode())
        c.ingest.remove(old, "gone.txt")  # a deleted record and a fence stay after the namespace goes
        c.registry.delete_namespace(tenant, "old")
        principal = c.tenancy.authenticate(f"Bearer {keys[tenant]}")
        hits = c.search.search(principal, "docs", SearchRequest(query=word), run_id="run-1").hits
        assert hits and word in hits[0].text  # a recorded result that quotes the chunk
        # a chat run: its recorded events and its conversation quote the question and the chunk
        ask = ChatRequest.model_validate(
            {
                "messages": [{"role": "user", "content": f"What does the {word} handbook say?"}],
                "namespaces": ["docs"],
            }
        )
        final = list(c.chat.answer_chat(principal, ask, run_id="chat-1"))[-1]
        assert final.type == "final" and final.conversation_id
    return keys


def check_deletion(backend: Backend) -> None:
    c = backend.container
    keys = populate(c)
    assert any(SECRET in row for _, row in backend.raw_rows())  # the probe sees acme's data

    purge = c.tenant_deletion.delete("acme")

    assert purge.objects >= 1 and purge.chunks >= 1 and purge.documents == 2 and purge.usage_details >= 1 + 3
    leftovers = [(store, row) for store, row in backend.raw_rows() if "acme" in row]
    assert all(SECRET not in row for _, row in leftovers), leftovers
    assert sorted({store for store, _ in leftovers}) <= ["ledger", "tenant"], leftovers
    tombstone = c.registry.get_tenant("acme")
    assert tombstone.status == "deleted" and tombstone.name == ""
    with pytest.raises(errors.Unauthorized):
        c.tenancy.authenticate(f"Bearer {keys['acme']}")
    with pytest.raises(errors.Conflict):  # final: neither reactivated nor re-created
        c.tenancy.set_status("acme", "active")
    with pytest.raises(errors.Conflict):
        c.tenancy.create_tenant("acme")
    # An S3 event of the deleted tenant (a late upload, or the purge's own removals) leaves nothing
    c.objects.put("acme/docs/late.txt", f"A late {SECRET}.".encode())
    late = ObjectEvent(
        scope=TenantScope(tenant_id="acme", namespace_id="docs"), key="acme/docs/late.txt",
        path="late.txt", sequencer="00FF",
    )  # fmt: skip
    assert c.ingest.sync_object(late).outcome == "ignored"
    assert c.documents.list("acme", "docs") == []
    assert c.tenant_deletion.delete("acme").objects == 1  # run again: idempotent, sweeps the late one
    assert all(SECRET not in row for _, row in backend.raw_rows())
    # The other tenant is untouched
    globex = c.tenancy.authenticate(f"Bearer {keys['globex']}")
    hits = c.search.search(globex, "docs", SearchRequest(query="wombat")).hits
    assert [h.document_id for h in hits] == ["guide.txt"] and "Version 1" in hits[0].text
    assert [n.namespace_id for n in c.registry.list_namespaces("globex")] == ["docs"]
    assert len(c.registry.list_api_keys("globex")) == 2
    folder = original_folder("globex", "docs", "guide.txt")  # what a reindex re-reads
    bodies = [f"Version {v}: the wombat handbook says wombat {v}.".encode() for v in range(2)]
    kept = [f"{folder}/{original_version(b)}/guide.txt" for b in bodies]  # served, and the one before
    assert c.objects.list("globex") == sorted(["globex/docs/guide.txt", *kept])
    assert [r.document_id for r in c.documents.list("globex", "docs")] == ["guide.txt"]


# -- the embedded backend: SQLite files and a local folder -------------------------------------------
def sqlite_rows(home: Path) -> list[tuple[str, str]]:
    stores = {"tenants": "tenant", "usage": "ledger"}
    rows = []
    for path in sorted(home.rglob("*.sqlite")):
        if path.parent.name == "cache":
            continue  # the embedding cache: vectors by text hash, shared by every tenant (decisions.md)
        db = sqlite3.connect(path)
        try:
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'"):
                for row in db.execute(f'SELECT * FROM "{table}"'):
                    text = " ".join(str(v) for v in row if not isinstance(v, bytes))
                    rows.append((stores.get(path.stem, path.stem), text))
        finally:
            db.close()
    objects = home / "objects"
    rows += [("objects", str(p.relative_to(objects))) for p in objects.rglob("*")] if objects.exists() else []
    return rows


def test_deleting_a_tenant_leaves_nothing_of_it_on_the_embedded_backend(tmp_path: Path) -> None:
    home = tmp_path / "home"
    container = Container(Settings(home=home), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    try:
        check_deletion(Backend(container, lambda: sqlite_rows(home)))
    finally:
        container.close()


# -- the AWS backend: DynamoDB and S3 (moto server), the real OpenSearch node ---------------------------
@pytest.fixture
def aws_backend(
    moto_endpoint: str, moto_aws_env: dict[str, str], opensearch_url: str, tmp_path: Path
) -> Iterator[Backend]:
    session = boto3.session.Session(region_name=REGION)
    ddb = session.client("dynamodb", endpoint_url=moto_endpoint)
    s3 = session.client("s3", endpoint_url=moto_endpoint)
    suffix = uuid.uuid4().hex[:8]
    bucket = f"documents-{suffix}"
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    tables = {
        store: create_table_from_template(ddb, logical_id, f"{store}-{suffix}")
        for store, logical_id in (
            ("tenant", "TenantsTable"),
            ("documents", "DocumentsTable"),
            ("ledger", "UsageTable"),
        )
    }
    embedder = BowEmbedder()
    stores = OpenSearchVectorStoreProvider(
        build_client(Settings(opensearch_url=opensearch_url)),
        index=f"tenants-{suffix}",
        dimension=embedder.dimension,
    )
    container = Container(
        Settings(home=tmp_path / "home"),
        registry=DynamoDbTenantRegistry(tables["tenant"], client=ddb),
        documents=DynamoDbDocumentRegistry(tables["documents"], client=ddb),
        ledger=DynamoDbUsageLedger(tables["ledger"], client=ddb),
        run_log=DynamoDbRunLog(tables["ledger"], client=ddb),
        conversation_store=DynamoDbConversationStore(tables["ledger"], client=ddb),
        objects=S3ObjectStore(bucket, client=s3),
        stores=stores,
        embedder=embedder,
        tokenizer=embedder,
    )

    def raw_rows() -> list[tuple[str, str]]:
        rows = []
        for store, table in tables.items():
            for page in ddb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
                rows += [(store, str(item)) for item in page.get("Items", [])]
        versions = s3.list_object_versions(Bucket=bucket)
        for entry in [*versions.get("Versions", []), *versions.get("DeleteMarkers", [])]:
            body = ""
            if "Size" in entry:
                body = (
                    s3.get_object(Bucket=bucket, Key=entry["Key"], VersionId=entry["VersionId"])["Body"]
                    .read()
                    .decode()
                )
            rows.append(("objects", f"{entry['Key']} {body}"))
        stores.client.indices.refresh(index=[stores.index, fences_index(stores.index)])
        for index in (stores.index, fences_index(stores.index)):
            found = stores.client.search(index=index, body={"query": {"match_all": {}}, "size": 1000})
            rows += [("opensearch", str(hit["_source"])) for hit in found["hits"]["hits"]]
        return rows

    yield Backend(container, raw_rows)
    stores.drop()
    container.close()


@pytest.mark.opensearch
def test_deleting_a_tenant_leaves_nothing_of_it_on_the_aws_backend(aws_backend: Backend) -> None:
    check_deletion(aws_backend)
