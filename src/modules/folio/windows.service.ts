import { AppError, invalidField } from "../../errors.ts";
import { recordChange } from "../audit/index.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import * as repo from "./folio.repository.ts";
import * as windows from "./windows.repository.ts";
import type { ChargeRow, FolioRow } from "./folio.repository.ts";
import type { Folio, FolioService } from "./folio.service.ts";
import type { RoutingRule } from "./windows.repository.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/**
 * A reservation's folios beyond the default one (window 1): opening them, routing charge codes to them and moving
 * charges between them. The ledger rules of folio.service.ts hold on every window.
 */
export interface FolioWindows {
  /** Opens the reservation's next folio (window 2..9; the default folio first when it has none). */
  createFolio(propertyId: string, input: { reservationId: string; name: string }, keyed?: Keyed): Promise<Folio>;
  /** The reservation's folios by window (the default one opened on first use). */
  listFolios(propertyId: string, reservationId: string): Promise<{ folios: Folio[]; rules: RoutingRule[] }>;
  /** Routes a charge code of the reservation to a folio of it (window 1 or no folio id: the rule is removed). */
  setRoutingRule(propertyId: string, input: RouteInput, keyed?: Keyed): Promise<RoutingRule[]>;
  /** Moves a charge (on no invoice) to another folio of the same property; both balances change in one transaction. */
  transferCharge(propertyId: string, input: TransferInput, keyed?: Keyed): Promise<Transferred>;
}

interface RouteInput {
  reservationId: string;
  chargeCode: string;
  /** The folio the code goes to; empty: back to the folio it is posted to. */
  folioId: string;
}

interface TransferInput {
  chargeId: string;
  toFolioId: string;
}

interface Transferred {
  charge: ChargeRow;
  from: Folio;
  to: Folio;
}

const MAX_WINDOW = 9;

export function createFolioWindows(deps: { transact: Transact; clock: Clock; folios: FolioService }): FolioWindows {
  const { transact, clock, folios } = deps;

  async function folioOf(tx: Tx, propertyId: string, folioId: string, field: string, lock = false): Promise<FolioRow> {
    if (!isUuid(folioId)) throw invalidField(field, "must be a UUID");
    const folio = await repo.findFolio(tx, propertyId, folioId, lock);
    if (folio === undefined) throw new AppError("not_found", "Folio not found.");
    return folio;
  }

  return {
    async createFolio(propertyId, input, keyed) {
      if (!isUuid(input.reservationId)) throw invalidField("reservationId", "must be a UUID");
      const name = input.name.trim();
      if (name.length === 0 || name.length > 60) throw invalidField("name", "must be 1-60 characters");
      return transact(async (tx) => {
        const first = await folios.openFolio(tx, propertyId, input.reservationId);
        // the default folio's row serializes concurrent opens of the reservation's next window
        await repo.findFolio(tx, propertyId, first.id, true);
        const windowNo = (await windows.lastWindow(tx, propertyId, input.reservationId)) + 1;
        if (windowNo > MAX_WINDOW)
          throw new AppError("invalid_transition", `A reservation has at most ${MAX_WINDOW} folios.`);
        const now = clock.now();
        const row = await repo.insertFolio(tx, {
          id: newId(now.getTime()),
          propertyId,
          reservationId: input.reservationId,
          reservationCode: first.reservationCode,
          currency: first.currency,
          amountScale: first.amountScale,
          createdAt: now,
          windowNo,
          name,
        });
        recordChange(tx, { propertyId, entity: "folio", entityId: row.id, action: "open", after: row });
        return folios.readFolio(tx, propertyId, row);
      }, keyed);
    },

    async listFolios(propertyId, reservationId) {
      if (!isUuid(reservationId)) throw invalidField("reservationId", "must be a UUID");
      return transact(async (tx) => {
        await folios.openFolio(tx, propertyId, reservationId);
        const rows = await repo.listFoliosOfReservation(tx, propertyId, reservationId);
        const list: Folio[] = [];
        for (const row of rows) list.push(await folios.readFolio(tx, propertyId, row));
        return { folios: list, rules: await windows.listRoutes(tx, propertyId, reservationId) };
      });
    },

    async setRoutingRule(propertyId, input, keyed) {
      if (!isUuid(input.reservationId)) throw invalidField("reservationId", "must be a UUID");
      const chargeCode = input.chargeCode.trim().toUpperCase();
      if (!/^[A-Z0-9_]{1,32}$/.test(chargeCode))
        throw invalidField("chargeCode", "must be 1-32 characters A-Z, 0-9 or _");
      return transact(async (tx) => {
        const first = await folios.openFolio(tx, propertyId, input.reservationId);
        let windowNo: number | undefined;
        let target = first;
        if (input.folioId !== "") {
          target = await folioOf(tx, propertyId, input.folioId, "folioId");
          if (target.reservationId !== input.reservationId)
            throw invalidField("folioId", "must be a folio of the reservation", "validation_failed");
          windowNo = target.windowNo === 1 ? undefined : target.windowNo;
        }
        await windows.setRoute(
          tx,
          propertyId,
          { reservationId: input.reservationId, chargeCode, windowNo },
          clock.now(),
        );
        recordChange(tx, {
          propertyId,
          entity: "folio",
          entityId: target.id,
          action: "route",
          after: { chargeCode, windowNo: windowNo ?? 1 },
        });
        return windows.listRoutes(tx, propertyId, input.reservationId);
      }, keyed);
    },

    async transferCharge(propertyId, input, keyed) {
      if (!isUuid(input.chargeId)) throw invalidField("chargeId", "must be a UUID");
      return transact(async (tx) => {
        const charge = await repo.findCharge(tx, propertyId, input.chargeId);
        if (charge === undefined) throw new AppError("not_found", "Charge not found.");
        const to = await folioOf(tx, propertyId, input.toFolioId, "toFolioId");
        if (to.id === charge.folioId)
          throw invalidField("toFolioId", "is the folio the charge is on", "validation_failed");
        // both folios locked in id order: two opposite transfers never wait on each other
        const [a, b] = [charge.folioId, to.id].sort();
        await folioOf(tx, propertyId, a!, "toFolioId", true);
        await folioOf(tx, propertyId, b!, "toFolioId", true);
        if (charge.kind === "CREDIT" || charge.invoiceId !== null)
          throw new AppError(
            "invalid_transition",
            "An invoiced charge stays on its folio (cancel or return the invoice).",
          );
        if (!(await windows.moveCharge(tx, propertyId, charge.id, charge.folioId, to.id)))
          throw new AppError("conflict", "The charge was invoiced or moved meanwhile; read the folio again.");
        const moved = { ...charge, folioId: to.id };
        recordChange(tx, {
          propertyId,
          entity: "folio",
          entityId: charge.folioId,
          action: "transfer_out",
          before: { chargeId: charge.id, folioId: charge.folioId },
          after: { chargeId: charge.id, folioId: to.id },
        });
        recordChange(tx, { propertyId, entity: "folio", entityId: to.id, action: "transfer_in", after: moved });
        const from = await folios.readFolio(tx, propertyId, (await repo.findFolio(tx, propertyId, charge.folioId))!);
        const target = await folios.readFolio(tx, propertyId, (await repo.findFolio(tx, propertyId, to.id))!);
        return { charge: moved, from, to: target };
      }, keyed);
    },
  };
}
