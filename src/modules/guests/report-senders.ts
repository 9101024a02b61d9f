import { mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * One guest notification as a sender passes it on (KBS, Law 1774): the stay, the movement and the occupant's
 * identity. Built from the sealed row by the worker; it lives only for the attempt and is never logged.
 */
export interface GuestNotification {
  /** The report's id: the same on every attempt (receivers deduplicate on it). */
  id: string;
  propertyCode: string;
  movement: "check_in" | "check_out";
  businessDate: string;
  /** When the check-in or check-out happened (ISO 8601). */
  occurredAt: string;
  reservationCode: string;
  roomNumber: string;
  arrivalDate: string;
  departureDate: string;
  guest: {
    givenName: string;
    familyName: string;
    nationality: string;
    birthDate: string;
    documentType: string;
    documentNumber: string;
    documentCountry: string;
  };
}

/** An attempt that did not deliver. `permanent`: the receiver refused the notification (retrying cannot help). */
export class ReportSendError extends Error {
  readonly permanent: boolean;
  constructor(message: string, permanent = false) {
    super(message);
    this.permanent = permanent;
  }
}

/** Delivers one notification and answers the receiver's reference for it; throws ReportSendError. */
export interface GuestReportSender {
  readonly kind: "https" | "file";
  send(n: GuestNotification): Promise<{ reference: string }>;
}

export interface HttpsSenderConfig {
  endpoint: string;
  username: string | undefined;
  password: string | undefined;
  token: string | undefined;
  timeoutMs: number;
}

/**
 * POSTs the notification as JSON to the configured endpoint (KBS_ENDPOINT) with HTTP Basic credentials or a bearer
 * token and `Idempotency-Key: <id>`. A 2xx answer is delivered; its JSON `reference` (else `id`) is the authority's
 * reference. 408, 429 and 5xx answers and transport errors are retried; any other answer is a refusal (failed).
 * The answer's body is never recorded (it may echo personal data): the error names the status only.
 */
export function createHttpsSender(c: HttpsSenderConfig): GuestReportSender {
  const auth =
    c.token !== undefined
      ? `Bearer ${c.token}`
      : c.username !== undefined
        ? `Basic ${Buffer.from(`${c.username}:${c.password ?? ""}`).toString("base64")}`
        : undefined;
  return {
    kind: "https",
    async send(n) {
      let res: Response;
      try {
        res = await fetch(c.endpoint, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "idempotency-key": n.id,
            ...(auth === undefined ? {} : { authorization: auth }),
          },
          body: JSON.stringify(n),
          signal: AbortSignal.timeout(c.timeoutMs),
        });
      } catch (err) {
        const name = err instanceof Error ? err.name : "Error";
        throw new ReportSendError(`transport error (${name})`);
      }
      if (res.status < 200 || res.status > 299) {
        await res.body?.cancel();
        const transient = res.status === 408 || res.status === 429 || res.status >= 500;
        throw new ReportSendError(`receiver answered HTTP ${res.status}`, !transient);
      }
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        body = undefined;
      }
      const ref = body !== null && typeof body === "object" ? (body as Record<string, unknown>) : {};
      const reference = typeof ref.reference === "string" ? ref.reference : typeof ref.id === "string" ? ref.id : "";
      return { reference: reference.slice(0, 200) };
    },
  };
}

/**
 * Appends the notification as one JSON line to `<dir>/<propertyCode>/<businessDate>.jsonl` (the daily list a
 * hotel uploads), in one write to a file opened for appending (so concurrent workers never interleave lines). A
 * retry after a write whose outcome was lost finds the id in the file and does not append it twice. Files are
 * created 0600 in directories 0700: they hold personal data in the clear.
 */
export function createFileSender(dir: string): GuestReportSender {
  return {
    kind: "file",
    async send(n) {
      if (!/^[A-Za-z0-9_-]+$/.test(n.propertyCode) || !/^\d{4}-\d{2}-\d{2}$/.test(n.businessDate))
        throw new ReportSendError("property code or business date not usable as a file name", true);
      const folder = join(dir, n.propertyCode);
      const file = join(folder, `${n.businessDate}.jsonl`);
      const reference = `${n.propertyCode}/${n.businessDate}.jsonl#${n.id}`;
      try {
        await mkdir(folder, { recursive: true, mode: 0o700 });
        const existing = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
          if (err.code === "ENOENT") return "";
          throw err;
        });
        if (existing.includes(`"id":"${n.id}"`)) return { reference };
        const handle = await open(file, "a", 0o600);
        try {
          await handle.write(`${JSON.stringify(n)}\n`);
        } finally {
          await handle.close();
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? "error";
        throw new ReportSendError(`file error (${code})`);
      }
      return { reference };
    },
  };
}
