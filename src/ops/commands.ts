import { AppError, invalidField } from "../errors.ts";
import { createAdminService, dateIn } from "../modules/admin/index.ts";
import type { ApiClient } from "../modules/auth/index.ts";
import type { Deps } from "../modules/module.ts";
import { describeSeed, seedDemo } from "./seed.ts";
import { createPartnerRoomTypeCodes, setProviderMapping } from "../modules/connectivity/index.ts";
import { verifyInventory } from "./inventory-verify.ts";
import { createWebhookParts, partnerCallbackEventTypes } from "../modules/webhooks/index.ts";
import { createGuests } from "../modules/guests/index.ts";

interface CommandInput {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

export interface Command {
  summary: string;
  usage: string;
  options?: Record<string, { type: "string" | "boolean"; help: string }>;
  /** `json` is printed with --json, `text` otherwise; `exitCode` (default 0) is the process's status. */
  run(deps: Deps, input: CommandInput): Promise<{ json: object; text: string; exitCode?: number }>;
}

function str(input: CommandInput, name: string, fallback?: string): string {
  const v = input.values[name];
  if (typeof v === "string" && v !== "") return v;
  if (fallback !== undefined) return fallback;
  throw invalidField(name, `--${name} is required`);
}

function list(input: CommandInput, name: string): string[] {
  return str(input, name, "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function positional(input: CommandInput, index: number, what: string): string {
  const v = input.positionals[index];
  if (v === undefined || v === "") throw invalidField(what, "is required");
  return v;
}

function clientJson(c: ApiClient): object {
  return {
    clientId: c.id,
    kind: c.kind,
    provider: c.provider,
    name: c.name,
    scopes: c.scopes,
    properties: c.propertyCodes,
    environment: c.environment,
    active: c.active,
    createdAt: c.createdAt.toISOString(),
    approvedAt: c.approvedAt?.toISOString() ?? null,
  };
}

/** Every operator command; other modules add theirs here (e.g. mapping:set). */
export const commands: Record<string, Command> = {
  "property:create": {
    summary: "Create a property (and its hotel group if new).",
    usage:
      "--group <CODE> --code <CODE> --name <name> [--time-zone Europe/Istanbul] [--currency TRY] [--amount-scale <the currency's>] [--business-date YYYY-MM-DD] [--email-verification] [--sandbox]",
    options: {
      group: { type: "string", help: "hotel group code (created when new)" },
      "group-name": { type: "string", help: "name of a new group (default: its code)" },
      code: { type: "string", help: "property code, e.g. DEMO-IST" },
      name: { type: "string", help: "property name" },
      "time-zone": { type: "string", help: "IANA time zone (default Europe/Istanbul)" },
      currency: { type: "string", help: "ISO 4217 currency (default TRY)" },
      "amount-scale": { type: "string", help: "minor units per unit (default: the currency's ISO 4217 minor unit)" },
      "business-date": { type: "string", help: "YYYY-MM-DD (default: today in the time zone)" },
      "email-verification": { type: "boolean", help: "mobile login sends an e-mail code" },
      sandbox: { type: "boolean", help: "a sandbox property for test-environment clients" },
    },
    async run(deps, input) {
      const scale = typeof input.values["amount-scale"] === "string" ? Number(input.values["amount-scale"]) : undefined;
      const timeZone = str(input, "time-zone", "Europe/Istanbul");
      const p = await createAdminService(deps).createProperty({
        groupCode: str(input, "group"),
        ...(typeof input.values["group-name"] === "string" ? { groupName: input.values["group-name"] } : {}),
        code: str(input, "code"),
        name: str(input, "name"),
        timeZone,
        currency: str(input, "currency", "TRY"),
        ...(scale !== undefined ? { amountScale: scale } : {}),
        businessDate: str(input, "business-date", dateIn(timeZone, deps.clock.now())),
        emailVerification: input.values["email-verification"] === true,
        sandbox: input.values.sandbox === true,
      });
      return {
        json: p,
        text: `Created property ${p.code} (${p.id}) in group ${p.groupCode}, business date ${p.businessDate}.`,
      };
    },
  },

  "user:create": {
    summary: "Create a hotel user (password stored as an argon2id hash).",
    usage: "--email <e-mail> --password <password> [--name <name>]",
    options: {
      email: { type: "string", help: "login e-mail" },
      password: { type: "string", help: "at least 8 characters" },
      name: { type: "string", help: "display name" },
    },
    async run(deps, input) {
      const u = await createAdminService(deps).createUser({
        email: str(input, "email"),
        password: str(input, "password"),
        name: str(input, "name", ""),
      });
      return { json: u, text: `Created user ${u.email} (${u.id}).` };
    },
  },

  "membership:create": {
    summary: "Give a user a role in a property (changes the role of an existing membership).",
    usage: "--email <e-mail> --property <CODE> --role manager|front_desk|accountant|viewer",
    options: {
      email: { type: "string", help: "the user's e-mail" },
      property: { type: "string", help: "property code" },
      role: { type: "string", help: "role code" },
    },
    async run(deps, input) {
      const m = await createAdminService(deps).createMembership({
        email: str(input, "email"),
        propertyCode: str(input, "property"),
        role: str(input, "role"),
      });
      return { json: m, text: `${str(input, "email")} is ${m.role} in ${m.propertyCode}.` };
    },
  },

  "client:create": {
    summary: "Create an OAuth client; prints client_id and client_secret (shown once).",
    usage: "--provider <code> --properties <CODE,...> --scopes <a,b> [--kind partner|internal] [--name <name>]",
    options: {
      provider: { type: "string", help: "provider code, e.g. channex" },
      properties: { type: "string", help: "comma-separated property codes" },
      scopes: {
        type: "string",
        help: "comma-separated: availability.read, reservations.read, mappings.read, reservations.write, ari.read, ari.write, allotment.write (internal: also admin, events.read)",
      },
      kind: { type: "string", help: "partner (default) or internal" },
      name: { type: "string", help: "label" },
    },
    async run(deps, input) {
      const kind = str(input, "kind", "partner");
      if (kind !== "partner" && kind !== "internal") throw invalidField("kind", "must be partner or internal");
      const { client, clientSecret } = await createAdminService(deps).createClient({
        kind,
        provider: str(input, "provider"),
        name: str(input, "name", ""),
        propertyCodes: list(input, "properties"),
        scopes: list(input, "scopes"),
      });
      return {
        json: {
          clientId: client.id,
          clientSecret,
          kind: client.kind,
          provider: client.provider,
          scopes: client.scopes,
          properties: client.propertyCodes,
          environment: client.environment,
        },
        text: `client_id:     ${client.id}\nclient_secret: ${clientSecret}\n(The secret is shown only now. Environment: ${client.environment}; approve for live with client:approve.)`,
      };
    },
  },

  "client:callback": {
    summary:
      "Add a callback address for a partner client (all its granted properties); prints the address and its whsec_ secret (shown once).",
    usage: "--client <clientId> --url <https url> --events <type,...> [--description <text>]",
    options: {
      client: { type: "string", help: "the partner client's id" },
      url: { type: "string", help: "the partner's https address (public host; port 443 or >= 1024)" },
      events: {
        type: "string",
        help: `comma-separated: ${partnerCallbackEventTypes.join(", ")}`,
      },
      description: { type: "string", help: "label shown in the panel" },
    },
    async run(deps, input) {
      const { callbacks } = createWebhookParts(deps, createPartnerRoomTypeCodes(deps.db.pool));
      const { callback, secret } = await callbacks.create({
        clientId: str(input, "client"),
        propertyId: null,
        url: str(input, "url"),
        eventTypes: list(input, "events"),
        description: str(input, "description", ""),
        createdBy: null,
      });
      return {
        json: {
          callbackId: callback.id,
          clientId: callback.clientId,
          url: callback.url,
          eventTypes: callback.eventTypes,
          status: callback.status,
          secret,
        },
        text: `callback_id: ${callback.id}\nurl:         ${callback.url}\nevents:      ${callback.eventTypes.join(",")}\nsecret:      ${secret}\n(The secret is shown only now: hand it to the partner to verify signatures.)`,
      };
    },
  },

  "client:callbacks": {
    summary: "List a partner client's callback addresses (never their secrets).",
    usage: "--client <clientId>",
    options: { client: { type: "string", help: "the partner client's id" } },
    async run(deps, input) {
      const list = await createWebhookParts(deps, createPartnerRoomTypeCodes(deps.db.pool)).callbacks.listOfClient(
        str(input, "client"),
      );
      const json = list.map((c) => ({
        callbackId: c.id,
        url: c.url,
        eventTypes: c.eventTypes,
        status: c.status,
        propertyId: c.propertyId,
      }));
      const text =
        list.length === 0
          ? "No callback addresses."
          : list.map((c) => `${c.id}  ${c.status.padEnd(8)}  ${c.url}  ${c.eventTypes.join(",")}`).join("\n");
      return { json: { callbacks: json }, text };
    },
  },

  "client:callback-revoke": {
    summary: "Revoke a partner client's callback address (its deliveries and history go with it).",
    usage: "--client <clientId> --callback <callbackId>",
    options: {
      client: { type: "string", help: "the partner client's id" },
      callback: { type: "string", help: "the callback address id" },
    },
    async run(deps, input) {
      const id = str(input, "callback");
      await createWebhookParts(deps, createPartnerRoomTypeCodes(deps.db.pool)).callbacks.revoke(
        { clientId: str(input, "client") },
        id,
      );
      return { json: { callbackId: id, revoked: true }, text: `Callback address ${id} revoked.` };
    },
  },

  "client:approve": {
    summary: "Approve a client for live writes.",
    usage: "<clientId>",
    async run(deps, input) {
      const c = await createAdminService(deps).approveClient(positional(input, 0, "clientId"));
      return { json: clientJson(c), text: `Client ${c.id} approved: environment ${c.environment}.` };
    },
  },

  "client:list": {
    summary: "List clients (never their secrets).",
    usage: "",
    async run(deps) {
      const admin = createAdminService(deps);
      const clients = [];
      for (let cursor = ""; ;) {
        const page = await admin.listClients({ cursor, limit: 200 });
        clients.push(...page.clients);
        if (page.nextCursor === "") break;
        cursor = page.nextCursor;
      }
      const text =
        clients.length === 0
          ? "No clients."
          : clients
              .map(
                (c) =>
                  `${c.id}  ${c.kind.padEnd(8)}  ${c.provider.padEnd(12)}  ${c.environment}  ${c.active ? "active" : "disabled"}  [${c.propertyCodes.join(",")}]  ${c.scopes.join(" ")}`,
              )
              .join("\n");
      return { json: { clients: clients.map(clientJson) }, text };
    },
  },

  "platform:partner-api": {
    summary: "Switch the partner API on or off platform-wide.",
    usage: "on|off",
    async run(deps, input) {
      const arg = positional(input, 0, "state");
      if (arg !== "on" && arg !== "off") throw new AppError("invalid_argument", 'Say "on" or "off".');
      const enabled = await createAdminService(deps).setPartnerApi(arg === "on");
      return {
        json: { partnerApi: enabled ? "enabled" : "disabled" },
        text: `Partner API ${enabled ? "enabled" : "disabled"}.`,
      };
    },
  },

  "mapping:set": {
    summary: "Map one of our codes to a provider's code (connectivity API).",
    usage:
      "--property <CODE> --provider <provider> --kind property|room_type|rate_plan [--code <our code>] --external <provider code>",
    options: {
      property: { type: "string", help: "property code" },
      provider: { type: "string", help: "provider code of the partner clients, e.g. acme" },
      kind: { type: "string", help: "property, room_type or rate_plan" },
      code: { type: "string", help: "our room type or rate plan code (not for kind property)" },
      external: { type: "string", help: "the provider's code" },
    },
    async run(deps, input) {
      const kind = str(input, "kind");
      if (kind !== "property" && kind !== "room_type" && kind !== "rate_plan")
        throw invalidField("kind", "must be property, room_type or rate_plan");
      const code = input.values.code;
      const m = {
        propertyCode: str(input, "property"),
        provider: str(input, "provider"),
        kind,
        externalCode: str(input, "external"),
        ...(typeof code === "string" && code !== "" ? { code } : {}),
      } as const;
      await setProviderMapping(deps.db.pool, m);
      return {
        json: m,
        text: `${m.propertyCode} ${kind} ${m.code ?? ""} -> ${m.provider}:${m.externalCode}`.replace("  ", " "),
      };
    },
  },

  "inventory:verify": {
    summary: "Check a property's availability counters against its stays, blocks and repairs (--repair fixes them).",
    usage: "--property <CODE> [--repair]",
    options: {
      property: { type: "string", help: "property code" },
      repair: { type: "boolean", help: "set every drifting counter to what the stays say, and log each change" },
    },
    async run(deps, input) {
      const check = await verifyInventory(deps, str(input, "property"), input.values.repair === true);
      const lines = check.drift.map(
        (d) =>
          `  ${d.roomTypeCode} ${d.date} ${d.counter}: stored ${d.stored}, expected ${d.expected}${d.holderId === undefined ? "" : ` (reservation ${d.holderId})`}`,
      );
      const head =
        check.drift.length === 0
          ? `${check.propertyCode}: inventory holds (business date ${check.businessDate}).`
          : `${check.propertyCode}: ${check.drift.length} counter(s) ${check.repaired ? "repaired" : "drift (run with --repair to fix)"}:`;
      return {
        json: check,
        text: [head, ...lines].join("\n"),
        ...(check.drift.length > 0 && !check.repaired ? { exitCode: 1 } : {}),
      };
    },
  },

  "guests:rotate-key": {
    summary:
      "Re-seal every guest profile under GUEST_DATA_KEY (run with the old key in GUEST_DATA_PREVIOUS_KEYS); 0 left: drop the old key.",
    usage: "",
    async run(deps) {
      const guests = createGuests(deps);
      let resealed = 0;
      for (let n = await guests.rotateKeys(); n > 0; n = await guests.rotateKeys()) resealed += n;
      return { json: { resealed }, text: `${resealed} guest profile(s) re-sealed under the current key.` };
    },
  },

  "seed:demo": {
    summary: "Write the demo data (group DEMO) unless it is there already.",
    usage: "",
    async run(deps) {
      const seed = await seedDemo(deps, createAdminService(deps));
      return { json: seed, text: describeSeed(seed) };
    },
  },
};
