export {
  createStatsService,
  occupancyDays,
  type StatsService,
  type Dashboard,
  type Forecast,
  type ForecastDay,
} from "./stats.service.ts";
export {
  createReportsService,
  MAX_REPORT_DAYS,
  PREVIEW_ROWS,
  type ReportsService,
  type ReportRun,
  type ReportValue,
} from "./reports.service.ts";
export { reports, type ReportColumn, type ReportDefinition, type ColumnType } from "./catalogue.ts";
