import type { ConnectRouter } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { JsonObject } from "@bufbuild/protobuf";
import { EventService } from "../../../gen/hotelops/event/v1/event_pb.js";
import { invalidField } from "../../errors.ts";
import { requestProperty, requirePrincipal } from "../auth/index.ts";
import { eventTypes } from "./events.service.ts";
import type { EventStreamHub } from "./stream.hub.ts";
import { cursorOf, origin, positionOf, type Position } from "./stream.repository.ts";

const known = new Set<string>(eventTypes);

/** EventService: the property's domain events as a server stream (Connect, gRPC, gRPC-Web). */
export function registerEventRpc(router: ConnectRouter, hub: EventStreamHub): void {
  router.service(EventService, {
    async *streamEvents(req, ctx) {
      const principal = requirePrincipal(ctx.values);
      // the property named, checked against the caller's reach by the authentication interceptor; a staff caller
      // may leave it out (the session's active one); a client must name it
      const property = requestProperty(ctx.values);
      if (property === undefined) throw invalidField("propertyCode", "is required");
      let after: Position | "now" = req.fromBeginning ? origin : "now";
      if (req.cursor !== "") {
        const position = positionOf(req.cursor);
        if (position === undefined) throw invalidField("cursor", "is not a cursor of this stream");
        after = position;
      }
      const unknown = req.eventTypes.filter((t) => !known.has(t));
      if (unknown.length > 0) throw invalidField("eventTypes", `unknown event type ${unknown[0]}`);
      const items = hub.stream({
        propertyId: property.id,
        caller: principal.kind === "staff" ? `user:${principal.userId}` : `client:${principal.clientId}`,
        after,
        types: req.eventTypes.length === 0 ? undefined : new Set(req.eventTypes),
        signal: ctx.signal,
      });
      for await (const item of items) {
        if ("keepAlive" in item) {
          yield {
            kind: {
              case: "keepAlive",
              value: { cursor: cursorOf(item.keepAlive), sentAt: timestampFromDate(new Date()) },
            },
          };
          continue;
        }
        const e = item.event;
        yield {
          kind: {
            case: "event",
            value: {
              cursor: cursorOf(e.position),
              id: e.id,
              type: e.type,
              occurredAt: timestampFromDate(e.occurredAt),
              createdAt: timestampFromDate(e.createdAt),
              propertyCode: property.code,
              data: e.data as JsonObject,
            },
          },
        };
      }
    },
  });
}
