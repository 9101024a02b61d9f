import { trace } from "@opentelemetry/api";
import { inSpan, SpanKind, SpanStatusCode, tracingEnabled } from "../../observability/tracing.ts";
import type { Sender } from "./sender.ts";

/**
 * With tracing on, each delivery attempt is a client span inside the job that made it (so the trace of the request
 * that caused the event shows the attempt); off, the sender is returned as it is.
 */
export function withAttemptSpans(sender: Sender): Sender {
  if (!tracingEnabled()) return sender;
  const tracer = trace.getTracer("hotelops.webhooks");
  return {
    close: () => sender.close(),
    send: (req) =>
      inSpan(
        tracer,
        "webhook attempt",
        {
          kind: SpanKind.CLIENT,
          attributes: {
            "http.request.method": "POST",
            "hotelops.webhook.attempt": Number(req.headers["service-delivery-attempt"] ?? 0),
            "hotelops.webhook.delivery_id": req.headers["service-delivery-id"] ?? "",
          },
        },
        async (span) => {
          const result = await sender.send(req);
          if (result.httpStatus !== null) span.setAttribute("http.response.status_code", result.httpStatus);
          if (result.errorClass !== null) span.setStatus({ code: SpanStatusCode.ERROR, message: result.errorClass });
          return result;
        },
      ),
  };
}
