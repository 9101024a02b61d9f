import http from "node:http";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  service: string;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

/** An OTLP/HTTP JSON trace receiver on 127.0.0.1 (what a collector's otlphttp receiver accepts on /v1/traces). */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url !== "/v1/traces" || !String(req.headers["content-type"]).includes("json")) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans: {
          resource: { attributes: OtlpAttribute[] };
          scopeSpans: {
            spans: (Omit<ReceivedSpan, "attributes" | "service" | "links"> & {
              attributes?: OtlpAttribute[];
              links?: { traceId: string; spanId: string }[];
            })[];
          }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        const service = String(attributesOf(rs.resource.attributes)["service.name"] ?? "");
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({
              ...s,
              parentSpanId: s.parentSpanId ?? "",
              attributes: attributesOf(s.attributes ?? []),
              links: s.links ?? [],
              service,
            });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    /** Resolves with the spans once `done(spans)` holds (fails after `ms`). */
    async until(done: (all: ReceivedSpan[]) => boolean, ms = 15_000): Promise<ReceivedSpan[]> {
      const deadline = Date.now() + ms;
      while (!done(spans)) {
        if (Date.now() > deadline) throw new Error(`spans received: ${spans.map((s) => s.name).join(", ")}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return spans;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

function attributesOf(list: OtlpAttribute[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const a of list)
    out[a.key] =
      a.value.stringValue ??
      (a.value.intValue !== undefined ? Number(a.value.intValue) : undefined) ??
      a.value.boolValue ??
      a.value.doubleValue ??
      "";
  return out;
}
