/**
 * The audit read model: one row per (message, event) pair, the events each message came from (`pivot_rm_audit`),
 * read joined with the window's rows.
 */
import { Audit, type Message } from "@pivot/core"
import * as Effect from "effect/Effect"
import { runAll } from "../internal/migrations.ts"
import { clearRows, insertAll, type ReadModel, readModel, type Sql, withoutSession } from "./ReadModel.ts"
import { type States, seqAt, touchedIds } from "./States.ts"

/** One message of the audit view: a message the model sees and the ids of the events it came from. */
export interface AuditEntry {
  readonly message: Message.Message
  readonly eventIds: ReadonlyArray<string>
}

/** Its table (migration 1). Its statements also make a new SQLite store's one script (ADR 0061). */
export const ddl = [
  `CREATE TABLE pivot_rm_audit (
  session_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  PRIMARY KEY (session_id, message_id, seq)
)`,
] as const

export const create = runAll(ddl)

const auditRows = (sessionId: string, messageId: string, ids: ReadonlyArray<string>, from: number) => {
  const rows: Array<Record<string, unknown>> = []
  for (let seq = from; seq < ids.length; seq++)
    rows.push({ session_id: sessionId, message_id: messageId, seq, event_id: ids[seq]! })
  return rows
}

// Every message's rows, in the conversation's order.
const allRows = (sessionId: string, states: States) => {
  const { sources, window } = states.audit
  const order = window.conversation.order
  const rows: Array<Record<string, unknown>> = []
  for (let i = 0; i < order.length; i++) {
    const id = seqAt(order, i)
    rows.push(...auditRows(sessionId, id, sources.get(id) ?? [], 0))
  }
  return rows
}

export const model: ReadModel = readModel({
  name: Audit.projection.name,
  version: Audit.projection.version,
  table: "audit",
  key: ["message_id", "seq"],
  expected: (sessionId, states) => withoutSession(allRows(sessionId, states)),
  rows: {
    clear: clearRows("pivot_rm_audit"),
    write: (sql, sessionId, states) => insertAll(sql, "pivot_rm_audit", allRows(sessionId, states)),
    apply: (sql, sessionId, prev, next, event) => {
      const rows: Array<Record<string, unknown>> = []
      for (const id of new Set(touchedIds(event))) {
        const a = prev.audit.sources.get(id) ?? []
        const b = next.audit.sources.get(id) ?? []
        if (a !== b) rows.push(...auditRows(sessionId, id, b, a.length))
      }
      return insertAll(sql, "pivot_rm_audit", rows)
    },
  },
})

/** Each window message of the session with the ids of the events it came from, as stored. */
export const read = (sql: Sql, sessionId: string) =>
  Effect.map(
    sql<{
      readonly ordinal: number | string
      readonly message: string
      readonly event_id: string | null
    }>`SELECT w.ordinal, w.message, a.event_id FROM pivot_rm_window w LEFT JOIN pivot_rm_audit a ON a.session_id = w.session_id AND a.message_id = w.message_id WHERE w.session_id = ${sessionId} ORDER BY w.ordinal, a.seq`,
    (rows): ReadonlyArray<AuditEntry> => {
      const out: Array<{ message: Message.Message; eventIds: Array<string> }> = []
      let ordinal: number | undefined
      for (const row of rows) {
        if (Number(row.ordinal) !== ordinal) {
          ordinal = Number(row.ordinal)
          out.push({ message: JSON.parse(row.message) as Message.Message, eventIds: [] })
        }
        if (row.event_id !== null) out[out.length - 1]!.eventIds.push(row.event_id)
      }
      return out
    },
  )
