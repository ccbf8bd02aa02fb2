/**
 * Server-Sent Events, as the WHATWG spec frames them, from a byte stream of any chunking: a UTF-8
 * character or a line ending may be split between chunks; lines end in LF, CRLF or CR; `:` lines
 * are comments; `data` lines join with LF; a field without a colon is a field with an empty value.
 */
import { RaglineError } from "./errors.js";
import type { RunEvent } from "./types.js";

export interface SseMessage {
  /** The `event` field ("message" when the server named none). */
  event: string;
  data: string;
  /** The last `id` field seen so far in the stream ("" when none). */
  id: string;
}

/** Each complete message of `chunks`; one left open when the stream ends is still given, as the
 * Python client gives it, so a server that omits the last blank line loses nothing. */
export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let id = "";
  const dispatch = (): SseMessage | undefined => {
    const message = data.length ? { event: event || "message", data: data.join("\n"), id } : undefined;
    event = "";
    data = [];
    return message;
  };
  const field = (line: string): void => {
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") data.push(value);
    else if (name === "event") event = value;
    else if (name === "id" && !value.includes("\0")) id = value;
    // "retry" and unknown fields are ignored, as the spec says
  };
  const lines = function* (final: boolean): Generator<string> {
    for (;;) {
      const end = buffer.search(/\r\n|\r|\n/);
      // A CR last in the buffer may be the first half of a CRLF: wait for the next chunk.
      if (end < 0 || (!final && end === buffer.length - 1 && buffer[end] === "\r")) return;
      const width = buffer.startsWith("\r\n", end) ? 2 : 1;
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + width);
      yield line;
    }
  };
  const take = function* (final: boolean): Generator<SseMessage> {
    for (const line of lines(final)) {
      if (line === "") {
        const message = dispatch();
        if (message) yield message;
      } else if (!line.startsWith(":")) {
        field(line);
      }
    }
  };
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* take(false);
  }
  buffer += decoder.decode();
  yield* take(true);
  if (buffer !== "") field(buffer);
  const last = dispatch();
  if (last) yield last;
}

/** The chat run's typed events: each message's `data` is one event as JSON, named by its `type`. */
export async function* runEvents(messages: AsyncIterable<SseMessage>): AsyncGenerator<RunEvent> {
  for await (const message of messages) {
    let event: unknown;
    try {
      event = JSON.parse(message.data);
    } catch {
      throw new RaglineError({ status: 0, code: "invalid_event", message: "a chat event is not JSON" });
    }
    if (typeof event !== "object" || event === null || typeof (event as { type?: unknown }).type !== "string") {
      throw new RaglineError({ status: 0, code: "invalid_event", message: "a chat event has no type" });
    }
    yield event as RunEvent;
  }
}

/** A fetch body as an async iterable of chunks; leaving early (or an abort) cancels the body, which
 * closes the connection, so the server stops the run. */
export async function* bodyChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
