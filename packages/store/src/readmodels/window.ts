/**
 * The window read model: one row per message the model sees, in order (`pivot_rm_window`: ordinal, message id, the
 * stored message as JSON). An append adds rows or rewrites in place the messages its events name; a pivot rewrites
 * the session's rows.
 */
import { Conversation, type Events, type Ids, type Message, Window } from "@pivot/core"
import * as Effect from "effect/Effect"
import { runAll } from "../internal/migrations.ts"
import {
  CHUNK,
  clearRows,
  type Fields,
  insertAll,
  messageJson,
  type ReadModel,
  readModel,
  type Sql,
  type Write,
  withoutSession,
} from "./ReadModel.ts"
import { seqAt, touchedIds } from "./States.ts"

type Event = Events.Event
type MessageId = Ids.MessageId

/** Its table (migration 1). Its statements also make a new SQLite store's one script (ADR 0061). */
export const ddl = [
  `CREATE TABLE pivot_rm_window (
  session_id TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (session_id, ordinal)
)`,
  `CREATE INDEX pivot_rm_window_message ON pivot_rm_window (session_id, message_id)`,
] as const

export const create = runAll(ddl)

const windowRows = (
  sessionId: string,
  state: Window.State,
  from: number,
  to = state.visible.length,
  fields?: Fields,
) => {
  const rows: Array<Record<string, unknown>> = []
  for (let i = from; i < Math.min(to, state.visible.length); i++) {
    const id = seqAt(state.visible, i)
    rows.push({
      session_id: sessionId,
      ordinal: i,
      message_id: id,
      message: messageJson(Conversation.get(state.conversation, id), fields),
    })
  }
  return rows
}

export const model: ReadModel = readModel({
  name: Window.projection.name,
  version: Window.projection.version,
  table: "window",
  key: ["ordinal"],
  expected: (sessionId, states) => withoutSession(windowRows(sessionId, states.window, 0)),
  rows: {
    clear: clearRows("pivot_rm_window"),
    // In chunks made as they are inserted: a big window's rows (each message as JSON) never exist all at once.
    write: (sql, sessionId, states) =>
      Effect.gen(function* () {
        const window = states.window
        for (let from = 0; from < window.visible.length; from += CHUNK)
          yield* insertAll(sql, "pivot_rm_window", windowRows(sessionId, window, from, from + CHUNK))
      }),
    apply: (sql, sessionId, prev, next, event) =>
      Effect.gen(function* () {
        const a = prev.window
        const b = next.window
        if (a === b) return
        // A pivot replaces the window, and so does a change the event does not name (a future event type): rewritten
        // rather than guessed. Anything else only appends rows or changes the messages the event names in place.
        const changed = new Set<MessageId>()
        if (!step(a, b, event, changed)) {
          yield* model.rows.clear(sql, sessionId)
          return yield* model.rows.write(sql, sessionId, next)
        }
        yield* insertAll(sql, "pivot_rm_window", windowRows(sessionId, b, a.visible.length))
        for (const id of changed)
          yield* sql`UPDATE pivot_rm_window SET message = ${JSON.stringify(Conversation.get(b.conversation, id))} WHERE session_id = ${sessionId} AND message_id = ${id}`
      }),
  },
})

/**
 * One event's step of the window, for rows written batch by batch: whether `model.delta` would only append rows and
 * update the messages the event names (then those ids go into `changed`); false when it would rewrite the window.
 */
export const step = (a: Window.State, b: Window.State, event: Event, changed: Set<MessageId>): boolean => {
  if (a === b) return true
  if (b.pivot !== a.pivot || b.visible.length < a.visible.length) return false
  let accounted = b.visible.length > a.visible.length
  for (const id of touchedIds(event)) {
    const before = Conversation.get(a.conversation, id)
    const after = Conversation.get(b.conversation, id)
    if (before === undefined || after === undefined || before === after) continue
    accounted = true
    changed.add(id)
  }
  return accounted || b.conversation.messages === a.conversation.messages
}

/**
 * The window rows of a batch whose every step `step` accepted: the same rows its events' deltas would leave, written
 * at once (each new row with its message as it stands after the batch; each message named by an event and already in
 * the window before the batch updated to its newest form).
 */
export const writeSteps = (
  sql: Sql,
  sessionId: string,
  a: Window.State,
  b: Window.State,
  changed: ReadonlySet<MessageId>,
  fields: Fields | undefined,
): Write =>
  Effect.gen(function* () {
    if (a === b) return
    for (let from = a.visible.length; from < b.visible.length; from += CHUNK)
      yield* insertAll(sql, "pivot_rm_window", windowRows(sessionId, b, from, from + CHUNK, fields))
    for (const id of changed) {
      const before = Conversation.get(a.conversation, id)
      const after = Conversation.get(b.conversation, id)
      if (before === undefined || after === undefined || before === after) continue
      yield* sql`UPDATE pivot_rm_window SET message = ${messageJson(after, fields)} WHERE session_id = ${sessionId} AND message_id = ${id}`
    }
  })

/** The session's window as stored. */
export const read = (sql: Sql, sessionId: string) =>
  Effect.map(
    sql<{
      readonly message: string
    }>`SELECT message FROM pivot_rm_window WHERE session_id = ${sessionId} ORDER BY ordinal`,
    (rows) => rows.map((row) => JSON.parse(row.message) as Message.Message),
  )
