export { createStatsService, type StatsService } from "./stats.service.ts";
export { createReportsService, type ReportsService } from "./reports.service.ts";
export { type ReportColumn } from "./catalogue.ts";
