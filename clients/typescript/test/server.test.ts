// The client against a real `ragline serve --api-keys` (started by tests/e2e/test_typescript_client.py,
// which passes its URL and an admin key): documents, search, chat streamed and not, errors in the one
// shape, end users, idempotent runs and retries.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";

import { RaglineClient, RaglineError } from "../src/index.js";
import type { PlannedRetrieval, QueryPlan, RunEvent } from "../src/index.js";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run tests/e2e/test_typescript_client.py, which serves Ragline`);
  return value;
}

const baseUrl = required("RAGLINE_TEST_URL");
const apiKey = required("RAGLINE_TEST_API_KEY");
const rl = new RaglineClient({ baseUrl, apiKey, backoffMs: 10 });
const NS = "handbook";

async function refusal(promise: Promise<unknown> | (() => Promise<unknown>)): Promise<RaglineError> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    assert.ok(error instanceof RaglineError, `a RaglineError, not ${String(error)}`);
    return error;
  }
  assert.fail("the call was not refused");
}

async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

before(async () => {
  await rl.createNamespace(NS, { description: "Shop policies" });
  await rl.addText(NS, "warranty.md", "The frame warranty lasts ten years from the date of purchase.");
});

describe("documents", () => {
  it("creates, lists, gets and deletes documents (an id may hold a slash)", async () => {
    const doc = await rl.addText(NS, "notes/returns.md", "Bicycles can be returned within thirty days.", {
      metadata: { year: 2024 },
    });
    assert.equal(doc.documentId, "notes/returns.md");
    assert.equal(doc.status, "ready");
    assert.deepEqual(doc.metadata, { year: 2024 });
    const listed = await rl.listDocuments(NS);
    assert.deepEqual(listed.documents.map((d) => d.documentId).sort(), ["notes/returns.md", "warranty.md"]);
    assert.equal((await rl.getDocument(NS, "notes/returns.md")).chunkCount, 1);
    const relabelled = await rl.updateDocument(NS, "notes/returns.md", { metadata: { year: 2025 } });
    assert.deepEqual([relabelled.status, relabelled.document.metadata], ["updated", { year: 2025 }]);
    assert.equal((await rl.deleteDocument(NS, "notes/returns.md")).status, "deleted");
    const gone = await rl.getDocument(NS, "notes/returns.md");
    assert.deepEqual([gone.status, gone.chunkCount], ["deleted", 0]);
    const never = await refusal(rl.getDocument(NS, "never.md"));
    assert.deepEqual([never.status, never.code, never.details["documentId"]], [404, "not_found", "never.md"]);
  });

  it("calls an operation by its path template (request)", async () => {
    const doc = await rl.request("get", "/v1/namespaces/{namespace}/documents/{document_id}", {
      params: { namespace: NS, document_id: "warranty.md" },
    });
    assert.equal(doc.documentId, "warranty.md");
    const error = await refusal(rl.request("get", "/v1/namespaces/{namespace}", { params: { namespace: "nope" } }));
    assert.deepEqual([error.status, error.code], [404, "namespace_not_found"]);
  });

  it("adds, lists, changes, syncs and removes a data source; credentials never come back", async () => {
    const web = { seeds: ["http://127.0.0.1:9/"], maxPages: 10 }; // a loopback port nothing listens on
    const outside = await refusal(rl.createSource(NS, { kind: "web", web: { seeds: ["http://10.1.2.3/"] } }));
    assert.deepEqual([outside.status, outside.code, outside.details["field"]], [400, "invalid_request", "web.seeds"]);
    const made = await rl.createSource(NS, { kind: "web", name: "intranet", web });
    assert.deepEqual([made.kind, made.name, made.hasCredentials], ["web", "intranet", false]);
    assert.ok(made.sourceId.startsWith("src_"));
    assert.ok((await rl.listSources(NS)).sources.some((s) => s.sourceId === made.sourceId));
    const changed = await rl.updateSource(NS, made.sourceId, { name: "wiki", everyMinutes: 60 });
    assert.deepEqual([changed.name, changed.everyMinutes], ["wiki", 60]);
    const refused = await refusal(rl.createSource(NS, { kind: "web", web, credentials: { apiToken: "s3cret" } }));
    assert.deepEqual([refused.status, refused.code], [400, "invalid_request"]);
    assert.ok(!JSON.stringify(refused.details).includes("s3cret"));
    assert.equal((await rl.syncSource(NS, made.sourceId)).sourceId, made.sourceId);
    await rl.deleteSource(NS, made.sourceId);
    const gone = await refusal(rl.getSource(NS, "src_0000000000000000"));
    assert.deepEqual([gone.status, gone.code], [404, "not_found"]);
  });

  it("subscribes a webhook: its secret once, then read, rotated and deleted", async () => {
    const made = await rl.createWebhook("https://hooks.example.com/ragline", { eventTypes: ["document.failed"] });
    assert.ok(made.secret.startsWith("whsec_"));
    assert.deepEqual(made.eventTypes, ["document.failed"]);
    assert.ok((await rl.listWebhooks()).webhooks.some((w) => w.webhookId === made.webhookId));
    assert.equal((await rl.getWebhook(made.webhookId)).url, "https://hooks.example.com/ragline");
    assert.notEqual((await rl.rotateWebhookSecret(made.webhookId)).secret, made.secret);
    assert.equal((await rl.deleteWebhook(made.webhookId)).webhookId, made.webhookId);
    const error = await refusal(rl.createWebhook("http://10.0.0.1/hook"));
    assert.deepEqual([error.status, error.code], [400, "invalid_request"]);
  });

  it("lists namespaces and reports usage", async () => {
    const spaces = await rl.listNamespaces();
    assert.ok(spaces.namespaces.some((n) => n.namespaceId === NS && n.description === "Shop policies"));
    await rl.search(NS, "warranty");
    assert.ok((await rl.usage()).runs >= 1);
  });
});

describe("runs", () => {
  it("searches", async () => {
    const found = await rl.search(NS, "frame warranty", { k: 3, mode: "hybrid" });
    assert.equal(found.hits[0]?.documentId, "warranty.md");
    assert.ok(found.runId);
  });

  it("runs a hosting search over the namespaces named", async () => {
    const found = await rl.hostingSearch("How long is the frame warranty?", { namespaces: [NS], maxEvals: 1 });
    assert.ok(found.chunks.some((c) => c.documentId === "warranty.md"));
    assert.ok(found.runId && found.exitReason);
    // its plan: its rounds, and each query's search of the one namespace
    assert.equal(found.plan?.agent, "hosting_search");
    assert.equal(found.plan?.rounds?.length, found.rounds.length);
    assert.deepEqual(found.plan?.retrievals?.map((r) => [r.query, r.hits]), found.queries.map((q) => [q.query, q.hits]));
  });

  it("replays a run named by the same idempotency key", async () => {
    const first = await rl.search(NS, "warranty", { idempotencyKey: "ts-client-replay" });
    const again = await rl.search(NS, "warranty", { idempotencyKey: "ts-client-replay" });
    assert.equal(again.replayed, true);
    assert.equal(again.runId, first.runId);
  });

  it("streams a chat as typed events, ending with final", async () => {
    const events = await collect(rl.chat("How long is the frame warranty?", { namespaces: [NS] }));
    assert.ok(events.some((e) => e.type === "text" && e.text.length > 0));
    const sources = events.find((e) => e.type === "sources");
    assert.ok(sources?.type === "sources" && sources.chunks.some((c) => c.id === "warranty.md#0"));
    const final = events.at(-1);
    assert.ok(final?.type === "final", `last event: ${final?.type}`);
    assert.equal(final.exitReason, "answered");
    assert.match(final.answer, /ten years/);
    // the run's query plan: every search it ran, at the model turn that issued it
    const plan: QueryPlan | null | undefined = final.plan;
    assert.equal(plan?.agent, "agentic");
    const searched: PlannedRetrieval[] = plan?.retrievals ?? [];
    assert.equal(searched.length, events.filter((e) => e.type === "tool_end" && e.tool === "search").length);
    assert.ok(searched.length > 0 && searched.every((r) => r.step >= 1 && r.namespaces.includes(NS)));
  });

  it("answers a chat as one body (stream: false)", async () => {
    const body = await rl.ask([{ role: "user", content: "How long is the frame warranty?" }], {
      namespaces: [NS],
      agent: "deep_search",
    });
    assert.equal(body.exitReason, "answered");
    assert.ok((body.sources ?? []).some((s) => s.documentId === "warranty.md"));
    assert.ok(body.runId);
    assert.equal(body.plan?.agent, "deep_search"); // offline: the question's clauses, searched in one round
    assert.ok((body.plan?.subQuestions ?? []).length > 0 && body.plan?.rounds?.length === 1);
  });

  it("stops a stream on abort", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const stream = rl.chat("How long is the frame warranty?", { namespaces: [NS], signal: controller.signal });
    await assert.rejects(
      (async () => {
        for await (const event of stream) {
          seen.push(event.type);
          controller.abort(new Error("the caller stopped reading"));
        }
      })(),
      /the caller stopped reading/,
    );
    assert.equal(seen.length, 1);
  });
});

describe("answer evaluation jobs", () => {
  it("queues a job, polls it to completed and reads its report", async () => {
    const job = await rl.createEvaluation({
      questions: [{ id: "w1", question: "How long is the frame warranty?", reference: "Lifetime." }],
      configs: [{ label: "A", namespaces: [NS] }],
    });
    assert.equal(job.answers, 1);
    let view = await rl.getEvaluation(job.evaluationId);
    for (let i = 0; i < 200 && view.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      view = await rl.getEvaluation(job.evaluationId);
    }
    assert.equal(view.status, "completed");
    const report = await rl.evaluationReport(job.evaluationId);
    assert.deepEqual((report.results ?? []).map((r) => r.questionId), ["w1"]);
    assert.ok((await rl.listEvaluations()).evaluations.some((e) => e.evaluationId === job.evaluationId));
    const missing = await refusal(rl.getEvaluation("nope"));
    assert.deepEqual([missing.status, missing.code], [404, "evaluation_not_found"]);
  });
});

describe("conversations and runs that survive", () => {
  it("continues a conversation with only the new turn, and lists, reads and deletes it", async () => {
    const first = await rl.ask("How long is the frame warranty?", { namespaces: [NS] });
    assert.ok(first.conversationId);
    const second = await rl.ask("And from when?", { namespaces: [NS], conversationId: first.conversationId! });
    assert.equal(second.conversationId, first.conversationId);
    const kept = await rl.getConversation(first.conversationId!);
    assert.deepEqual(kept.turns.map((t) => t.runId), [first.runId, second.runId]);
    assert.equal(kept.turns[1]?.messages[0]?.content, "And from when?");
    const listed = await rl.listConversations();
    assert.ok(listed.conversations.some((c) => c.conversationId === first.conversationId));
    await rl.deleteConversation(first.conversationId!);
    const gone = await refusal(rl.getConversation(first.conversationId!));
    assert.deepEqual([gone.status, gone.code], [404, "conversation_not_found"]);
  });

  it("reads a run's events again after any of them, and runs one in the background", async () => {
    const queued = await rl.startRun("How long is the frame warranty?", { namespaces: [NS] });
    assert.equal(queued.status, "queued");
    const all = await collect(rl.runEvents(queued.runId)); // the live tail, to the end
    assert.equal(all.at(-1)?.type, "final");
    const rest = await collect(rl.runEvents(queued.runId, { after: 2 }));
    assert.deepEqual(rest, all.slice(2));
    const run = await rl.getRun(queued.runId);
    assert.deepEqual([run.status, run.background, run.result?.exitReason], ["completed", true, "answered"]);
    assert.equal((await rl.cancelRun(queued.runId)).status, "completed"); // an ended run stays as it ended
  });
});

describe("errors in the one shape", () => {
  it("404: a namespace that does not exist", async () => {
    const error = await refusal(rl.search("nope", "x"));
    assert.equal(error.status, 404);
    assert.equal(error.code, "namespace_not_found");
    assert.match(error.message, /nope/);
  });

  it("404 before a stream starts: thrown by the iterator", async () => {
    const error = await refusal(() => collect(rl.chat("anything", { namespaces: ["nope"] })));
    assert.equal(error.status, 404);
    assert.equal(error.code, "namespace_not_found");
  });

  it("400: a request the server cannot validate, with its problems", async () => {
    const blank = await refusal(rl.search(NS, "   "));
    assert.equal(blank.status, 400);
    assert.equal(blank.code, "invalid_request");
    const bad = await refusal(rl.search(NS, "x", { k: -1 }));
    assert.equal(bad.code, "invalid_request");
    assert.ok(Array.isArray(bad.details["problems"]), JSON.stringify(bad.details));
  });

  it("401: a key the server does not know", async () => {
    const stranger = new RaglineClient({ baseUrl, apiKey: `rl_${"x".repeat(40)}`, maxRetries: 0 });
    const error = await refusal(stranger.listNamespaces());
    assert.equal(error.status, 401);
    assert.equal(error.code, "unauthorized");
  });

  it("403: naming an end user with a key that may not", async () => {
    const error = await refusal(rl.forUser("alice", ["hr"]).listNamespaces());
    assert.equal(error.status, 403);
    assert.equal(error.code, "forbidden");
  });
});

describe("end users", () => {
  it("acts for the user its client names: a document only for hr is seen by hr alone", async () => {
    await rl.addText(NS, "salaries.md", "Salary bands are reviewed every April.", { access: { groups: ["hr"] } });
    const made = await rl.createKey(["search"], { name: "app", assertUser: true });
    const app = new RaglineClient({ baseUrl, apiKey: made.apiKey });
    const hr = await app.forUser("alice", ["hr"]).search(NS, "salary bands", { mode: "keyword" });
    const other = await app.forUser("bob", ["sales"]).search(NS, "salary bands", { mode: "keyword" });
    assert.ok(hr.hits.some((h) => h.documentId === "salaries.md"));
    assert.ok(!other.hits.some((h) => h.documentId === "salaries.md"));
    await rl.revokeKey(made.keyId);
  });
});

describe("retries", () => {
  /** A fetch that answers the first `failures` requests with `status`, then forwards. */
  function flaky(failures: number, status: number, seen: Array<string | null>): typeof fetch {
    return async (input, init) => {
      seen.push(new Headers(init?.headers).get("idempotency-key"));
      if (failures-- > 0) {
        const body = { error: { code: "dependency_unavailable", message: "try again", details: {} } };
        return new Response(JSON.stringify(body), { status, headers: { "retry-after": "0" } });
      }
      return fetch(input, init);
    };
  }

  it("retries a run under one idempotency key", async () => {
    const seen: Array<string | null> = [];
    const client = new RaglineClient({ baseUrl, apiKey, backoffMs: 1, fetch: flaky(2, 503, seen) });
    assert.ok((await client.search(NS, "warranty")).hits.length > 0);
    assert.equal(seen.length, 3);
    assert.equal(new Set(seen).size, 1);
    assert.ok(seen[0]);
  });

  it("does not retry a write that may have happened, and gives up after the limit", async () => {
    const seen: Array<string | null> = [];
    const client = new RaglineClient({ baseUrl, apiKey, backoffMs: 1, fetch: flaky(1, 503, seen) });
    const error = await refusal(client.createKey(["search"]));
    assert.equal(error.status, 503);
    assert.equal(error.code, "dependency_unavailable");
    assert.equal(seen.length, 1);
    const reads: Array<string | null> = [];
    const limited = new RaglineClient({ baseUrl, apiKey, backoffMs: 1, maxRetries: 2, fetch: flaky(9, 429, reads) });
    const throttled = await refusal(limited.listNamespaces());
    assert.equal(throttled.status, 429);
    assert.equal(throttled.retryAfter, 0);
    assert.equal(reads.length, 3);
  });
});
