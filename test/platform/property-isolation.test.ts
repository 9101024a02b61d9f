import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, getOption, toJson, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { rule, PrincipalKind } from "../../gen/hotelops/auth/v1/rule_pb.js";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { systemClock } from "../../src/lib/clock.ts";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import type { Route } from "../../src/gateway/index.ts";
import { bindingOf } from "../../src/modules/auth/property-scope.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  type Receiver,
  type WebhookApp,
} from "../helpers/webhooks.ts";
import { restCaller } from "../helpers/rest.ts";

// Property isolation by construction: every unary RPC of the contract is found in the generated descriptors (and
// every REST binding in the app's route table), and each one whose request names a property (`property_code`) or a
// property's resource (an id field) is called, on REST, Connect and gRPC, by callers granted property A with property
// B's code or B's ids. The answer must be 404 / NOT_FOUND and identical to the answer for a property or id that does
// not exist (nothing tells B's resources apart from missing ones). A new RPC is probed without touching this file;
// one whose request carries an id this file has no fixture for, or that names neither a property nor an id, fails
// until it is added below (`resourceOf`, `notPropertyAddressed`). Every probed RPC must also be bound by the one
// mechanism that checks the property (`bindingOf`, src/modules/auth/property-scope.ts; docs/adr/0023).

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request objects are built field by field
type Json = any;

/** The property's resources an id field may name (built for both properties in `buildHotel`). */
interface Hotel {
  property: { id: string; code: string };
  staff: { accessToken: string; userId: string };
  partner: { clientId: string; accessToken: string };
  internal: { clientId: string; accessToken: string };
  ids: Record<string, string>;
}

/** The fixture an id field names; `undefined` for a field that is not a property's resource. */
const resourceOf: Record<string, string | undefined> = {
  property_id: "property",
  reservation_id: "reservation",
  reservation_room_id: "reservationRoom",
  room_id: "room",
  room_type_id: "roomType",
  room_type_ids: "roomType",
  rate_plan_id: "ratePlan",
  rate_plan_ids: "ratePlan",
  folio_id: "folio",
  to_folio_id: "folio",
  charge_id: "charge",
  account_id: "ledgerAccount",
  settle_to_account_id: "ledgerAccount",
  payment_id: "payment",
  invoice_id: "invoice",
  out_of_order_period_id: "outOfOrderPeriod",
  event_id: "reservationEvent",
  endpoint_id: "webhookEndpoint",
  delivery_id: "webhookDelivery",
  callback_id: "partnerCallback",
  client_id: "partnerClient",
  notification_id: "notification",
  // guests belong to the hotel group (a chain shares them): the foreign one is another group's
  guest_id: "guest",
  duplicate_guest_ids: "guest",
  guest_report_id: "guestReport",
  // filters of a list (a foreign value finds nothing; the property comes from the caller) and non-resources
  entity_id: undefined,
  actor_id: undefined,
  device_id: undefined,
  challenge_id: undefined,
  report_id: undefined,
};

/** RPCs whose request names neither a property nor a property's resource, each with why that is safe. */
const notPropertyAddressed: Record<string, string> = {
  "hotelops.status.v1.StatusService.GetStatus": "public, no property",
  "hotelops.auth.v1.AuthService.CreateToken": "public: client credentials",
  "hotelops.auth.v1.AuthService.Login": "public: the hotel code selects the property a user belongs to",
  "hotelops.auth.v1.AuthService.VerifyLogin": "public: a login challenge",
  "hotelops.auth.v1.AuthService.RefreshSession": "public: the session's own refresh token",
  "hotelops.auth.v1.AuthService.Logout": "the caller's own session",
  "hotelops.admin.v1.AdminService.CreateProperty": "platform operator (scope admin), not a property's caller",
  "hotelops.admin.v1.AdminService.CreateUser": "platform operator",
  "hotelops.admin.v1.AdminService.SetPartnerApi": "platform operator",
  "hotelops.admin.v1.AdminService.ListClients": "platform operator",
  "hotelops.connectivity.v1.ConnectivityService.GetCapabilities": "lists the client's own grants",
  "hotelops.connectivity.v1.ConnectivityService.ListCallbackDeliveries": "the client's own callbacks",
  "hotelops.mobile.v1.MobileService.ScanIdentityDocument":
    "the session's active property (save_to_room_line is looked up in it; test/guests/scan-save.test.ts)",
  "hotelops.mobile.v1.MobileService.GetReservationOptions": "the session's active property",
  "hotelops.mobile.v1.MobileService.ListMobileReservations": "the session's active property",
  "hotelops.mobile.v1.MobileService.GetDashboard": "the session's active property",
  "hotelops.mobile.v1.MobileService.GetForecast": "the session's active property",
  "hotelops.mobile.v1.MobileService.ListAuditChanges": "the session's active property (ids are filters)",
  "hotelops.mobile.v1.MobileService.ListReports": "the session's active property",
  "hotelops.mobile.v1.MobileService.RunReport": "the session's active property",
  "hotelops.mobile.v1.MobileService.GetMobileNightAudit": "the session's active property",
  "hotelops.mobile.v1.MobileService.RunMobileNightAudit": "the session's active property",
  "hotelops.panel.v1.ApiAccessService.ListApiClients": "the session's active property",
  "hotelops.webhook.v1.WebhookService.ListWebhookEndpoints": "the session's active property",
  "hotelops.webhook.v1.WebhookService.CreateWebhookEndpoint": "creates in the session's active property",
  "hotelops.webhook.v1.WebhookService.ListWebhookEventTypes": "a constant list",
  "hotelops.webhook.v1.WebhookService.ListNotifications": "the session's own user and active property",
};

/** Operator RPCs that take a property or client by design: the platform operator reaches every property. */
const operatorOnly = new Set([
  "hotelops.admin.v1.AdminService.CreateMembership",
  "hotelops.admin.v1.AdminService.CreateClient",
  "hotelops.admin.v1.AdminService.ApproveClient",
]);

/** Probed RPCs that declare PROPERTY_SCOPE_NONE because they check the named property themselves, with why. */
const boundByItself: Record<string, string> = {
  "hotelops.auth.v1.AuthService.SwitchActiveProperty": "switches to a property of the user's memberships only",
};

/** Values that make a request valid apart from its property and ids (by field name, then per method). */
const filler: Record<string, unknown> = {
  from: "2027-03-10",
  to: "2027-03-12",
  arrivalDate: "2027-03-10",
  departureDate: "2027-03-12",
  expectedBusinessDate: "2027-03-01",
  amountMinor: 1000n,
  totalMinor: 50000n,
  code: "PROBE",
  name: "Probe",
  number: "999",
  maxOccupancy: 2,
  boardType: "ROOM_ONLY",
  methodCode: "CASH",
  description: "probe",
  reference: "probe",
  holderName: "Probe Guest",
  count: 1,
  reason: "probe",
  format: "xml",
  currency: "TRY",
  adults: 2,
  eventType: "CANCELLED",
  externalReference: "PROBE-1",
  eventTypes: ["reservation.created"],
};
const perMethod: Record<string, (h: Hotel) => Json> = {
  "hotelops.inventory.v1.InventoryService.SetRoomStatus": () => ({ status: 2 /* DIRTY */ }),
  "hotelops.inventory.v1.InventoryService.SetRestrictions": () => ({ stopSell: true }),
  "hotelops.webhook.v1.WebhookService.ListWebhookDeliveries": () => ({ eventType: "" }),
  // no room unless probed (a room of another type is refused before the room type is looked up)
  "hotelops.mobile.v1.MobileService.CreateMobileReservation": () => ({ roomId: "" }),
  "hotelops.webhook.v1.WebhookService.CreatePartnerCallback": (h) => ({
    eventTypes: ["partner_message.processed"],
    url: receiver.url(`/${h.property.code}/probe`),
  }),
  "hotelops.webhook.v1.WebhookService.UpdateWebhookEndpoint": () => ({ eventTypes: [] }),
  "hotelops.folio.v1.FolioService.SetFolioRoutingRule": () => ({ chargeCode: "MINIBAR" }),
  // a line that can move: the in-house stay's
  "hotelops.reservation.v1.ReservationService.MoveRoom": (h) => ({
    reservationId: h.ids.inHouseReservation,
    reservationRoomId: h.ids.inHouseLine,
  }),
  "hotelops.reservation.v1.ReservationService.CreateReservation": (h) => ({
    rooms: [{ roomTypeId: h.ids.roomType, ratePlanId: h.ids.ratePlan, adults: 2 }],
    currency: "TRY",
  }),
};

/** Requests that take one of these ids, not both. */
const exclusiveIds: Record<string, string[]> = {
  "hotelops.folio.v1.FolioService.GetFolio": ["folio_id", "reservation_id"],
};

/** Id fields that filter a list of the caller's own property: a foreign id finds what a missing one finds. */
const filters: Record<string, string[]> = {
  "hotelops.inventory.v1.InventoryService.GetAri": ["room_type_ids", "rate_plan_ids"],
  "hotelops.webhook.v1.WebhookService.ListPartnerCallbacks": ["client_id"],
};

const ca = createTestCa();
let receiver: Receiver;
let app: WebhookApp;
let a: Hotel;
let b: Hotel;

const rest = restCaller(() => app.baseUrl);

async function ok(r: Promise<{ status: number; body: Json }>): Promise<Json> {
  const { status, body } = await r;
  if (status >= 300) throw new Error(`fixture call failed: ${status} ${JSON.stringify(body)}`);
  return body;
}

async function buildHotel(code: string): Promise<Hotel> {
  const property = await createTestProperty(app, { code, businessDate: "2027-03-01" });
  // a guest of a property in a group of its own: B's guest would be A's too (one group), so B names this one
  const outsider = await createTestProperty(app, { code: `${code}-G`, groupCode: `${code}-GROUP` });
  const outsiderStaff = await createStaffSession(app, { propertyCode: outsider.code, role: "manager" });
  const guest = await ok(
    rest("POST", "/api/panel/v1/guests", outsiderStaff.accessToken, {
      givenName: "Probe",
      familyName: "Guest",
      nationality: "TR",
      documentType: "TC_KIMLIK",
      documentNumber: "10000000146",
    }),
  );
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const room = await inv.createRoom(property.id, { number: "101", roomTypeId: dbl.id });
  const room2 = await inv.createRoom(property.id, { number: "102", roomTypeId: dbl.id });
  await inv.createRoom(property.id, { number: "103", roomTypeId: dbl.id });
  const bar = await inv.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inv.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-03-01",
    to: "2027-04-30",
    amountMinor: 25000n,
  });
  for (const [kind, c, externalCode] of [
    ["room_type", "DBL", "X-DBL"],
    ["rate_plan", "BAR", "X-BAR"],
  ] as const)
    await setProviderMapping(app.db.pool, { propertyCode: code, provider: "acme", kind, code: c, externalCode });
  const staff = await createStaffSession(app, { propertyCode: code, role: "manager" });
  const partner = await createTestClient(app, {
    provider: "acme",
    propertyCodes: [code],
    scopes: ["availability.read", "reservations.read", "mappings.read", "reservations.write", "ari.read", "ari.write"],
    approved: true,
  });
  const internal = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [code],
    scopes: [
      "admin",
      "availability.read",
      "reservations.read",
      "mappings.read",
      "reservations.write",
      "ari.read",
      "ari.write",
    ],
  });
  const t = staff.accessToken;
  const made = await ok(
    rest("POST", "/api/mobile/v1/reservations", t, {
      holderName: "Ayse Yilmaz",
      arrivalDate: "2027-03-01",
      departureDate: "2027-03-03",
      roomTypeId: dbl.id,
      ratePlanId: bar.id,
      adults: 2,
      totalMinor: 50000,
      currency: "TRY",
    }),
  );
  const reservationId: string = made.id;
  const stay = await ok(
    rest("POST", "/api/mobile/v1/reservations", t, {
      holderName: "Mehmet Kaya",
      arrivalDate: "2027-03-01",
      departureDate: "2027-03-02",
      roomTypeId: dbl.id,
      ratePlanId: bar.id,
      adults: 1,
      totalMinor: 25000,
      currency: "TRY",
    }),
  );
  const reservations = createClient(ReservationService, transport("connect", t));
  const inHouseLine = stay.rooms[0].id as string;
  await reservations.checkInRoomLine({ reservationId: stay.id, reservationRoomId: inHouseLine, roomId: room2.id });
  const folios = createClient(FolioService, transport("connect", t));
  const folioId = (await folios.getFolio({ reservationId })).folio!.id;
  const charge = (await folios.postCharge({ folioId, code: "MINIBAR", description: "Minibar", amountMinor: 2000n }))
    .charge!;
  const account = await app.services.cityLedger.createAccount(property.id, {
    code: "ACME",
    name: "Acme Ltd.",
    kind: "COMPANY",
    creditLimitMinor: 100000n,
  });
  const payment = (await folios.postPayment({ folioId, amountMinor: 1000n, methodCode: "CASH" })).payment!;
  const invoice = (await folios.createInvoiceDraft({ folioId })).invoice!;
  const reservation = (await reservations.getReservation({ reservationId })).reservation!;
  const ooo = await ok(
    rest("POST", `/api/mobile/v1/rooms/${room.id}/out-of-order-periods`, t, { from: "2027-04-01", to: "2027-04-03" }),
  );
  const event = await ok(
    rest("POST", `/api/v1/properties/${code}/reservation-events`, partner.accessToken, {
      eventType: "CANCELLED",
      externalReference: "NONE",
    }),
  );
  const endpoint = await ok(
    rest("POST", "/api/panel/v1/webhook-endpoints", t, {
      url: receiver.url(`/${code}`),
      eventTypes: ["reservation.created"],
    }),
  );
  const sent = await ok(rest("POST", `/api/panel/v1/webhook-endpoints/${endpoint.endpoint.id}/test`, t, {}));
  const callback = await ok(
    rest("POST", "/api/panel/v1/partner-callbacks", t, {
      clientId: partner.clientId,
      url: receiver.url(`/${code}/cb`),
      eventTypes: ["partner_message.processed"],
    }),
  );
  const notificationId = newId();
  await app.db.pool.query(
    `insert into notifications (id, property_id, user_id, kind, title, body, created_at)
     values ($1, $2, $3, 'probe', 'Probe', 'Probe', now())`,
    [notificationId, property.id, staff.userId],
  );
  // the in-house line's check-in report (the line has no guests: one report, incomplete)
  const reports = await app.db.pool.query<{ id: string }>(
    "select id from guest_reports where reservation_room_id = $1",
    [inHouseLine],
  );
  const guestReportId = reports.rows[0]!.id;
  return {
    property,
    staff,
    partner,
    internal,
    ids: {
      property: property.id,
      reservation: reservationId,
      reservationRoom: reservation.rooms[0]!.id,
      inHouseReservation: stay.id,
      inHouseLine,
      room: room.id,
      roomType: dbl.id,
      ratePlan: bar.id,
      folio: folioId,
      charge: charge.id,
      ledgerAccount: account.id,
      payment: payment.id,
      invoice: invoice.id,
      outOfOrderPeriod: ooo.outOfOrderPeriod.id,
      reservationEvent: event.eventId,
      webhookEndpoint: endpoint.endpoint.id,
      webhookDelivery: sent.deliveryId,
      partnerCallback: callback.callback.id,
      partnerClient: partner.clientId,
      notification: notificationId,
      guest: guest.guest.id,
      guestReport: guestReportId,
    },
  };
}

// ---- the contract: every service in gen/hotelops, read from the generated files ----

let services: DescService[] | undefined;
async function allServices(): Promise<DescService[]> {
  if (services !== undefined) return services;
  const root = new URL("../../gen/hotelops/", import.meta.url).pathname;
  const found: DescService[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith("_pb.js"))
        for (const v of Object.values(await import(p)))
          if ((v as { kind?: string }).kind === "service") found.push(v as DescService);
    }
  };
  await walk(root);
  services = found;
  return found;
}

type Face = "rest" | "connect" | "grpc";
const transports = new Map<string, ReturnType<typeof createConnectTransport>>();
function transport(face: "connect" | "grpc", token: string) {
  const key = `${face} ${token}`;
  let t = transports.get(key);
  if (t === undefined) {
    const auth: Interceptor = (next) => async (req) => {
      req.header.set("authorization", bearer(token).authorization);
      req.header.set("idempotency-key", newId());
      return next(req);
    };
    t =
      face === "grpc"
        ? createGrpcTransport({ baseUrl: app.baseUrl, interceptors: [auth] })
        : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1", interceptors: [auth] });
    transports.set(key, t);
  }
  return t;
}

/** The fields of a request that address a property or its resources. */
function addressing(input: DescMessage): { propertyCode: boolean; ids: string[] } {
  const ids: string[] = [];
  for (const f of input.fields) {
    if (!/_ids?$/.test(f.name)) continue;
    if (!(f.name in resourceOf))
      throw new Error(`${input.typeName}.${f.name}: an id field this test has no fixture for (add it to resourceOf)`);
    if (resourceOf[f.name] !== undefined) ids.push(f.name);
  }
  return { propertyCode: input.fields.some((f) => f.name === "property_code"), ids };
}

/** A request of `method` as `caller` of `home` would send it, with `override` (proto field name -> value) on top. */
function request(method: DescMethod, home: Hotel, override: Record<string, string>): Json {
  const init: Json = {};
  for (const f of method.input.fields) {
    const v = filler[f.localName];
    if (v !== undefined && (f.fieldKind === "scalar" ? !Array.isArray(v) : f.fieldKind === "list" && Array.isArray(v)))
      init[f.localName] = v;
    if (f.fieldKind === "enum" && typeof v === "string")
      init[f.localName] = f.enum.values.find((e) => e.name.endsWith(`_${v}`))?.number;
    if (f.name === "property_code") init[f.localName] = home.property.code;
    const kind = resourceOf[f.name];
    if (kind !== undefined) {
      const id = home.ids[kind]!;
      init[f.localName] = f.fieldKind === "list" ? [id] : id;
    }
  }
  Object.assign(init, perMethod[method.parent.typeName + "." + method.name]?.(home) ?? {});
  const exclusive = exclusiveIds[method.parent.typeName + "." + method.name];
  if (exclusive !== undefined) {
    // one of these ids at a time: the probed one, else the first
    const keep = exclusive.find((n) => n in override) ?? exclusive[0];
    for (const n of exclusive) if (n !== keep) delete init[method.input.fields.find((x) => x.name === n)!.localName];
  }
  for (const [name, value] of Object.entries(override)) {
    const f = method.input.fields.find((x) => x.name === name)!;
    init[f.localName] = f.fieldKind === "list" ? [value] : value;
  }
  return init;
}

interface Outcome {
  status: string;
  code: string;
  message: string;
  /** The answer of a successful call (a filter's probe compares it with a missing id's). */
  body?: string;
}

async function callRpc(face: "connect" | "grpc", method: DescMethod, token: string, init: Json): Promise<Outcome> {
  const client = createClient(method.parent, transport(face, token)) as unknown as Record<
    string,
    (req: unknown) => Promise<unknown>
  >;
  try {
    const res = await client[method.localName]!(create(method.input, init));
    return { status: "OK", code: "", message: "", body: JSON.stringify(toJson(method.output, res as never)) };
  } catch (err) {
    const e = ConnectError.from(err);
    const [info] = e.findDetails(ErrorInfoSchema);
    return { status: String(e.code), code: info?.code ?? "", message: e.rawMessage };
  }
}

/** Our REST face writes 64-bit integers as JSON numbers (protobuf's JSON mapping writes strings). */
function int64AsNumber(desc: DescMessage, json: Json): Json {
  for (const f of desc.fields) {
    const v = json[f.jsonName];
    if (v === undefined) continue;
    if (f.fieldKind === "scalar" && typeof v === "string" && /^-?\d+$/.test(v)) json[f.jsonName] = Number(v);
    if (f.fieldKind === "message") json[f.jsonName] = int64AsNumber(f.message, v);
    if (f.fieldKind === "list" && f.listKind === "message")
      json[f.jsonName] = (v as Json[]).map((x) => int64AsNumber(f.message, x));
  }
  return json;
}

async function callRest(route: Route, token: string, init: Json): Promise<Outcome> {
  const msg = create(route.method.input, init);
  const json = int64AsNumber(route.method.input, toJson(route.method.input, msg)) as Record<string, unknown>;
  let path = route.template.source;
  const remaining: Record<string, unknown> = { ...json };
  for (const field of route.template.fields) {
    const f = route.method.input.fields.find((x) => x.name === field)!;
    path = path.replace(new RegExp(`\\{${field}(=[^}]*)?\\}`), encodeURIComponent(String(init[f.localName] ?? "")));
    delete remaining[f.jsonName];
  }
  let body: unknown;
  if (route.body === "*") body = remaining;
  else if (route.body !== "") body = remaining[route.method.input.fields.find((x) => x.name === route.body)!.jsonName];
  else {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(remaining))
      for (const one of Array.isArray(v) ? v : [v]) if (typeof one !== "object") q.append(k, String(one));
    if ([...q].length > 0) path += `?${q.toString()}`;
  }
  const r = await rest(route.httpMethod, path, token, body);
  if (r.status < 300) return { status: String(r.status), code: "", message: "", body: JSON.stringify(r.body) };
  return { status: String(r.status), code: r.body?.error?.code ?? "", message: r.body?.error?.message ?? "" };
}

/** The callers of home allowed by the method's rule. */
function callers(method: DescMethod, home: Hotel): { kind: string; token: string }[] {
  const r = getOption(method, rule);
  const kinds = r.principals.length === 0 ? [PrincipalKind.STAFF, PrincipalKind.INTERNAL] : r.principals;
  return kinds.map((k) =>
    k === PrincipalKind.STAFF
      ? { kind: "staff", token: home.staff.accessToken }
      : k === PrincipalKind.PARTNER
        ? { kind: "partner", token: home.partner.accessToken }
        : { kind: "internal", token: home.internal.accessToken },
  );
}

/** One probe: `override` names B's values, `missing` the same fields with values that exist nowhere. */
interface Probe {
  label: string;
  /** The id field probed (undefined: the property code). */
  field?: string;
  foreign: Record<string, string>;
  missing: Record<string, string>;
}

function probesOf(method: DescMethod): Probe[] {
  // a public RPC has no caller whose grants could leak (its ids are credentials, not resources)
  if (getOption(method, rule).public) return [];
  const { propertyCode, ids } = addressing(method.input);
  const probes: Probe[] = [];
  if (propertyCode)
    probes.push({
      label: "property_code of B",
      // B's code with B's ids: everything about the request is B's
      foreign: {
        property_code: b.property.code,
        ...Object.fromEntries(ids.map((f) => [f, b.ids[resourceOf[f]!]!])),
      },
      missing: {
        property_code: "NOPE-XX",
        ...Object.fromEntries(ids.map((f) => [f, b.ids[resourceOf[f]!]!])),
      },
    });
  for (const f of ids)
    probes.push({ label: `${f} of B`, field: f, foreign: { [f]: b.ids[resourceOf[f]!]! }, missing: { [f]: newId() } });
  return probes;
}

beforeAll(async () => {
  receiver = await startReceiver(ca);
  receiver.behave((_req, res) => {
    res.writeHead(204);
    res.end();
  });
  app = await startWebhookApp({
    ca,
    clock: systemClock,
    webhooks: { resolver: testResolver() },
    // several hundred calls of one caller within a minute
    env: { RATE_LIMIT_STAFF_PER_MINUTE: "100000", RATE_LIMIT_ANON_PER_MINUTE: "100000" },
  });
  a = await buildHotel("ISO-A");
  b = await buildHotel("ISO-B");
}, 120_000);

afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

const normalise = (o: Outcome, p: Probe): Outcome => {
  let { message, body } = o;
  for (const [k, v] of [...Object.entries(p.foreign), ...Object.entries(p.missing)]) {
    message = message.replaceAll(v, `{${k}}`);
    body = body?.replaceAll(v, `{${k}}`);
  }
  return { ...o, message, ...(body !== undefined ? { body } : {}) };
};

describe("property isolation, derived from the contract", () => {
  it("classifies every unary RPC: probed, operator-only, or named here with a reason", async () => {
    const unclassified: string[] = [];
    for (const s of await allServices())
      for (const m of s.methods) {
        if (m.methodKind !== "unary") continue;
        const name = `${s.typeName}.${m.name}`;
        const probed = probesOf(m).length > 0;
        if (!probed && notPropertyAddressed[name] === undefined && !operatorOnly.has(name)) unclassified.push(name);
        if (probed && notPropertyAddressed[name] !== undefined) unclassified.push(`${name} (listed but addresses ids)`);
        // the one mechanism covers it: bound to the request's property_code or to the session's active property
        const binding = bindingOf(m);
        const covered = binding === "request" || binding === "session" || (binding === "none" && name in boundByItself);
        if (probed && !operatorOnly.has(name) && !covered)
          unclassified.push(`${name} (not bound to a property: ${JSON.stringify(binding)})`);
      }
    expect(unclassified).toEqual([]);
  });

  for (const face of ["connect", "grpc", "rest"] as const satisfies readonly Face[])
    it(`answers 404 for property B on every property-addressed RPC (${face})`, async () => {
      const routes = app.gateway!.routes;
      const failures: string[] = [];
      let probed = 0;
      for (const s of await allServices())
        for (const method of s.methods) {
          const name = `${s.typeName}.${method.name}`;
          if (method.methodKind !== "unary" || operatorOnly.has(name)) continue;
          const bindings = face === "rest" ? routes.filter((r) => r.method === method) : [undefined];
          for (const probe of probesOf(method))
            for (const caller of callers(method, a))
              for (const route of bindings) {
                if (face === "rest" && route === undefined) continue;
                const call = (over: Record<string, string>) => {
                  const init = request(method, a, over);
                  return route !== undefined
                    ? callRest(route, caller.token, init)
                    : callRpc(face as "connect" | "grpc", method, caller.token, init);
                };
                const foreign = normalise(await call(probe.foreign), probe);
                const missing = normalise(await call(probe.missing), probe);
                probed++;
                const where = `${name} ${route ? `${route.httpMethod} ${route.template.source} ` : ""}as ${caller.kind}, ${probe.label}`;
                const notFound = face === "rest" ? "404" : "5";
                const filter = probe.field !== undefined && filters[name]?.includes(probe.field) === true;
                if (!filter && (foreign.status !== notFound || foreign.code !== "not_found"))
                  failures.push(`${where}: ${JSON.stringify(foreign)}`);
                else if (JSON.stringify(foreign) !== JSON.stringify(missing))
                  failures.push(
                    `${where}: differs from a missing one: ${JSON.stringify(foreign)} vs ${JSON.stringify(missing)}`,
                  );
              }
        }
      expect(failures).toEqual([]);
      expect(probed).toBeGreaterThan(face === "rest" ? 15 : 60);
    }, 120_000);
});
