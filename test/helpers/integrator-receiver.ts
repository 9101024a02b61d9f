import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback HTTP server that plays the e-document integrator of src/modules/invoices/integrator.ts (no real
 * integrator is reachable from the tests). It keeps one document per ETTN: an upload of an ETTN it already has is
 * the same document (`created` counts how many documents an ETTN made: exactly once means 1).
 *
 * What each upload gets: the next entry of `script`, else `fallback`:
 * - receive / accept / reject: stored (or the stored one updated) as RECEIVED / ACCEPTED / REJECTED, 200 (reject: 422);
 * - error: 503, nothing stored;
 * - hang: stored as RECEIVED, then no answer until `release()` or the client gives up (a timeout, a killed worker).
 */
type UploadBehaviour = "receive" | "accept" | "reject" | "error" | "hang";

interface ReceivedDocument {
  ettn: string;
  xml: string;
  status: "RECEIVED" | "ACCEPTED" | "REJECTED" | "CANCELLED";
  reason: string;
  /** How many times this ETTN made a new document (more than 1 would be a document sent twice). */
  created: number;
  /** Uploads of this ETTN, repeats included. */
  uploads: number;
}

export interface IntegratorReceiver {
  url: string;
  token: string;
  documents: Map<string, ReceivedDocument>;
  script: UploadBehaviour[];
  fallback: UploadBehaviour;
  /** Every request as `METHOD /path`, in arrival order. */
  requests: string[];
  /** GİB's e-Fatura registry as this integrator answers it: VKNs registered (true) or known as not (false); others 404. */
  registry: Map<string, boolean>;
  /** Answers the uploads held by `hang` (as RECEIVED). */
  release(): void;
  close(): Promise<void>;
}

export async function startIntegratorReceiver(token = "integrator-test-token"): Promise<IntegratorReceiver> {
  const held: http.ServerResponse[] = [];
  const receiver: IntegratorReceiver = {
    url: "",
    token,
    documents: new Map(),
    script: [],
    fallback: "accept",
    requests: [],
    registry: new Map(),
    release() {
      for (const res of held.splice(0)) if (!res.destroyed) json(res, 200, { status: "RECEIVED" });
    },
    close: async () => undefined,
  };
  const json = (res: http.ServerResponse, status: number, body: object) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      receiver.requests.push(`${req.method} ${req.url}`);
      if (req.headers.authorization !== `Bearer ${token}`) return json(res, 401, { error: "unauthorized" });
      const registered = /^\/registry\/(\d{10,11})$/.exec(req.url ?? "");
      if (registered !== null && req.method === "GET") {
        const known = receiver.registry.get(registered[1]!);
        return known === undefined ? json(res, 404, { error: "not registered" }) : json(res, 200, { eFatura: known });
      }
      const m = /^\/documents\/([0-9a-f-]{36})(\/cancel)?$/.exec(req.url ?? "");
      if (m === null) return json(res, 404, { error: "no such path" });
      const ettn = m[1]!;
      const doc = receiver.documents.get(ettn);
      if (req.method === "GET") {
        if (doc === undefined) return json(res, 404, { error: "unknown ETTN" });
        return json(res, 200, { status: doc.status, reason: doc.reason });
      }
      if (req.method === "POST" && m[2] !== undefined) {
        if (doc === undefined) return json(res, 404, { error: "unknown ETTN" });
        doc.status = "CANCELLED";
        return json(res, 200, { status: "CANCELLED" });
      }
      if (req.method !== "PUT" || m[2] !== undefined) return json(res, 405, { error: "method" });
      const behaviour = receiver.script.shift() ?? receiver.fallback;
      if (behaviour === "error") return json(res, 503, { error: "try later" });
      const stored = doc ?? { ettn, xml: body, status: "RECEIVED" as const, reason: "", created: 0, uploads: 0 };
      if (doc === undefined) {
        stored.created += 1;
        receiver.documents.set(ettn, stored);
      }
      stored.uploads += 1;
      stored.xml = body;
      if (behaviour === "hang") {
        held.push(res);
        return;
      }
      if (behaviour === "reject") {
        stored.status = "REJECTED";
        stored.reason = "Satıcı unvanı GİB kaydıyla uyuşmuyor";
        return json(res, 422, { status: "REJECTED", reason: stored.reason });
      }
      stored.status = behaviour === "accept" ? "ACCEPTED" : "RECEIVED";
      stored.reason = "";
      return json(res, 200, { status: stored.status });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = async () => {
    for (const res of held.splice(0)) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** The environment of a service that sends to the receiver, with short delays for tests. */
export function integratorEnv(r: IntegratorReceiver, over: Record<string, string> = {}): Record<string, string> {
  return {
    EDOCUMENT_INTEGRATOR_URL: r.url,
    EDOCUMENT_INTEGRATOR_TOKEN: r.token,
    EDOCUMENT_INTEGRATOR_TIMEOUT_MS: "1500",
    EDOCUMENT_INTEGRATOR_RETRY_DELAY_SECONDS: "1",
    EDOCUMENT_INTEGRATOR_RETRY_DELAY_MAX_SECONDS: "2",
    EDOCUMENT_INTEGRATOR_POLL_SECONDS: "1",
    ...over,
  };
}
