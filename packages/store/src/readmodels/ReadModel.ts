/**
 * What a built-in read model is: an inline projection of a session, in the shape users register theirs, kept as rows
 * of its own SQL table(s) written from the shared fold's states (`States.ts`). The projector (`projector.ts`) decides
 * when; a read model says only how: clear a session's rows, write them all from states, or write what one event
 * changed.
 */
import type { Message } from "@pivot/core"
import * as Effect from "effect/Effect"
import type { SqlClient, SqlError } from "effect/sql"
import type * as Projections from "../projections/Projections.ts"
import { evolveStates, initialStates, type States } from "./States.ts"

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
export type TableName = "window" | "usage" | "compactions" | "pruned" | "audit" | "recall" | "timeline"

/**
 * A built-in read model: an inline projection per session, registered in the same shape as users' projections
 * (`Projections.Definition`), whose fold is the shared one (`States.ts`: every built-in folds the same states, once
 * per event) and whose state is stored as rows of its own table (`rows`) rather than as one JSON row.
 */
export interface ReadModel extends Projections.Definition<States> {
  readonly rows: Projections.Rows<States>
  /** Its table in `ReadModels.tables`, and the columns that order its rows there (sorted in JS: collations differ). */
  readonly table: TableName
  readonly key: ReadonlyArray<string>
  /** The rows `rows.write` would insert for these states, `session_id` left out (what `verify` compares). */
  readonly expected: (sessionId: string, states: States) => ReadonlyArray<Record<string, unknown>>
  /**
   * Writes what a whole batch changed (`before` → `after`) instead of `rows.apply` per event, when given: for a read
   * model whose rows aggregate many events (one statement per batch, not per event).
   */
  readonly applyBatch?: ((sql: Sql, sessionId: string, before: States, after: States) => Write) | undefined
}

/** Defines a built-in read model: `name` and `version` are its own (bump the version to rebuild it), the fold shared. */
export const readModel = (model: {
  readonly name: string
  readonly version: number
  readonly table: TableName
  readonly key: ReadonlyArray<string>
  readonly expected: ReadModel["expected"]
  readonly rows: Projections.Rows<States>
  readonly applyBatch?: ReadModel["applyBatch"]
}): ReadModel => ({
  projection: { name: model.name, version: model.version, initial: initialStates, evolve: evolveStates },
  mode: "inline",
  scope: "session",
  rows: model.rows,
  table: model.table,
  key: model.key,
  expected: model.expected,
  applyBatch: model.applyBatch,
})
/** The JSON text an append already made of each stored message, when at hand (see `OnAppend`). */
export type Fields = ReadonlyMap<object, string>

/** A stored message as JSON: the text an append already serialised it to, when it is at hand (see `OnAppend`). */
export const messageJson = (message: Message.Message | undefined, fields: Fields | undefined): string =>
  (message === undefined ? undefined : fields?.get(message)) ?? JSON.stringify(message)

/** Rows as `ReadModels.tables` shows them: without their `session_id`. */
export const withoutSession = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.map(({ session_id: _, ...row }) => row)
