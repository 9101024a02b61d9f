import { Migration } from "@mikro-orm/migrations";

export class Migration0001Platform extends Migration {
  override name = "0001-platform";

  override up(): void {
    this.addSql(`
      create table platform_settings (
        id smallint primary key default 1 check (id = 1),
        status text not null default 'operational' check (status in ('operational', 'degraded', 'maintenance')),
        partner_api_enabled boolean not null default true,
        updated_at timestamptz not null default now()
      );
      insert into platform_settings (id) values (1);
    `);
  }
}
