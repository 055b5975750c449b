// The restart benches' one read (support/restart.ts `floor`, support/restartProbe.ts): a session's snapshot row, then
// the rows of the events after it, in one SELECT; and an event row as the store's decoder takes it.
import type { DatabaseSync } from "node:sqlite"
import type { RecordedEvent } from "@pivot/store"

/** A snapshot row (`kind` 0: `type` its format, `id` its checksum) or an event row (`kind` 1). */
export interface Row {
  readonly kind: number
  readonly version: number
  readonly type: string
  readonly id: string
  readonly data: string
  readonly at: number
  readonly position: number
  readonly schema: number
}

/** The snapshot of `stream` (first, when there is one), then its events after the snapshot's version, in order. */
export const snapshotAndTail = (db: DatabaseSync, stream: string): Array<Row> =>
  db
    .prepare(
      `SELECT 0 AS kind, stream_version AS version, format AS type, checksum AS id, data, recorded_at AS at, 0 AS position, 0 AS schema
         FROM pivot_snapshots WHERE stream = ?1
       UNION ALL
       SELECT 1, stream_version, type, event_id, data, recorded_at, position, schema_version FROM pivot_events
         WHERE stream = ?1 AND stream_version > COALESCE((SELECT stream_version FROM pivot_snapshots WHERE stream = ?1), 0)
       ORDER BY 1, 2`,
    )
    .all(stream) as unknown as Array<Row>

/** An event row as the store records it (its data parsed). */
export const recordedOf = (row: Row, stream: string): RecordedEvent => ({
  id: row.id,
  type: row.type,
  version: row.schema,
  data: JSON.parse(row.data),
  metadata: null,
  stream,
  streamVersion: row.version,
  position: row.position,
  recordedAt: row.at,
})
