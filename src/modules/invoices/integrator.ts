/**
 * The authorised integrator (özel entegratör) that takes e-documents to GİB. The service reaches it only through
 * `IntegratorSender`; the one implementation here speaks the small HTTP contract below, so a real integrator is
 * connected by an adapter that answers it (docs/operations/e-invoicing.md).
 *
 * - `PUT {url}/documents/{ettn}`, body the UBL-TR XML: 200/201/202 with `{"status": "RECEIVED" | "ACCEPTED" |
 *   "REJECTED", "reason"?}`. The ETTN is the key: the same ETTN again is the same document (the answer is its
 *   state, never a second document), so an upload repeated after a crash cannot send it twice. 409 means the same.
 *   400 and 422 are a rejection of the document (`reason` from the body).
 * - `GET {url}/documents/{ettn}`: 200 with `{"status": ..., "reason"?}` (also `CANCELLED`).
 * - `POST {url}/documents/{ettn}/cancel`: 200/202 cancelled; 404 the integrator never had it (nothing to cancel).
 * - `GET {url}/registry/{vkn}`: GİB's e-Fatura registry (kayıtlı kullanıcı listesi) as the integrator holds it:
 *   200 with `{"eFatura": true | false}`; 404 means not registered.
 * Every other answer, a timeout or a connection error is a transport error: the delivery is tried again.
 */
type IntegratorStatus = "RECEIVED" | "ACCEPTED" | "REJECTED" | "CANCELLED";

export interface IntegratorAnswer {
  status: IntegratorStatus;
  reason: string;
}

interface OutgoingDocument {
  ettn: string;
  number: string;
  profileId: string;
  xml: string;
}

export interface IntegratorSender {
  send(doc: OutgoingDocument): Promise<IntegratorAnswer>;
  status(ettn: string): Promise<IntegratorAnswer>;
  /** Resolves once the integrator no longer has the document live (cancelled, or never received). */
  cancel(ettn: string): Promise<void>;
}

/** GİB's e-Fatura registry, asked through the integrator. */
export interface EFaturaRegistry {
  /** Whether the VKN (or TCKN) is registered for e-Fatura; IntegratorTransportError when there is no usable answer. */
  isEFaturaUser(vkn: string): Promise<boolean>;
}

/** The integrator could not be reached or did not answer usefully; the attempt is retried. */
export class IntegratorTransportError extends Error {
  override name = "IntegratorTransportError";
}

export interface HttpIntegratorOptions {
  url: string;
  token: string;
  timeoutMs: number;
}

const statuses = new Set<string>(["RECEIVED", "ACCEPTED", "REJECTED", "CANCELLED"]);
/** Characters of an integrator's text kept (a reason, an error body). */
const MAX_TEXT = 500;

async function readAnswer(res: Response): Promise<IntegratorAnswer> {
  const text = await res.text();
  let body: { status?: unknown; reason?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = {};
  }
  const status = typeof body.status === "string" && statuses.has(body.status) ? body.status : undefined;
  const reason = typeof body.reason === "string" ? body.reason : "";
  if (status === undefined) throw new IntegratorTransportError(`unreadable answer (HTTP ${res.status})`);
  return { status: status as IntegratorStatus, reason: reason.slice(0, MAX_TEXT) };
}

export function createHttpIntegrator(o: HttpIntegratorOptions): IntegratorSender & EFaturaRegistry {
  const base = o.url.replace(/\/+$/, "");
  const call = async (method: string, path: string, body?: string): Promise<Response> => {
    try {
      return await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${o.token}`,
          accept: "application/json",
          ...(body !== undefined ? { "content-type": "application/xml; charset=utf-8" } : {}),
        },
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.timeout(o.timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof Error && err.name === "TimeoutError";
      throw new IntegratorTransportError(
        timedOut ? `no answer within ${o.timeoutMs} ms` : `connection failed: ${String(err).slice(0, MAX_TEXT)}`,
      );
    }
  };
  const failed = async (res: Response): Promise<never> => {
    const text = (await res.text().catch(() => "")).slice(0, 200);
    throw new IntegratorTransportError(`HTTP ${res.status}${text !== "" ? `: ${text}` : ""}`);
  };
  return {
    async send(doc) {
      const res = await call("PUT", `/documents/${encodeURIComponent(doc.ettn)}`, doc.xml);
      if (res.ok || res.status === 409) return readAnswer(res);
      if (res.status === 400 || res.status === 422) {
        const text = await res.text();
        let reason = text;
        try {
          const parsed = JSON.parse(text) as { reason?: unknown };
          if (typeof parsed.reason === "string") reason = parsed.reason;
        } catch {
          // a plain-text reason
        }
        return { status: "REJECTED", reason: reason.slice(0, MAX_TEXT) };
      }
      return failed(res);
    },
    async status(ettn) {
      const res = await call("GET", `/documents/${encodeURIComponent(ettn)}`);
      if (res.ok) return readAnswer(res);
      return failed(res);
    },
    async isEFaturaUser(vkn) {
      if (!/^\d{10,11}$/.test(vkn)) throw new IntegratorTransportError("not a VKN or TCKN");
      const res = await call("GET", `/registry/${vkn}`);
      if (res.status === 404) {
        await res.body?.cancel();
        return false;
      }
      if (!res.ok) return failed(res);
      const text = await res.text();
      let body: { eFatura?: unknown } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        body = {};
      }
      if (typeof body.eFatura !== "boolean")
        throw new IntegratorTransportError(`unreadable answer (HTTP ${res.status})`);
      return body.eFatura;
    },
    async cancel(ettn) {
      const res = await call("POST", `/documents/${encodeURIComponent(ettn)}/cancel`);
      if (res.ok || res.status === 404) {
        await res.body?.cancel();
        return;
      }
      return failed(res);
    },
  };
}
