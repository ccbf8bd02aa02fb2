/**
 * `RaglineClient`: the API from TypeScript, typed by the types generated from docs/openapi.json, the
 * surface of the Python client (`ragline.client.RaglineClient`) in camelCase.
 *
 *     const rl = new RaglineClient({ baseUrl: "https://api.example.com", apiKey: "rl_..." });
 *     const { hits } = await rl.search("docs", "frame warranty");
 *     for await (const event of rl.chat("How long is the frame warranty?", { namespaces: ["docs"] })) {
 *       if (event.type === "text") process.stdout.write(event.text);
 *     }
 *
 * Every refusal is a `RaglineError` (status, code, message, details, request id, Retry-After).
 */
import { RaglineError } from "./errors.js";
import { type Method, type PathOf, type RequestInit, type ResponseOf, fillPath } from "./request.js";
import { type SseMessage, bodyChunks, parseSse, runEvents } from "./sse.js";
import { type Call, type Fetch, Transport, runKey, segment } from "./transport.js";
import type * as T from "./types.js";

export interface ClientOptions {
  /** The API's base URL, e.g. `http://127.0.0.1:8000` for `ragline serve`. */
  baseUrl: string;
  /** A Ragline API key (`rl_…`) or the tenant identity provider's token: sent as a bearer token. */
  apiKey?: string;
  /** Milliseconds to wait for a response (a stream: for its first bytes). Default 120 000. */
  timeoutMs?: number;
  /** Retries of a call that is safe to retry (see the README). Default 3. */
  maxRetries?: number;
  /** The first retry's backoff in milliseconds, doubled each time. Default 500. */
  backoffMs?: number;
  /** A `fetch` to use instead of the global one (a proxy agent, a test double). */
  fetch?: Fetch;
}

/** Every call takes an `AbortSignal`. */
export interface RequestOptions {
  signal?: AbortSignal;
}

/** A metered run (search, hosting search, chat) is named by an idempotency key: yours, or one made per
 * call, so a retry replays the recorded run instead of running and charging it again. */
export interface RunOptions extends RequestOptions {
  idempotencyKey?: string;
}

export type Question = string | T.RequestMessage[];
export type SearchOptions = T.Options<T.SearchRequest, "query"> & RunOptions;
export type HostingSearchOptions = T.Options<T.HostingSearchRequest, "query" | "messages"> & RunOptions;
export type ChatOptions = T.Options<T.ChatRequest, "messages" | "stream" | "background"> & RunOptions;
export type RunEventsOptions = RequestOptions & {
  /** Resume after this event (the `id` of the last event received); 0: from the start. */
  after?: number;
};
export type AddTextOptions = T.Options<T.AddText, "filename" | "text"> & RequestOptions;

export class RaglineClient {
  private readonly transport: Transport;
  private readonly user: Record<string, string>;

  /** `user`: the end-user headers `forUser` sets (pass none; call `forUser`). */
  constructor(options: ClientOptions, user: Record<string, string> = {}) {
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? 120_000,
      maxRetries: options.maxRetries ?? 3,
      backoffMs: options.backoffMs ?? 500,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    });
    this.user = user;
  }

  /** This client acting for an end user (`Ragline-User-Id` / `Ragline-User-Groups`); its key needs
   * `assertUser`. The new client shares this one's settings. */
  forUser(userId: string, groups: readonly string[] = []): RaglineClient {
    const user: Record<string, string> = { "Ragline-User-Id": userId };
    if (groups.length) user["Ragline-User-Groups"] = groups.join(",");
    return new RaglineClient(this.transport.options, user);
  }

  // -- runs (metered) ---------------------------------------------------------------------------
  search(namespace: string, query: string, options: SearchOptions = {}): Promise<T.SearchResponse> {
    const { idempotencyKey, signal, ...body } = options;
    const path = `/v1/namespaces/${segment(namespace)}/search`;
    return this.call({ method: "POST", path, body: { query, ...body }, run: idempotencyKey ?? runKey(), signal });
  }

  hostingSearch(question: Question, options: HostingSearchOptions = {}): Promise<T.HostingSearchResponse> {
    const { idempotencyKey, signal, ...rest } = options;
    const body = typeof question === "string" ? { query: question, ...rest } : { messages: question, ...rest };
    return this.call({ method: "POST", path: "/v1/hosting-search", body, run: idempotencyKey ?? runKey(), signal });
  }

  /** The run's events as they stream (`text`, `tool_start`, `sources`… `final`). A refusal before
   * the first event throws a `RaglineError`. A stream that drops mid-run is resumed after its last
   * event (`GET /v1/runs/{runId}/events` with `Last-Event-ID`): nothing lost or repeated, nothing run
   * again. Leaving the loop early (or aborting) closes the stream; the run goes on on the server.
   * `conversationId`: continue that conversation (`question`: only the new turn). */
  async *chat(question: Question, options: ChatOptions = {}): AsyncGenerator<T.RunEvent> {
    const { idempotencyKey, signal, ...rest } = options;
    const { response, done } = await this.transport.send({
      method: "POST",
      path: "/v1/chat",
      body: { messages: messages(question), ...rest, stream: true },
      headers: { ...this.user, Accept: "text/event-stream" },
      run: idempotencyKey ?? runKey(),
      signal,
    });
    done();
    if (!response.body) throw new RaglineError({ status: response.status, code: "invalid_event", message: "no stream" });
    const runId = response.headers.get("ragline-run-id") ?? "";
    let after = 0;
    try {
      for await (const { id, event } of numbered(parseSse(bodyChunks(response.body)))) {
        signal?.throwIfAborted(); // events already read ahead are not handed out after an abort
        after = id || after;
        yield event;
      }
      return;
    } catch (error) {
      if (signal?.aborted || !runId || error instanceof RaglineError) throw error;
    }
    yield* this.runEvents(runId, { after, signal });
  }

  /** A whole chat run as one body (`stream: false`): answer, sources, warnings, usage, plan and the
   * `conversationId` to pass to the next turn. */
  ask(question: Question, options: ChatOptions = {}): Promise<T.ChatResponse> {
    const { idempotencyKey, signal, ...rest } = options;
    const body = { messages: messages(question), ...rest, stream: false };
    return this.call({ method: "POST", path: "/v1/chat", body, run: idempotencyKey ?? runKey(), signal });
  }

  /** A chat run in the background (`background: true`): queued at once, it goes on with no client.
   * Read it with `getRun`, follow it with `runEvents`, stop it with `cancelRun`. */
  startRun(question: Question, options: ChatOptions = {}): Promise<T.RunAccepted> {
    const { idempotencyKey, signal, ...rest } = options;
    const body = { messages: messages(question), ...rest, stream: false, background: true };
    return this.call({ method: "POST", path: "/v1/chat", body, run: idempotencyKey ?? runKey(), signal });
  }

  // -- runs and conversations -------------------------------------------------------------------
  getRun(runId: string, options: RequestOptions = {}): Promise<T.RunView> {
    return this.call({ method: "GET", path: `/v1/runs/${segment(runId)}`, ...options });
  }

  /** The run's events after event `after`, then its live tail until it ends; a dropped connection is
   * resumed after the last event received. */
  async *runEvents(runId: string, options: RunEventsOptions = {}): AsyncGenerator<T.RunEvent> {
    const { signal } = options;
    let after = options.after ?? 0;
    for (let attempt = 0; ; attempt++) {
      const { response, done } = await this.transport.send({
        method: "GET",
        path: `/v1/runs/${segment(runId)}/events`,
        headers: { ...this.user, Accept: "text/event-stream", "Last-Event-ID": String(after) },
        signal,
      });
      done();
      if (!response.body) throw new RaglineError({ status: response.status, code: "invalid_event", message: "no stream" });
      try {
        for await (const { id, event } of numbered(parseSse(bodyChunks(response.body)))) {
          signal?.throwIfAborted();
          after = id || after;
          yield event;
        }
        return;
      } catch (error) {
        if (signal?.aborted || error instanceof RaglineError || attempt >= this.transport.options.maxRetries) throw error;
      }
    }
  }

  /** Stop the run: it ends `cancelled`, charged for what it spent (an ended run is unchanged). */
  cancelRun(runId: string, options: RequestOptions = {}): Promise<T.RunView> {
    return this.call({ method: "POST", path: `/v1/runs/${segment(runId)}/cancel`, body: {}, ...options });
  }

  listConversations(options: RequestOptions = {}): Promise<T.ConversationList> {
    return this.call({ method: "GET", path: "/v1/conversations", ...options });
  }

  getConversation(conversationId: string, options: RequestOptions = {}): Promise<T.ConversationView> {
    return this.call({ method: "GET", path: `/v1/conversations/${segment(conversationId)}`, ...options });
  }

  deleteConversation(conversationId: string, options: RequestOptions = {}): Promise<void> {
    return this.call({ method: "DELETE", path: `/v1/conversations/${segment(conversationId)}`, ...options });
  }

  // -- answer evaluation jobs ---------------------------------------------------------------------
  /** Queue a job: its questions through chat under one or two configurations, every answer scored
   * (README "Evaluating answers"); poll `getEvaluation` until `completed`. */
  createEvaluation(job: T.EvaluationRequest, options: RequestOptions = {}): Promise<T.EvaluationView> {
    return this.call({ method: "POST", path: "/v1/evaluations", body: job, ...options });
  }

  listEvaluations(options: RequestOptions = {}): Promise<T.EvaluationList> {
    return this.call({ method: "GET", path: "/v1/evaluations", ...options });
  }

  getEvaluation(evaluationId: string, options: RequestOptions = {}): Promise<T.EvaluationView> {
    return this.call({ method: "GET", path: `/v1/evaluations/${segment(evaluationId)}`, ...options });
  }

  /** A completed job's report as JSON (`evaluation_not_complete` before then; the HTML page is the
   * same path without `format`). */
  evaluationReport(evaluationId: string, options: RequestOptions = {}): Promise<T.EvaluationReport> {
    const path = `/v1/evaluations/${segment(evaluationId)}/report`;
    return this.call({ method: "GET", path, query: { format: "json" }, ...options });
  }

  // -- documents --------------------------------------------------------------------------------
  listDocuments(namespace: string, options: RequestOptions = {}): Promise<T.DocumentList> {
    return this.call({ method: "GET", path: `/v1/namespaces/${segment(namespace)}/documents`, ...options });
  }

  getDocument(namespace: string, documentId: string, options: RequestOptions = {}): Promise<T.DocumentView> {
    return this.call({ method: "GET", path: documentPath(namespace, documentId), ...options });
  }

  /** `metadata`: `{key: value}` (string, number, boolean, list of strings, ISO date); `access`: who
   * may read it (none: everyone). */
  addText(namespace: string, filename: string, text: string, options: AddTextOptions = {}): Promise<T.DocumentView> {
    const { signal, ...rest } = options;
    const path = `/v1/namespaces/${segment(namespace)}/documents`;
    return this.call({ method: "POST", path, body: { filename, text, ...rest }, signal });
  }

  /** Replace a document's metadata and/or who may read it; its content is not re-embedded. */
  updateDocument(
    namespace: string,
    documentId: string,
    labels: T.Options<T.DocumentLabels>,
    options: RequestOptions = {},
  ): Promise<T.DocumentUpdate> {
    return this.call({ method: "PATCH", path: documentPath(namespace, documentId), body: labels, ...options });
  }

  deleteDocument(namespace: string, documentId: string, options: RequestOptions = {}): Promise<T.DocumentDeletion> {
    return this.call({ method: "DELETE", path: documentPath(namespace, documentId), ...options });
  }

  // -- administration ---------------------------------------------------------------------------
  listNamespaces(options: RequestOptions = {}): Promise<T.NamespaceList> {
    return this.call({ method: "GET", path: "/v1/namespaces", ...options });
  }

  getNamespace(namespace: string, options: RequestOptions = {}): Promise<T.NamespaceView> {
    return this.call({ method: "GET", path: `/v1/namespaces/${segment(namespace)}`, ...options });
  }

  createNamespace(
    namespace: string,
    options: T.Options<T.NewNamespace, "namespaceId"> & RequestOptions = {},
  ): Promise<T.NamespaceView> {
    const { signal, ...rest } = options;
    return this.call({ method: "POST", path: "/v1/namespaces", body: { namespaceId: namespace, ...rest }, signal });
  }

  /** Change a namespace; `metadataSchema` declares metadata keys' types (adds keys). */
  updateNamespace(
    namespace: string,
    patch: T.Options<T.NamespacePatch>,
    options: RequestOptions = {},
  ): Promise<T.NamespaceView> {
    return this.call({ method: "PATCH", path: `/v1/namespaces/${segment(namespace)}`, body: patch, ...options });
  }

  /** Start rebuilding a namespace with another embedding model or chunking; it serves meanwhile. */
  reindexNamespace(
    namespace: string,
    request: T.Options<T.ReindexRequest> = {},
    options: RequestOptions = {},
  ): Promise<T.NamespaceView> {
    const path = `/v1/namespaces/${segment(namespace)}/reindex`;
    return this.call({ method: "POST", path, body: request, ...options });
  }

  deleteNamespace(namespace: string, options: RequestOptions = {}): Promise<T.NamespaceDeleted> {
    return this.call({ method: "DELETE", path: `/v1/namespaces/${segment(namespace)}`, ...options });
  }

  listKeys(options: RequestOptions = {}): Promise<T.KeyList> {
    return this.call({ method: "GET", path: "/v1/keys", ...options });
  }

  /** `assertUser`: the key may act for an end user (`forUser`); `requireUser`: it must. */
  createKey(
    scopes: T.NewKey["scopes"],
    options: T.Options<T.NewKey, "scopes"> & RequestOptions = {},
  ): Promise<T.NewKeyView> {
    const { signal, ...rest } = options;
    return this.call({ method: "POST", path: "/v1/keys", body: { scopes, ...rest }, signal });
  }

  revokeKey(keyId: string, options: RequestOptions = {}): Promise<T.KeyView> {
    return this.call({ method: "DELETE", path: `/v1/keys/${segment(keyId)}`, ...options });
  }

  getIdentityProvider(options: RequestOptions = {}): Promise<T.IdentityProviderView> {
    return this.call({ method: "GET", path: "/v1/tenant/identity-provider", ...options });
  }

  /** Whose tokens act as this tenant's end users. */
  setIdentityProvider(
    provider: T.Options<T.IdentityProviderBody, "issuer" | "audiences"> &
      Pick<T.IdentityProviderBody, "issuer" | "audiences">,
    options: RequestOptions = {},
  ): Promise<T.IdentityProviderView> {
    return this.call({ method: "PUT", path: "/v1/tenant/identity-provider", body: provider, ...options });
  }

  deleteIdentityProvider(options: RequestOptions = {}): Promise<T.IdentityProviderDeleted> {
    return this.call({ method: "DELETE", path: "/v1/tenant/identity-provider", ...options });
  }

  /** Subscribe `url` to `eventTypes` (none: every event); the signing secret is in this answer only. */
  createWebhook(
    url: string,
    options: T.Options<T.NewWebhook, "url"> & RequestOptions = {},
  ): Promise<T.NewWebhookView> {
    const { signal, ...rest } = options;
    return this.call({ method: "POST", path: "/v1/webhooks", body: { url, ...rest }, signal });
  }

  listWebhooks(options: RequestOptions = {}): Promise<T.WebhookList> {
    return this.call({ method: "GET", path: "/v1/webhooks", ...options });
  }

  getWebhook(webhookId: string, options: RequestOptions = {}): Promise<T.WebhookView> {
    return this.call({ method: "GET", path: `/v1/webhooks/${segment(webhookId)}`, ...options });
  }

  deleteWebhook(webhookId: string, options: RequestOptions = {}): Promise<T.WebhookView> {
    return this.call({ method: "DELETE", path: `/v1/webhooks/${segment(webhookId)}`, ...options });
  }

  /**
   * Add a data source (a website, a Confluence site, a SharePoint/OneDrive drive) to a namespace; its
   * first sync is queued at once. Credentials are stored server-side and never returned.
   */
  createSource(
    namespace: string,
    source: T.NewSourceBody,
    options: RequestOptions = {},
  ): Promise<T.SourceView> {
    const path = `/v1/namespaces/${segment(namespace)}/sources`;
    return this.call({ method: "POST", path, body: source, ...options });
  }

  listSources(namespace: string, options: RequestOptions = {}): Promise<T.SourceList> {
    return this.call({ method: "GET", path: `/v1/namespaces/${segment(namespace)}/sources`, ...options });
  }

  getSource(namespace: string, sourceId: string, options: RequestOptions = {}): Promise<T.SourceView> {
    const path = `/v1/namespaces/${segment(namespace)}/sources/${segment(sourceId)}`;
    return this.call({ method: "GET", path, ...options });
  }

  /** Change a source's name, settings, credentials or schedule (what is given). */
  updateSource(
    namespace: string,
    sourceId: string,
    patch: T.SourcePatchBody,
    options: RequestOptions = {},
  ): Promise<T.SourceView> {
    const path = `/v1/namespaces/${segment(namespace)}/sources/${segment(sourceId)}`;
    return this.call({ method: "PATCH", path, body: patch, ...options });
  }

  /** Queue a sync now (one already running is the one asked for); poll `getSource`. */
  syncSource(
    namespace: string,
    sourceId: string,
    request: T.Options<T.SyncRequest> = {},
    options: RequestOptions = {},
  ): Promise<T.SourceView> {
    const path = `/v1/namespaces/${segment(namespace)}/sources/${segment(sourceId)}/sync`;
    return this.call({ method: "POST", path, body: request, ...options });
  }

  /** Remove a source: its credentials and schedule now, its documents in steps, then it. */
  deleteSource(namespace: string, sourceId: string, options: RequestOptions = {}): Promise<T.SourceView> {
    const path = `/v1/namespaces/${segment(namespace)}/sources/${segment(sourceId)}`;
    return this.call({ method: "DELETE", path, ...options });
  }

  /** A new signing secret, returned this once; the old one stops signing at once. */
  rotateWebhookSecret(webhookId: string, options: RequestOptions = {}): Promise<T.NewWebhookView> {
    const path = `/v1/webhooks/${segment(webhookId)}/rotate-secret`;
    return this.call({ method: "POST", path, body: {}, ...options });
  }

  /** The tenant's usage in a billing period (`YYYY-MM`; default: the current one). */
  usage(period?: string, options: RequestOptions = {}): Promise<T.UsageReport> {
    return this.call({ method: "GET", path: "/v1/usage", query: { period }, ...options });
  }

  /** Any operation of the API by method and path template, typed from the OpenAPI document, e.g.
   * `request("get", "/v1/namespaces/{namespace}", { params: { namespace: "docs" } })`. */
  request<M extends Method, P extends PathOf<M>>(
    method: M,
    path: P,
    ...[init]: {} extends RequestInit<M, P> ? [RequestInit<M, P>?] : [RequestInit<M, P>]
  ): Promise<ResponseOf<M, P>> {
    const { params, query, body, idempotencyKey, signal } = (init ?? {}) as {
      params?: Record<string, string>;
      query?: Record<string, unknown>;
      body?: unknown;
      idempotencyKey?: string;
      signal?: AbortSignal;
    };
    const strings = Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== null);
    return this.call({
      method: method.toUpperCase() as Call["method"],
      path: fillPath(path, params, segment),
      query: Object.fromEntries(strings.map(([k, v]) => [k, String(v)])),
      body,
      run: idempotencyKey,
      signal,
    });
  }

  private call<R>(call: Call): Promise<R> {
    return this.transport.json<R>({ ...call, headers: { ...this.user, ...call.headers } });
  }
}

/** Each run event with its sequence number (the SSE `id`; 0 when absent: a replay's one event). */
async function* numbered(messages: AsyncIterable<SseMessage>): AsyncGenerator<{ id: number; event: T.RunEvent }> {
  const ids: number[] = [];
  const withIds = (async function* () {
    for await (const message of messages) {
      ids.push(/^\d+$/.test(message.id) ? Number(message.id) : 0);
      yield message;
    }
  })();
  for await (const event of runEvents(withIds)) yield { id: ids.shift() ?? 0, event };
}

function messages(question: Question): T.RequestMessage[] {
  return typeof question === "string" ? [{ role: "user", content: question }] : question;
}

function documentPath(namespace: string, documentId: string): string {
  return `/v1/namespaces/${segment(namespace)}/documents/${segment(documentId)}`;
}
