import { randomBytes } from "node:crypto";
import { recordChange } from "../audit/index.ts";
import { AppError, invalidField } from "../../errors.ts";
import type { Database } from "../../db/index.ts";
import { createPlatformSettings } from "../platform/index.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { parseDate } from "../../lib/dates.ts";
import { currencyScale } from "../../lib/money.ts";
import { newId, newToken } from "../../lib/ids.ts";
import { normalizeEmail } from "../../lib/email-address.ts";
import { pageOf, pageResult } from "../../lib/page.ts";
import {
  approveClient,
  findClient,
  grantProperties,
  hashSecret,
  insertClient,
  listClients,
  activeInternalClients,
  lockClientCreation,
  propertiesAtClientCap,
  scopes as partnerScopes,
  type ApiClient,
  type ClientKind,
} from "../auth/index.ts";
import {
  ensureGroup,
  findPropertiesByCodes,
  findPropertyByCode,
  findRole,
  findUserByEmail,
  insertProperty,
  insertUser,
  upsertMembership,
  type Property,
  type User,
} from "../properties/index.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/** The scope of internal clients that may call hotelops.admin.v1.AdminService. */
export const ADMIN_SCOPE = "admin";
/** Internal clients only: EventService.StreamEvents, a property's domain events as a stream. */
const EVENTS_SCOPE = "events.read";

interface CreatePropertyInput {
  groupCode: string;
  groupName?: string;
  code: string;
  name: string;
  timeZone: string;
  currency: string;
  amountScale?: number;
  businessDate?: string;
  emailVerification?: boolean;
  sandbox?: boolean;
}

interface CreateClientInput {
  kind: ClientKind;
  provider: string;
  name?: string;
  propertyCodes: readonly string[];
  scopes: readonly string[];
}

interface MembershipResult {
  id: string;
  userId: string;
  propertyId: string;
  propertyCode: string;
  role: string;
}

export interface AdminService {
  createProperty(input: CreatePropertyInput, keyed?: Keyed): Promise<Property>;
  createUser(input: { email: string; name?: string; password: string }, keyed?: Keyed): Promise<User>;
  createMembership(
    input: { email: string; propertyCode: string; role: string },
    keyed?: Keyed,
  ): Promise<MembershipResult>;
  /** The secret is returned here only; the database keeps its argon2id hash. */
  createClient(input: CreateClientInput, keyed?: Keyed): Promise<{ client: ApiClient; clientSecret: string }>;
  approveClient(clientId: string, keyed?: Keyed): Promise<ApiClient>;
  setPartnerApi(enabled: boolean): Promise<boolean>;
  /** Newest first, one page (`limit` 1-200, default 50) after `cursor`; `nextCursor` is empty on the last page. */
  listClients(page?: { cursor?: string; limit?: number }): Promise<{ clients: ApiClient[]; nextCursor: string }>;
}

/**
 * Count caps of API clients (docs/internal/clients.md): active partner clients granted one property, and active
 * internal clients (they have no property). A client is created in a transaction that holds the creation lock.
 */
export const MAX_CLIENTS_PER_PROPERTY = 50;
const MAX_INTERNAL_CLIENTS = 50;
/** Pages of the client lists (admin ListClients, panel ListApiClients). */
const CLIENT_PAGE = { default: 50, max: 200 };

// checked before upper-casing (the OpenAPI document states the same pattern): "ı" or "ß" upper-case to ASCII
const CODE = /^[A-Za-z0-9][A-Za-z0-9_-]{1,31}$/;
const PROVIDER = /^[a-z0-9][a-z0-9_.-]{1,31}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

export function createAdminService(deps: { db: Database; transact: Transact; clock: Clock }): AdminService {
  const { transact, clock } = deps;

  return {
    async createProperty(input, keyed) {
      const groupCode = input.groupCode.trim().toUpperCase();
      const code = input.code.trim().toUpperCase();
      if (!CODE.test(input.groupCode.trim()))
        throw invalidField("groupCode", "must be 2-32 characters of A-Z, 0-9, _ and -");
      if (!CODE.test(input.code.trim())) throw invalidField("code", "must be 2-32 characters of A-Z, 0-9, _ and -");
      if (input.name.trim() === "") throw invalidField("name", "is required");
      if (!validTimeZone(input.timeZone))
        throw invalidField("timeZone", "must be an IANA time zone such as Europe/Istanbul");
      const currency = input.currency.trim().toUpperCase();
      const currencyUnit = currencyScale(currency);
      if (currencyUnit === undefined) throw invalidField("currency", "must be an ISO 4217 currency code such as TRY");
      const amountScale = input.amountScale ?? currencyUnit;
      if (amountScale !== currencyUnit)
        throw invalidField(
          "amountScale",
          `must be ${currencyUnit}, the minor unit of ${currency}`,
          "validation_failed",
        );
      const now = clock.now();
      const businessDate = input.businessDate ?? dateIn(input.timeZone, now);
      parseDate("businessDate", businessDate);
      return transact(async (tx) => {
        if ((await findPropertyByCode(tx, code)) !== undefined)
          throw new AppError("conflict", `Property ${code} already exists.`);
        const group = await ensureGroup(tx, groupCode, input.groupName?.trim() || groupCode);
        const id = newId(now.getTime());
        await insertProperty(tx, {
          id,
          groupId: group.id,
          code,
          name: input.name.trim(),
          timeZone: input.timeZone,
          currency,
          amountScale,
          businessDate,
          emailVerification: input.emailVerification ?? false,
          sandbox: input.sandbox ?? false,
          now,
        });
        return (await findPropertyByCode(tx, code))!;
      }, keyed);
    },

    async createUser(input, keyed) {
      // one form for every comparison and the stored row: NFC, lower-case domain (lib/email-address.ts)
      const email = normalizeEmail(input.email);
      if (!EMAIL.test(email)) throw invalidField("email", "must be an e-mail address");
      if (input.password.length < 8) throw invalidField("password", "must be at least 8 characters");
      if (input.password.length > 1024) throw invalidField("password", "must be at most 1024 characters");
      const passwordHash = await hashSecret(input.password);
      const id = newId(clock.now().getTime());
      return transact(async (tx) => {
        if ((await findUserByEmail(tx, email)) !== undefined)
          throw new AppError("conflict", `A user with e-mail ${email} already exists.`);
        await insertUser(tx, { id, email, name: input.name?.trim() ?? "", passwordHash, now: clock.now() });
        return { id, email, name: input.name?.trim() ?? "", active: true };
      }, keyed);
    },

    async createMembership(input, keyed) {
      return transact(async (tx) => {
        const user = await findUserByEmail(tx, input.email);
        if (user === undefined) throw new AppError("not_found", `No user with e-mail ${input.email}.`);
        const property = await findPropertyByCode(tx, input.propertyCode.trim().toUpperCase());
        if (property === undefined) throw new AppError("not_found", `No property ${input.propertyCode}.`);
        if ((await findRole(tx, input.role)) === undefined)
          throw invalidField("role", "is not a known role (manager, front_desk, accountant, viewer)");
        const id = await upsertMembership(tx, {
          userId: user.id,
          propertyId: property.id,
          role: input.role,
          now: clock.now(),
        });
        return { id, userId: user.id, propertyId: property.id, propertyCode: property.code, role: input.role };
      }, keyed);
    },

    async createClient(input, keyed) {
      if (input.kind !== "partner" && input.kind !== "internal")
        throw invalidField("kind", "must be partner or internal");
      const provider = input.provider.trim().toLowerCase();
      if (!PROVIDER.test(provider)) throw invalidField("provider", "must be 2-32 characters of a-z, 0-9, ., _ and -");
      const allowed: readonly string[] =
        input.kind === "internal" ? [...partnerScopes, ADMIN_SCOPE, EVENTS_SCOPE] : partnerScopes;
      const scopes = [...new Set(input.scopes.map((s) => s.trim()).filter((s) => s !== ""))];
      const unknown = scopes.filter((s) => !allowed.includes(s));
      if (unknown.length > 0)
        throw invalidField(
          "scopes",
          `not allowed for ${input.kind} clients: ${unknown.join(", ")} (allowed: ${allowed.join(", ")})`,
        );
      const codes = [...new Set(input.propertyCodes.map((c) => c.trim().toUpperCase()).filter((c) => c !== ""))];
      if (input.kind === "partner" && codes.length === 0)
        throw invalidField("propertyCodes", "a partner client needs at least one property");
      const clientId = `cli_${randomBytes(12).toString("hex")}`;
      const clientSecret = newToken("cs_", 32);
      const secretHash = await hashSecret(clientSecret);
      const client = await transact(async (tx) => {
        const properties = await findPropertiesByCodes(tx, codes);
        const missing = codes.filter((c) => !properties.some((p) => p.code === c));
        if (missing.length > 0) throw invalidField("propertyCodes", `unknown property: ${missing.join(", ")}`);
        await lockClientCreation(tx);
        const full = await propertiesAtClientCap(
          tx,
          properties.map((p) => p.id),
          MAX_CLIENTS_PER_PROPERTY,
        );
        if (full.length > 0)
          throw new AppError(
            "conflict",
            `A property can have at most ${MAX_CLIENTS_PER_PROPERTY} active API clients: ${full.join(", ")} has.`,
          );
        if (input.kind === "internal" && (await activeInternalClients(tx)) >= MAX_INTERNAL_CLIENTS)
          throw new AppError("conflict", `There can be at most ${MAX_INTERNAL_CLIENTS} active internal clients.`);
        await insertClient(tx, {
          id: clientId,
          kind: input.kind,
          provider,
          name: input.name?.trim() ?? "",
          secretHash,
          scopes,
          now: clock.now(),
        });
        await grantProperties(
          tx,
          clientId,
          properties.map((p) => p.id),
        );
        const created = (await findClient(tx, clientId))!;
        // One row in the trail of every property the client reaches (the trail is read per property).
        for (const p of properties)
          recordChange(tx, {
            propertyId: p.id,
            entity: "api_client",
            entityId: clientId,
            action: "create",
            after: created,
          });
        return created;
      }, keyed);
      return { client, clientSecret };
    },

    async approveClient(clientId, keyed) {
      return transact(async (tx) => {
        const before = await findClient(tx, clientId);
        if (!(await approveClient(tx, clientId, clock.now())))
          throw new AppError("not_found", `No client ${clientId}.`);
        const after = (await findClient(tx, clientId))!;
        for (const p of await findPropertiesByCodes(tx, after.propertyCodes))
          recordChange(tx, {
            propertyId: p.id,
            entity: "api_client",
            entityId: clientId,
            action: "approve",
            before,
            after,
          });
        return after;
      }, keyed);
    },

    async setPartnerApi(enabled) {
      await createPlatformSettings(deps.db, clock).setPartnerApi(enabled);
      return enabled;
    },

    async listClients(input = {}) {
      const page = pageOf(input, CLIENT_PAGE);
      const { items, nextCursor } = pageResult(
        await listClients(deps.db, { ...page, limit: page.limit + 1 }),
        page.limit,
      );
      return { clients: items, nextCursor };
    },
  };
}

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return tz.includes("/") || tz === "UTC";
  } catch {
    return false;
  }
}

/** The calendar date at `now` in a time zone, YYYY-MM-DD. */
export function dateIn(timeZone: string, now: Date): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(now);
}
