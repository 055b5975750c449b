/**
 * `verify`: a session's stored read models (and their snapshot) compared with a pure fold of its log, writing
 * nothing — what `pivot check` reports. A difference means a rebuild would change them.
 */
import { Events } from "@pivot/core"
import * as Effect from "effect/Effect"
import { UnknownSession } from "../session/SessionError.ts"
import * as SessionLog from "../session/SessionLog.ts"
import { models } from "./builtIns.ts"
import type { Sql } from "./ReadModel.ts"
import { evolveStates, initialStates, type States } from "./States.ts"
import { readSnapshot, snapshotKey, snapshotOf } from "./snapshot.ts"
import { hasReadModels, headOf, type ProjectError, readRecorded, tablesOf } from "./tables.ts"

// Cells compared as text: drivers answer BIGINT as a string, numbers as numbers.
const cellText = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))

/** One line per difference between stored rows and a fold's rows (none when they agree). */
const compareRows = (
  table: string,
  key: ReadonlyArray<string>,
  stored: ReadonlyArray<unknown>,
  folded: ReadonlyArray<Record<string, unknown>>,
): Array<string> => {
  const canon = (rows: ReadonlyArray<unknown>) =>
    rows
      .map((row) => {
        const r = row as Record<string, unknown>
        const cells = Object.keys(r)
          .sort()
          .map((k) => [k, cellText(r[k])] as const)
        return { key: key.map((k) => cellText(r[k]) ?? "").join("/"), text: JSON.stringify(cells) }
      })
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const a = canon(stored)
  const b = canon(folded)
  const keyed = new Map(b.map((row) => [row.key, row.text]))
  const differing = a.filter((row) => keyed.get(row.key) !== row.text)
  const lines: Array<string> = []
  if (a.length !== b.length) lines.push(`${table}: ${a.length} rows stored, a fold of the log gives ${b.length}`)
  if (differing.length > 0)
    lines.push(
      `${table}: ${differing.length} of ${a.length} rows differ from a fold of the log` +
        (key.length > 0 ? ` (first at ${key.join("/")} ${differing[0]!.key})` : ""),
    )
  return lines
}

/** A session's stored read models compared with a fold of its log (see `ReadModelsShape.verify`). */
export interface Verified {
  /** The session's stream version. */
  readonly version: number
  /** How many read models were compared (0: none stored for the session, e.g. a database the runtime alone wrote). */
  readonly models: number
  /** One line per difference; none when the stored read models are what a rebuild would write. */
  readonly differences: ReadonlyArray<string>
}

/**
 * Compares a session's stored read models with a fold of its log, writing nothing: one line per difference. A model
 * not projected yet, or by another projection version, is skipped (the next read rebuilds it); one behind the log is
 * compared with the fold at its checkpoint. A snapshot that a new process would ignore (other than for its format,
 * which an upgrade changes) or whose states are not the fold's at its version is a difference too.
 */
export const verify = (
  sql: Sql,
  sessionId: string,
  options: { readonly decoder: SessionLog.Decoder; readonly snapshotting: boolean },
): Effect.Effect<Verified, ProjectError | UnknownSession> =>
  Effect.gen(function* () {
    const { decoder, snapshotting } = options
    const stream = Events.streamName(sessionId)
    const head = yield* headOf(sql, stream)
    if (head === 0) return yield* new UnknownSession({ sessionId })
    // A database written by the runtime alone (or opened read-only before any projection) has no read models.
    if (!(yield* hasReadModels(sql))) return { version: head, models: 0, differences: [] }
    const tables = yield* tablesOf(sql, sessionId)
    const checkpoints = new Map(tables.checkpoints.map((cp) => [cp.model, cp]))
    const snapshot = snapshotting ? yield* readSnapshot(sql, stream, head) : undefined
    const snapshotRow = snapshotting
      ? (yield* sql<{
          readonly data: string
          readonly stream_version: number | string
        }>`SELECT data, stream_version FROM pivot_snapshots WHERE stream = ${snapshotKey(stream)}`)[0]
      : undefined
    // The versions whose states are needed: each model's checkpoint, and the snapshot's.
    const wanted = new Set<number>()
    for (const model of models) {
      const cp = checkpoints.get(model.projection.name)
      if (cp !== undefined && cp.projectionVersion === model.projection.version)
        wanted.add(Math.min(cp.streamVersion, head))
    }
    if (snapshot?._tag === "Success") wanted.add(snapshot.success.version)
    const at = new Map<number, States>()
    let states = initialStates
    if (wanted.has(0)) at.set(0, states)
    const recorded = yield* readRecorded(sql, stream, 1, Math.max(0, ...wanted))
    for (const { event, meta } of yield* Effect.fromResult(SessionLog.decodeAll(recorded, decoder))) {
      states = evolveStates(states, event, meta)
      if (wanted.has(meta.version)) at.set(meta.version, states)
    }
    const differences: Array<string> = []
    let compared = 0
    for (const model of models) {
      const cp = checkpoints.get(model.projection.name)
      if (cp === undefined || cp.projectionVersion !== model.projection.version) continue
      compared++
      const folded = at.get(Math.min(cp.streamVersion, head)) ?? states
      differences.push(...compareRows(model.table, model.key, tables[model.table], model.expected(sessionId, folded)))
    }
    if (snapshot?._tag === "Failure" && !snapshot.failure.startsWith("format "))
      differences.push(`snapshot: a new process would ignore it (${snapshot.failure})`)
    if (snapshot?._tag === "Success" && snapshotRow !== undefined) {
      const version = snapshot.success.version
      const folded = at.get(version)
      if (folded === undefined || snapshotOf({ sessionId, version }, folded) !== snapshotRow.data)
        differences.push(`snapshot: its states at version ${version} differ from a fold of the log`)
    }
    return { version: head, models: compared, differences }
  })
