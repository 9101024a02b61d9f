import type { Tx } from "../../db/transaction.ts";

/**
 * Persistence of the city ledger: accounts, their items (FOLIO debits and PAYMENT credits, each with what is still
 * open) and the allocations of payments to debits. Every query takes the property id and filters by it. The
 * account's stored balance (open debits - open payments) changes in the statement that writes the item.
 */

export interface AccountRow {
  id: string;
  code: string;
  name: string;
  kind: "COMPANY" | "AGENCY";
  creditLimitMinor: bigint;
  balanceMinor: bigint;
  currency: string;
  amountScale: number;
  createdAt: Date;
}

export interface ItemRow {
  id: string;
  accountId: string;
  kind: "FOLIO" | "PAYMENT";
  folioId: string | null;
  amountMinor: bigint;
  openMinor: bigint;
  businessDate: string;
  methodCode: string;
  reference: string;
  postedAt: Date;
  postedBy: string;
}

export interface AllocationRow {
  paymentItemId: string;
  debitItemId: string;
  amountMinor: bigint;
}

type Raw = Record<string, unknown>;

const accountColumns = `id, code, name, kind, credit_limit_minor::text as credit_limit_minor,
  balance_minor::text as balance_minor, currency, amount_scale, created_at`;

function toAccount(r: Raw): AccountRow {
  return {
    id: r.id as string,
    code: r.code as string,
    name: r.name as string,
    kind: r.kind as AccountRow["kind"],
    creditLimitMinor: BigInt(r.credit_limit_minor as string),
    balanceMinor: BigInt(r.balance_minor as string),
    currency: (r.currency as string).trim(),
    amountScale: r.amount_scale as number,
    createdAt: r.created_at as Date,
  };
}

const itemColumns = `id, account_id, kind, folio_id, amount_minor::text as amount_minor, open_minor::text as open_minor,
  business_date::text as business_date, method_code, reference, posted_at, posted_by`;

function toItem(r: Raw): ItemRow {
  return {
    id: r.id as string,
    accountId: r.account_id as string,
    kind: r.kind as ItemRow["kind"],
    folioId: (r.folio_id as string | null) ?? null,
    amountMinor: BigInt(r.amount_minor as string),
    openMinor: BigInt(r.open_minor as string),
    businessDate: r.business_date as string,
    methodCode: r.method_code as string,
    reference: r.reference as string,
    postedAt: r.posted_at as Date,
    postedBy: r.posted_by as string,
  };
}

export async function insertAccount(
  tx: Tx,
  propertyId: string,
  a: Omit<AccountRow, "balanceMinor">,
): Promise<AccountRow> {
  const [r] = await tx.query<Raw>(
    `insert into ledger_accounts (property_id, id, code, name, kind, credit_limit_minor, currency, amount_scale, created_at)
     values ($1, $2, $3, $4, $5, $6::bigint, $7, $8, $9) returning ${accountColumns}`,
    [propertyId, a.id, a.code, a.name, a.kind, a.creditLimitMinor.toString(), a.currency, a.amountScale, a.createdAt],
  );
  return toAccount(r!);
}

export async function updateAccount(
  tx: Tx,
  propertyId: string,
  id: string,
  set: { name: string; creditLimitMinor: bigint },
): Promise<AccountRow> {
  const [r] = await tx.query<Raw>(
    `update ledger_accounts set name = $3, credit_limit_minor = $4::bigint where property_id = $1 and id = $2
     returning ${accountColumns}`,
    [propertyId, id, set.name, set.creditLimitMinor.toString()],
  );
  return toAccount(r!);
}

export async function findAccount(
  tx: Tx,
  propertyId: string,
  id: string,
  lock = false,
): Promise<AccountRow | undefined> {
  const [r] = await tx.query<Raw>(
    `select ${accountColumns} from ledger_accounts where property_id = $1 and id = $2 ${lock ? "for no key update" : ""}`,
    [propertyId, id],
  );
  return r === undefined ? undefined : toAccount(r);
}

export async function listAccounts(tx: Tx, propertyId: string): Promise<AccountRow[]> {
  const rows = await tx.query<Raw>(
    `select ${accountColumns} from ledger_accounts where property_id = $1 order by code`,
    [propertyId],
  );
  return rows.map(toAccount);
}

/** Inserts an item and adds it to (a debit) or takes it off (a payment) the account's balance in one statement. */
export async function insertItem(tx: Tx, propertyId: string, i: Omit<ItemRow, "openMinor">): Promise<ItemRow> {
  await tx.query(
    `with i as (
       insert into ledger_items (property_id, id, account_id, kind, folio_id, amount_minor, open_minor, business_date, method_code, reference, posted_at, posted_by)
       values ($1, $2, $3, $4, $5, $6::bigint, $6::bigint, $7::date, $8, $9, $10, $11)
       returning property_id, account_id, kind, amount_minor)
     update ledger_accounts a set balance_minor = a.balance_minor + case when i.kind = 'FOLIO' then i.amount_minor else -i.amount_minor end
     from i where a.property_id = i.property_id and a.id = i.account_id`,
    [
      propertyId,
      i.id,
      i.accountId,
      i.kind,
      i.folioId,
      i.amountMinor.toString(),
      i.businessDate,
      i.methodCode,
      i.reference,
      i.postedAt,
      i.postedBy,
    ],
  );
  return { ...i, openMinor: i.amountMinor };
}

export async function listItems(tx: Tx, propertyId: string, accountId: string): Promise<ItemRow[]> {
  const rows = await tx.query<Raw>(
    `select ${itemColumns} from ledger_items where property_id = $1 and account_id = $2 order by business_date, posted_at, id`,
    [propertyId, accountId],
  );
  return rows.map(toItem);
}

/** The account's open debits, oldest first (the account is locked by the caller). */
export async function openDebits(tx: Tx, propertyId: string, accountId: string): Promise<ItemRow[]> {
  const rows = await tx.query<Raw>(
    `select ${itemColumns} from ledger_items
     where property_id = $1 and account_id = $2 and kind = 'FOLIO' and open_minor > 0
     order by business_date, posted_at, id`,
    [propertyId, accountId],
  );
  return rows.map(toItem);
}

/** Records allocations of one payment and takes them off the open amounts of the payment and of each debit. */
export async function allocate(
  tx: Tx,
  propertyId: string,
  paymentItemId: string,
  allocations: readonly AllocationRow[],
  at: Date,
): Promise<void> {
  if (allocations.length === 0) return;
  await tx.query(
    `with a as (
       select * from jsonb_to_recordset($3::jsonb) as r(debit_item_id uuid, amount_minor bigint)),
     ins as (
       insert into ledger_allocations (property_id, payment_item_id, debit_item_id, amount_minor, allocated_at)
       select $1, $2, a.debit_item_id, a.amount_minor, $4 from a),
     debits as (
       update ledger_items d set open_minor = d.open_minor - a.amount_minor
       from a where d.property_id = $1 and d.id = a.debit_item_id)
     update ledger_items p set open_minor = p.open_minor - (select sum(amount_minor) from a)
     where p.property_id = $1 and p.id = $2`,
    [
      propertyId,
      paymentItemId,
      JSON.stringify(
        allocations.map((x) => ({ debit_item_id: x.debitItemId, amount_minor: x.amountMinor.toString() })),
      ),
      at,
    ],
  );
}

export async function listAllocations(tx: Tx, propertyId: string, accountId: string): Promise<AllocationRow[]> {
  const rows = await tx.query<Raw>(
    `select l.payment_item_id, l.debit_item_id, l.amount_minor::text as amount_minor
     from ledger_allocations l join ledger_items p on p.property_id = l.property_id and p.id = l.payment_item_id
     where l.property_id = $1 and p.account_id = $2 order by l.allocated_at, l.debit_item_id`,
    [propertyId, accountId],
  );
  return rows.map((r) => ({
    paymentItemId: r.payment_item_id as string,
    debitItemId: r.debit_item_id as string,
    amountMinor: BigInt(r.amount_minor as string),
  }));
}

export interface AgeingRow {
  accountId: string;
  currentMinor: bigint;
  days30Minor: bigint;
  days60Minor: bigint;
  days90Minor: bigint;
  unallocatedMinor: bigint;
}

/**
 * Open amounts per account by age on `businessDate` (days since the item's business date): under 30 days current,
 * 30-59, 60-89, 90 and more; open payments (not allocated yet) apart. One pass over the open items (partial index).
 */
export async function ageing(tx: Tx, propertyId: string, businessDate: string): Promise<AgeingRow[]> {
  const rows = await tx.query<Raw>(
    `select account_id,
       coalesce(sum(open_minor) filter (where kind = 'FOLIO' and $2::date - business_date < 30), 0)::text as c,
       coalesce(sum(open_minor) filter (where kind = 'FOLIO' and $2::date - business_date between 30 and 59), 0)::text as d30,
       coalesce(sum(open_minor) filter (where kind = 'FOLIO' and $2::date - business_date between 60 and 89), 0)::text as d60,
       coalesce(sum(open_minor) filter (where kind = 'FOLIO' and $2::date - business_date >= 90), 0)::text as d90,
       coalesce(sum(open_minor) filter (where kind = 'PAYMENT'), 0)::text as u
     from ledger_items where property_id = $1 and open_minor > 0 group by account_id`,
    [propertyId, businessDate],
  );
  return rows.map((r) => ({
    accountId: r.account_id as string,
    currentMinor: BigInt(r.c as string),
    days30Minor: BigInt(r.d30 as string),
    days60Minor: BigInt(r.d60 as string),
    days90Minor: BigInt(r.d90 as string),
    unallocatedMinor: BigInt(r.u as string),
  }));
}
