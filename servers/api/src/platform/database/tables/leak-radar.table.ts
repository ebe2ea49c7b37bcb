/** When a project was last told about one kind of leak in one field (migration 2026-12-19-leak-radar). */
export interface LeakRadarReportsTable {
  project_id: string;
  /** A `LeakKind` (src/platform/leak-patterns.ts). */
  kind: string;
  /** Where, without positions: `nav.url`, `error.message`, `custom.props.password`. */
  field: string;
  reported_at: Date;
}
