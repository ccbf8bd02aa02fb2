"""The public API's bodies: every request and response model of every route and SSE event.

One casing rule: every JSON field Ragline defines is camelCase (``runId``, ``exitReason``,
``llmInputTokens``), in requests, responses, SSE events and error details alike. Python code uses
snake_case names; the alias generator maps them. Requests accept only the camelCase names and refuse
unknown fields, so a typo is a 400, not a silently ignored option.

One module per concern: :mod:`.common` (shared views, the request base), :mod:`.chat`,
:mod:`.search`, :mod:`.hosting_search`, :mod:`.namespaces`, :mod:`.credentials` (keys, identity
provider), :mod:`.usage`, :mod:`.documents`, :mod:`.error_body`. Import the bodies from here.
"""

from ragline.domain.api.chat import LEGACY_MODES, ChatAgent, ChatMode, ChatRequest, RequestMessage
from ragline.domain.api.common import (
    FILTER_DESCRIPTION,
    ApiRequest,
    ChunkView,
    RequestFilter,
    Scores,
    Usage,
    WarningView,
)
from ragline.domain.api.credentials import (
    TOKEN_SCOPES,
    IdentityProviderBody,
    IdentityProviderDeleted,
    IdentityProviderView,
    KeyList,
    KeyView,
    NewKey,
    NewKeyView,
    TokenScope,
)
from ragline.domain.api.documents import (
    METADATA_DESCRIPTION,
    AccessView,
    AddText,
    DocumentAccess,
    DocumentDeletion,
    DocumentError,
    DocumentLabels,
    DocumentList,
    DocumentUpdate,
    DocumentView,
)
from ragline.domain.api.error_body import ErrorBody, ErrorDetail
from ragline.domain.api.hosting_search import (
    HostingExit,
    HostingQueryType,
    HostingQueryView,
    HostingRoundView,
    HostingSearchRequest,
    HostingSearchResponse,
)
from ragline.domain.api.namespaces import (
    CHUNKING_DOC,
    PARENT_DOC,
    NamespaceDeleted,
    NamespaceList,
    NamespacePatch,
    NamespaceView,
    NewNamespace,
    RebuildView,
    ReindexRequest,
)
from ragline.domain.api.search import RerankView, SearchRequest, SearchResponse
from ragline.domain.api.usage import IngestionUsage, UsageReport
from ragline.domain.api_base import ApiModel

__all__ = [
    "CHUNKING_DOC",
    "FILTER_DESCRIPTION",
    "LEGACY_MODES",
    "METADATA_DESCRIPTION",
    "PARENT_DOC",
    "TOKEN_SCOPES",
    "AccessView",
    "AddText",
    "ApiModel",
    "ApiRequest",
    "ChatAgent",
    "ChatMode",
    "ChatRequest",
    "ChunkView",
    "DocumentAccess",
    "DocumentDeletion",
    "DocumentError",
    "DocumentLabels",
    "DocumentList",
    "DocumentUpdate",
    "DocumentView",
    "ErrorBody",
    "ErrorDetail",
    "HostingExit",
    "HostingQueryType",
    "HostingQueryView",
    "HostingRoundView",
    "HostingSearchRequest",
    "HostingSearchResponse",
    "IdentityProviderBody",
    "IdentityProviderDeleted",
    "IdentityProviderView",
    "IngestionUsage",
    "KeyList",
    "KeyView",
    "NamespaceDeleted",
    "NamespaceList",
    "NamespacePatch",
    "NamespaceView",
    "NewKey",
    "NewKeyView",
    "NewNamespace",
    "RebuildView",
    "ReindexRequest",
    "RequestFilter",
    "RequestMessage",
    "RerankView",
    "Scores",
    "SearchRequest",
    "SearchResponse",
    "TokenScope",
    "Usage",
    "UsageReport",
    "WarningView",
]
