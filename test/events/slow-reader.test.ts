import { afterAll, beforeAll, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";
import { openStream, record, streamFailure } from "./helpers.ts";

// A reader that falls more than EVENT_STREAM_BUFFER_EVENTS behind is cut off with reader_too_slow, and resuming
// from the last cursor it received gives it the rest: nothing lost, nothing twice.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { EVENT_STREAM_BUFFER_EVENTS: "20", EVENT_STREAM_KEEPALIVE_MS: "300" } });
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
