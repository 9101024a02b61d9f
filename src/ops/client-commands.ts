import { invalidField } from "../errors.ts";
import { createAdminService } from "../modules/admin/index.ts";
import type { ApiClient } from "../modules/auth/index.ts";
import { createPartnerRoomTypeCodes } from "../modules/connectivity/index.ts";
import { createWebhookParts, partnerCallbackEventTypes } from "../modules/webhooks/index.ts";
import type { Deps } from "../modules/module.ts";
import { list, positional, str, type Command } from "./command-input.ts";

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

/** A partner client's callback addresses, as the panel's API access page manages them. */
const callbacksOf = (deps: Deps) => createWebhookParts(deps, createPartnerRoomTypeCodes(deps.db.pool)).callbacks;

const clientOption = { type: "string", help: "the partner client's id" } as const;

/** The OAuth clients' commands: create, approve, list, and a partner client's callback addresses. */
export const clientCommands: Record<string, Command> = {
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
      client: clientOption,
      url: { type: "string", help: "the partner's https address (public host; port 443 or >= 1024)" },
      events: {
        type: "string",
        help: `comma-separated: ${partnerCallbackEventTypes.join(", ")}`,
      },
      description: { type: "string", help: "label shown in the panel" },
    },
    async run(deps, input) {
      const { callback, secret } = await callbacksOf(deps).create({
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
    options: { client: clientOption },
    async run(deps, input) {
      const list = await callbacksOf(deps).listOfClient(str(input, "client"));
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
      client: clientOption,
      callback: { type: "string", help: "the callback address id" },
    },
    async run(deps, input) {
      const id = str(input, "callback");
      await callbacksOf(deps).revoke({ clientId: str(input, "client") }, id);
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
};
