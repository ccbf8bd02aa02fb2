/**
 * The HTTP layer under `RaglineClient`: one request, retried only when a retry cannot do the work
 * twice (as the Python client does): reads and idempotent writes (GET, PUT, PATCH, DELETE) and the
 * metered runs, which always carry an `Idempotency-Key` so a retry replays the recorded run instead of
 * charging it again; 429 (not processed) for every request. Backoff is exponential with jitter, and
 * never shorter than the server's `Retry-After` (capped at 60 s); a `Retry-After` over 60 s is raised
 * at once, as the typed error, instead of retried sooner than the server said.
 */
import { RaglineError, retryAfterSeconds } from "./errors.js";

export type Fetch = typeof fetch;

export interface TransportOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  /** Milliseconds to wait for a response's headers (and a JSON body) before aborting. */
  timeoutMs: number;
  maxRetries: number;
  backoffMs: number;
  fetch: Fetch;
}

export interface Call {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  body?: unknown;
  query?: Record<string, string | undefined>;
  headers?: Record<string, string>;
  /** A metered run's idempotency key: makes a POST safe to retry. */
  run?: string | undefined;
  signal?: AbortSignal | undefined;
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);
/** The longest `Retry-After` (seconds) the client waits before a retry. */
const MAX_RETRY_WAIT_S = 60;

export class Transport {
  constructor(readonly options: TransportOptions) {}

  /** The response of `call` (status < 400) once its headers are in, and `done`, which ends the
   * timeout when the caller has read what it waits for (a stream reads on without one). */
  async send(call: Call): Promise<{ response: Response; done: () => void }> {
    const { maxRetries } = this.options;
    const retriable = call.method !== "POST" || call.run !== undefined;
    for (let attempt = 0; ; attempt++) {
      const timeout = new AbortController();
      const timer = setTimeout(
        () => timeout.abort(new RaglineError({ status: 0, code: "timeout", message: "request timed out" })),
        this.options.timeoutMs,
      );
      const done = (): void => clearTimeout(timer);
      const signal = call.signal ? AbortSignal.any([call.signal, timeout.signal]) : timeout.signal;
      let response: Response;
      try {
        response = await this.options.fetch(this.url(call), {
          method: call.method,
          headers: this.headers(call),
          body: call.body === undefined ? null : JSON.stringify(call.body),
          signal,
        });
      } catch (error) {
        done();
        if (signal.aborted || !retriable || attempt >= maxRetries) throw signal.reason ?? error;
        await this.sleep(attempt, undefined, call.signal);
        continue;
      }
      if (response.status < 400) return { response, done };
      const retryAfter = retryAfterSeconds(response.headers.get("retry-after"));
      // asked to wait longer than a retry would: raised at once (a sooner retry is refused again)
      const waitable = retryAfter === undefined || retryAfter <= MAX_RETRY_WAIT_S;
      if (
        attempt < maxRetries &&
        waitable &&
        (response.status === 429 || (retriable && RETRY_STATUSES.has(response.status)))
      ) {
        done();
        await response.body?.cancel().catch(() => undefined);
        await this.sleep(attempt, retryAfter, call.signal);
        continue;
      }
      try {
        throw await RaglineError.fromResponse(response);
      } finally {
        done();
      }
    }
  }

  /** A JSON call: the parsed body of a successful response. */
  async json<T>(call: Call): Promise<T> {
    const { response, done } = await this.send(call);
    try {
      if (response.status === 204) return undefined as T; // no body (a deletion)
      return (await response.json()) as T;
    } finally {
      done();
    }
  }

  private url(call: Call): string {
    const url = new URL(this.options.baseUrl.replace(/\/+$/, "") + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    return url.toString();
  }

  private headers(call: Call): Record<string, string> {
    const headers: Record<string, string> = { Accept: "application/json", ...call.headers };
    if (call.body !== undefined) headers["Content-Type"] = "application/json";
    if (this.options.apiKey) headers["Authorization"] = `Bearer ${this.options.apiKey}`;
    if (call.run !== undefined) headers["Idempotency-Key"] = call.run;
    return headers;
  }

  private async sleep(attempt: number, retryAfter: number | undefined, signal?: AbortSignal): Promise<void> {
    let delay = this.options.backoffMs * 2 ** attempt * (0.5 + Math.random() / 2);
    if (retryAfter !== undefined) delay = Math.max(delay, Math.min(retryAfter, MAX_RETRY_WAIT_S) * 1000);
    await pause(delay, signal);
  }
}

/** One path segment, percent-escaped (a document id may hold `/`). */
export function segment(value: string): string {
  return encodeURIComponent(value);
}

/** A fresh idempotency key for a run the caller named none for. */
export function runKey(): string {
  return `client-${crypto.randomUUID().replaceAll("-", "")}`;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts (no Node-only timers). */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
