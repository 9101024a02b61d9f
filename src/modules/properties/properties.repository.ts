import type { Queryable } from "../../db/queryable.ts";

/** A property as the rest of the service sees it (business_date is read where needed: it moves nightly). */
export interface Property {
  id: string;
  groupId: string;
  groupCode: string;
  code: string;
  name: string;
  timeZone: string;
  currency: string;
  amountScale: number;
  businessDate: string;
  emailVerification: boolean;
  sandbox: boolean;
  active: boolean;
}

const columns = `p.id, p.group_id as "groupId", g.code as "groupCode", p.code, p.name, p.time_zone as "timeZone",
  p.currency, p.amount_scale as "amountScale", to_char(p.business_date, 'YYYY-MM-DD') as "businessDate",
  p.email_verification as "emailVerification", p.sandbox, p.active`;

export interface NewProperty {
  id: string;
  groupId: string;
  code: string;
  name: string;
  timeZone: string;
  currency: string;
  amountScale: number;
  businessDate: string;
  emailVerification: boolean;
  sandbox: boolean;
  now: Date;
}

export async function insertProperty(db: Queryable, p: NewProperty): Promise<void> {
  await db.query(
    `insert into properties (id, group_id, code, name, time_zone, currency, amount_scale, business_date, email_verification, sandbox, created_at, updated_at)
    values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      p.id,
      p.groupId,
      p.code,
      p.name,
      p.timeZone,
      p.currency,
      p.amountScale,
      p.businessDate,
      p.emailVerification,
      p.sandbox,
      p.now,
      p.now,
    ],
  );
}

export async function findPropertyByCode(db: Queryable, code: string): Promise<Property | undefined> {
  const rows = await db.query<Property>(
    `select ${columns} from properties p join hotel_groups g on g.id = p.group_id where p.code = $1`,
    [code],
  );
  return rows[0];
}

export async function findPropertyById(db: Queryable, id: string): Promise<Property | undefined> {
  const rows = await db.query<Property>(
    `select ${columns} from properties p join hotel_groups g on g.id = p.group_id where p.id = $1`,
    [id],
  );
  return rows[0];
}

/** Properties by code; the result lacks the codes that do not exist. */
export async function findPropertiesByCodes(db: Queryable, codes: readonly string[]): Promise<Property[]> {
  if (codes.length === 0) return [];
  const rows = await db.query<Property>(
    `select ${columns} from properties p join hotel_groups g on g.id = p.group_id where p.code = any($1::text[]) order by p.code`,
    [[...codes]],
  );
  return rows;
}

/** Properties of a hotel group (the mobile login's hotelCode may be a group code). */
export async function findPropertiesOfGroup(db: Queryable, groupCode: string): Promise<Property[]> {
  const rows = await db.query<Property>(
    `select ${columns} from properties p join hotel_groups g on g.id = p.group_id where g.code = $1 order by p.code`,
    [groupCode],
  );
  return rows;
}

/** The active properties among `ids`, by code (a partner's properties in reach). */
export async function findActivePropertiesByIds(db: Queryable, ids: readonly string[]): Promise<Property[]> {
  if (ids.length === 0) return [];
  return db.query<Property>(
    `select ${columns} from properties p join hotel_groups g on g.id = p.group_id where p.id = any($1::uuid[]) and p.active order by p.code`,
    [[...ids]],
  );
}
