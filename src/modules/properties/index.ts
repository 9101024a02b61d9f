// Groups, properties, users, memberships and roles: the identity data every other module is scoped by.
export { ensureGroup } from "./groups.repository.ts";
export {
  findActivePropertiesByIds,
  findPropertiesByCodes,
  findPropertiesOfGroup,
  findPropertyByCode,
  findPropertyById,
  insertProperty,
  type Property,
} from "./properties.repository.ts";
export { findUserByEmail, findUserById, insertUser, type User } from "./users.repository.ts";
export {
  findActiveMembership,
  listActiveMemberships,
  membersWithPermission,
  upsertMembership,
} from "./memberships.repository.ts";
export { findRole } from "./roles.repository.ts";
export { advanceBusinessDate, findPropertyRow, propertyById, type PropertyRow } from "./lookup.ts";
export { activePropertyRowSql, propertyFieldSql, staffPermissionsSql } from "./sql.ts";
