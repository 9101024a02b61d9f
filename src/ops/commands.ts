import { AppError, invalidField } from "../errors.ts";
import { createAdminService, dateIn } from "../modules/admin/index.ts";
import { describeSeed, seedDemo } from "./seed.ts";
import { setProviderMapping } from "../modules/connectivity/index.ts";
import { verifyInventory } from "./inventory-verify.ts";
import { createGuests } from "../modules/guests/index.ts";
import { clientCommands } from "./client-commands.ts";
import { positional, str, type Command } from "./command-input.ts";

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

  ...clientCommands,

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
