import { AppError } from "../errors.ts";
import pg from "pg";

/**
 * The one way to run SQL in this service: PostgreSQL text with `$1, $2` placeholders, rows typed by the caller.
 * A transaction (`Tx`) and the database (`Database`) both are one. Types as node-postgres returns them on our
 * pool: timestamptz -> Date, bigint (money, counters) -> string (read it with `BigInt(...)`), `date` columns are
 * selected as `to_char(..., 'YYYY-MM-DD')` text (a business date is a calendar day, not an instant).
 */
export interface Queryable {
  query<R = Record<string, unknown>>(text: string | Statement, params?: readonly unknown[]): Promise<R[]>;
}

/**
 * A statement run on every request of some face (the platform switch, a caller's session or client): named, so
 * each pooled connection parses and plans it once and afterwards only binds and executes it. Only for fixed
 * texts (each name is kept by every connection for its life); behind PgBouncer the names are dropped
 * (sendStatementsUnnamed).
 */
export interface Statement {
  name: string;
  text: string;
}

/**
 * Named statements for a small family of texts built by one function (e.g. with or without a lock clause, with or
 * without an optional WITH item): each distinct text gets the name `<prefix>_<n>`, so a connection plans it once
 * instead of on every call (planning a statement with joins and subqueries costs more PostgreSQL CPU than running
 * it). Past `max` distinct texts a text goes unnamed: a family that turns out unbounded (a text with values in it)
 * cannot fill every connection with prepared statements.
 */
export function statementFamily(prefix: string, max = 16): (text: string) => string | Statement {
  const named = new Map<string, Statement>();
  return (text) => {
    const known = named.get(text);
    if (known !== undefined) return known;
    if (named.size >= max) return text;
    const statement = { name: `${prefix}_${named.size}`, text };
    named.set(text, statement);
    return statement;
  };
}

/** Pools (and their connections) whose statements go unnamed: see sendStatementsUnnamed. */
const unnamed = new WeakSet<pg.Pool | pg.ClientBase>();

/**
 * Runs every `Statement` of this pool unnamed (parsed on each use): for a pool behind PgBouncer in transaction
 * pooling mode before 1.21 (Debian's is 1.18), whose server connections change between transactions and would
 * not know a name prepared on another. PgBouncer 1.21+ with `max_prepared_statements` keeps names working.
 */
export function sendStatementsUnnamed(pool: pg.Pool): void {
  unnamed.add(pool);
  pool.on("connect", (client) => unnamed.add(client));
}

/**
 * Runs a statement on the pool or a checked-out connection. node-postgres copies an object query config on every
 * call (Object.defineProperties over its descriptors, about 2 us), so a text goes with its values as two arguments
 * and a named statement as a Query made from its text, with the name and values set on it afterwards.
 */
export function runQuery<R extends pg.QueryResultRow>(
  on: pg.Pool | pg.ClientBase,
  text: string | Statement,
  params: readonly unknown[],
): Promise<pg.QueryResult<R>> {
  if (typeof text === "string") return on.query<R>(text, [...params]);
  if (unnamed.has(on)) return on.query<R>(text.text, [...params]);
  const query = Object.assign(new pg.Query(text.text), { name: text.name, values: [...params] });
  return new Promise((resolve, reject) => {
    // a Query with a callback (the pool releases its connection in the one it passes on)
    (on.query as (q: pg.Query, done: (err: Error | undefined, res: pg.QueryResult<R>) => void) => unknown)(
      query,
      // the statement's name travels with its error into the log line (never its text or values)
      (err, res) => (err ? reject(Object.assign(err, { statement: text.name })) : resolve(res)),
    );
  });
}

/**
 * pg-boss's statements (its `Db.executeSql`, on our pool or a transaction's connection), named: its job insert,
 * fetch and completion are planned once per connection instead of on every call (a large part of the PostgreSQL
 * CPU of a job otherwise). The text is pg-boss's own, unchanged; only statements with parameters are named (its
 * DDL and maintenance scripts, several commands in one text, go as they are); one family for the whole process, so
 * a name means one text on every connection.
 */
export function runBossSql(
  on: pg.Pool | pg.ClientBase,
  text: string,
  values: readonly unknown[] | undefined,
): Promise<pg.QueryResult> {
  if (values === undefined || values.length === 0) return on.query(text);
  return runQuery(on, bossStatement(text), values);
}

const bossStatement = statementFamily("pgboss", 100);

/** SQL to run inside another statement: its WITH items and their parameters (numbered where the caller says). */
export interface SqlPart {
  with: string;
  params: unknown[];
}

/** The pool as a Queryable: each statement on whichever pooled connection is free (no transaction). */
export function poolQueryable(pool: pg.Pool): Queryable {
  return {
    async query<R>(text: string | Statement, params: readonly unknown[] = []) {
      return (await runQuery<R & pg.QueryResultRow>(pool, text, params)).rows;
    },
  };
}

/** A unique violation (a taken code or number) as the caller's conflict, with a message that says which. */
export async function conflictOnDuplicate<T>(work: Promise<T>, message: string): Promise<T> {
  try {
    return await work;
  } catch (err) {
    const code =
      (err as { code?: unknown; cause?: { code?: unknown } }).code ??
      (err as { cause?: { code?: unknown } }).cause?.code;
    if (code === "23505") throw new AppError("conflict", message, { cause: err });
    throw err;
  }
}
