import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer } from "../helpers/auth.ts";
import { isEmptyDatabase, seedDemo, describeSeed, DEMO_PASSWORD } from "../../src/ops/seed.ts";
import { verifySecret } from "../../src/modules/auth/index.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
type Json = any;

describe("demo seed (fixed names)", () => {
  it(
    "writes group DEMO, DEMO-IST and DEMO-ANK, three users with their roles, and an internal client; once",
    { timeout: 30_000 },
    async () => {
      expect(await isEmptyDatabase(app.deps)).toBe(true);
      const seed = await seedDemo(app.deps, app.services.admin);
      expect(seed.created).toBe(true);
      expect(await isEmptyDatabase(app.deps)).toBe(false);

      const { rows: props } = await app.db.pool.query(
        "select p.code, p.currency, p.amount_scale, p.time_zone, p.email_verification, g.code as group_code from properties p join hotel_groups g on g.id = p.group_id order by p.code",
      );
      expect(props).toEqual([
        {
          code: "DEMO-ANK",
          currency: "TRY",
          amount_scale: 100,
          time_zone: "Europe/Istanbul",
          email_verification: true,
          group_code: "DEMO",
        },
        {
          code: "DEMO-IST",
          currency: "TRY",
          amount_scale: 100,
          time_zone: "Europe/Istanbul",
          email_verification: false,
          group_code: "DEMO",
        },
      ]);
      const { rows: members } = await app.db.pool.query(
        "select u.email, p.code, m.role_code from memberships m join users u on u.id = m.user_id join properties p on p.id = m.property_id order by 1, 2",
      );
      expect(members.map((m) => `${m.email} ${m.code} ${m.role_code}`)).toEqual([
        "frontdesk@demo.test DEMO-IST front_desk",
        "manager@demo.test DEMO-ANK manager",
        "manager@demo.test DEMO-IST manager",
        "viewer@demo.test DEMO-IST viewer",
      ]);
      const { rows: users } = await app.db.pool.query<{ password_hash: string }>("select password_hash from users");
      for (const u of users) {
        expect(u.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
        expect(await verifySecret(u.password_hash, DEMO_PASSWORD)).toBe(true);
      }
      expect(describeSeed(seed)).toContain("manager@demo.test / demo-pass-2026");
      expect(describeSeed(seed)).toContain(seed.client!.clientSecret);

      // The printed internal client works on the token endpoint and the admin API.
      const basic = Buffer.from(`${seed.client!.clientId}:${seed.client!.clientSecret}`).toString("base64");
      const token = (await (
        await fetch(`${app.baseUrl}/api/v1/oauth/token`, {
          method: "POST",
          headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
          body: "grant_type=client_credentials",
        })
      ).json()) as Json;
      expect(token.scope.split(" ")).toContain("admin");
      expect((await fetch(`${app.baseUrl}/api/admin/v1/clients`, { headers: bearer(token.access_token) })).status).toBe(
        200,
      );

      const again = await seedDemo(app.deps, app.services.admin);
      expect(again.created).toBe(false);
      expect(again.client).toBeUndefined();
      expect((await app.db.pool.query("select count(*)::int as n from properties")).rows[0].n).toBe(2);
    },
  );

  it("sessions open only where the demo users have memberships", async () => {
    const { rows } = await app.db.pool.query<{ email: string; id: string }>("select email, id from users");
    const id = (email: string): string => rows.find((r) => r.email === email)!.id;
    const { rows: p } = await app.db.pool.query<{ code: string; id: string }>("select code, id from properties");
    const prop = (code: string): string => p.find((r) => r.code === code)!.id;
    const sessions = app.services.auth.sessions;
    await expect(
      sessions.openStaffSession({ userId: id("manager@demo.test"), propertyId: prop("DEMO-ANK") }),
    ).resolves.toMatchObject({ expiresIn: 900 });
    await expect(
      sessions.openStaffSession({ userId: id("frontdesk@demo.test"), propertyId: prop("DEMO-ANK") }),
    ).rejects.toMatchObject({ code: "unauthorized" });
  });
});
