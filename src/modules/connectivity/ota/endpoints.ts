import type pg from "pg";
import { ConnectivityService as ConnectivityRpc } from "../../../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { AppError } from "../../../errors.ts";
import type { XmlEndpoint } from "../../../gateway/xml.ts";
import type { Clock } from "../../../lib/clock.ts";
import { principalKey, requestProperty } from "../../auth/index.ts";
import { client } from "../connectivity.service.ts";
import { findPartnerMessage } from "../connectivity.repository.ts";
import { ariNotifSuccess, availNotifToChanges, rateAmountNotifToChanges } from "./ari-notif.ts";
import { errorsRs, resNotifSuccess, resNotifToEvent } from "./res-notif.ts";

/** Largest OpenTravel document accepted (a booking of 20 rooms with every night priced is about 60 KB). */
const OTA_MAX_BODY_BYTES = 256 * 1024;
/** How long a reservation notification waits for its booking to be applied before answering without its id. */
const OTA_OUTCOME_WAIT_MS = 10_000;

/** Reservation notifications applied in the API process at once (see applyNow). */
const OTA_INLINE_APPLIES = 3;

const PATH = /^\/api\/v1\/ota\/([A-Za-z0-9_-]{1,64})\/(OTA_[A-Za-z]+RQ)$/;

/**
 * POST /api/v1/ota/{propertyCode}/OTA_HotelResNotifRQ, OTA_HotelAvailNotifRQ and OTA_HotelRateAmountNotifRQ: the
 * OpenTravel face of CreateReservationEvent and UpdateAri (same token and scopes, partner switch, limits,
 * idempotency, mappings and queue). A reservation notification answers once its booking is applied: it applies it
 * itself right after queueing (or, when that fails, waits up to OTA_OUTCOME_WAIT_MS for the worker, then answers with
 * a warning and without the hotel's id).
 */
export function createOtaEndpoints(deps: {
  pool: pg.Pool;
  clock: Clock;
  /**
   * Applies the queued messages of one booking now (the worker's own processPartnerMessages, under the same lock), so
   * the answer does not wait for a worker to reach the job; the job then finds nothing left. A failure here is left
   * to the job's retries.
   */
  apply: (propertyId: string, externalReference: string) => Promise<void>;
}): XmlEndpoint {
  const rsOf = (rq: string): string => rq.replace(/RQ$/, "RS");
  // An inline apply holds a pool connection for its lock and takes others for the booking: at most a few at once, so
  // concurrent messages never take every connection of the pool (the rest wait for the worker, as JSON events do).
  let applying = 0;
  const applyNow = async (propertyId: string, externalReference: string): Promise<void> => {
    if (applying >= OTA_INLINE_APPLIES) return;
    applying++;
    try {
      await deps.apply(propertyId, externalReference);
    } catch {
      // the job retries it
    } finally {
      applying--;
    }
  };
  return {
    maxBodyBytes: OTA_MAX_BODY_BYTES,
    error: (err, path) =>
      errorsRs(rsOf(PATH.exec(path)?.[2] ?? "OTA_ErrorRS"), { echoToken: "" }, deps.clock.now(), err),
    route(path) {
      const m = PATH.exec(path);
      if (m === null) return path.startsWith("/api/v1/ota/") ? () => unknown(path) : undefined;
      const [, propertyCode, message] = m as unknown as [string, string, string];
      if (message === "OTA_HotelResNotifRQ")
        return (xml) => {
          const { head, request } = resNotifToEvent(xml, propertyCode);
          const error = (err: AppError) => errorsRs("OTA_HotelResNotifRS", head, deps.clock.now(), err);
          return {
            method: ConnectivityRpc.method.createReservationEvent,
            request,
            idempotencyKey: head.echoToken === "" ? undefined : `ota:${head.echoToken}`,
            error,
            async answer(result, values) {
              const { eventId } = result as { eventId: string };
              const caller = client(values.get(principalKey));
              // the message's property, checked against the caller's reach when the RPC ran
              const property = requestProperty(values);
              if (property === undefined) throw new AppError("not_found", "No such property.");
              await applyNow(property.id, head.externalReference);
              const outcome = await waitForOutcome(deps.pool, property.id, caller.clientId, eventId);
              if (outcome?.status === "REJECTED")
                return errorsRs("OTA_HotelResNotifRS", head, deps.clock.now(), {
                  code: "rejected",
                  message: outcome.error ?? "The reservation was rejected.",
                });
              if (outcome?.status === "PROCESSED")
                return resNotifSuccess(
                  head,
                  deps.clock.now(),
                  property.code,
                  { reservationCode: outcome.reservationCode!, reservationId: outcome.reservationId! },
                  [],
                );
              return resNotifSuccess(head, deps.clock.now(), property.code, undefined, [
                `Accepted and queued as event ${eventId}; the hotel's reservation id is not known yet: read GET /api/v1/properties/${property.code}/reservation-events/${eventId}.`,
              ]);
            },
          };
        };
      const ari =
        message === "OTA_HotelAvailNotifRQ"
          ? availNotifToChanges
          : message === "OTA_HotelRateAmountNotifRQ"
            ? rateAmountNotifToChanges
            : undefined;
      if (ari === undefined) return () => unknown(path);
      const rs = rsOf(message);
      return (xml) => {
        const { head, changes } = ari(xml);
        return {
          method: ConnectivityRpc.method.updateAri,
          request: { propertyCode, changes },
          idempotencyKey: head.echoToken === "" ? undefined : `ota:${head.echoToken}`,
          error: (err) => errorsRs(rs, head, deps.clock.now(), err),
          answer: () => Promise.resolve(ariNotifSuccess(rs, head, deps.clock.now())),
        };
      };
    },
  };
}

function unknown(path: string): never {
  throw new AppError(
    "not_found",
    `No OpenTravel endpoint ${path}; use OTA_HotelResNotifRQ, OTA_HotelAvailNotifRQ or OTA_HotelRateAmountNotifRQ.`,
  );
}

/** Polls the event until a worker applied it (or the wait is over: undefined). */
async function waitForOutcome(pool: pg.Pool, propertyId: string, clientId: string, eventId: string) {
  const until = Date.now() + OTA_OUTCOME_WAIT_MS;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    const found = await findPartnerMessage(pool, propertyId, clientId, eventId);
    if (found !== undefined && found.status !== "QUEUED") return found;
    if (Date.now() + delay > until) return undefined;
    await new Promise((r) => setTimeout(r, delay));
  }
}
