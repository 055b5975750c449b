/**
 * What a built-in read model is: a named, versioned projection of a session kept as rows of its own SQL table(s),
 * written from the shared fold's states (`States.ts`). The projector (`projector.ts`) decides when; a read model says
 * only how: clear a session's rows, write them all from states, or write what one event changed.
 */
import type { Events, Message, Projection } from "@pivot/core"
import * as Effect from "effect/Effect"
import type { SqlClient, SqlError } from "effect/sql"
import type { States } from "./States.ts"

type Event = Events.Event
type Meta = Projection.EventMeta

export type Sql = SqlClient.SqlClient
export type Write = Effect.Effect<void, SqlError.SqlError>

/** Rows per INSERT statement. */
export const CHUNK = 200

export const insertAll = (sql: Sql, table: string, rows: ReadonlyArray<Record<string, unknown>>): Write =>
  Effect.gen(function* () {
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK)
      yield* sql`INSERT INTO ${sql(table)} ${sql.insert(chunk as [Record<string, unknown>, ...Array<Record<string, unknown>>])}`
    }
  })

export const clearRows =
  (table: string) =>
  (sql: Sql, sessionId: string): Write =>
    Effect.asVoid(sql`DELETE FROM ${sql(table)} WHERE session_id = ${sessionId}`)

/** The tables of the read models, as `ReadModels.tables` answers them (the checkpoints aside). */
export type TableName = "window" | "usage" | "compactions" | "pruned" | "audit" | "recall"

/** One read model as tables: how to clear a session's rows, write them all, and write what one event changed. */
export interface Model {
  readonly name: string
  readonly version: number
  /** Its table in `ReadModels.tables`, and the columns that order its rows there (sorted in JS: collations differ). */
  readonly table: TableName
  readonly key: ReadonlyArray<string>
  /** The rows `write` would insert for these states, `session_id` left out (what `verify` compares). */
  readonly rows: (sessionId: string, states: States) => ReadonlyArray<Record<string, unknown>>
  readonly clear: (sql: Sql, sessionId: string) => Write
  readonly write: (sql: Sql, sessionId: string, states: States) => Write
  readonly delta: (sql: Sql, sessionId: string, prev: States, next: States, event: Event, meta: Meta) => Write
}

/** The JSON text an append already made of each stored message, when at hand (see `OnAppend`). */
export type Fields = ReadonlyMap<object, string>

/** A stored message as JSON: the text an append already serialised it to, when it is at hand (see `OnAppend`). */
export const messageJson = (message: Message.Message | undefined, fields: Fields | undefined): string =>
  (message === undefined ? undefined : fields?.get(message)) ?? JSON.stringify(message)

/** Rows as `ReadModels.tables` shows them: without their `session_id`. */
export const withoutSession = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.map(({ session_id: _, ...row }) => row)
