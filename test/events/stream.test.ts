import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { recordEvent } from "../../src/modules/events/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { smallHotel } from "../helpers/small-hotel.ts";
import { openStream, record, streamFailure } from "./helpers.ts";

// EventService.StreamEvents over Connect (HTTP/1.1), gRPC (HTTP/2) and gRPC-Web (HTTP/1.1) with connect-node's clients: the backlog then
// live events in transaction order, resumption by cursor with nothing lost or doubled, the type filter, property
// isolation, permissions and the per-caller cap.
let app: TestApp;
let faces: [string, Transport][];
beforeAll(async () => {
  app = await startTestApp({ env: { EVENT_STREAM_KEEPALIVE_MS: "300", EVENT_STREAM_MAX_PER_CALLER: "3" } });
  faces = [
    ["Connect", createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" })],
    ["gRPC", createGrpcTransport({ baseUrl: app.baseUrl })],
    ["gRPC-Web", createGrpcWebTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" })],
  ];
});
afterAll(async () => {
  await app?.close();
});

/** A property with an internal client holding events.read and a manager session. */
async function property() {
  const p = await createTestProperty(app, { businessDate: "2027-03-01" });
  const internal = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [p.code],
    scopes: ["events.read"],
  });
  const manager = await createStaffSession(app, { propertyCode: p.code, role: "manager" });
  return { ...p, token: internal.accessToken, manager: manager.accessToken };
}

const each = (name: string, test: (transport: Transport) => Promise<void>) =>
  it.each([0, 1])(`${name} (%#: Connect, gRPC)`, (i) => test(faces[i]![1]));

it("streams over gRPC-Web too: backlog, then live", async () => {
  const p = await property();
  const first = await record(app, p.id, 2);
  const s = openStream(faces[2]![1], p.token, { propertyCode: p.code, fromBeginning: true });
  try {
    expect((await s.events(2)).map((e) => e.id)).toEqual(first);
    const live = await record(app, p.id, 1);
    expect((await s.events(1)).map((e) => e.id)).toEqual(live);
  } finally {
    s.close();
  }
});

describe("StreamEvents", () => {
  each("sends the backlog after a cursor, then live events as they commit", async (t) => {
    const p = await property();
    const first = await record(app, p.id, 3);
    const s = openStream(t, p.token, { propertyCode: p.code, fromBeginning: true });
    try {
      const backlog = await s.events(3);
      expect(backlog.map((e) => e.id)).toEqual(first);
      expect(backlog[0]).toMatchObject({
        type: "reservation.created",
        propertyCode: p.code,
        data: { seq: expect.any(Number) },
      });
      const live = await record(app, p.id, 2);
      expect((await s.events(2)).map((e) => e.id)).toEqual(live);
      expect(await s.quiet(400)).toEqual([]);
    } finally {
      s.close();
    }
  });

  each("resumes after a dropped connection with nothing lost or doubled", async (t) => {
    const p = await property();
    const all = await record(app, p.id, 2);
    const s1 = openStream(t, p.token, { propertyCode: p.code, fromBeginning: true });
    const seen = await s1.events(2);
    s1.close();
    // committed while no one listened, in three transactions
    for (let i = 0; i < 3; i++) all.push(...(await record(app, p.id, 1)));
    const s2 = openStream(t, p.token, { propertyCode: p.code, cursor: seen[1]!.cursor });
    try {
      seen.push(...(await s2.events(3)));
      all.push(...(await record(app, p.id, 2)));
      seen.push(...(await s2.events(2)));
      expect(await s2.quiet(400)).toEqual([]);
    } finally {
      s2.close();
    }
    expect(seen.map((e) => e.id)).toEqual(all);
    // from the middle: exactly what follows
    const s3 = openStream(t, p.token, { propertyCode: p.code, cursor: seen[4]!.cursor });
    try {
      expect((await s3.events(2)).map((e) => e.id)).toEqual(all.slice(5));
      expect(await s3.quiet(400)).toEqual([]);
    } finally {
      s3.close();
    }
  });

  each("without a cursor starts from now", async (t) => {
    const p = await property();
    await record(app, p.id, 2);
    const s = openStream(t, p.manager, {});
    try {
      await s.keepAlive();
      const live = await record(app, p.id, 1);
      expect((await s.events(1)).map((e) => e.id)).toEqual(live);
    } finally {
      s.close();
    }
  });

  each("filters by type; the keep-alive's cursor moves past what was filtered out", async (t) => {
    const p = await property();
    const s = openStream(t, p.token, { propertyCode: p.code, eventTypes: ["reservation.cancelled"] });
    try {
      await s.keepAlive();
      await record(app, p.id, 2, "reservation.created");
      const cancelled = await record(app, p.id, 1, "reservation.cancelled");
      await record(app, p.id, 1, "availability.changed");
      const got = await s.events(1);
      expect(got.map((e) => [e.id, e.type])).toEqual([[cancelled[0], "reservation.cancelled"]]);
      const position = await s.keepAlive();
      expect(s.skipped).toEqual([]);
      // resuming from the keep-alive's cursor replays nothing
      const s2 = openStream(t, p.token, { propertyCode: p.code, cursor: position });
      expect(await s2.quiet(400)).toEqual([]);
      s2.close();
    } finally {
      s.close();
    }
    expect(
      await streamFailure(openStream(t, p.token, { propertyCode: p.code, eventTypes: ["nope"] }).events(1)),
    ).toEqual({ code: Code.InvalidArgument, appCode: "invalid_argument" });
    expect(await streamFailure(openStream(t, p.token, { propertyCode: p.code, cursor: "x" }).events(1))).toEqual({
      code: Code.InvalidArgument,
      appCode: "invalid_argument",
    });
  });

  each("holds an event back until every older transaction has finished, then keeps their order", async (t) => {
    const p = await property();
    const s = openStream(t, p.token, { propertyCode: p.code });
    try {
      await s.keepAlive();
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let firstId = "";
      let started!: () => void;
      const began = new Promise<void>((r) => (started = r));
      const older = app.deps.transact(async (tx) => {
        firstId = await recordEvent(tx, {
          propertyId: p.id,
          type: "reservation.created",
          occurredAt: new Date(),
          data: { first: true },
        });
        started();
        await held;
      });
      await began;
      const later = await record(app, p.id, 1);
      // the later transaction committed first; sending it now would let a resume skip the older one
      expect(await s.quiet(500)).toEqual([]);
      release();
      await older;
      expect((await s.events(2)).map((e) => e.id)).toEqual([firstId, later[0]]);
    } finally {
      s.close();
    }
  });

  each(
    "answers a property the caller cannot reach like one that does not exist, and never mixes properties",
    async (t) => {
      const a = await property();
      const b = await property();
      const foreign = await streamFailure(openStream(t, a.token, { propertyCode: b.code }).events(1));
      const missing = await streamFailure(openStream(t, a.token, { propertyCode: "NO-SUCH" }).events(1));
      expect(foreign).toEqual({ code: Code.NotFound, appCode: "not_found" });
      expect(missing).toEqual(foreign);
      const s = openStream(t, a.token, { propertyCode: a.code });
      const other = openStream(t, b.manager, {});
      try {
        await Promise.all([s.keepAlive(), other.keepAlive()]);
        const bs = await record(app, b.id, 2);
        const as = await record(app, a.id, 1);
        expect((await s.events(1)).map((e) => e.id)).toEqual(as);
        expect((await other.events(2)).map((e) => e.id)).toEqual(bs);
        expect([...(await s.quiet(300)), ...(await other.quiet(100))]).toEqual([]);
      } finally {
        s.close();
        other.close();
      }
    },
  );

  each("refuses callers without the permission or scope", async (t) => {
    const p = await property();
    await app.deps.db.pool.query(
      "insert into roles (code, name, permissions) values ('porter', 'Porter', array['dashboard.view']) on conflict do nothing",
    );
    const porter = await createStaffSession(app, { propertyCode: p.code, role: "porter" });
    const noScope = await createTestClient(app, {
      kind: "internal",
      propertyCodes: [p.code],
      scopes: ["reservations.read"],
    });
    const partner = await createTestClient(app, {
      kind: "partner",
      propertyCodes: [p.code],
      scopes: ["reservations.read"],
      approved: true,
    });
    for (const token of [porter.accessToken, noScope.accessToken, partner.accessToken])
      expect(await streamFailure(openStream(t, token, { propertyCode: p.code }).events(1))).toEqual({
        code: Code.PermissionDenied,
        appCode: "forbidden",
      });
    expect(await streamFailure(openStream(t, "nope", { propertyCode: p.code }).events(1))).toEqual({
      code: Code.Unauthenticated,
      appCode: "unauthorized",
    });
  });

  each("caps the streams one caller has open", async (t) => {
    const p = await property();
    const open = [0, 1, 2].map(() => openStream(t, p.manager, {}));
    try {
      await Promise.all(open.map((s) => s.keepAlive()));
      expect(await streamFailure(openStream(t, p.manager, {}).events(1))).toEqual({
        code: Code.ResourceExhausted,
        appCode: "rate_limited",
      });
      open.pop()!.close();
      // the server sees the close when the connection tells it
      await expect
        .poll(async () => {
          const s = openStream(t, p.manager, {});
          try {
            await s.keepAlive(2_000);
            return "open";
          } catch {
            return "refused";
          } finally {
            s.close();
          }
        })
        .toBe("open");
    } finally {
      for (const s of open) s.close();
    }
  });
});

describe("StreamEvents with reservations made through the API", () => {
  it("sends reservation.created with the reservation's data to a staff session", async () => {
    const hotel = await smallHotel(app, app.baseUrl);
    const s = openStream(faces[1]![1], hotel.manager.accessToken, { eventTypes: ["reservation.created"] });
    try {
      await s.keepAlive();
      const res = await hotel.createReservation(hotel.stay());
      expect(res.status).toBe(201);
      const reservation = (await res.json()) as { id: string; code: string };
      const [event] = await s.events(1);
      expect(event).toMatchObject({
        type: "reservation.created",
        propertyCode: hotel.property.code,
        data: { id: reservation.id, code: reservation.code },
      });
    } finally {
      s.close();
    }
  });
});
