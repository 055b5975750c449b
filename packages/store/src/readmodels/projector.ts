/**
 * The one inline projector (ADR 0018): the store's `onAppend` hook, run in each append's transaction, for the built-in
 * read models and users' inline projections alike. The events are decoded once; the built-ins are folded together
 * (`States.ts`) and each writes the rows that changed (its `rows.apply`, or `rows.write` whole when its checkpoint is
 * another version's or behind); then users' inline projections get the same decoded events
 * (`Projections.applyInline`). For the built-ins it also keeps the folded states of recent sessions in memory,
 * snapshots them (`snapshot.ts`) and has a bulk path for imports: one transaction, states folded in memory, each
 * session's rows written once at the end (no snapshot).
 */
import { Events, type Ids } from "@pivot/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { SqlError } from "effect/sql"
import type { RecordedEvent } from "../Event.ts"
import * as Projections from "../projections/Projections.ts"
import * as Snapshot from "../Snapshot.ts"
import { MalformedEvent } from "../StoreError.ts"
import { UnknownSession } from "../session/SessionError.ts"
import * as SessionLog from "../session/SessionLog.ts"
import { models } from "./builtIns.ts"
import type { Fields, Sql } from "./ReadModel.ts"
import { evolveStates, foldStates, heldFor, initialStates, type States } from "./States.ts"
import { readSnapshot, snapshotFormat, snapshotKey, snapshotOf, snapshotWarning, statesOfSnapshot } from "./snapshot.ts"
import { checkpointsOf, headOf, type ProjectError, readRecorded, saveCheckpoints } from "./tables.ts"
import { type Verified, verify } from "./verify.ts"
import * as window from "./window.ts"

type MessageId = Ids.MessageId

/** Options of the read models. */
export interface Options extends SessionLog.DecoderOptions {
  /** Sessions whose folded read models stay in memory between appends; default 100. */
  readonly cacheSize?: number | undefined
  /**
   * Snapshots of the folded read models, so that a new process's first append to a long session reads the latest
   * one and the events after it instead of the whole log: one every `every` events (default 200) and one after each
   * pivot. `false`: none.
   */
  readonly snapshots?: false | { readonly every?: number | undefined } | undefined
  /**
   * Keep the cost ledger projection (`readmodels/ledger.ts`, async, per session) up to date from this process: for a
   * long-running writer (the OpenCode plugin). Readers use it whoever keeps it. Default false.
   */
  readonly ledger?: boolean | undefined
}

/** A session a bulk transaction appended to: its states folded so far, and whether its window rows are in step. */
interface Deferred {
  readonly states: States
  readonly version: number
  readonly position: number
  /** The window's rows stand for `states.window` (written batch by batch); otherwise they are rewritten at the end. */
  readonly windowLive: boolean
}

/** Folds and writes a session's read models; holds the folded states of recent sessions (committed events only). */
export const makeProjector = (options: Options, projections: ReadonlyArray<Projections.AnyDefinition> = []) => {
  // Users' inline projections (validated: stored as JSON), applied after the built-ins in each append.
  const userInlines = Projections.inlineOf(projections)
  const decoder = SessionLog.makeDecoder(options)
  const cacheSize = Math.max(1, options.cacheSize ?? 100)
  const cache = new Map<string, { readonly version: number; readonly states: States }>()
  const remember = (sessionId: string, version: number, states: States) => {
    cache.delete(sessionId)
    cache.set(sessionId, { version, states })
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value!)
  }

  const decodeAll = (recorded: ReadonlyArray<RecordedEvent>) =>
    Effect.fromResult(SessionLog.decodeAll(recorded, decoder))

  const snapshotting = options.snapshots !== false
  const snapshotEvery = Math.max(1, (options.snapshots === false ? undefined : options.snapshots?.every) ?? 200)
  // The version of each session's latest snapshot known to this process.
  const snapshotAt = new Map<string, number>()

  /** The latest snapshot's partial states at a version ≤ `base`, when one can be trusted. */
  const fromSnapshot = (sql: Sql, stream: string, base: number) =>
    Effect.gen(function* () {
      const read = yield* readSnapshot(sql, stream, base)
      if (read === undefined || read._tag === "Success") return read?.success
      yield* Effect.logWarning(snapshotWarning(stream, read.failure))
      return undefined
    })

  /**
   * The states at stream version `base`: from the cache, else from the latest snapshot, caught up with the log.
   * `whole`: never partial states (fold from the first event unless the cache holds whole states).
   */
  const statesAt = (sql: Sql, sessionId: string, stream: string, base: number, whole = false) =>
    Effect.gen(function* () {
      const cached = cache.get(sessionId)
      let from =
        cached !== undefined && cached.version <= base && !(whole && cached.states.partial === true)
          ? cached
          : undefined
      // A snapshot is of use only for states after the first event (a fold from 0, as after a version bump, has none).
      if (from === undefined && !whole && snapshotting && base > 0) from = yield* fromSnapshot(sql, stream, base)
      from ??= { version: 0, states: initialStates }
      if (from.version === base) return from.states
      const recorded = yield* readRecorded(sql, stream, from.version + 1, base)
      // Forgotten since those states were folded (in another process): they hold erased text; fold from the start.
      if (from.version > 0 && SessionLog.forgottenIn(recorded))
        return foldStates(yield* decodeAll(yield* readRecorded(sql, stream, 1, base)))
      return foldStates(yield* decodeAll(recorded), from.states)
    })

  /** Writes the read models' snapshot when one is due, in the append's transaction; answers the states to cache. */
  const snapshotIfDue = (
    sql: Sql,
    stream: string,
    sessionId: string,
    version: number,
    states: States,
    pivoted: boolean,
  ): Effect.Effect<States> => {
    if (!snapshotting) return Effect.succeed(states)
    if (!pivoted && version - (snapshotAt.get(sessionId) ?? 0) < snapshotEvery) return Effect.succeed(states)
    // From now on this process holds the partial states too: memory follows the window, not the history.
    return Effect.map(writeSnapshot(sql, stream, sessionId, version, states), (data) =>
      data === undefined ? states : statesOfSnapshot(data, { sessionId, version }),
    )
  }

  /** Writes the read models' snapshot in the caller's transaction; answers its data, or nothing when it failed. */
  const writeSnapshot = (
    sql: Sql,
    stream: string,
    sessionId: string,
    version: number,
    states: States,
  ): Effect.Effect<string | undefined> => {
    const data = snapshotOf({ sessionId, version }, states)
    const row = {
      stream: snapshotKey(stream),
      stream_version: version,
      format: snapshotFormat(),
      checksum: Snapshot.checksum(data),
      data,
      recorded_at: Date.now(),
    }
    return sql`INSERT INTO pivot_snapshots ${sql.insert(row)} ON CONFLICT (stream) DO UPDATE SET stream_version = excluded.stream_version, format = excluded.format, checksum = excluded.checksum, data = excluded.data, recorded_at = excluded.recorded_at`.pipe(
      Effect.andThen(sql.afterCommit(Effect.sync(() => snapshotAt.set(sessionId, version)))),
      Effect.as(data),
      Effect.catchCause((cause) =>
        Effect.as(Effect.logWarning(`${stream}: read-model snapshot not written`, cause), undefined),
      ),
    )
  }

  /** Deletes a session's read-model rows, checkpoints and snapshot, and forgets its folded states here. */
  const drop = (sql: Sql, sessionId: string): Effect.Effect<void, SqlError.SqlError> =>
    Effect.gen(function* () {
      for (const m of models) yield* m.rows.clear(sql, sessionId)
      yield* sql`DELETE FROM pivot_rm_checkpoints WHERE session_id = ${sessionId}`
      yield* sql`DELETE FROM pivot_snapshots WHERE stream = ${snapshotKey(Events.streamName(sessionId))}`
      yield* sql.afterCommit(
        Effect.sync(() => {
          cache.delete(sessionId)
          snapshotAt.delete(sessionId)
        }),
      )
    })

  /**
   * Projects `batch` (the session's events after stream version `base`, in order) inside the caller's transaction:
   * read models whose checkpoint stands at `base` get only the rows that changed, the others are rewritten whole.
   */
  // While a bulk transaction runs: the sessions it appended to, folded in memory, written once at its end. The
  // window is the exception while it only grows (`windowLive`): its new rows are written batch by batch, with the
  // JSON text each append already made of its messages, instead of serialising every message again at the end.
  let deferred: Map<string, Deferred> | undefined

  const project = (
    sql: Sql,
    sessionId: string,
    base: number,
    batch: ReadonlyArray<RecordedEvent>,
    fields?: Fields,
    decoded?: ReadonlyArray<SessionLog.Logged>,
  ): Effect.Effect<void, ProjectError> =>
    Effect.gen(function* () {
      const last = batch[batch.length - 1]
      if (last === undefined) return
      const stream = Events.streamName(sessionId)
      if (deferred !== undefined) {
        const logged = decoded ?? (yield* decodeAll(batch))
        // Written whole at the end of the transaction: whole states are needed.
        const held = deferred.get(sessionId)
        const continues = held !== undefined && held.version === base
        const start = continues ? held.states : yield* statesAt(sql, sessionId, stream, base, true)
        // Written as it goes only from a new session on (its table holds no rows to keep in step with).
        let live = continues ? held.windowLive : held === undefined && base === 0
        const changed = new Set<MessageId>()
        let folded = start
        for (const { event, meta } of logged) {
          const next = evolveStates(folded, event, meta)
          if (live) live = window.step(folded.window, next.window, event, changed)
          folded = next
        }
        if (live) {
          if (!continues) yield* window.model.rows.clear(sql, sessionId)
          yield* window.writeSteps(sql, sessionId, start.window, folded.window, changed, fields)
        }
        deferred.set(sessionId, {
          states: folded,
          version: last.streamVersion,
          position: last.position,
          windowLive: live,
        })
        return
      }
      // The batch forgets the session (`forget`'s own transaction): every copy of its text is dropped, and the next
      // read rebuilds them from the whole log, with the erased fields.
      if (base > 0 && SessionLog.forgottenIn(batch)) return yield* drop(sql, sessionId)
      const logged = decoded ?? (yield* decodeAll(batch))
      const checkpoints = yield* checkpointsOf(sql, sessionId)
      let states = yield* statesAt(sql, sessionId, stream, base)
      // A new session's first batch (an import) is cheaper written once from the folded state than event by event:
      // one bulk insert per table instead of a few statements per event. Same rows either way (rebuilt == inline).
      const bulk = base === 0 && batch.length > 1
      const fresh = models.map((m) => {
        const cp = checkpoints.get(m.projection.name)
        if (bulk) return false
        return cp === undefined
          ? base === 0
          : cp.projectionVersion === m.projection.version && cp.streamVersion === base
      })
      // Partial states serve deltas only: a model rewritten whole, or an event naming a message they do not hold,
      // needs the whole log.
      if (states.partial === true && (fresh.some((f) => !f) || !heldFor(states, logged)))
        states = yield* statesAt(sql, sessionId, stream, base, true)
      for (const [i, m] of models.entries())
        if (fresh[i] && !checkpoints.has(m.projection.name)) yield* m.rows.clear(sql, sessionId)
      // Models that write per batch (`applyBatch`) are left out of the per-event loop.
      const perEvent = models.map((m, i) => fresh[i] === true && m.applyBatch === undefined)
      const anyPerEvent = perEvent.some((f) => f)
      const before = states
      for (const { event, meta } of logged) {
        const next = evolveStates(states, event, meta)
        if (anyPerEvent)
          for (const [i, m] of models.entries())
            if (perEvent[i]) yield* m.rows.apply(sql, sessionId, states, next, event, meta)
        states = next
      }
      for (const [i, m] of models.entries())
        if (fresh[i] && m.applyBatch !== undefined) yield* m.applyBatch(sql, sessionId, before, states)
      for (const [i, m] of models.entries())
        if (!fresh[i]) {
          yield* m.rows.clear(sql, sessionId)
          yield* m.rows.write(sql, sessionId, states)
        }
      yield* saveCheckpoints(sql, sessionId, last.streamVersion, last.position)
      const pivoted = logged.some(({ event }) => event._tag === "SummaryFinished")
      const done = yield* snapshotIfDue(sql, stream, sessionId, last.streamVersion, states, pivoted)
      yield* sql.afterCommit(Effect.sync(() => remember(sessionId, last.streamVersion, done)))
    })

  /**
   * Runs `effect` in one transaction with projection deferred: appends fold their events in memory only, and at the
   * end each touched session's read models are written whole, once (an import in batches: no per-event statements).
   */
  const bulk = <A, E, R>(sql: Sql, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
    sql.withTransaction(
      Effect.gen(function* () {
        if (deferred !== undefined) return yield* effect
        deferred = new Map()
        const result = yield* effect
        for (const [sessionId, held] of deferred) {
          for (const m of models) {
            if (m === window.model && held.windowLive) continue
            yield* m.rows.clear(sql, sessionId)
            yield* m.rows.write(sql, sessionId, held.states)
          }
          yield* saveCheckpoints(sql, sessionId, held.version, held.position)
          const stream = Events.streamName(sessionId)
          // A bulk load (an import) writes no snapshot: the first process that appends to the session later folds
          // its log once, as its runtime does anyway for a session it never saw, and snapshots it then. An older
          // snapshot of the stream no longer matches it, so it goes.
          yield* sql`DELETE FROM pivot_snapshots WHERE stream = ${snapshotKey(stream)}`
          yield* sql.afterCommit(
            Effect.sync(() => {
              snapshotAt.delete(sessionId)
              cache.delete(sessionId)
            }),
          )
        }
        return result
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            deferred = undefined
          }),
        ),
      ),
    )

  /** Rewrites every read model of a session from its whole log, inside the caller's transaction. */
  const rewrite = (sql: Sql, sessionId: string): Effect.Effect<number, ProjectError | UnknownSession> =>
    Effect.gen(function* () {
      const stream = Events.streamName(sessionId)
      const head = yield* headOf(sql, stream)
      if (head === 0) return yield* new UnknownSession({ sessionId })
      const recorded = yield* readRecorded(sql, stream, 1, head)
      const states = foldStates(yield* decodeAll(recorded))
      for (const m of models) {
        yield* m.rows.clear(sql, sessionId)
        yield* m.rows.write(sql, sessionId, states)
      }
      yield* saveCheckpoints(sql, sessionId, head, recorded[recorded.length - 1]!.position)
      // A rebuild trusts the log only: the snapshot goes too (the next one is folded from these whole states).
      yield* sql`DELETE FROM pivot_snapshots WHERE stream = ${snapshotKey(stream)}`
      yield* sql.afterCommit(
        Effect.sync(() => {
          remember(sessionId, head, states)
          snapshotAt.delete(sessionId)
        }),
      )
      return head
    })

  /**
   * The store hook: every inline projection of the session the append writes to, in its transaction. The events are
   * decoded once; the built-in read models go first (an event they cannot fold fails the append), then users' inline
   * projections stored as JSON (one that throws is recorded on its status, and the append goes on).
   */
  const onAppend = (
    sql: Sql,
    events: ReadonlyArray<RecordedEvent>,
    fields?: Fields,
  ): Effect.Effect<void, SqlError.SqlError | MalformedEvent> => {
    const first = events[0]
    const sessionId = first === undefined ? undefined : SessionLog.sessionIdOf(first.stream)
    if (first === undefined || sessionId === undefined) return Effect.void
    const decoded = SessionLog.decodeAll(events, decoder)
    if (Result.isFailure(decoded))
      return Effect.fail(
        new MalformedEvent({
          path: `${first.stream}@${decoded.failure.streamVersion}`,
          message: `the inline read models cannot fold it: ${decoded.failure.message}`,
        }),
      )
    const built = project(sql, sessionId, first.streamVersion - 1, events, fields, decoded.success).pipe(
      Effect.catchTag("UndecodableEvent", (error) =>
        Effect.fail(
          new MalformedEvent({
            path: `${first.stream}@${error.streamVersion}`,
            message: `the inline read models cannot fold it: ${error.message}`,
          }),
        ),
      ),
    )
    return userInlines.length === 0
      ? built
      : Effect.andThen(built, Projections.applyInline(sql, userInlines, sessionId, events, decoded.success))
  }

  /**
   * The store hook of `forget`: the session's read-model rows (copies of its data in plain text) are deleted with its
   * key, and rebuilt from the log, with the erased fields, on the next read.
   */
  const onForget = (sql: Sql, stream: string): Effect.Effect<void, SqlError.SqlError> => {
    const sessionId = SessionLog.sessionIdOf(stream)
    return sessionId === undefined ? Effect.void : drop(sql, sessionId)
  }

  return {
    project,
    rewrite,
    onAppend,
    onForget,
    bulk,
    verify: (sql: Sql, sessionId: string): Effect.Effect<Verified, ProjectError | UnknownSession> =>
      verify(sql, sessionId, { decoder, snapshotting }),
  }
}
