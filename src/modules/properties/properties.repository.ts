import { sql, type Kysely } from "kysely";

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

const columns = sql`p.id, p.group_id as "groupId", g.code as "groupCode", p.code, p.name, p.time_zone as "timeZone",
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

export async function insertProperty(db: Kysely<unknown>, p: NewProperty): Promise<void> {
  await sql`insert into properties (id, group_id, code, name, time_zone, currency, amount_scale, business_date, email_verification, sandbox, created_at, updated_at)
    values (${p.id}, ${p.groupId}, ${p.code}, ${p.name}, ${p.timeZone}, ${p.currency}, ${p.amountScale}, ${p.businessDate}, ${p.emailVerification}, ${p.sandbox}, ${p.now}, ${p.now})`.execute(db);
}

export async function findPropertyByCode(db: Kysely<unknown>, code: string): Promise<Property | undefined> {
  const { rows } = await sql<Property>`select ${columns} from properties p join hotel_groups g on g.id = p.group_id where p.code = ${code}`.execute(db);
  return rows[0];
}

export async function findPropertyById(db: Kysely<unknown>, id: string): Promise<Property | undefined> {
  const { rows } = await sql<Property>`select ${columns} from properties p join hotel_groups g on g.id = p.group_id where p.id = ${id}`.execute(db);
  return rows[0];
}

/** Properties by code; the result lacks the codes that do not exist. */
export async function findPropertiesByCodes(db: Kysely<unknown>, codes: readonly string[]): Promise<Property[]> {
  if (codes.length === 0) return [];
  const { rows } = await sql<Property>`select ${columns} from properties p join hotel_groups g on g.id = p.group_id where p.code = any(${[...codes]}::text[]) order by p.code`.execute(db);
  return rows;
}

/** Properties of a hotel group (the mobile login's hotelCode may be a group code). */
export async function findPropertiesOfGroup(db: Kysely<unknown>, groupCode: string): Promise<Property[]> {
  const { rows } = await sql<Property>`select ${columns} from properties p join hotel_groups g on g.id = p.group_id where g.code = ${groupCode} order by p.code`.execute(db);
  return rows;
}
