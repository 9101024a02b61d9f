import { expect } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import type { TestApp } from "../helpers/app.ts";
import { seedReservation, type SeededProperty } from "../helpers/hotel-fixtures.ts";

/** FolioService over gRPC and Connect with a bearer token, for the invoice tests. */
export function folioClients(
  baseUrl: string,
  token: string,
): { grpc: Client<typeof FolioService>; connect: Client<typeof FolioService> } {
  const interceptors = [
    (next: (req: { header: Headers }) => Promise<unknown>) => (req: { header: Headers }) => {
      req.header.set("authorization", `Bearer ${token}`);
      return next(req);
    },
  ] as never;
  return {
    grpc: createClient(FolioService, createGrpcTransport({ baseUrl, interceptors })),
    connect: createClient(FolioService, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors })),
  };
}

/** The error of a call that must fail: its gRPC code, our error code and the fields it names. */
export async function failure(promise: Promise<unknown>): Promise<{ grpc: Code; code: string; fields: string[] }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const e = err as ConnectError;
  const [info] = e.findDetails(ErrorInfoSchema);
  return { grpc: e.code, code: info?.code ?? "", fields: (info?.details ?? []).map((d) => d.field) };
}

/** A folio with two room nights at 1500.00 and a minibar charge of 45.00 (business dates from `arrival`). */
export async function stayWithCharges(app: TestApp, hotel: SeededProperty, arrival = "2026-11-22"): Promise<string> {
  const nights = [arrival, addDays(arrival, 1)];
  const r = await seedReservation(app.db.pool, hotel, {
    arrival,
    departure: addDays(arrival, 2),
    nightly: [1500_00n, 1500_00n],
  });
  const folios = app.services.folios;
  for (const businessDate of nights)
    await app.deps.transact((tx) =>
      folios.postRoomCharge(tx, hotel.id, {
        reservationId: r.id,
        reservationRoomId: r.roomLineId,
        businessDate,
        amountMinor: 1500_00n,
        description: "Konaklama",
        actor: "user:test",
      }),
    );
  const folio = await folios.getFolio(hotel.id, { reservationId: r.id });
  await folios.postCharge(hotel.id, "user:test", {
    folioId: folio.id,
    code: "MINIBAR",
    description: "Minibar",
    amountMinor: 45_00n,
  });
  return folio.id;
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Today in Turkey (the date the e-Arşiv cancellation window is counted in). */
export const istanbulToday = (): string =>
  new Intl.DateTimeFormat("en-CA", {
    timeZone: "Europe/Istanbul",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(new Date());

/** The audit trail of an invoice's delivery: its actions in order. */
export async function deliveryAudit(pool: pg.Pool, propertyId: string, invoiceId: string): Promise<string[]> {
  const { rows } = await pool.query<{ action: string }>(
    `select action from audit_changes where property_id = $1 and entity_type = 'invoice_delivery' and entity_id = $2
     order by at, id`,
    [propertyId, invoiceId],
  );
  return rows.map((r) => r.action);
}
