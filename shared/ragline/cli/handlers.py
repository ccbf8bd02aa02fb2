"""The repository's Lambda functions as a local process meets them: which function answers which REST
routes (what ``ragline serve`` routes, and what the OpenAPI document is generated from), and how one is
loaded as the Lambda runtime loads it. ``serve`` and ``openapi`` both read this; neither reads the other
for it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REST_ROUTES = {
    "search": [("/v1/namespaces/{namespace}/search", ["POST"])],
    "hosting_search": [("/v1/hosting-search", ["POST"])],
    "documents": [
        ("/v1/namespaces/{namespace}/documents", ["GET", "POST"]),
        ("/v1/namespaces/{namespace}/documents/{document_id}", ["GET", "PATCH", "DELETE"]),
    ],
    "namespaces": [
        ("/v1/namespaces", ["GET", "POST"]),
        ("/v1/namespaces/{namespace}", ["GET", "PATCH", "DELETE"]),
        ("/v1/namespaces/{namespace}/reindex", ["POST"]),
        ("/v1/namespaces/{namespace}/sources", ["GET", "POST"]),
        ("/v1/namespaces/{namespace}/sources/{source_id}", ["GET", "PATCH", "DELETE"]),
        ("/v1/namespaces/{namespace}/sources/{source_id}/sync", ["POST"]),
    ],
    "keys": [
        ("/v1/keys", ["GET", "POST"]),
        ("/v1/keys/{key_id}", ["DELETE"]),
        ("/v1/usage", ["GET"]),
        ("/v1/tenant/identity-provider", ["GET", "PUT", "DELETE"]),
        ("/v1/webhooks", ["GET", "POST"]),
        ("/v1/webhooks/{webhook_id}", ["GET", "DELETE"]),
        ("/v1/webhooks/{webhook_id}/rotate-secret", ["POST"]),
    ],
}
"""Each REST function of ``functions/`` and its routes: (path template, methods)."""


def load_function(functions: Path, name: str) -> ModuleType:
    """Import ``functions/<name>/app.py`` as the Lambda runtime does: a fresh module from its file."""
    path = functions / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"ragline_fn_{name}", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
