// The SSE layer on its own: messages framed the same whatever the chunking, comments and ids skipped,
// multi-line data joined, an abort surfacing as the signal's reason.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { RaglineError, parseSse, runEvents } from "../src/index.js";
import type { RunEvent, SseMessage } from "../src/index.js";
import { bodyChunks } from "../src/sse.js";

const encoder = new TextEncoder();

async function* chunksOf(parts: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === "string" ? encoder.encode(part) : part;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Every way of cutting `bytes` in two and in three: the parser must give the same messages. */
function* splits(bytes: Uint8Array): Generator<Uint8Array[]> {
  for (let i = 0; i <= bytes.length; i++) {
    yield [bytes.slice(0, i), bytes.slice(i)];
    for (let j = i; j <= bytes.length; j += 7) yield [bytes.slice(0, i), bytes.slice(i, j), bytes.slice(j)];
  }
}

const STREAM =
  ": keep-alive comment\r\n" +
  "event: text\r\n" +
  'data: {"type":"text","text":"Ten years — «guaranteed» ✓"}\r\n\r\n' +
  "id: 7\n" +
  "event: sources\n" +
  'data: {"type":"sources",\n' +
  'data:"chunks":[]}\n\n' +
  "retry: 1000\r" +
  'data: {"type":"final","runId":"r1","exitReason":"answered","answer":"Ten years","usage":{}}\r\r';

const EXPECTED: SseMessage[] = [
  { event: "text", data: '{"type":"text","text":"Ten years — «guaranteed» ✓"}', id: "" },
  { event: "sources", data: '{"type":"sources",\n"chunks":[]}', id: "7" },
  {
    event: "message",
    data: '{"type":"final","runId":"r1","exitReason":"answered","answer":"Ten years","usage":{}}',
    id: "7",
  },
];

describe("parseSse", () => {
  it("gives the same messages however the bytes are split", async () => {
    const bytes = encoder.encode(STREAM);
    let cuts = 0;
    for (const parts of splits(bytes)) {
      assert.deepEqual(await collect(parseSse(chunksOf(parts))), EXPECTED, `split at ${parts.map((p) => p.length)}`);
      cuts++;
    }
    assert.ok(cuts > bytes.length, "every cut was tried");
  });

  it("reads a stream delivered one byte at a time, a multi-byte character split between chunks", async () => {
    const bytes = encoder.encode(STREAM);
    const single = Array.from(bytes, (b) => Uint8Array.of(b));
    assert.deepEqual(await collect(parseSse(chunksOf(single))), EXPECTED);
  });

  it("skips comments and empty events, and keeps a field without a colon as an empty value", async () => {
    const messages = await collect(parseSse(chunksOf([":only a comment\n\n", "event: x\n\n", "data\n\n", "data:\ndata\n\n"])));
    assert.deepEqual(messages, [
      { event: "message", data: "", id: "" },
      { event: "message", data: "\n", id: "" },
    ]);
  });

  it("gives a last message the server did not close with a blank line, as the Python client does", async () => {
    const messages = await collect(parseSse(chunksOf(['data: {"type":"text","text":"a"}'])));
    assert.deepEqual(messages, [{ event: "message", data: '{"type":"text","text":"a"}', id: "" }]);
  });
});

describe("runEvents", () => {
  it("types each message's data by its type", async () => {
    const events: RunEvent[] = await collect(runEvents(parseSse(chunksOf([STREAM]))));
    assert.deepEqual(
      events.map((e) => e.type),
      ["text", "sources", "final"],
    );
    const final = events.at(-1);
    assert.ok(final?.type === "final" && final.answer === "Ten years");
  });

  it("refuses data that is not a JSON event with a typed error", async () => {
    for (const data of ["not json", "[1]", '{"text":"no type"}']) {
      await assert.rejects(collect(runEvents(parseSse(chunksOf([`data: ${data}\n\n`])))), (error: unknown) => {
        assert.ok(error instanceof RaglineError);
        assert.equal(error.code, "invalid_event");
        return true;
      });
    }
  });
});

describe("bodyChunks", () => {
  it("stops with the abort's reason", async () => {
    const controller = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(encoder.encode('data: {"type":"text","text":"a"}\n\n'));
        controller.signal.addEventListener("abort", () => stream.error(controller.signal.reason));
      },
    });
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of runEvents(parseSse(bodyChunks(body)))) {
          seen.push(event.type);
          controller.abort(new Error("stopped by the caller"));
        }
      })(),
      /stopped by the caller/,
    );
    assert.deepEqual(seen, ["text"]);
  });

  it("cancels the body when the caller leaves the loop early", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(stream) {
        stream.enqueue(encoder.encode('data: {"type":"text","text":"a"}\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of runEvents(parseSse(bodyChunks(body)))) {
      assert.equal(event.type, "text");
      break;
    }
    assert.ok(cancelled, "the endless body was cancelled");
  });
});
