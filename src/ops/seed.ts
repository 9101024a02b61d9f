import type { Deps } from "../modules/module.ts";
import type { Tx } from "../db/transaction.ts";
import { ADMIN_SCOPE, type AdminService } from "../modules/admin/index.ts";
import { scopes as partnerScopes } from "../modules/auth/index.ts";
import { ratePlansOf, roomTypesOf, seedInventory } from "../modules/inventory/index.ts";
import { setProviderMapping } from "../modules/connectivity/index.ts";
import { findPropertiesOfGroup } from "../modules/properties/index.ts";
import { poolQueryable } from "../db/queryable.ts";

export const DEMO_PASSWORD = "demo-pass-2026";

export interface DemoSeed {
  /** False when the demo data was already there (nothing was written). */
  created: boolean;
  groupCode: string;
  properties: { code: string; id: string; emailVerification: boolean }[];
  users: { email: string; roles: string }[];
  password: string;
  /** The internal client; its secret only on the run that created it. */
  client: { clientId: string; clientSecret: string } | undefined;
}

const demoUsers = [
  {
    email: "manager@demo.test",
    name: "Demo Manager",
    memberships: [
      ["DEMO-IST", "manager"],
      ["DEMO-ANK", "manager"],
    ],
  },
  { email: "frontdesk@demo.test", name: "Demo Front Desk", memberships: [["DEMO-IST", "front_desk"]] },
  { email: "viewer@demo.test", name: "Demo Viewer", memberships: [["DEMO-IST", "viewer"]] },
] as const;

/** A module's demo data for one property, written on the seed's transaction (e.g. inventory's seedInventory). */
type PropertySeeder = (tx: Tx, propertyId: string) => Promise<void>;

/** True when the database holds no property and no user yet (a fresh start). */
export async function isEmptyDatabase(deps: Pick<Deps, "db">): Promise<boolean> {
  const { rows } = await deps.db.pool.query<{ empty: boolean }>(
    "select not exists (select 1 from properties) and not exists (select 1 from users) as empty",
  );
  return rows[0]?.empty === true;
}

/**
 * The demo data (docs/staff/mobile-api.md, "Identity and access"; fixed names the demo and its docs rely on): group DEMO, properties DEMO-IST (no e-mail verification) and DEMO-ANK (with),
 * three users with password demo-pass-2026, one internal client. Does nothing when group DEMO exists.
 * Other modules add per-property demo data through an exported `seedInventory(tx, propertyId)`.
 */
export async function seedDemo(deps: Deps, admin: AdminService): Promise<DemoSeed> {
  const users = demoUsers.map((u) => ({
    email: u.email,
    roles: u.memberships.map(([p, r]) => `${r} in ${p}`).join(", "),
  }));
  const existing = (await findPropertiesOfGroup(poolQueryable(deps.db.pool), "DEMO")).reverse();
  if (existing.length > 0) {
    return {
      created: false,
      groupCode: "DEMO",
      properties: existing.map((p) => ({ code: p.code, id: p.id, emailVerification: p.emailVerification })),
      users,
      password: DEMO_PASSWORD,
      client: undefined,
    };
  }

  const properties: DemoSeed["properties"] = [];
  for (const [code, name, emailVerification] of [
    ["DEMO-IST", "Demo Hotel Istanbul", false],
    ["DEMO-ANK", "Demo Hotel Ankara", true],
  ] as const) {
    const p = await admin.createProperty({
      groupCode: "DEMO",
      groupName: "Demo Hotels",
      code,
      name,
      timeZone: "Europe/Istanbul",
      currency: "TRY",
      amountScale: 100,
      emailVerification,
    });
    properties.push({ code: p.code, id: p.id, emailVerification: p.emailVerification });
  }
  for (const u of demoUsers) {
    await admin.createUser({ email: u.email, name: u.name, password: DEMO_PASSWORD });
    for (const [propertyCode, role] of u.memberships)
      await admin.createMembership({ email: u.email, propertyCode, role });
  }
  const { client, clientSecret } = await admin.createClient({
    kind: "internal",
    provider: "hotelops",
    name: "Demo internal client",
    propertyCodes: properties.map((p) => p.code),
    scopes: [...partnerScopes, ADMIN_SCOPE],
  });
  // the operator's own system, approved for live writes like a certified partner (the examples book with it)
  await admin.approveClient(client.id);

  for (const p of properties) for (const seed of moduleSeeders) await deps.transact((tx) => seed(tx, p.id));
  for (const p of properties) await mapOwnCodes(deps, p);
  return {
    created: true,
    groupCode: "DEMO",
    properties,
    users,
    password: DEMO_PASSWORD,
    client: { clientId: client.id, clientSecret },
  };
}

/**
 * The demo internal client sends and reads in the hotel's own codes: each room type and rate plan is mapped to its
 * code for provider `hotelops`, so the documented partner examples (room type DBL, rate plan BB) are applied.
 */
async function mapOwnCodes(deps: Deps, property: { code: string; id: string }): Promise<void> {
  const pool = deps.db.pool;
  const catalogue = [
    ...(await roomTypesOf(pool, property.id)).map((t) => ({ kind: "room_type" as const, code: t.code })),
    ...(await ratePlansOf(pool, property.id)).map((r) => ({ kind: "rate_plan" as const, code: r.code })),
  ];
  for (const { kind, code } of catalogue)
    await setProviderMapping(pool, {
      propertyCode: property.code,
      provider: "hotelops",
      kind,
      code,
      externalCode: code,
    });
}

/** Per-property demo data of other modules, written after the properties exist. */
const moduleSeeders: readonly PropertySeeder[] = [seedInventory];

/** The lines the start command prints. */
export function describeSeed(seed: DemoSeed): string {
  const lines = [
    `Demo data ${seed.created ? "seeded" : "present"}: hotel group ${seed.groupCode}, properties ${seed.properties.map((p) => `${p.code}${p.emailVerification ? " (e-mail verification on)" : ""}`).join(", ")}`,
    ...seed.users.map((u) => `  login ${u.email} / ${seed.password}  (${u.roles})`),
  ];
  if (seed.client !== undefined)
    lines.push(
      `  internal client: client_id=${seed.client.clientId} client_secret=${seed.client.clientSecret}  (shown once)`,
    );
  return lines.join("\n");
}
