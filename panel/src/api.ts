// The panel's only way to the server: the SDK's browser client (Connect, same origin) and its mobile session.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  ApiAccessService,
  AuthService,
  Code,
  ConnectError,
  createHotelOpsClient,
  createMobileSession,
  EventService,
  FolioService,
  GuestService,
  HotelOpsError,
  InventoryService,
  MobileService,
  ReservationService,
  StatusService,
  WebhookService,
  type Client,
  type MobileSession,
  type StoredTokens,
} from "../../sdk/src/browser.ts";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";

interface ProfileProperty {
  id: string;
  code: string;
  name: string;
  permissions: string[];
}

interface Profile {
  userId: string;
  activePropertyId: string;
  properties: ProfileProperty[];
}

/** What survives a reload (sessionStorage: this tab only, so two tabs never spend one refresh token twice). */
interface Saved {
  tokens: StoredTokens;
  profile: Profile;
  email: string;
}

export interface Signed {
  email: string;
  profile: Profile;
  session: MobileSession;
  webhooks: Client<typeof WebhookService>;
  apiAccess: Client<typeof ApiAccessService>;
  auth: Client<typeof AuthService>;
  reservations: Client<typeof ReservationService>;
  inventory: Client<typeof InventoryService>;
  mobile: Client<typeof MobileService>;
  folio: Client<typeof FolioService>;
  events: Client<typeof EventService>;
  guests: Client<typeof GuestService>;
}

const KEY = "hotelops.panel.session";
const baseUrl = location.origin;

const publicAuth = createHotelOpsClient(AuthService, { baseUrl });
export const status = createHotelOpsClient(StatusService, { baseUrl });

function plainProfile(p: {
  userId: string;
  activePropertyId: string;
  properties: readonly ProfileProperty[];
}): Profile {
  return {
    userId: p.userId,
    activePropertyId: p.activePropertyId,
    properties: p.properties.map((x) => ({ id: x.id, code: x.code, name: x.name, permissions: [...x.permissions] })),
  };
}

function save(s: Saved): void {
  sessionStorage.setItem(KEY, JSON.stringify(s));
}

/** A session from login/verify tokens or from storage; `onEnded` runs once when the server ends it. */
function open(
  saved: Omit<Saved, "tokens"> & {
    tokens: StoredTokens | { accessToken: string; refreshToken: string; expiresIn: number };
  },
  onEnded: () => void,
): Signed {
  let profile = saved.profile;
  const session = createMobileSession({
    baseUrl,
    tokens: saved.tokens,
    onTokens: (tokens) => save({ tokens, profile, email: saved.email }),
    onSessionEnded: () => {
      sessionStorage.removeItem(KEY);
      onEnded();
    },
  });
  const current = session.tokens();
  if (current !== undefined) save({ tokens: current, profile, email: saved.email });
  const opts = { baseUrl, auth: session };
  const signed: Signed = {
    email: saved.email,
    get profile() {
      return profile;
    },
    set profile(p: Profile) {
      profile = p;
      const t = session.tokens();
      if (t !== undefined) save({ tokens: t, profile, email: saved.email });
    },
    session,
    webhooks: createHotelOpsClient(WebhookService, opts),
    apiAccess: createHotelOpsClient(ApiAccessService, opts),
    auth: createHotelOpsClient(AuthService, opts),
    reservations: createHotelOpsClient(ReservationService, opts),
    inventory: createHotelOpsClient(InventoryService, opts),
    mobile: createHotelOpsClient(MobileService, opts),
    folio: createHotelOpsClient(FolioService, opts),
    events: createHotelOpsClient(EventService, opts),
    guests: createHotelOpsClient(GuestService, opts),
  };
  return signed;
}

export function restore(onEnded: () => void): Signed | undefined {
  const raw = sessionStorage.getItem(KEY);
  if (raw === null) return undefined;
  try {
    const saved = JSON.parse(raw) as Saved;
    if (typeof saved.tokens?.refreshToken !== "string") return undefined;
    return open(saved, onEnded);
  } catch {
    sessionStorage.removeItem(KEY);
    return undefined;
  }
}

function deviceId(): string {
  let id = localStorage.getItem("hotelops.panel.device");
  if (id === null) {
    id = crypto.randomUUID();
    localStorage.setItem("hotelops.panel.device", id);
  }
  return id;
}

export type LoginStep =
  { kind: "challenge"; challengeId: string; maskedEmail: string } | { kind: "signed"; signed: Signed };

export async function login(
  hotelCode: string,
  email: string,
  password: string,
  onEnded: () => void,
): Promise<LoginStep> {
  const r = await publicAuth.login({ hotelCode, email, password, deviceId: deviceId(), deviceName: "Web panel" });
  if (r.challengeId !== undefined)
    return { kind: "challenge", challengeId: r.challengeId, maskedEmail: r.maskedEmail ?? "" };
  if (r.tokens === undefined || r.profile === undefined) throw new Error("The login answer carries no session.");
  return { kind: "signed", signed: open({ tokens: r.tokens, profile: plainProfile(r.profile), email }, onEnded) };
}

export async function verify(challengeId: string, code: string, email: string, onEnded: () => void): Promise<Signed> {
  const r = await publicAuth.verifyLogin({ challengeId, code, deviceId: deviceId(), deviceName: "Web panel" });
  if (r.tokens === undefined || r.profile === undefined) throw new Error("The verify answer carries no session.");
  return open({ tokens: r.tokens, profile: plainProfile(r.profile), email }, onEnded);
}

export async function switchProperty(s: Signed, propertyId: string): Promise<void> {
  s.profile = plainProfile((await s.session.switchProperty(propertyId)) as Profile);
}

export async function logout(s: Signed): Promise<void> {
  try {
    await s.auth.logout({});
  } finally {
    s.session.clear();
    sessionStorage.removeItem(KEY);
  }
}

/** An error as people read it: the server's message, the request id to quote, field reasons, when to retry. */
export interface Problem {
  message: string;
  code: string;
  requestId: string | undefined;
  fields: { field: string; reason: string }[];
  retryAfterSeconds: number | undefined;
  unauthenticated: boolean;
  notFound: boolean;
  network: boolean;
}

export function problemOf(err: unknown): Problem {
  if (err instanceof HotelOpsError) {
    return {
      message: err.message,
      code: err.code,
      requestId: err.requestId,
      fields: err.details,
      retryAfterSeconds: undefined,
      unauthenticated: err.status === 401,
      notFound: err.status === 404,
      network: false,
    };
  }
  const e = ConnectError.from(err);
  const info = e.findDetails(ErrorInfoSchema)[0];
  const retry = Number(e.metadata.get("retry-after") ?? "");
  const network =
    info === undefined &&
    (e.code === Code.Unavailable || e.code === Code.Unknown || e.code === Code.Internal) &&
    /fetch|network/i.test(e.rawMessage);
  return {
    message: e.rawMessage,
    code: info?.code ?? Code[e.code],
    requestId: info?.requestId || (e.metadata.get("x-request-id") ?? undefined),
    fields: info?.details.map((d) => ({ field: d.field, reason: d.reason })) ?? [],
    retryAfterSeconds: e.code === Code.ResourceExhausted && Number.isFinite(retry) && retry > 0 ? retry : undefined,
    unauthenticated: e.code === Code.Unauthenticated,
    notFound: e.code === Code.NotFound,
    network,
  };
}

export const dateOf = (ts: Timestamp | undefined): Date | undefined =>
  ts === undefined ? undefined : timestampDate(ts);

export {
  WebhookEndpointStatus,
  type WebhookEndpoint,
  type WebhookDeliveryAttempt,
} from "../../gen/hotelops/webhook/v1/webhook_pb.js";
export {
  ReservationStatus,
  ReservationSource,
  type Reservation,
  type RoomLine,
} from "../../gen/hotelops/reservation/v1/reservation_pb.js";
export { RoomStatus, type Room } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
/** Whether the active property gives the signed-in user this permission. */
export function can(s: Signed, permission: string): boolean {
  const active = s.profile.properties.find((p) => p.id === s.profile.activePropertyId);
  return active?.permissions.includes(permission) === true;
}

/** Minor units as the property's money (integer arithmetic; the scale is a power of ten). */
export function formatMoney(lang: string, minor: bigint, scale: number, currency: string): string {
  const digits = Math.round(Math.log10(scale));
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  const s = BigInt(scale);
  const whole = new Intl.NumberFormat(lang === "tr" ? "tr-TR" : "en-GB").format(abs / s);
  const sep = lang === "tr" ? "," : ".";
  const frac = digits > 0 ? sep + (abs % s).toString().padStart(digits, "0") : "";
  return `${negative ? "-" : ""}${whole}${frac} ${currency}`;
}

/** The day after a YYYY-MM-DD date. */
export function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}
