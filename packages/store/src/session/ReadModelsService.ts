/**
 * The read models' service (its tag and shape) and what a reader asks before loading them: whether their tables exist.
 * Apart from `ReadModels.ts`, which imports every read model and the projector, so a read-only open (`ReadOnly.ts`)
 * can name the service and load the read models' code only when a database has their tables (issue 32, ADR 0062).
 */
import type { CompactionHistory, Message, PruneIndex, Recall, Usage } from "@pivot/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql"
import type { AuditEntry } from "../readmodels/audit.ts"
import type { Tables } from "../readmodels/tables.ts"
import type * as timeline from "../readmodels/timeline.ts"
import type { Verified } from "../readmodels/verify.ts"
import type { ReadError } from "../StoreError.ts"
import type { UndecodableEvent, UnknownSession } from "./SessionError.ts"
import * as SessionLog from "./SessionLog.ts"

/** A session's timeline rows and compactions as stored, at the stream version (and position) they stand for. */
export interface StoredTimeline {
  readonly head: number
  readonly position: number
  readonly buckets: ReadonlyArray<timeline.Bucket>
  readonly compactions: ReadonlyArray<CompactionHistory.Entry>
}

/** Why a read-model query failed. */
export type ReadModelError = ReadError | UndecodableEvent | UnknownSession

/** The read side's queries. Each first brings the session's read models up to date with its log. */
export interface ReadModelsShape {
  /** Catches the session's read models up with its log (a no-op when they are); answers its stream version. */
  readonly sync: (sessionId: string) => Effect.Effect<number, ReadModelError>
  /** The stored messages the next model call sees, in order. */
  readonly window: (sessionId: string) => Effect.Effect<ReadonlyArray<Message.Message>, ReadModelError>
  /** Context usage as folded from the log (turn it into tokens and a level with `Usage.report`). */
  readonly usage: (sessionId: string) => Effect.Effect<Usage.State, ReadModelError>
  /** Every compaction, oldest first. */
  readonly compactions: (sessionId: string) => Effect.Effect<ReadonlyArray<CompactionHistory.Entry>, ReadModelError>
  /** Every pruned tool output, oldest prune first, and the tokens they freed. */
  readonly pruned: (sessionId: string) => Effect.Effect<PruneIndex.State, ReadModelError>
  /** Each window message with the ids of the events it came from. */
  readonly audit: (sessionId: string) => Effect.Effect<ReadonlyArray<AuditEntry>, ReadModelError>
  /**
   * The stream version to start the window fold from to get the window at `version`: where the oldest message kept
   * by the latest pivot at or before `version` was added (1 when there is none). See `Replay.windowAt`.
   */
  readonly origin: (sessionId: string, version: number) => Effect.Effect<number, ReadModelError>
  /**
   * The session's recallable documents (`Recall.documents`) matching any word of `query`, best first (FTS5
   * `bm25` on SQLite, `ts_rank_cd` normalised by length on PostgreSQL; ties newest id first), at most `limit`.
   */
  readonly recall: (
    sessionId: string,
    query: string,
    limit: number,
  ) => Effect.Effect<ReadonlyArray<Recall.Document>, ReadModelError>
  /** Replays the log into the read models of one session, or of every session; answers how many were rebuilt. */
  readonly rebuild: (target: string | { readonly all: true }) => Effect.Effect<number, ReadModelError>
  /** Every session in the store with its stream version. */
  readonly sessions: Effect.Effect<ReadonlyArray<{ readonly sessionId: string; readonly version: number }>, ReadError>
  /**
   * Compares the session's stored read models (and their snapshot) with a fold of its whole log, writing nothing:
   * what `pivot check` reports. A difference means a rebuild would change them.
   */
  readonly verify: (sessionId: string) => Effect.Effect<Verified, ReadModelError>
  /** The raw rows and checkpoints of a session, as stored (no catching up). */
  /**
   * The timeline read model's rows and the compaction history, as stored, when both stand at the session's head
   * (ADR 0057); `undefined` when they do not (a store whose rows are behind, of another version, or without the table:
   * the caller folds the log). Never catches up, so a read-only reader can ask: nothing is written.
   */
  readonly timeline: (sessionId: string) => Effect.Effect<StoredTimeline | undefined, ReadError>
  readonly tables: (sessionId: string) => Effect.Effect<Tables, ReadError>
  /**
   * Runs `effect` (appends through the same store) as ONE transaction, all or nothing, with the read models of the
   * sessions it appends to folded in memory and written once at the end: how a large import appends in batches.
   */
  readonly bulk: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ReadError, R>
}

/**
 * Why the read models of a read-only store cannot answer when the database has none of their tables (a store written
 * by the runtime alone, opened read-only): the reason of the `StoreUnavailable` their queries fail with.
 */
export const NO_READ_MODELS = "the database has no read-model tables, and a read-only connection does not create them"

/** The read models service. */
export class ReadModels extends Context.Service<ReadModels, ReadModelsShape>()("@pivot/store/ReadModels") {}

/** Whether the read models' tables exist (a read-only connection never creates them). */
export const hasReadModels = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql.onDialectOrElse({
      pg: () =>
        sql<{
          readonly n: number | string
        }>`SELECT COUNT(*) AS n FROM pg_catalog.pg_tables WHERE tablename = 'pivot_rm_checkpoints' AND schemaname = ANY (current_schemas(false))`,
      orElse: () =>
        sql<{
          readonly n: number | string
        }>`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'pivot_rm_checkpoints'`,
    }),
    (rows) => Number(rows[0]?.n ?? 0) > 0,
  )

/** The stream's version (0 when it has no events), read from the log table. */
export const headOf = (sql: SqlClient.SqlClient, stream: string) =>
  Effect.map(
    sql<{
      readonly stream_version: number | string
    }>`SELECT stream_version FROM pivot_events WHERE stream = ${stream} ORDER BY stream_version DESC LIMIT 1`,
    (rows) => (rows[0] === undefined ? 0 : Number(rows[0].stream_version)),
  )

/** Every session in the store with its stream version (`ReadModelsShape.sessions`, before its errors are classified). */
export const sessionsOf = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{
      readonly stream: string
      readonly version: number | string
    }>`SELECT stream, MAX(stream_version) AS version FROM pivot_events WHERE stream LIKE 'session-%' GROUP BY stream ORDER BY stream`,
    (rows) => rows.map((row) => ({ sessionId: SessionLog.sessionIdOf(row.stream)!, version: Number(row.version) })),
  )
