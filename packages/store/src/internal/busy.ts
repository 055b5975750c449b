// Opening a SQLite file that other processes are opening at the same moment. SQLite skips the busy handler when
// waiting could deadlock (switching a file to write-ahead logging while another connection holds a shared lock is
// such a case), so `PRAGMA journal_mode = WAL` and the first migration can fail with SQLITE_BUSY at once, long before
// the busy timeout. These steps are idempotent, so they are retried with a jittered exponential backoff instead.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { SqlError } from "effect/sql"
import type { StoreCorrupt, StoreUnavailable } from "../StoreError.ts"
import { busySchedule as sqliteBusySchedule, sqliteErrorCode } from "../sqlite/SqliteClient.ts"

const SQLITE_BUSY = 5
const SQLITE_LOCKED = 6

/** The SQLite result code buried in a `SqlError` (or a `MigrationError` wrapping one), if any. */
export const sqliteCodeOf = (error: unknown): number | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const reason = (error as { readonly reason?: SqlError.SqlError["reason"] }).reason
  const cause = typeof reason === "object" && reason !== null ? reason.cause : (error as { cause?: unknown }).cause
  const inner = cause !== null && typeof cause === "object" && "reason" in cause ? (cause as any).reason?.cause : cause
  return sqliteErrorCode(inner)
}

/** True when the store failed only because another connection held a lock (SQLITE_BUSY or SQLITE_LOCKED). */
export const isBusy = (error: StoreUnavailable | StoreCorrupt): boolean => {
  if (error._tag !== "StoreUnavailable") return false
  const code = sqliteCodeOf(error.cause)
  return code !== undefined && ((code & 0xff) === SQLITE_BUSY || (code & 0xff) === SQLITE_LOCKED)
}

/** 10 ms, doubling, ±20% jitter, each wait at most 250 ms, for at most `budget` in all (the busy timeout). */
export const busySchedule = (budget: Duration.Input) =>
  sqliteBusySchedule(budget, { first: Duration.millis(10), cap: Duration.millis(250) })

/** Retries `effect` while it fails with a lock held elsewhere, within `budget`; other failures pass through. */
export const retryWhileBusy =
  (budget: Duration.Input) =>
  <A, R>(effect: Effect.Effect<A, StoreUnavailable | StoreCorrupt, R>) =>
    Effect.retry(effect, { schedule: busySchedule(budget), while: isBusy })
