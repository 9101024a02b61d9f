import { afterAll, beforeAll, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";
import { recordEvents } from "../../src/modules/events/index.ts";
import { openStream, record, streamFailure } from "./helpers.ts";

// A reader that falls more than EVENT_STREAM_BUFFER_EVENTS behind is cut off with reader_too_slow, and resuming
// from the last cursor it received gives it the rest: nothing lost, nothing twice. A reader that stops reading
// altogether is cut off too, and its stream stops counting against the per-caller cap. (connect-node's client reads
// the socket whatever the application does, so this ends by the buffer rule; a client whose socket stops is reset
// by the write-stall rule, WRITE_STALL_TIMEOUT_MS, which guards every HTTP/2 stream: test/server/slow-readers.test.ts.)
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    env: {
      EVENT_STREAM_BUFFER_EVENTS: "20",
      EVENT_STREAM_KEEPALIVE_MS: "300",
      EVENT_STREAM_MAX_PER_CALLER: "1",
    },
  });
});
afterAll(async () => {
  await app?.close();
});

it("cuts off a reader that falls behind; it resumes by cursor with nothing lost or doubled", async () => {
  const p = await createTestProperty(app, { businessDate: "2027-03-01" });
  const { accessToken } = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [p.code],
    scopes: ["events.read"],
  });
  const transport = createGrpcTransport({ baseUrl: app.baseUrl });
  const s = openStream(transport, accessToken, { propertyCode: p.code });
  // the position before the burst: where a reader cut off before any event resumes
  const start = await s.keepAlive();
  // one commit of 60 events: three times what may wait for this reader
  const all = await record(app, p.id, 60);
  const seen: { id: string; cursor: string }[] = [];
  const failure = await streamFailure(
    (async () => {
      for (;;) seen.push(...(await s.events(1)));
    })(),
  );
  s.close();
  expect(failure).toEqual({ code: Code.ResourceExhausted, appCode: "reader_too_slow" });
  expect(seen.length).toBeLessThan(60);
  const resumed = openStream(transport, accessToken, { propertyCode: p.code, cursor: seen.at(-1)?.cursor ?? start });
  try {
    seen.push(...(await resumed.events(60 - seen.length)));
    expect(await resumed.quiet(400)).toEqual([]);
  } finally {
    resumed.close();
  }
  expect(seen.map((e) => e.id)).toEqual(all);
});

it("cuts off a stream whose reader stopped reading and frees its place under the per-caller cap", async () => {
  const p = await createTestProperty(app, { businessDate: "2027-03-01" });
  const { accessToken } = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [p.code],
    scopes: ["events.read"],
  });
  const transport = createGrpcTransport({ baseUrl: app.baseUrl });
  const stopped = openStream(transport, accessToken, { propertyCode: p.code });
  await stopped.keepAlive();
  // about 1 MB in one commit, never read
  await app.deps.transact((tx) =>
    recordEvents(
      tx,
      Array.from({ length: 200 }, (_, i) => ({
        propertyId: p.id,
        type: "reservation.created" as const,
        occurredAt: new Date(),
        data: { seq: i, pad: "x".repeat(5_000) },
      })),
    ),
  );
  // the cap is 1 per caller: a second stream is refused while the stopped one is open, admitted once it is reset
  await expect
    .poll(
      async () => {
        const s = openStream(transport, accessToken, { propertyCode: p.code });
        try {
          await s.keepAlive(1_000);
          return "open";
        } catch {
          return "refused";
        } finally {
          s.close();
        }
      },
      { timeout: 10_000, interval: 500 },
    )
    .toBe("open");
  const failure = await streamFailure(
    (async () => {
      for (;;) await stopped.events(1);
    })(),
  );
  stopped.close();
  expect(failure).toEqual({ code: Code.ResourceExhausted, appCode: "reader_too_slow" });
});
