// Groups, properties, users, memberships and roles: the identity data every other module is scoped by.
export { ensureGroup, findGroupByCode, type HotelGroup } from "./groups.repository.ts";
export {
  findActivePropertiesByIds,
  findPropertiesByCodes,
  findPropertiesOfGroup,
  findPropertyByCode,
  findPropertyById,
  insertProperty,
  type NewProperty,
  type Property,
} from "./properties.repository.ts";
export { findUserByEmail, findUserById, insertUser, type User, type UserWithHash } from "./users.repository.ts";
export {
  findActiveMembership,
  listActiveMemberships,
  membersWithPermission,
  upsertMembership,
  type Membership,
} from "./memberships.repository.ts";
export { findRole, listRoles, type Role } from "./roles.repository.ts";
export { advanceBusinessDate, findPropertyRow, propertyById, type PropertyRow } from "./lookup.ts";
export { activePropertyRowSql, propertyFieldSql, staffPermissionsSql } from "./sql.ts";
