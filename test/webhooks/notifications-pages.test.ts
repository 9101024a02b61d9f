// Panel notifications page with a cursor (at most 200 a page) on REST, Connect and gRPC; another user's or
// property's notifications never appear.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { WebhookService } from "../../gen/hotelops/webhook/v1/webhook_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";

let app: TestApp;
let token: string;
const mine: string[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const property = await createTestProperty(app);
  const session = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  token = session.accessToken;
  const other = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  // 5 for the session's user (newest first: i = 0 is the newest), 2 for another user of the property
  for (let i = 0; i < 7; i++) {
    const id = randomUUID();
    const userId = i < 5 ? session.userId : other.userId;
    await app.db.pool.query(
      `insert into notifications (id, property_id, user_id, kind, title, body, data, created_at)
       values ($1, $2, $3, 'test', 't', 'b', '{}', now() - ($4 || ' minutes')::interval)`,
      [id, property.id, userId, String(i)],
    );
    if (i < 5) mine.push(id);
  }
});
afterAll(async () => {
  await app?.close();
});

describe("notifications page with a cursor", () => {
  it("REST: pages of 2 hold the user's 5 notifications once, newest first; a bad cursor is 400", async () => {
    const ids: string[] = [];
    let cursor = "";
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${app.baseUrl}/api/panel/v1/notifications?limit=2${cursor ? `&cursor=${cursor}` : ""}`, {
        headers: bearer(token),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { notifications: { id: string }[]; nextCursor: string };
      expect(body.notifications.length).toBeLessThanOrEqual(2);
      ids.push(...body.notifications.map((n) => n.id));
      if (body.nextCursor === "") break;
      cursor = body.nextCursor;
    }
    expect(ids).toEqual(mine);
    const bad = await fetch(`${app.baseUrl}/api/panel/v1/notifications?cursor=nonsense`, { headers: bearer(token) });
    expect(bad.status).toBe(400);
  });

  it.each([
    ["Connect", () => createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" })],
    ["gRPC", () => createGrpcTransport({ baseUrl: app.baseUrl })],
  ])("%s: the same pages", async (_face, make) => {
    const client = createClient(WebhookService, make());
    const ids: string[] = [];
    let cursor = "";
    do {
      const page = await client.listNotifications({ limit: 2, cursor }, { headers: bearer(token) });
      ids.push(...page.notifications.map((n) => n.id));
      cursor = page.nextCursor;
    } while (cursor !== "" && ids.length < 20);
    expect(ids).toEqual(mine);
    const err = await client
      .listNotifications({ cursor: "bm9uc2Vuc2U" }, { headers: bearer(token) })
      .then(() => undefined, ConnectError.from);
    expect(err?.code).toBe(Code.InvalidArgument);
  });
});
