// The transport on a fetch double: timeouts, connection failures retried only when safe, an abort
// during a backoff.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { RaglineClient, RaglineError } from "../src/index.js";

const OK = (): Response => new Response(JSON.stringify({ namespaces: [] }), { status: 200 });

/** A fetch that fails `failures` times with a connection error (as fetch does: a TypeError), then answers. */
function unreachable(failures: number, calls: string[]): typeof fetch {
  return async (_input, init) => {
    calls.push(init?.method ?? "GET");
    if (failures-- > 0) throw new TypeError("fetch failed");
    return OK();
  };
}

describe("transport", () => {
  it("retries a read after a connection failure", async () => {
    const calls: string[] = [];
    const rl = new RaglineClient({ baseUrl: "http://ragline.test", backoffMs: 1, fetch: unreachable(2, calls) });
    assert.deepEqual(await rl.listNamespaces(), { namespaces: [] });
    assert.deepEqual(calls, ["GET", "GET", "GET"]);
  });

  it("does not retry a write without an idempotency key after a connection failure", async () => {
    const calls: string[] = [];
    const rl = new RaglineClient({ baseUrl: "http://ragline.test", backoffMs: 1, fetch: unreachable(1, calls) });
    await assert.rejects(rl.createNamespace("docs"), TypeError);
    assert.deepEqual(calls, ["POST"]);
  });

  it("gives up waiting for a response after timeoutMs, as a typed timeout", async () => {
    const hang: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
    const rl = new RaglineClient({ baseUrl: "http://ragline.test", timeoutMs: 20, maxRetries: 0, fetch: hang });
    await assert.rejects(rl.listNamespaces(), (error: unknown) => error instanceof RaglineError && error.code === "timeout");
  });

  it("stops backing off when the caller aborts", async () => {
    const controller = new AbortController();
    const busy: typeof fetch = async () => {
      controller.abort(new Error("caller gave up"));
      return new Response("{}", { status: 503, headers: { "retry-after": "30" } });
    };
    const rl = new RaglineClient({ baseUrl: "http://ragline.test", fetch: busy });
    await assert.rejects(rl.listNamespaces({ signal: controller.signal }), /caller gave up/);
  });

  it("raises a 429 asking for more than a minute at once, and waits out a short one", async () => {
    const calls: string[] = [];
    const limited = (after: string): typeof fetch => async (_input, init) => {
      calls.push(init?.method ?? "GET");
      const body = { error: { code: "rate_limited", message: "slow down", details: { retryAfter: Number(after) } } };
      return new Response(JSON.stringify(body), { status: 429, headers: { "retry-after": after } });
    };
    const slow = new RaglineClient({ baseUrl: "http://ragline.test", backoffMs: 1, fetch: limited("100") });
    await assert.rejects(slow.listNamespaces(), (e: unknown) => e instanceof RaglineError && e.code === "rate_limited");
    assert.deepEqual(calls, ["GET"]);
    calls.length = 0;
    const quick = new RaglineClient({ baseUrl: "http://ragline.test", backoffMs: 1, maxRetries: 1, fetch: limited("0") });
    await assert.rejects(quick.listNamespaces(), (e: unknown) => e instanceof RaglineError && e.code === "rate_limited");
    assert.deepEqual(calls, ["GET", "GET"]);
  });

  it("sends the key, the end user and JSON, and escapes path segments", async () => {
    const seen: Array<[string, Headers]> = [];
    const record: typeof fetch = async (input, init) => {
      seen.push([String(input), new Headers(init?.headers)]);
      return OK();
    };
    const rl = new RaglineClient({ baseUrl: "http://ragline.test/", apiKey: "rl_k", fetch: record });
    await rl.forUser("u-42", ["hr", "eng"]).getDocument("docs", "notes/a b.md");
    const [url, headers] = seen[0] ?? assert.fail("no request");
    assert.equal(url, "http://ragline.test/v1/namespaces/docs/documents/notes%2Fa%20b.md");
    assert.equal(headers.get("authorization"), "Bearer rl_k");
    assert.equal(headers.get("ragline-user-id"), "u-42");
    assert.equal(headers.get("ragline-user-groups"), "hr,eng");
  });
});

describe("request", () => {
  it("calls any operation by its path template, typed from the OpenAPI document", async () => {
    const seen: Array<[string, string, string | null]> = [];
    const record: typeof fetch = async (input, init) => {
      seen.push([init?.method ?? "", String(input), (init?.body as string | null) ?? null]);
      return new Response(JSON.stringify({ namespaceId: "a/b" }), { status: 200 });
    };
    const rl = new RaglineClient({ baseUrl: "http://ragline.test", fetch: record });
    const view = await rl.request("get", "/v1/namespaces/{namespace}", { params: { namespace: "a/b" } });
    assert.equal(view.namespaceId, "a/b");
    await rl.request("get", "/v1/usage", { query: { period: "2026-01" } });
    await rl.request("post", "/v1/namespaces/{namespace}/search", {
      params: { namespace: "docs" },
      body: { query: "warranty", k: 3 },
    });
    assert.deepEqual(seen, [
      ["GET", "http://ragline.test/v1/namespaces/a%2Fb", null],
      ["GET", "http://ragline.test/v1/usage?period=2026-01", null],
      ["POST", "http://ragline.test/v1/namespaces/docs/search", '{"query":"warranty","k":3}'],
    ]);
  });
});

// Compiled, never run: the types refuse what the OpenAPI document does not allow (tsc fails the build
// when an expected error is missing).
export function typeChecks(rl: RaglineClient): void {
  // @ts-expect-error: no such route
  void rl.request("get", "/v1/nowhere");
  // @ts-expect-error: the path's parameter is required
  void rl.request("get", "/v1/namespaces/{namespace}");
  // @ts-expect-error: k is a number
  void rl.request("post", "/v1/namespaces/{namespace}/search", { params: { namespace: "d" }, body: { query: "q", k: "3" } });
  // @ts-expect-error: GET /v1/namespaces has no body
  void rl.request("get", "/v1/namespaces", { body: {} });
  // @ts-expect-error: a search hit has no `answer`
  void rl.search("d", "q").then((r) => r.hits[0]?.answer);
}

describe("a chat stream aborted mid-way", () => {
  it("hands out no event read ahead after the abort, even when they all came in one chunk", async () => {
    const events = ["a", "b", "c"].map((t) => `event: text\ndata: {"type":"text","text":"${t}"}\n\n`).join("");
    const oneChunk: typeof fetch = async () =>
      new Response(events, { status: 200, headers: { "content-type": "text/event-stream" } });
    const rl = new RaglineClient({ baseUrl: "http://ragline.test", fetch: oneChunk });
    const controller = new AbortController();
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of rl.chat("q", { signal: controller.signal })) {
          seen.push(event.type);
          controller.abort(new Error("the caller stopped reading"));
        }
      })(),
      /the caller stopped reading/,
    );
    assert.deepEqual(seen, ["text"]);
  });
});
