"""The exact error bodies the edge answers for bodies it refuses (shared by the handler and serve tests)."""

from __future__ import annotations

from typing import Any

TOO_DEEP = {
    "error": {
        "code": "invalid_request",
        "message": "request body nests deeper than 32 levels",
        "details": {"maxDepth": 32},
    }
}
NOT_UTF8 = {"error": {"code": "invalid_request", "message": "request body is not valid UTF-8", "details": {}}}


def not_json(media_type: str) -> dict[str, Any]:
    return {
        "error": {
            "code": "unsupported_media_type",
            "message": "request bodies are JSON: send Content-Type: application/json",
            "details": {"contentType": media_type},
        }
    }
