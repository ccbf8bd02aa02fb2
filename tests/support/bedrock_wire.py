"""What the local Bedrock server's operations share: the modelled error statuses, the error a handler
raises to answer one, and the ``application/vnd.amazon.eventstream`` frame encoder ConverseStream uses.

A frame as botocore's ``EventStreamBuffer`` parses it (big-endian): total length (u32), headers length
(u32), CRC32 of those 8 bytes, the headers (name length u8, name, type 7 = string, value length u16,
value), the payload, then CRC32 of everything before it.
"""

from __future__ import annotations

import json
import struct
from binascii import crc32
from collections.abc import Mapping
from typing import Any

ERROR_STATUS = {
    "AccessDeniedException": 403,
    "ResourceNotFoundException": 404,
    "ThrottlingException": 429,
    "ModelNotReadyException": 429,
    "ModelTimeoutException": 408,
    "ModelErrorException": 424,
    "DependencyFailedException": 424,
    "ServiceQuotaExceededException": 400,
    "ValidationException": 400,
    "ConflictException": 409,
    "InternalServerException": 500,
    "BadGatewayException": 502,
    "ServiceUnavailableException": 503,
}
"""The HTTP status each error shape declares in the botocore service models."""

_STRING = 7


class ServiceError(Exception):
    """Answer the request with Bedrock error ``code`` (its status from :data:`ERROR_STATUS`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message with string headers."""
    encoded = b""
    for name, value in headers.items():
        key, data = name.encode(), value.encode()
        encoded += struct.pack(">B", len(key)) + key + struct.pack(">BH", _STRING, len(data)) + data
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", crc32(prelude) & 0xFFFFFFFF)
    message = prelude + encoded + payload
    return message + struct.pack(">I", crc32(message) & 0xFFFFFFFF)


def event(event_type: str, body: Mapping[str, Any]) -> bytes:
    """An ``event`` frame; like Bedrock, the JSON payload carries a ``p`` padding field clients ignore."""
    payload = json.dumps({**body, "p": "abcdefghijklmnopqrstuvwxyzABCDEFGH"[: 1 + len(event_type)]})
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return frame(headers, payload.encode())


def exception(exception_type: str, message: str) -> bytes:
    """An ``exception`` frame, e.g. ``throttlingException`` (the member name in ConverseStreamOutput)."""
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return frame(headers, json.dumps({"message": message}).encode())
