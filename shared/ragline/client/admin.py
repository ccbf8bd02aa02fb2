"""The client's administration of a tenant: namespaces (and their reindexes), API keys, the tenant's
identity provider, webhooks, and the usage report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ragline.domain.api import (
    IdentityProviderBody,
    IdentityProviderDeleted,
    IdentityProviderView,
    KeyList,
    KeyView,
    NamespaceDeleted,
    NamespaceList,
    NamespaceView,
    NewKeyView,
    UsageReport,
)
from ragline.domain.limits import Limits
from ragline.domain.webhook_api import NewWebhookView, WebhookList, WebhookView

from .transport import ApiTransport, _seg


class AdminRequests(ApiTransport):
    """Namespaces, keys, the identity provider, webhooks and usage."""

    # -- namespaces ----------------------------------------------------------------------------
    def list_namespaces(self) -> NamespaceList:
        return self._call(NamespaceList, "GET", "/v1/namespaces")

    def get_namespace(self, namespace: str) -> NamespaceView:
        return self._call(NamespaceView, "GET", f"/v1/namespaces/{_seg(namespace)}")

    def create_namespace(
        self, namespace: str, *, description: str = "", default: bool = False
    ) -> NamespaceView:
        body = {"namespaceId": namespace, "description": description, "default": default}
        return self._call(NamespaceView, "POST", "/v1/namespaces", body)

    def update_namespace(
        self,
        namespace: str,
        *,
        description: str | None = None,
        default: bool | None = None,
        system_prompt: str | None = None,
        chunks_per_search: int | None = None,
        metadata_schema: Mapping[str, str] | None = None,
    ) -> NamespaceView:
        """``metadata_schema`` declares metadata keys' types (adds keys; dates must be declared)."""
        patch = {
            "description": description,
            "default": default,
            "systemPrompt": system_prompt,
            "chunksPerSearch": chunks_per_search,
            "metadataSchema": dict(metadata_schema) if metadata_schema else None,
        }
        body = {k: v for k, v in patch.items() if v is not None}
        return self._call(NamespaceView, "PATCH", f"/v1/namespaces/{_seg(namespace)}", body)

    def reindex_namespace(
        self,
        namespace: str,
        *,
        embedding_model: str | None = None,
        chunk_tokens: int | None = None,
        chunk_overlap_tokens: int | None = None,
        chunking: str | None = None,
        parent_chunk_tokens: int | None = None,
    ) -> NamespaceView:
        """Start rebuilding ``namespace`` with another embedding model or chunking; it keeps serving
        meanwhile, and ``get_namespace(...).rebuild`` shows the progress."""
        request = {
            "embeddingModel": embedding_model,
            "chunkTokens": chunk_tokens,
            "chunkOverlapTokens": chunk_overlap_tokens,
            "chunking": chunking,
            "parentChunkTokens": parent_chunk_tokens,
        }
        body = {k: v for k, v in request.items() if v is not None}
        return self._call(NamespaceView, "POST", f"/v1/namespaces/{_seg(namespace)}/reindex", body)

    def delete_namespace(self, namespace: str) -> NamespaceDeleted:
        return self._call(NamespaceDeleted, "DELETE", f"/v1/namespaces/{_seg(namespace)}")

    # -- keys and the identity provider --------------------------------------------------------
    def list_keys(self) -> KeyList:
        return self._call(KeyList, "GET", "/v1/keys")

    def create_key(
        self,
        scopes: Sequence[str],
        *,
        name: str = "",
        namespaces: Sequence[str] = (),
        assert_user: bool = False,
        require_user: bool = False,
        limits: Limits | None = None,
    ) -> NewKeyView:
        """``assert_user``: the key may act for an end user (:meth:`for_user`); ``require_user``: it must.
        ``limits``: the key's own request rate and concurrent runs, within its tenant's."""
        body: dict[str, Any] = {
            "scopes": list(scopes),
            "name": name,
            "namespaces": list(namespaces),
            "assertUser": assert_user,
            "requireUser": require_user,
        }
        if limits is not None:
            body["limits"] = limits.model_dump(exclude_none=True)
        return self._call(NewKeyView, "POST", "/v1/keys", body)

    def get_identity_provider(self) -> IdentityProviderView:
        return self._call(IdentityProviderView, "GET", "/v1/tenant/identity-provider")

    def set_identity_provider(
        self, provider: IdentityProviderBody | Mapping[str, Any]
    ) -> IdentityProviderView:
        """Whose tokens act as this tenant's end users (camelCase fields, as the API's body)."""
        body = provider.model_dump(by_alias=True) if isinstance(provider, BaseModel) else dict(provider)
        return self._call(IdentityProviderView, "PUT", "/v1/tenant/identity-provider", body)

    def delete_identity_provider(self) -> IdentityProviderDeleted:
        return self._call(IdentityProviderDeleted, "DELETE", "/v1/tenant/identity-provider")

    def revoke_key(self, key_id: str) -> KeyView:
        return self._call(KeyView, "DELETE", f"/v1/keys/{_seg(key_id)}")

    # -- webhooks ------------------------------------------------------------------------------
    def create_webhook(
        self, url: str, *, event_types: Sequence[str] = (), description: str = ""
    ) -> NewWebhookView:
        """Subscribe ``url`` to ``event_types`` (none: every event); the signing secret is in this
        answer only (keep it: it verifies each delivery's ``Ragline-Signature``)."""
        body = {"url": url, "eventTypes": list(event_types), "description": description}
        return self._call(NewWebhookView, "POST", "/v1/webhooks", body)

    def list_webhooks(self) -> WebhookList:
        return self._call(WebhookList, "GET", "/v1/webhooks")

    def get_webhook(self, webhook_id: str) -> WebhookView:
        return self._call(WebhookView, "GET", f"/v1/webhooks/{_seg(webhook_id)}")

    def delete_webhook(self, webhook_id: str) -> WebhookView:
        return self._call(WebhookView, "DELETE", f"/v1/webhooks/{_seg(webhook_id)}")

    def rotate_webhook_secret(self, webhook_id: str) -> NewWebhookView:
        """A new signing secret, returned this once; the old one stops signing at once."""
        return self._call(NewWebhookView, "POST", f"/v1/webhooks/{_seg(webhook_id)}/rotate-secret", {})

    # -- usage ---------------------------------------------------------------------------------
    def usage(self, period: str | None = None) -> UsageReport:
        params = {"period": period} if period else None
        return self._call(UsageReport, "GET", "/v1/usage", params=params)
