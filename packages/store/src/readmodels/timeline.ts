/**
 * The timeline read model (ADR 0057): one row per bucket of `SIZE` stream versions of a session (`pivot_rm_timeline`),
 * the bucket's aggregate as JSON (`timelineFold.ts`). Append-only: an append writes the rows of the buckets its events
 * fall in (the newest, or a few), never an older one; a session's first render reads O(buckets) rows.
 */
import * as Effect from "effect/Effect"
import { runAll } from "../internal/migrations.ts"
import { CHUNK, clearRows, type ReadModel, readModel, type Sql, withoutSession } from "./ReadModel.ts"
import type { States } from "./States.ts"
import { type Bucket, buckets, type State } from "./timelineFold.ts"

export * from "./timelineFold.ts"

/** The read model's version: bump it when the fold or the row's encoding changes (rows are then rewritten). */
export const VERSION = 1

/**
 * Its table (read-model migration 4; safe to run again, as the store test that re-applies the newest migration does).
 * Its statements also make a new SQLite store's one script (ADR 0061).
 */
export const ddl = [
  `CREATE TABLE IF NOT EXISTS pivot_rm_timeline (
  session_id TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  last_version INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (session_id, bucket)
)`,
] as const

export const create = runAll(ddl)

const row = (sessionId: string, b: Bucket) => ({
  session_id: sessionId,
  bucket: b.bucket,
  last_version: b.last,
  data: JSON.stringify(b),
})

/** Writes (or replaces) buckets' rows. */
const upsert = (sql: Sql, sessionId: string, list: ReadonlyArray<Bucket>) =>
  Effect.gen(function* () {
    for (let i = 0; i < list.length; i += CHUNK) {
      const rows: Array<Record<string, unknown>> = list.slice(i, i + CHUNK).map((b) => row(sessionId, b))
      yield* sql`INSERT INTO pivot_rm_timeline ${sql.insert(rows as [Record<string, unknown>, ...Array<Record<string, unknown>>])} ON CONFLICT (session_id, bucket) DO UPDATE SET last_version = excluded.last_version, data = excluded.data`
    }
  })

/** The buckets `after` holds that `before` did not hold as they are now: the open one, and any closed since. */
const changed = (before: State, after: State): ReadonlyArray<Bucket> => {
  if (before === after) return []
  const out = after.closed.slice(before.closed.length)
  if (after.open !== undefined && after.open !== before.open) out.push(after.open)
  return out
}

/** Writes what a batch changed: O(batch), one statement for the bucket or two it touched. */
export const applyBatch = (sql: Sql, sessionId: string, before: States, after: States) =>
  upsert(sql, sessionId, changed(before.timeline, after.timeline))

export const model: ReadModel = readModel({
  name: "timeline",
  version: VERSION,
  table: "timeline",
  key: ["bucket"],
  expected: (sessionId, states) => withoutSession(buckets(states.timeline).map((b) => row(sessionId, b))),
  rows: {
    clear: clearRows("pivot_rm_timeline"),
    write: (sql, sessionId, states) => upsert(sql, sessionId, buckets(states.timeline)),
    apply: (sql, sessionId, prev, next) => upsert(sql, sessionId, changed(prev.timeline, next.timeline)),
  },
  applyBatch,
})

/** A session's buckets as stored, oldest first. */
export const read = (sql: Sql, sessionId: string) =>
  Effect.map(
    sql<{
      readonly data: string
    }>`SELECT data FROM pivot_rm_timeline WHERE session_id = ${sessionId} ORDER BY bucket`,
    (rows) => rows.map((r) => JSON.parse(r.data) as Bucket),
  )
