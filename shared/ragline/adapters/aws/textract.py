"""Amazon Textract as a :class:`~ragline.ports.TextRecognizer`: ``DetectDocumentText`` on one page image.

The synchronous API reads one image (PNG, JPEG, TIFF) of at most :data:`SYNC_BYTES` and returns its
``LINE`` blocks, each with a bounding box as fractions of the page; they are scaled to a page of
:data:`PAGE_UNITS` units a side (``page_text`` needs only consistent units). botocore's ``standard``
retries take throttling and 5xx first; what is left is translated by error code, never by message:

- throttling (``ThrottlingException``, ``ProvisionedThroughputExceededException``,
  ``LimitExceededException``) → :class:`~ragline.errors.Throttled`; 5xx and ``InternalServerError``,
  and a connection that fails → :class:`~ragline.errors.DependencyUnavailable` (the queue retries both);
- a page Textract cannot read (``BadDocumentException``, ``UnsupportedDocumentException``,
  ``InvalidParameterException``) → :class:`~ragline.errors.UnreadableDocument`;
  ``DocumentTooLargeException`` → :class:`~ragline.errors.DocumentTooLarge`;
- no permission, credentials or region → :class:`~ragline.errors.ConfigurationError`.

Not here yet (issue 40): the asynchronous job API for multi-page PDFs in S3, and a deployment wired to
it (template parameter, IAM); until then the AWS layer reads no images (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ragline import errors
from ragline.adapters.boto import LazyClient, error_code, http_status
from ragline.documents.page_text import TextLine

SYNC_BYTES = 10 * 1024 * 1024
"""Textract's limit for a document passed as bytes to a synchronous operation."""
PAGE_UNITS = 10_000.0
THROTTLING = frozenset(
    {"ThrottlingException", "ProvisionedThroughputExceededException", "LimitExceededException"}
)
UNREADABLE = frozenset({"BadDocumentException", "UnsupportedDocumentException", "InvalidParameterException"})
MISCONFIGURED = frozenset(
    {
        "AccessDeniedException",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "ExpiredTokenException",
    }
)


class TextractRecognizer:
    name = "textract"
    reads_files = True

    def __init__(
        self,
        *,
        client: Any = None,
        region: str | None = None,
        max_attempts: int = 4,
        connect_timeout_s: float = 3.0,
        read_timeout_s: float = 60.0,
    ) -> None:
        config = {
            "retries": {"mode": "standard", "max_attempts": max_attempts},
            "connect_timeout": connect_timeout_s,
            "read_timeout": read_timeout_s,
        }
        self._client = LazyClient("textract", client=client, region=region, config=config)

    def recognize(self, image: bytes) -> list[TextLine]:
        if len(image) > SYNC_BYTES:
            reason = f"a page image of {len(image):,} bytes is over Textract's {SYNC_BYTES:,}-byte limit"
            raise errors.DocumentTooLarge(f"Cannot read the page: {reason}.", reason=reason)
        with translate("DetectDocumentText"):
            response = self._client().detect_document_text(Document={"Bytes": image})
        return [line for block in response.get("Blocks") or [] if (line := _line(block)) is not None]


def _line(block: dict[str, Any]) -> TextLine | None:
    if block.get("BlockType") != "LINE" or not str(block.get("Text") or "").strip():
        return None
    box = (block.get("Geometry") or {}).get("BoundingBox") or {}
    left, top = float(box.get("Left") or 0.0), float(box.get("Top") or 0.0)
    width, height = float(box.get("Width") or 0.0), float(box.get("Height") or 0.0)
    return TextLine(
        text=str(block["Text"]),
        left=left * PAGE_UNITS,
        top=top * PAGE_UNITS,
        right=(left + width) * PAGE_UNITS,
        bottom=(top + height) * PAGE_UNITS,
        confidence=float(block.get("Confidence") or 0.0) / 100,
    )


@contextmanager
def translate(action: str) -> Iterator[None]:
    """Every botocore failure inside the block as the Ragline error a caller can act on."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        HTTPClientError,
        NoCredentialsError,
        NoRegionError,
        PartialCredentialsError,
    )
    from botocore.exceptions import ConnectionError as BotoConnectionError

    details: dict[str, Any] = {"service": "Textract", "action": action}
    try:
        yield
    except ClientError as exc:
        code, status = error_code(exc), http_status(exc)
        details |= {"aws_code": code, "status": status}
        if code in THROTTLING or status == 429:
            raise errors.Throttled(f"Textract throttled {action}; retry later", **details) from exc
        if code == "DocumentTooLargeException":
            reason = "Textract refused the page as too large"
            raise errors.DocumentTooLarge(
                f"Cannot read the page: {reason}.", reason=reason, **details
            ) from exc
        if code in UNREADABLE:
            reason = f"Textract cannot read the page ({code})"
            raise errors.UnreadableDocument(
                f"Cannot read the page: {reason}.", reason=reason, **details
            ) from exc
        if code in MISCONFIGURED or status == 403:
            raise errors.ConfigurationError(
                f"Textract refused {action} ({code}): the role needs textract:{action}", **details
            ) from exc
        if status >= 500 or code == "InternalServerError":
            raise errors.DependencyUnavailable(f"Textract failed during {action}", **details) from exc
        raise errors.DependencyFailed(f"Textract rejected {action} ({code or status})", **details) from exc
    except (BotoConnectionError, HTTPClientError) as exc:
        raise errors.DependencyUnavailable(f"Textract was unreachable during {action}", **details) from exc
    except (NoCredentialsError, PartialCredentialsError, NoRegionError) as exc:
        raise errors.ConfigurationError(
            f"Textract call {action} has no credentials or region", **details
        ) from exc
    except BotoCoreError as exc:
        raise errors.DependencyFailed(f"Textract call {action} could not be made", **details) from exc
