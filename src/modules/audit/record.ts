import type { Statement } from "../../db/queryable.ts";
import type { Batch, Tx } from "../../db/transaction.ts";
import { currentAuthor, type ChangeAuthor } from "../../lib/change-context.ts";
import { newId } from "../../lib/ids.ts";

/** The kinds of record the trail follows (ListChanges filters on them). */
export const entityTypes = [
  "reservation",
  "room_line",
  "folio",
  "invoice",
  "price",
  "restriction",
  "room",
  "out_of_order",
  "webhook_endpoint",
  "api_client",
  "rate_plan",
  "late_checkout_rule",
  "guest",
  "invoice_tax_rate",
  "invoice_issuer",
  "invoice_delivery",
  "guest_retention",
  "guest_report",
  "ledger_account",
] as const;
export type EntityType = (typeof entityTypes)[number];

/** One change of one record, as its module knows it: the record's fields before and after (whole objects). */
export interface Change {
  propertyId: string;
  entity: EntityType;
  entityId: string;
  /** What happened, lower case: create, modify, cancel, check_in, check_out, move, no_show, charge, payment... */
  action: string;
  /** The record before the change (omit on create). Only fields whose value differs are kept. */
  before?: object | undefined;
  /** The record after the change (omit on delete). */
  after?: object | undefined;
  /** Who made it, when not the caller of the work (see change-context.ts). */
  by?: ChangeAuthor | undefined;
}

/** One changed field: before/after as JSON; `masked` (no values) for personal data and secrets. */
export interface FieldChange {
  field: string;
  before?: unknown;
  after?: unknown;
  masked?: true;
}

/**
 * Fields never written in clear: guest personal data (names, contacts, documents, free text that may hold them)
 * and secrets. A change of one is recorded as "changed" without its values; inside a nested value it is "***".
 */
const masked = new Set([
  "holderName",
  "buyer",
  "familyName",
  "tckn",
  "guestName",
  "guestNames",
  "firstName",
  "lastName",
  "fullName",
  "givenName",
  "familyName",
  "email",
  "phone",
  "phoneNumber",
  "documentNumber",
  "documentNo",
  "idNumber",
  "nationalId",
  "passportNumber",
  "birthDate",
  "dateOfBirth",
  "address",
  "notes",
  "secret",
  "secretHash",
  "clientSecret",
  "password",
  "passwordHash",
  "token",
]);

/** Bookkeeping fields every write moves: not changes of the record. */
const ignored = new Set(["id", "propertyId", "createdAt", "updatedAt", "changeSeq"]);

/** A value as JSON: bigint as its decimal text, dates as ISO instants, personal fields inside it as "***". */
function plain(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Set) return [...value].map(plain);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = masked.has(k) ? "***" : plain(v);
    return out;
  }
  return value;
}

/** The fields that differ between before and after (all of after's on a create, all of before's on a delete). */
function changedFields(before: object | undefined, after: object | undefined): FieldChange[] {
  const b = (before ?? {}) as Record<string, unknown>;
  const a = (after ?? {}) as Record<string, unknown>;
  const out: FieldChange[] = [];
  for (const field of new Set([...Object.keys(b), ...Object.keys(a)])) {
    if (ignored.has(field)) continue;
    const pb = b[field] === undefined ? undefined : plain(b[field]);
    const pa = a[field] === undefined ? undefined : plain(a[field]);
    if (JSON.stringify(pb) === JSON.stringify(pa)) continue;
    if (before === undefined && (pa === null || pa === undefined)) continue;
    if (masked.has(field)) out.push({ field, masked: true });
    else out.push({ field, ...(pb !== undefined ? { before: pb } : {}), ...(pa !== undefined ? { after: pa } : {}) });
  }
  return out;
}

interface Row {
  id: string;
  property_id: string;
  entity_type: string;
  entity_id: string;
  action: string;
  actor_kind: string;
  actor_id: string;
  face: string;
  request_id: string;
  changes: FieldChange[];
}

/** Every change of a transaction in one INSERT, sent with its last statement or COMMIT (Tx.collect). */
const changes: Batch<Row> = {
  statement: (rows) => ({
    text: insertChanges,
    params: [JSON.stringify(rows)],
  }),
};

/** Named: every change writes it (planned once per connection). */
const insertChanges: Statement = {
  name: "audit_insert_changes",
  text: `insert into audit_changes (id, property_id, entity_type, entity_id, action, actor_kind, actor_id, face, request_id, changes)
      select id, property_id, entity_type, entity_id, action, actor_kind, actor_id, face, request_id, changes
      from jsonb_to_recordset($1::jsonb) as r(id uuid, property_id uuid, entity_type text, entity_id text, action text,
        actor_kind text, actor_id text, face text, request_id text, changes jsonb)`,
};

/**
 * Records one change in the transaction that makes it: it commits or rolls back with the change, costs no round
 * trip of its own (the transaction's changes are written by one statement at its end) and takes the author, face
 * and request id from the work's context (the call, job or command) unless `by` says otherwise. Synchronous: call
 * it in one line right after the change.
 */
export function recordChange(tx: Tx, change: Change): void {
  if (!tx.recordsChanges) return;
  const author = change.by ?? currentAuthor();
  tx.collect(changes, {
    id: newId(),
    property_id: change.propertyId,
    entity_type: change.entity,
    entity_id: change.entityId,
    action: change.action,
    actor_kind: author.kind,
    actor_id: author.id,
    face: author.face,
    request_id: author.requestId,
    changes: changedFields(change.before, change.after),
  });
}
