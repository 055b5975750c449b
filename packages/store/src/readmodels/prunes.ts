/**
 * The prune index read model: one row per pruned tool output (`pivot_rm_pruned`: message, part, tokens freed, the
 * event and stream version that pruned it, the entry as JSON). Entries are only ever appended.
 */
import { PruneIndex } from "@pivot/core"
import * as Effect from "effect/Effect"
import { runAll } from "../internal/migrations.ts"
import { clearRows, insertAll, type ReadModel, readModel, type Sql, withoutSession } from "./ReadModel.ts"

/** Its table (migration 1). Its statements also make a new SQLite store's one script (ADR 0061). */
export const ddl = [
  `CREATE TABLE pivot_rm_pruned (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  part_id TEXT NOT NULL,
  tokens DOUBLE PRECISION NOT NULL,
  event_id TEXT NOT NULL,
  stream_version INTEGER NOT NULL,
  entry TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
)`,
] as const

export const create = runAll(ddl)

const prunedRow = (sessionId: string, seq: number, entry: PruneIndex.Entry) => ({
  session_id: sessionId,
  seq,
  message_id: entry.messageId,
  part_id: entry.partId,
  tokens: entry.tokens,
  event_id: entry.eventId,
  stream_version: entry.version,
  entry: JSON.stringify(entry),
})

export const model: ReadModel = readModel({
  name: PruneIndex.projection.name,
  version: PruneIndex.projection.version,
  table: "pruned",
  key: ["seq"],
  expected: (sessionId, states) =>
    withoutSession(states.pruned.entries.map((entry, seq) => prunedRow(sessionId, seq, entry))),
  rows: {
    clear: clearRows("pivot_rm_pruned"),
    write: (sql, sessionId, states) =>
      insertAll(
        sql,
        "pivot_rm_pruned",
        states.pruned.entries.map((entry, seq) => prunedRow(sessionId, seq, entry)),
      ),
    apply: (sql, sessionId, prev, next) => {
      const a = prev.pruned.entries
      const b = next.pruned.entries
      if (a === b) return Effect.void
      const added: Array<Record<string, unknown>> = []
      for (let seq = a.length; seq < b.length; seq++) added.push(prunedRow(sessionId, seq, b[seq]!))
      return insertAll(sql, "pivot_rm_pruned", added)
    },
  },
})

/** Every pruned output of the session as stored, oldest prune first, and the tokens they freed. */
export const read = (sql: Sql, sessionId: string) =>
  Effect.map(
    sql<{
      readonly entry: string
    }>`SELECT entry FROM pivot_rm_pruned WHERE session_id = ${sessionId} ORDER BY seq`,
    (rows): PruneIndex.State => {
      const entries = rows.map((row) => JSON.parse(row.entry) as PruneIndex.Entry)
      let tokensFreed = 0
      for (const entry of entries) tokensFreed += entry.tokens
      return { entries, tokensFreed }
    },
  )
