import type { Queryable } from "../../db/queryable.ts";
import { AppError, invalidField } from "../../errors.ts";
import { requireId } from "../../lib/ids.ts";
import { findRoomType, type RoomType } from "./inventory.repository.ts";

/** Checks the inventory's writes share: codes, names, the longest price range, a room type that must exist. */

const codePattern = /^[A-Z0-9][A-Z0-9_-]{0,31}$/;
/** Longest price range one SetPrices call writes. */
export const maxPriceDays = 731;

export function checkCode(field: string, code: string): string {
  if (!codePattern.test(code))
    throw invalidField(field, "1-32 characters A-Z, 0-9, _ and -, starting with a letter or digit");
  return code;
}

export function checkName(field: string, name: string, max = 100): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > max) throw invalidField(field, `1-${max} characters`);
  return trimmed;
}

export async function requireRoomType(q: Queryable, propertyId: string, id: string): Promise<RoomType> {
  const rt = await findRoomType(q, propertyId, requireId(id, "Room type"));
  if (rt === undefined) throw new AppError("not_found", "Room type not found.");
  return rt;
}
