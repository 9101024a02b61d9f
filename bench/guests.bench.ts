// Guest search at chain scale, over the mobile API of the production service (its own process): one staff session
// looks guests up by document number (the keyed hash's index) and by name, first on a group holding 1,000 guests,
// then on the same group filled in bulk to BENCH_GUESTS (default 1,000,000) sealed profiles. Target: search by
// document number p50 under 5 ms on the large group; the name search is reported beside it.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { pino } from "pino";
import { Pool } from "undici";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { newId } from "../src/lib/ids.ts";
import { createGuestVault, type GuestVault } from "../src/modules/guests/vault.ts";
import { nameWords } from "../src/modules/guests/fields.ts";
import { seedDemo } from "../src/ops/seed.ts";
import { benchDatabase, startService, type Measured } from "./harness.ts";

const SMALL = 1_000;
const LOOKUPS = 1_000;
const given = ["Ayse", "Mehmet", "Fatma", "Mustafa", "Emine", "Ahmet", "Hatice", "Ali", "Zeynep", "Huseyin", "Anna"];
const family = ["Yilmaz", "Kaya", "Demir", "Sahin", "Celik", "Yildiz", "Aydin", "Ozturk", "Arslan", "Dogan", "Muller"];

/** The i-th guest of the fill: a passport number only it holds, a name shared with many. */
const documentOf = (i: number) => `U${String(i).padStart(9, "0")}`;
const nameOf = (i: number) => ({
  givenName: given[i % given.length]!,
  familyName: `${family[Math.floor(i / given.length) % family.length]!}${Math.floor(i / 121) % 5000}oglu`,
});

export async function benchGuests(): Promise<void> {
  const total = Number(process.env.BENCH_GUESTS ?? 1_000_000);
  const database = await benchDatabase();
  const key = randomBytes(32).toString("hex");
  const env = {
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: database.url,
    LOG_LEVEL: "silent",
    ROLE: "api",
    GUEST_DATA_KEY: key,
    RATE_LIMIT_STAFF_PER_MINUTE: "1000000000",
  };
  const app = await createApp(loadConfig(env), { logger: pino({ level: "silent" }) });
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  let service: Measured | undefined;
  let http: Pool | undefined;
  try {
    await seedDemo(app.deps, app.services.admin);
    const {
      rows: [ist],
    } = await pool.query<{ id: string; groupId: string; userId: string }>(
      `select p.id, p.group_id as "groupId", u.id as "userId" from properties p, users u
        where p.code = 'DEMO-IST' and u.email = 'manager@demo.test'`,
    );
    const token = (
      await app.services.auth.sessions.openStaffSession({
        userId: ist!.userId,
        propertyId: ist!.id,
        deviceId: "bench-guests",
      })
    ).accessToken;
    const vault = createGuestVault(Buffer.from(key, "hex"));
    await fill(pool, vault, ist!, 0, SMALL);

    const { PORT: _port, HOST: _host, LOG_LEVEL: _level, DATABASE_URL: _url, ...serviceEnv } = env;
    service = await startService(database.url, { env: serviceEnv });
    http = new Pool(`http://127.0.0.1:${service.port}`, { connections: 1 });
    const search = searcher(http, token);

    const small = await measure(search, SMALL);
    const started = performance.now();
    for (let from = SMALL; from < total; from += 20_000)
      await fill(pool, vault, ist!, from, Math.min(total, from + 20_000));
    await pool.query("analyze guests");
    const fillSeconds = (performance.now() - started) / 1000;
    console.log(`${total.toLocaleString("en")} guests in one group, filled in ${fillSeconds.toFixed(0)} s`);
    const large = await measure(search, total);

    console.log(
      `\n${"measure".padEnd(44)} ${`${SMALL} guests`.padStart(14)} ${`${total} guests`.padStart(16)}  target`,
    );
    for (const [name, a, b, target] of [
      ["search by document number, p50", small.document.p50, large.document.p50, 5],
      ["search by document number, p99", small.document.p99, large.document.p99, undefined],
      ["search by name (two words), p50", small.name.p50, large.name.p50, undefined],
      ["search by name (two words), p99", small.name.p99, large.name.p99, undefined],
    ] as const)
      console.log(
        `${name.padEnd(44)} ${`${a.toFixed(2)} ms`.padStart(14)} ${`${b.toFixed(2)} ms`.padStart(16)}  ${
          target === undefined ? "" : `< ${target} ms ${b < target ? "" : "MISSED"}`
        }`,
      );
  } finally {
    await http?.close();
    await service?.stop();
    await pool.end();
    await app.close();
    await database.stop();
  }
}

type Search = (query: string) => Promise<{ id: string; documentNumber: string; familyName: string }[]>;

function searcher(http: Pool, token: string): Search {
  return async (query) => {
    const res = await http.request({
      method: "GET",
      path: `/api/mobile/v1/guests?${query}`,
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await res.body.json()) as { guests?: { id: string; documentNumber: string; familyName: string }[] };
    if (res.statusCode !== 200 || body.guests === undefined)
      throw new Error(`search answered ${res.statusCode}: ${JSON.stringify(body)}`);
    return body.guests;
  };
}

/** LOOKUPS searches of each kind for guests among the first `count`; every answer checked. */
async function measure(search: Search, count: number) {
  const documentMs: number[] = [];
  const nameMs: number[] = [];
  for (let n = 0; n < LOOKUPS; n++) {
    const i = Math.floor(Math.random() * count);
    let t = performance.now();
    const byDocument = await search(`documentNumber=${documentOf(i)}`);
    documentMs.push(performance.now() - t);
    // masked answers keep the first two and last two characters of the number
    const number = documentOf(i);
    if (
      byDocument.length !== 1 ||
      byDocument[0]!.documentNumber !== `${number.slice(0, 2)}${"*".repeat(number.length - 4)}${number.slice(-2)}`
    )
      throw new Error(`document ${number}: ${JSON.stringify(byDocument)}`);
    const { givenName, familyName } = nameOf(i);
    t = performance.now();
    const byName = await search(`name=${encodeURIComponent(`${givenName} ${familyName}`)}&limit=50`);
    nameMs.push(performance.now() - t);
    if (byName.length === 0 || byName.some((g) => g.familyName !== familyName))
      throw new Error(`name ${givenName} ${familyName}: ${JSON.stringify(byName.slice(0, 3))}`);
  }
  const pick = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]!;
  return {
    document: { p50: pick(documentMs, 0.5), p99: pick(documentMs, 0.99) },
    name: { p50: pick(nameMs, 0.5), p99: pick(nameMs, 0.99) },
  };
}

/** Guests from..to-1 written in one statement, sealed and hashed as the service does. */
async function fill(
  pool: pg.Pool,
  vault: GuestVault,
  at: { id: string; groupId: string },
  from: number,
  to: number,
): Promise<void> {
  const ids: string[] = [];
  const givens: string[] = [];
  const families: string[] = [];
  const words: string[] = [];
  const sealed: string[] = [];
  const hashes: Buffer[] = [];
  for (let i = from; i < to; i++) {
    const id = newId();
    const { givenName, familyName } = nameOf(i);
    const document = documentOf(i);
    ids.push(id);
    givens.push(givenName);
    families.push(familyName);
    words.push(` ${nameWords(`${givenName} ${familyName}`).join(" ")} `);
    const sensitive = {
      documentNumber: document,
      birthDate: "1980-01-01",
      email: "",
      phone: "",
      address: "",
      notes: "",
    };
    sealed.push(vault.seal(JSON.stringify(sensitive), id));
    hashes.push(vault.hash(document));
  }
  await pool.query(
    `insert into guests (id, group_id, created_property_id, given_name, family_name, name_words, nationality,
       document_type, document_country, language, sealed, key_id, document_hash, created_at, updated_at)
     select id, $1, $2, g, f, w, 'DE', 'PASSPORT', 'DE', '', s, $3, h, now(), now()
       from unnest($4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bytea[]) as t(id, g, f, w, s, h)`,
    [at.groupId, at.id, vault.keyId, ids, givens, families, words, sealed, hashes],
  );
}
