/**
 * `RaglineError`: every refusal of the API, parsed from the one JSON error shape
 * (`{"error": {"code", "message", "details"}}`) with the HTTP status, the request id and `Retry-After`.
 */
import type { ErrorBody } from "./types.js";

/** Headers that name the request in the logs, as API Gateway and proxies send them. */
const REQUEST_ID_HEADERS = ["x-amzn-requestid", "apigw-requestid", "x-request-id"];

export interface RaglineErrorInit {
  status: number;
  code: string;
  message: string;
  details?: Record<string, unknown>;
  requestId?: string;
  retryAfter?: number;
}

export class RaglineError extends Error {
  /** The HTTP status (0 when the error did not come from a response, e.g. a malformed stream). */
  readonly status: number;
  /** The stable machine code (`namespace_not_found`, `invalid_request`, `unauthorized`…). */
  readonly code: string;
  /** The server's details (camelCase), e.g. `problems` of an invalid request. */
  readonly details: Record<string, unknown>;
  /** Names the request in the server's logs, when the server or the gateway gave one. */
  readonly requestId: string | undefined;
  /** Seconds to wait before trying again (`Retry-After`), when the server said. */
  readonly retryAfter: number | undefined;

  constructor(init: RaglineErrorInit) {
    super(init.message);
    this.name = "RaglineError";
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? {};
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }

  /** The error a failed response stands for; a body not in the one shape keeps its status. */
  static async fromResponse(response: Response): Promise<RaglineError> {
    const text = await response.text().catch(() => "");
    const error = errorDetail(text);
    const details = error?.details ?? {};
    const fromBody = typeof details["requestId"] === "string" ? details["requestId"] : undefined;
    const fromHeader = REQUEST_ID_HEADERS.map((h) => response.headers.get(h)).find((v) => v);
    return new RaglineError({
      status: response.status,
      code: error?.code ?? "unexpected_response",
      message: error?.message ?? `HTTP ${response.status} without the error shape`,
      details,
      requestId: fromBody ?? fromHeader ?? undefined,
      retryAfter: retryAfterSeconds(response.headers.get("retry-after")),
    });
  }
}

function errorDetail(text: string): ErrorBody["error"] | undefined {
  try {
    const body: unknown = JSON.parse(text);
    const error = (body as Partial<ErrorBody> | null)?.error;
    return error && typeof error.code === "string" && typeof error.message === "string" ? error : undefined;
  } catch {
    return undefined;
  }
}

/** `Retry-After` in seconds: delay-seconds, or an HTTP date counted from now (never negative). */
export function retryAfterSeconds(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}
