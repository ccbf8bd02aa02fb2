/** `@ragline/client`: the Ragline API from TypeScript (Node 20+, browsers, any runtime with `fetch`). */
export { RaglineClient } from "./client.js";
export type {
  AddTextOptions,
  ChatOptions,
  ClientOptions,
  HostingSearchOptions,
  Question,
  RequestOptions,
  RunOptions,
  SearchOptions,
} from "./client.js";
export type { Method, PathOf, RequestInit, ResponseOf } from "./request.js";
export { RaglineError, retryAfterSeconds } from "./errors.js";
export type { RaglineErrorInit } from "./errors.js";
export { parseSse, runEvents } from "./sse.js";
export type { SseMessage } from "./sse.js";
export type * from "./types.js";
export type { components, operations, paths } from "./generated/openapi.js";
