/**
 * The usage read model: one row per session whose usage moved (`pivot_rm_usage`: calls, the last call's tokens,
 * whether a compaction runs, the whole state as JSON). A session without a row reads as the initial usage.
 */
import { Usage } from "@pivot/core"
import * as Effect from "effect/Effect"
import { runAll } from "../internal/migrations.ts"
import { clearRows, insertAll, type ReadModel, readModel, type Sql, withoutSession } from "./ReadModel.ts"

/** Its table (migration 1). Its statements also make a new SQLite store's one script (ADR 0061). */
export const ddl = [
  `CREATE TABLE pivot_rm_usage (
  session_id TEXT NOT NULL PRIMARY KEY,
  calls INTEGER NOT NULL,
  last_tokens DOUBLE PRECISION,
  compacting INTEGER NOT NULL,
  state TEXT NOT NULL
)`,
] as const

export const create = runAll(ddl)

const usageRow = (sessionId: string, state: Usage.State) => ({
  session_id: sessionId,
  calls: state.calls,
  last_tokens: state.lastCall?.tokens ?? null,
  compacting: state.compacting ? 1 : 0,
  state: JSON.stringify(state),
})

export const model: ReadModel = readModel({
  name: Usage.projection.name,
  version: Usage.projection.version,
  table: "usage",
  key: [],
  expected: (sessionId, states) =>
    states.usage === Usage.projection.initial ? [] : withoutSession([usageRow(sessionId, states.usage)]),
  rows: {
    clear: clearRows("pivot_rm_usage"),
    // A session whose usage never moved has no row, inline or rebuilt (reads answer the initial usage).
    write: (sql, sessionId, states) =>
      states.usage === Usage.projection.initial
        ? Effect.void
        : insertAll(sql, "pivot_rm_usage", [usageRow(sessionId, states.usage)]),
    apply: (sql, sessionId, prev, next) =>
      prev.usage === next.usage
        ? Effect.void
        : Effect.asVoid(
            sql`INSERT INTO pivot_rm_usage ${sql.insert(usageRow(sessionId, next.usage))} ON CONFLICT (session_id) DO UPDATE SET calls = excluded.calls, last_tokens = excluded.last_tokens, compacting = excluded.compacting, state = excluded.state`,
          ),
  },
})

/** The session's usage as stored. */
export const read = (sql: Sql, sessionId: string) =>
  Effect.map(
    sql<{ readonly state: string }>`SELECT state FROM pivot_rm_usage WHERE session_id = ${sessionId}`,
    (rows) => (rows[0] === undefined ? Usage.initial : (JSON.parse(rows[0].state) as Usage.State)),
  )
