/** The introduction of the API reference (`/docs`). */
export const API_DESCRIPTION = `One protobuf contract served four ways on one port: gRPC (h2c), Connect, gRPC-Web and the REST paths documented here.

- **Mobile API** \`/api/mobile/v1\`: the staff app; log in with \`POST /api/mobile/v1/auth/login\`, send \`Authorization: Bearer <accessToken>\`, refresh with \`POST /api/mobile/v1/auth/refresh\` (the refresh token rotates every time; refresh one at a time).
- **Connectivity API** \`/api/v1\`, release **v1 beta** (the stable release; \`GET /api/v1/status\` and \`GET /api/v1/capabilities\` say so too): channel managers and partners; get a token with client credentials at \`POST /api/v1/oauth/token\` (form body, HTTP Basic).
- **Panel API** \`/api/panel/v1\` and **Admin API** \`/api/admin/v1\`: staff sessions and internal clients.

JSON uses lowerCamelCase names; integers (money in minor units) are JSON numbers; timestamps are ISO 8601 UTC with three fraction digits; enum values are names such as \`GUARANTEED\`; unset optional values are present as \`null\`. Every response carries \`X-Request-Id\`; limited endpoints send \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`. Writes accept an \`Idempotency-Key\` header. Answers of 1 KiB or more are compressed (zstd, br or gzip) when \`Accept-Encoding\` allows, with \`Vary: Accept-Encoding\`; request bodies may be sent with \`Content-Encoding: gzip\`, \`br\` or \`zstd\` (the size limit holds once decompressed; another coding is 415). Errors have the body \`{"error":{"code","message","requestId","details"}}\` (the token endpoint answers RFC 6749 errors).

TypeScript SDK: \`sdk/\` (\`@hotelops/sdk\`).`;

/**
 * The licence of the API and its document: the service is not open source (the package is private); an SPDX
 * LicenseRef names it without claiming a public licence.
 */
export const API_LICENSE = { name: "Proprietary", identifier: "LicenseRef-HotelOps-Proprietary" };
