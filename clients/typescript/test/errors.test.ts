// RaglineError from a response: the one shape's fields, the request id and Retry-After.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { RaglineError, retryAfterSeconds } from "../src/index.js";

describe("RaglineError.fromResponse", () => {
  it("carries the status, code, message, details, request id and Retry-After", async () => {
    const body = { error: { code: "internal_error", message: "internal error", details: { requestId: "req-1" } } };
    const response = new Response(JSON.stringify(body), { status: 500, headers: { "retry-after": "3" } });
    const error = await RaglineError.fromResponse(response);
    assert.ok(error instanceof Error && error instanceof RaglineError);
    assert.deepEqual(
      [error.status, error.code, error.message, error.requestId, error.retryAfter],
      [500, "internal_error", "internal error", "req-1", 3],
    );
  });

  it("names the request by the gateway's header when the body does not, and keeps a foreign body's status", async () => {
    const response = new Response("<html>Bad Gateway</html>", {
      status: 502,
      headers: { "x-amzn-RequestId": "gw-9" },
    });
    const error = await RaglineError.fromResponse(response);
    assert.deepEqual([error.status, error.code, error.requestId, error.retryAfter], [502, "unexpected_response", "gw-9", undefined]);
  });
});

describe("retryAfterSeconds", () => {
  it("reads delay-seconds and HTTP dates", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    assert.equal(retryAfterSeconds("120", now), 120);
    assert.equal(retryAfterSeconds("Thu, 01 Jan 2026 00:00:30 GMT", now), 30);
    assert.equal(retryAfterSeconds("Wed, 31 Dec 2025 23:59:00 GMT", now), 0);
    assert.equal(retryAfterSeconds("soon", now), undefined);
    assert.equal(retryAfterSeconds(null, now), undefined);
  });
});
