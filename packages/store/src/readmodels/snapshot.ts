/**
 * Snapshots of the built-in read models' folded states (ADR 0013), so that a new process's first append to a long
 * session reads the latest one and the events after it instead of the whole log. Format 2: the data names its session
 * and stream version, so the checksum binds them.
 */
import { Audit, type CompactionHistory, Events, Retention, StateSnapshot, Usage } from "@pivot/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Snapshot from "../Snapshot.ts"
import * as SessionLog from "../session/SessionLog.ts"
import { models } from "./builtIns.ts"
import type { Sql } from "./ReadModel.ts"
import type { States } from "./States.ts"

/**
 * The format of the read models' snapshots: their projections' versions, the window encoding, the event catalog.
 * Version 2: the data names its session and stream version (what the checksum covers binds them, ADR 0013).
 */
export const snapshotFormat = (): string =>
  `pivot-read-models/2;${models.map((m) => `${m.projection.name}:${m.projection.version}`).join(",")};window=${StateSnapshot.FORMAT};events=${Events.catalogFingerprint()}`

/** Where the read models' snapshot of a stream is kept, beside the runtime's (keyed by the stream itself). */
export const snapshotKey = (stream: string): string => `read-models:${stream}`

// Old entries of the compaction history and prune index, in a state resumed from a snapshot: deltas only append
// entries or change the newest ones, so older ones are only places (their rows are numbered by position).
const NOT_HELD = Object.freeze({}) as never
/** Compaction entries a snapshot keeps in full: the newest ones, the only ones events still change. */
const HISTORY_TAIL = 2

/** Whose states a snapshot holds: written into its data, so that the checksum covers them too. */
export interface SnapshotOwner {
  readonly sessionId: string
  /** The stream version the states were folded to. */
  readonly version: number
}

/**
 * The read models' states as a snapshot's data: the window retained, old history and prune entries as counts, and
 * the session and stream version they stand for (checked on reading: a row moved to another session's key, or to
 * another version, or older data under a newer version, is not used).
 */
export const snapshotOf = (owner: SnapshotOwner, states: States): string => {
  const window = Retention.retainWindow(states.window)
  const sources = Audit.heldSources({ window, sources: states.audit.sources })
  const entries = states.history.entries
  return JSON.stringify({
    session: owner.sessionId,
    version: owner.version,
    window: StateSnapshot.encodeWindow(window),
    sources,
    usage: states.usage,
    history: {
      count: entries.length,
      tail: entries.slice(Math.max(0, entries.length - HISTORY_TAIL)),
      lastCallTokens: states.history.lastCallTokens ?? null,
    },
    pruned: { count: states.pruned.entries.length, tokensFreed: states.pruned.tokensFreed },
    // The timeline's closed buckets are written and never change: only their count and the open one are needed.
    timeline: {
      closed: states.timeline.closed.length,
      open: states.timeline.open ?? null,
      lastPrune: states.timeline.lastPrune,
    },
  })
}

/**
 * The partial states a snapshot's data stands for; throws on data of the wrong shape, or that names another session
 * or stream version than `owner` (the row's key and version).
 */
export const statesOfSnapshot = (data: string, owner: SnapshotOwner): States => {
  const raw = JSON.parse(data)
  if (raw.session !== owner.sessionId) throw new Error(`it holds the states of session ${String(raw.session)}`)
  if (raw.version !== owner.version)
    throw new Error(`it holds the states of version ${String(raw.version)} but is stored as ${owner.version}`)
  const window = StateSnapshot.decodeWindow(raw.window)
  const history = raw.history
  const tail: ReadonlyArray<CompactionHistory.Entry> = history.tail
  if (!Number.isSafeInteger(history.count) || !Array.isArray(tail) || tail.length > history.count)
    throw new Error("bad compaction history")
  if (!Number.isSafeInteger(raw.pruned.count)) throw new Error("bad prune index")
  const timeline = raw.timeline
  if (
    typeof timeline !== "object" ||
    timeline === null ||
    !Number.isSafeInteger(timeline.closed) ||
    !Number.isSafeInteger(timeline.lastPrune)
  )
    throw new Error("bad timeline")
  const usage = { ...Usage.projection.initial, ...raw.usage }
  return {
    window,
    usage,
    history: {
      entries: [...Array.from({ length: history.count - tail.length }, () => NOT_HELD), ...tail],
      lastCallTokens: history.lastCallTokens ?? undefined,
    },
    pruned: {
      entries: Array.from({ length: raw.pruned.count }, () => NOT_HELD),
      tokensFreed: raw.pruned.tokensFreed,
    },
    audit: Audit.restore(window, raw.sources),
    timeline: {
      closed: Array.from({ length: timeline.closed }, () => NOT_HELD),
      open: timeline.open ?? undefined,
      lastPrune: timeline.lastPrune,
    },
    partial: true,
  }
}

/** The warning logged when a read-model snapshot is not used. */
export const snapshotWarning = (stream: string, problem: string) =>
  `${stream}: read-model snapshot ignored (${problem}); folding the events instead`

/**
 * The stream's read-model snapshot, if any: its partial states at a version ≤ `base` when it can be trusted, else
 * why not (another format, a checksum mismatch, beyond `base`, another session's or version's states, unreadable).
 */
export const readSnapshot = (sql: Sql, stream: string, base: number) =>
  Effect.map(
    sql<{
      readonly stream_version: number | string
      readonly format: string
      readonly checksum: string
      readonly data: string
    }>`SELECT stream_version, format, checksum, data FROM pivot_snapshots WHERE stream = ${snapshotKey(stream)}`,
    (rows): Result.Result<{ readonly version: number; readonly states: States }, string> | undefined => {
      const row = rows[0]
      if (row === undefined) return undefined
      const version = Number(row.stream_version)
      const stored = { stream, version, format: row.format, checksum: row.checksum, data: row.data, recordedAt: 0 }
      if (row.format !== snapshotFormat()) return Result.fail(`format ${row.format}`)
      if (!Snapshot.intact(stored)) return Result.fail("checksum mismatch")
      if (version > base) return Result.fail(`version ${version} beyond ${base}`)
      const sessionId = SessionLog.sessionIdOf(stream) ?? stream
      try {
        return Result.succeed({ version, states: statesOfSnapshot(row.data, { sessionId, version }) })
      } catch (error) {
        return Result.fail(error instanceof Error ? error.message : String(error))
      }
    },
  )
