/**
 * The compaction history read model: one row per compaction (`pivot_rm_compactions`: its marker, status, requested
 * and settled stream versions, the entry as JSON). An event adds an entry or changes one in place.
 */
import { CompactionHistory, type Ids, Pins } from "@pivot/core"
import * as Effect from "effect/Effect"
import { runAll } from "../internal/migrations.ts"
import { CHUNK, clearRows, insertAll, type ReadModel, readModel, type Sql, withoutSession } from "./ReadModel.ts"

/** Its table (migration 1). Its statements also make a new SQLite store's one script (ADR 0061). */
export const ddl = [
  `CREATE TABLE pivot_rm_compactions (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  marker_id TEXT NOT NULL,
  status TEXT NOT NULL,
  requested_version INTEGER NOT NULL,
  settled_version INTEGER,
  entry TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
)`,
  // Replay finds the latest pivot at or before a version without reading every compaction.
  `CREATE INDEX pivot_rm_compactions_settled ON pivot_rm_compactions (session_id, settled_version)`,
] as const

export const create = runAll(ddl)

const compactionRow = (sessionId: string, seq: number, entry: CompactionHistory.Entry) => ({
  session_id: sessionId,
  seq,
  marker_id: entry.markerId,
  status: entry.status,
  requested_version: entry.requestedVersion,
  settled_version: entry.settledVersion ?? null,
  entry: JSON.stringify(entry),
})

export const model: ReadModel = readModel({
  name: CompactionHistory.projection.name,
  version: CompactionHistory.projection.version,
  table: "compactions",
  key: ["seq"],
  expected: (sessionId, states) =>
    withoutSession(states.history.entries.map((entry, seq) => compactionRow(sessionId, seq, entry))),
  rows: {
    clear: clearRows("pivot_rm_compactions"),
    write: (sql, sessionId, states) =>
      insertAll(
        sql,
        "pivot_rm_compactions",
        states.history.entries.map((entry, seq) => compactionRow(sessionId, seq, entry)),
      ),
    apply: (sql, sessionId, prev, next) =>
      Effect.gen(function* () {
        const a = prev.history.entries
        const b = next.history.entries
        if (a === b) return
        const added: Array<Record<string, unknown>> = []
        for (let seq = 0; seq < b.length; seq++) {
          const entry = b[seq]!
          if (seq >= a.length) added.push(compactionRow(sessionId, seq, entry))
          else if (a[seq] !== entry) {
            const row = compactionRow(sessionId, seq, entry)
            yield* sql`UPDATE pivot_rm_compactions SET marker_id = ${row.marker_id}, status = ${row.status}, requested_version = ${row.requested_version}, settled_version = ${row.settled_version}, entry = ${row.entry} WHERE session_id = ${sessionId} AND seq = ${seq}`
          }
        }
        yield* insertAll(sql, "pivot_rm_compactions", added)
      }),
  },
})

/** Every compaction of the session as stored, oldest first. */
export const read = (sql: Sql, sessionId: string) =>
  Effect.map(
    sql<{
      readonly entry: string
    }>`SELECT entry FROM pivot_rm_compactions WHERE session_id = ${sessionId} ORDER BY seq`,
    (rows) => rows.map((row) => JSON.parse(row.entry) as CompactionHistory.Entry),
  )

/**
 * The stream version to start the window fold from to get the window at `version`: where the oldest message kept by
 * the latest pivot at or before `version` was added (1 when there is none). Reads this table and the audit's.
 */
export const origin = (sql: Sql, sessionId: string, version: number) =>
  Effect.gen(function* () {
    const pivot = yield* sql<{
      readonly entry: string
    }>`SELECT entry FROM pivot_rm_compactions WHERE session_id = ${sessionId} AND status IN ('finished', 'continued') AND settled_version IS NOT NULL AND settled_version <= ${version} ORDER BY settled_version DESC LIMIT 1`
    const entry = pivot[0] === undefined ? undefined : (JSON.parse(pivot[0].entry) as CompactionHistory.Entry)
    if (entry === undefined) return 1
    // A pivot also keeps the pinned messages in force then (`Pins`): from the pin events up to it (ids only, never
    // encrypted; a session pins a few messages).
    const pinEvents = yield* sql<{
      readonly data: string
    }>`SELECT data FROM pivot_events WHERE stream = ${`session-${sessionId}`} AND type IN ('ContextPinned', 'ContextUnpinned') AND stream_version <= ${entry.settledVersion ?? version} ORDER BY stream_version`
    const pinned = new Map<string, Ids.MessageId>()
    for (const row of pinEvents) Pins.track(pinned, JSON.parse(row.data))
    // Where each kept message was added: the event of its first audit row.
    const ids = [...new Set([entry.markerId, ...(entry.plan?.tail ?? []), ...pinned.values()])]
    let origin = Number.POSITIVE_INFINITY
    let found = 0
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = yield* sql<{
        readonly v: number | string
      }>`SELECT e.stream_version AS v FROM pivot_rm_audit a JOIN pivot_events e ON e.event_id = a.event_id WHERE a.session_id = ${sessionId} AND a.seq = 0 AND ${sql.in("a.message_id", ids.slice(i, i + CHUNK))}`
      for (const row of rows) origin = Math.min(origin, Number(row.v))
      found += rows.length
    }
    return found === ids.length ? origin : 1
  })
