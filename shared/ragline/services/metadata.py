"""A document's metadata typed by its namespace: the one step every source (API, S3 sidecar, folder)
goes through before a version carries it.

The schema only grows, and through one atomic registry call
(:meth:`~ragline.ports.TenantRegistry.extend_metadata_schema`): a value whose key the namespace
already types otherwise is a :class:`~ragline.errors.MetadataTypeClash`, and of two documents typing
a new key differently at the same time, exactly one wins. Everything is checked before the schema
grows, so a refused document (a bad key, value, principal or limit) changes nothing.
"""

from __future__ import annotations

from ragline.domain.attributes import normalise
from ragline.domain.document_metadata import DocumentMetadata, MetadataInput
from ragline.domain.tenancy import Namespace
from ragline.ports import TenantRegistry


def resolve_metadata(
    registry: TenantRegistry, namespace: Namespace, given: MetadataInput
) -> DocumentMetadata:
    """``given`` checked and typed by ``namespace``'s schema, its new keys fixed on the namespace."""
    readers = given.readers()
    attributes, new = normalise(given.attributes, namespace.settings.metadata_schema)
    if new:
        registry.extend_metadata_schema(namespace.tenant_id, namespace.namespace_id, new)
    return DocumentMetadata(attributes=attributes, readers=readers)
