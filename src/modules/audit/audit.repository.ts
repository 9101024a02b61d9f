import type { Queryable } from "../../db/queryable.ts";
import { invalidField } from "../../errors.ts";
import { isUuid } from "../../lib/ids.ts";
import { entityTypes, type EntityType, type FieldChange } from "./record.ts";

/** The most changes one page holds (the documented maximum of `limit`). */
const MAX_PAGE = 200;
const DEFAULT_PAGE = 50;

export interface ChangeFilter {
  entityType: string;
  entityId: string;
  actorId: string;
  from: string;
  to: string;
  cursor: string;
  limit: number;
}

interface RecordedChange {
  id: string;
  at: Date;
  entityType: EntityType;
  entityId: string;
  action: string;
  actorKind: string;
  actorId: string;
  face: string;
  requestId: string;
  changes: FieldChange[];
}

export interface ChangePage {
  changes: RecordedChange[];
  nextCursor: string;
  hasMore: boolean;
}

function instant(field: string, value: string): Date | null {
  if (value === "") return null;
  // RFC 3339 with a zone (Z or an offset); Date.parse alone would take local times and other shapes.
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(value)
    ? new Date(value)
    : undefined;
  if (at === undefined || Number.isNaN(at.getTime())) throw invalidField(field, "must be an RFC 3339 instant");
  return at;
}

/** The cursor: the last change's instant in microseconds and its id (changes are read newest first). */
function decodeCursor(cursor: string): { micros: string; id: string } | null {
  if (cursor === "") return null;
  const [micros, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  if (micros === undefined || id === undefined || !/^\d{1,17}$/.test(micros) || !isUuid(id))
    throw invalidField("cursor", "is not a cursor of this list");
  return { micros, id };
}

const encodeCursor = (micros: string, id: string): string => Buffer.from(`${micros}|${id}`).toString("base64url");

interface Row extends Omit<RecordedChange, "entityType"> {
  entityType: string;
  micros: string;
}

/** A page of one property's changes, newest first, filtered as asked; bad filters are invalid_argument. */
export async function listChanges(db: Queryable, propertyId: string, f: ChangeFilter): Promise<ChangePage> {
  if (f.entityType !== "" && !(entityTypes as readonly string[]).includes(f.entityType))
    throw invalidField("entityType", `one of ${entityTypes.join(", ")}`);
  if (f.entityId !== "" && f.entityType === "") throw invalidField("entityType", "is required with entityId");
  if (f.entityId.length > 200) throw invalidField("entityId", "at most 200 characters");
  if (f.actorId.length > 200) throw invalidField("actorId", "at most 200 characters");
  if (f.limit !== 0 && (f.limit < 1 || f.limit > MAX_PAGE)) throw invalidField("limit", `1 to ${MAX_PAGE}`);
  const from = instant("from", f.from);
  const to = instant("to", f.to);
  if (from !== null && to !== null && to <= from) throw invalidField("to", "must be after from");
  const after = decodeCursor(f.cursor);
  const limit = f.limit === 0 ? DEFAULT_PAGE : f.limit;
  const rows = await db.query<Row>(
    `select id, at, (extract(epoch from at) * 1000000)::bigint::text as micros, entity_type as "entityType",
       entity_id as "entityId", action, actor_kind as "actorKind", actor_id as "actorId", face,
       request_id as "requestId", changes
     from audit_changes
     where property_id = $1
       and ($2::text is null or entity_type = $2) and ($3::text is null or entity_id = $3)
       and ($4::text is null or actor_id = $4)
       and ($5::timestamptz is null or at >= $5) and ($6::timestamptz is null or at < $6)
       and ($7::bigint is null or (at, id) < ('epoch'::timestamptz + $7::bigint * interval '1 microsecond', $8::uuid))
     order by at desc, id desc
     limit $9`,
    [
      propertyId,
      f.entityType || null,
      f.entityId || null,
      f.actorId || null,
      from,
      to,
      after?.micros ?? null,
      after?.id ?? null,
      limit + 1,
    ],
  );
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    changes: page.map(({ micros: _micros, ...c }) => ({ ...c, entityType: c.entityType as EntityType })),
    nextCursor: hasMore && last !== undefined ? encodeCursor(last.micros, last.id) : "",
    hasMore,
  };
}
