// The status read every baseline and peer of the status bench serves: the service's own primary-key read of
// platform_settings on a plain pg pool, shaped as GetStatusResponse.
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const sql = "select status, partner_api_enabled from platform_settings where id = 1";

export async function status(): Promise<{
  status: string;
  apiVersion: string;
  partnerApi: string;
  partnerApiRelease: string;
}> {
  const row = (await pool.query<{ status: string; partner_api_enabled: boolean }>(sql)).rows[0]!;
  return {
    status: row.status,
    apiVersion: "v1",
    partnerApi: row.partner_api_enabled ? "enabled" : "disabled",
    partnerApiRelease: "v1 beta",
  };
}
