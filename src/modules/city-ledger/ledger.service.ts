import { AppError, invalidField } from "../../errors.ts";
import { recordChange } from "../audit/index.ts";
import { checkMoneyBound } from "../../lib/money.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { listFoliosOfReservation, paymentMethodKind, type FolioService, type PaymentRow } from "../folio/index.ts";
import { findPropertyRow, type PropertyRow } from "../properties/index.ts";
import * as repo from "./ledger.repository.ts";
import type { AccountRow, AgeingRow, AllocationRow, ItemRow } from "./ledger.repository.ts";
import { allocationsFor } from "./allocation.ts";
import type { Keyed } from "../../db/held-transaction.ts";

export type { AccountRow, AllocationRow, ItemRow } from "./ledger.repository.ts";

/**
 * The city ledger: company and agency accounts the hotel bills on credit. A folio's open balance is settled to an
 * account (a CITY_LEDGER payment on the folio, a FOLIO debit on the account, in one transaction) within the
 * account's credit limit; the account's payments are allocated to its open debits, oldest first or as the caller
 * says. balance = open debits - unallocated payments, always the sum of the items.
 */
export interface CityLedger {
  createAccount(propertyId: string, input: AccountInput, keyed?: Keyed): Promise<AccountRow>;
  updateAccount(
    propertyId: string,
    input: { accountId: string; name: string; creditLimitMinor: bigint },
    keyed?: Keyed,
  ): Promise<AccountRow>;
  listAccounts(propertyId: string): Promise<AccountRow[]>;
  settleFolio(
    propertyId: string,
    actor: string,
    input: { folioId: string; accountId: string },
    keyed?: Keyed,
  ): Promise<Settled>;
  /** Inside a check-out's transaction, before it changes anything: the account exists in the property (else 404). */
  requireAccount(tx: Tx, propertyId: string, accountId: string): Promise<void>;
  /**
   * Inside a check-out's transaction: every folio of the reservation with an open balance settled to the account,
   * as SettleFolioToAccount does one (by window; folios without an open balance are left alone). 422 naming
   * `creditLimitMinor` when the account's balance would pass its credit limit: the caller's transaction fails.
   */
  settleReservation(
    tx: Tx,
    propertyId: string,
    actor: string,
    input: { reservationId: string; accountId: string },
  ): Promise<Settled[]>;
  postPayment(propertyId: string, actor: string, input: AccountPaymentInput, keyed?: Keyed): Promise<AccountPayment>;
  statement(propertyId: string, accountId: string): Promise<Statement>;
  ageing(propertyId: string): Promise<{ businessDate: string; accounts: AgeingLine[] }>;
}

interface AccountInput {
  code: string;
  name: string;
  kind: string;
  creditLimitMinor: bigint;
}

interface AccountPaymentInput {
  accountId: string;
  amountMinor: bigint;
  methodCode: string;
  reference: string;
  /** Empty: oldest open debits first. Else exactly these debits with these amounts. */
  allocations: { itemId: string; amountMinor: bigint }[];
}

interface Settled {
  account: AccountRow;
  item: ItemRow;
  payment: PaymentRow;
}

interface AccountPayment {
  account: AccountRow;
  item: ItemRow;
  allocations: AllocationRow[];
}

interface Statement {
  account: AccountRow;
  items: ItemRow[];
  allocations: AllocationRow[];
}

interface AgeingLine extends AgeingRow {
  account: AccountRow;
  balanceMinor: bigint;
}

export function createCityLedger(deps: { transact: Transact; clock: Clock; folios: FolioService }): CityLedger {
  const { transact, clock, folios } = deps;

  async function property(tx: Tx, propertyId: string): Promise<PropertyRow> {
    const p = await findPropertyRow(tx, propertyId);
    if (p === undefined) throw new AppError("not_found", "Property not found.");
    return p;
  }

  async function account(tx: Tx, propertyId: string, accountId: string, lock = false): Promise<AccountRow> {
    if (!isUuid(accountId)) throw invalidField("accountId", "must be a UUID");
    const a = await repo.findAccount(tx, propertyId, accountId, lock);
    if (a === undefined) throw new AppError("not_found", "Account not found.");
    return a;
  }

  /** One folio's open balance to the (locked) account `before`, within its credit limit. */
  async function settleOne(
    tx: Tx,
    propertyId: string,
    actor: string,
    before: AccountRow,
    folioId: string,
  ): Promise<Settled> {
    const { folio, payment } = await folios.settleToLedger(tx, propertyId, actor, { folioId, reference: before.code });
    const after = before.balanceMinor + payment.amountMinor;
    if (after > before.creditLimitMinor)
      throw new AppError(
        "validation_failed",
        `Settling ${payment.amountMinor} would take the account's balance to ${after}, beyond its credit limit of ${before.creditLimitMinor} (minor units).`,
        {
          details: [
            {
              field: "creditLimitMinor",
              reason: `the balance ${before.balanceMinor} + ${payment.amountMinor} is beyond the credit limit ${before.creditLimitMinor}`,
            },
          ],
        },
      );
    const item = await repo.insertItem(tx, propertyId, {
      id: newId(payment.postedAt.getTime()),
      accountId: before.id,
      kind: "FOLIO",
      folioId: folio.id,
      amountMinor: payment.amountMinor,
      businessDate: payment.businessDate,
      methodCode: "",
      reference: `${folio.reservationCode} / ${folio.number}`,
      postedAt: payment.postedAt,
      postedBy: actor,
    });
    const updated = (await repo.findAccount(tx, propertyId, before.id))!;
    recordChange(tx, { propertyId, entity: "ledger_account", entityId: before.id, action: "debit", after: item });
    return { account: updated, item, payment };
  }

  return {
    async createAccount(propertyId, input, keyed) {
      const code = input.code.trim().toUpperCase();
      if (!/^[A-Z0-9_-]{1,20}$/.test(code)) throw invalidField("code", "must be 1-20 characters A-Z, 0-9, _ or -");
      const name = checkName(input.name);
      const kind = input.kind;
      if (kind !== "COMPANY" && kind !== "AGENCY") throw invalidField("kind", "must be COMPANY or AGENCY");
      checkLimit(input.creditLimitMinor);
      return transact(async (tx) => {
        const p = await property(tx, propertyId);
        if ((await repo.listAccounts(tx, propertyId)).some((a) => a.code === code))
          throw new AppError("conflict", `An account with code ${code} exists.`);
        const now = clock.now();
        const row = await repo.insertAccount(tx, propertyId, {
          id: newId(now.getTime()),
          code,
          name,
          kind,
          creditLimitMinor: input.creditLimitMinor,
          currency: p.currency,
          amountScale: p.amountScale,
          createdAt: now,
        });
        recordChange(tx, { propertyId, entity: "ledger_account", entityId: row.id, action: "create", after: row });
        return row;
      }, keyed);
    },

    async updateAccount(propertyId, input, keyed) {
      const name = checkName(input.name);
      checkLimit(input.creditLimitMinor);
      return transact(async (tx) => {
        const before = await account(tx, propertyId, input.accountId, true);
        const after = await repo.updateAccount(tx, propertyId, before.id, {
          name,
          creditLimitMinor: input.creditLimitMinor,
        });
        recordChange(tx, {
          propertyId,
          entity: "ledger_account",
          entityId: before.id,
          action: "update",
          before,
          after,
        });
        return after;
      }, keyed);
    },

    async listAccounts(propertyId) {
      return transact((tx) => repo.listAccounts(tx, propertyId));
    },

    async settleFolio(propertyId, actor, input, keyed) {
      if (!isUuid(input.folioId)) throw invalidField("folioId", "must be a UUID");
      return transact(async (tx) => {
        const before = await account(tx, propertyId, input.accountId, true);
        return settleOne(tx, propertyId, actor, before, input.folioId);
      }, keyed);
    },

    async requireAccount(tx, propertyId, accountId) {
      await account(tx, propertyId, accountId);
    },

    async settleReservation(tx, propertyId, actor, input) {
      const a = await account(tx, propertyId, input.accountId, true);
      const settled: Settled[] = [];
      for (const folio of await listFoliosOfReservation(tx, propertyId, input.reservationId)) {
        if (folio.balanceMinor <= 0n) continue;
        const before = settled.at(-1)?.account ?? a;
        settled.push(await settleOne(tx, propertyId, actor, before, folio.id));
      }
      return settled;
    },

    async postPayment(propertyId, actor, input, keyed) {
      if (input.amountMinor <= 0n) throw invalidField("amountMinor", "must be positive");
      checkMoneyBound("amountMinor", input.amountMinor);
      const methodCode = input.methodCode.trim().toUpperCase();
      const kind = paymentMethodKind(methodCode);
      if (kind === undefined || kind === "CITY_LEDGER")
        throw invalidField("methodCode", "is not a payment method an account pays with");
      const reference = input.reference.trim();
      if (reference.length > 100) throw invalidField("reference", "must be at most 100 characters");
      return transact(async (tx) => {
        const a = await account(tx, propertyId, input.accountId, true);
        const p = await property(tx, propertyId);
        const allocations = allocationsFor(input, await repo.openDebits(tx, propertyId, a.id));
        const now = clock.now();
        const item = await repo.insertItem(tx, propertyId, {
          id: newId(now.getTime()),
          accountId: a.id,
          kind: "PAYMENT",
          folioId: null,
          amountMinor: input.amountMinor,
          businessDate: p.businessDate,
          methodCode,
          reference,
          postedAt: now,
          postedBy: actor,
        });
        const rows = allocations.map((x) => ({ paymentItemId: item.id, ...x }));
        await repo.allocate(tx, propertyId, item.id, rows, now);
        const allocated = rows.reduce((s, x) => s + x.amountMinor, 0n);
        const paid = { ...item, openMinor: item.amountMinor - allocated };
        recordChange(tx, {
          propertyId,
          entity: "ledger_account",
          entityId: a.id,
          action: "payment",
          after: { ...paid, allocations: rows },
        });
        return { account: (await repo.findAccount(tx, propertyId, a.id))!, item: paid, allocations: rows };
      }, keyed);
    },

    async statement(propertyId, accountId) {
      return transact(async (tx) => {
        const a = await account(tx, propertyId, accountId);
        return {
          account: a,
          items: await repo.listItems(tx, propertyId, a.id),
          allocations: await repo.listAllocations(tx, propertyId, a.id),
        };
      });
    },

    async ageing(propertyId) {
      return transact(async (tx) => {
        const p = await property(tx, propertyId);
        const accounts = new Map((await repo.listAccounts(tx, propertyId)).map((a) => [a.id, a]));
        const lines: AgeingLine[] = [];
        for (const row of await repo.ageing(tx, propertyId, p.businessDate)) {
          const a = accounts.get(row.accountId)!;
          lines.push({ ...row, account: a, balanceMinor: a.balanceMinor });
        }
        lines.sort((x, y) => x.account.code.localeCompare(y.account.code));
        return { businessDate: p.businessDate, accounts: lines };
      });
    },
  };
}

function checkName(name: string): string {
  const n = name.trim();
  if (n.length === 0 || n.length > 120) throw invalidField("name", "must be 1-120 characters");
  return n;
}

function checkLimit(limit: bigint): void {
  if (limit < 0n) throw invalidField("creditLimitMinor", "must not be negative");
  checkMoneyBound("creditLimitMinor", limit);
}
