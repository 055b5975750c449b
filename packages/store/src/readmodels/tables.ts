/**
 * The built-in read models' tables and bookkeeping: their migrations, a checkpoint per read model and session, and
 * the reads of a session's log the projector folds from.
 */
import { Events } from "@pivot/core"
import * as Effect from "effect/Effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { RecordedEvent } from "../Event.ts"
import { migrateUnlessCurrent, recordedSqlite, runAll, script } from "../internal/migrations.ts"
import * as Seal from "../internal/seal.ts"
import { keysOf, streamLock } from "../internal/sql.ts"
import { UndecodableEvent } from "../session/SessionError.ts"
import * as SessionLog from "../session/SessionLog.ts"
import * as audit from "./audit.ts"
import { models } from "./builtIns.ts"
import * as compactions from "./compactions.ts"
import * as prunes from "./prunes.ts"
import type { Sql, Write } from "./ReadModel.ts"
import * as recall from "./recall.ts"
import * as timeline from "./timeline.ts"
import * as usage from "./usage.ts"
import * as window from "./window.ts"

const checkpointsDdl = `CREATE TABLE pivot_rm_checkpoints (
  model TEXT NOT NULL,
  session_id TEXT NOT NULL,
  projection_version INTEGER NOT NULL,
  stream_version INTEGER NOT NULL,
  position BIGINT NOT NULL,
  PRIMARY KEY (model, session_id)
)`

// The statements of the first migration, in their original order: the checkpoints, then each read model's table.
const createTables = Effect.gen(function* () {
  yield* runAll([checkpointsDdl])
  yield* window.create
  yield* usage.create
  yield* compactions.create
  yield* prunes.create
  yield* audit.create
})

/**
 * Creates the read-model tables (append-only migrations in their own table, `pivot_rm_migrations`); one read when they
 * are current.
 */
const migrations = {
  "1_create_read_models": createTables,
  "2_recall_index": recall.create,
  "3_recall_everything": recall.recreate,
  "4_timeline": timeline.create,
}

export const migrate = migrateUnlessCurrent("pivot_rm_migrations", migrations)

/**
 * SQLite: the read models' tables of a new store at the newest migration, in one script (ADR 0061): what `migrate`
 * leaves in a database without them (the recall table made at once in its newest form, not made and dropped).
 * `freshSchema.int.test.ts` checks both give the same database.
 */
export const freshSqlite = `${recordedSqlite("pivot_rm_migrations", Object.keys(migrations))}
${script([checkpointsDdl, ...window.ddl, ...usage.ddl, ...compactions.ddl, ...prunes.ddl, ...audit.ddl, ...recall.sqliteDdl, ...timeline.ddl])}`

/** Where one read model of one session stands. */
export interface Checkpoint {
  readonly model: string
  readonly projectionVersion: number
  /** The stream version folded so far. */
  readonly streamVersion: number
  /**
   * The global position of the last event folded. Checkpoints are kept by stream version: on Postgres an inline
   * append folds its events before their positions are assigned (ADR 0012), so the position is looked up from the
   * log when the checkpoint is read (the stored copy is only the fallback for a log row that is gone).
   */
  readonly position: number
}

interface EventRow {
  readonly position: number | string
  readonly event_id: string
  readonly stream: string
  readonly stream_version: number | string
  readonly type: string
  readonly schema_version: number | string
  readonly data: string
  readonly metadata: string | null
  readonly recorded_at: number | string
}

export type ProjectError = SqlError.SqlError | UndecodableEvent

export const readRecorded = (sql: Sql, stream: string, from: number, to: number) =>
  Effect.gen(function* () {
    if (to < from) return []
    const rows =
      yield* sql<EventRow>`SELECT position, event_id, stream, stream_version, type, schema_version, data, metadata, recorded_at FROM pivot_events WHERE stream = ${stream} AND stream_version >= ${from} AND stream_version <= ${to} ORDER BY stream_version`
    const out: Array<RecordedEvent> = []
    for (const row of rows) {
      let data: unknown
      try {
        data = JSON.parse(row.data)
      } catch {
        return yield* new UndecodableEvent({
          sessionId: SessionLog.sessionIdOf(stream) ?? stream,
          streamVersion: Number(row.stream_version),
          eventId: row.event_id,
          type: row.type,
          reason: "malformed",
          detail: "its stored payload is not JSON",
        })
      }
      out.push({
        id: row.event_id,
        type: row.type,
        version: Number(row.schema_version),
        data,
        metadata: null,
        stream: row.stream,
        streamVersion: Number(row.stream_version),
        position: Number(row.position),
        recordedAt: Number(row.recorded_at),
      })
    }
    // Sealed fields (crypto-shredding) are opened as the store's own reads open them; forgotten ones read as erased.
    return yield* Seal.openRecorded(
      out,
      rows.map((row) => row.data),
      (streams) => keysOf(sql, streams),
    ).pipe(
      Effect.catchTag("StoreCorrupt", (error) =>
        Effect.fail(
          new UndecodableEvent({
            sessionId: SessionLog.sessionIdOf(stream) ?? stream,
            streamVersion: from,
            eventId: "",
            type: "",
            reason: "malformed",
            detail: error.reason,
          }),
        ),
      ),
    )
  })

export const checkpointsOf = (sql: Sql, sessionId: string) =>
  Effect.map(
    sql<{
      readonly model: string
      readonly projection_version: number | string
      readonly stream_version: number | string
      readonly position: number | string
    }>`SELECT c.model, c.projection_version, c.stream_version, COALESCE(e.position, c.position) AS position FROM pivot_rm_checkpoints AS c LEFT JOIN pivot_events AS e ON e.stream = ${Events.streamName(sessionId)} AND e.stream_version = c.stream_version WHERE c.session_id = ${sessionId}`,
    (rows) =>
      new Map(
        rows.map((row): [string, Checkpoint] => [
          row.model,
          {
            model: row.model,
            projectionVersion: Number(row.projection_version),
            streamVersion: Number(row.stream_version),
            position: Number(row.position),
          },
        ]),
      ),
  )

export const isCurrent = (checkpoints: ReadonlyMap<string, Checkpoint>, head: number) =>
  models.every((m) => {
    const cp = checkpoints.get(m.projection.name)
    return cp !== undefined && cp.projectionVersion === m.projection.version && cp.streamVersion === head
  })

export const saveCheckpoints = (sql: Sql, sessionId: string, streamVersion: number, position: number): Write =>
  Effect.asVoid(
    sql`INSERT INTO pivot_rm_checkpoints ${sql.insert(
      models.map(
        (m): Record<string, unknown> => ({
          model: m.projection.name,
          session_id: sessionId,
          projection_version: m.projection.version,
          stream_version: streamVersion,
          position,
        }),
      ) as [Record<string, unknown>, ...Array<Record<string, unknown>>],
    )} ON CONFLICT (model, session_id) DO UPDATE SET projection_version = excluded.projection_version, stream_version = excluded.stream_version, position = excluded.position`,
  )

// Postgres: the stream lock the store's appends take, so a catch-up or rebuild and an inline append to the same
// session never interleave (SQLite's BEGIN IMMEDIATE already serialises them).
export const lock = (sql: Sql, sessionId: string): Write =>
  sql.onDialectOrElse({
    pg: () => streamLock(sql, Events.streamName(sessionId)),
    orElse: () => Effect.void,
  })

/** A session's read-model rows as stored, without `session_id` (see `Tables`). */
export const tablesOf = (sql: Sql, sessionId: string) =>
  Effect.gen(function* () {
    const window =
      yield* sql`SELECT ordinal, message_id, message FROM pivot_rm_window WHERE session_id = ${sessionId} ORDER BY ordinal`
    const usage =
      yield* sql`SELECT calls, last_tokens, compacting, state FROM pivot_rm_usage WHERE session_id = ${sessionId}`
    const compactions =
      yield* sql`SELECT seq, marker_id, status, requested_version, settled_version, entry FROM pivot_rm_compactions WHERE session_id = ${sessionId} ORDER BY seq`
    const pruned =
      yield* sql`SELECT seq, message_id, part_id, tokens, event_id, stream_version, entry FROM pivot_rm_pruned WHERE session_id = ${sessionId} ORDER BY seq`
    const audit =
      yield* sql`SELECT message_id, seq, event_id FROM pivot_rm_audit WHERE session_id = ${sessionId} ORDER BY message_id, seq`
    const recall =
      yield* sql`SELECT doc_id, kind, message_id, tool, pivot, body FROM pivot_rm_recall WHERE session_id = ${sessionId} ORDER BY doc_id`
    const timelineRows =
      yield* sql`SELECT bucket, last_version, data FROM pivot_rm_timeline WHERE session_id = ${sessionId} ORDER BY bucket`
    const checkpoints = [...(yield* checkpointsOf(sql, sessionId)).values()].sort((a, b) =>
      a.model.localeCompare(b.model),
    )
    return { window, usage, compactions, pruned, audit, recall, timeline: timelineRows, checkpoints } as Tables
  })

export { hasReadModels, headOf } from "../session/ReadModelsService.ts"

/** The raw rows of a session's read models, for audits and for tests comparing inline and rebuilt tables. */
export interface Tables {
  readonly window: ReadonlyArray<unknown>
  readonly usage: ReadonlyArray<unknown>
  readonly compactions: ReadonlyArray<unknown>
  readonly pruned: ReadonlyArray<unknown>
  readonly audit: ReadonlyArray<unknown>
  readonly recall: ReadonlyArray<unknown>
  readonly timeline: ReadonlyArray<unknown>
  readonly checkpoints: ReadonlyArray<Checkpoint>
}
