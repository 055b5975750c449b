/**
 * Replay and time travel: a session as it stood at any stream version, folded from its log. `stateAt` folds the
 * Decider's state; `windowAt` the model-input window; `pivots` lists the compactions whose summary formed a pivot,
 * each with the version to replay to see the window right after it.
 *
 * A finished summary is a natural origin for the window fold: the window after a pivot holds only the marker, the
 * summary, the kept tail and what came after, so the fold can start where the oldest of those messages was added and
 * skip everything older (`originOf`). With the SQL read models in context, `windowAt` finds that origin from the
 * compaction and audit tables and reads only the events after it. Either way the result equals folding from zero.
 */
import { CompactionHistory, Conversation, type Events, Message, Pins, Session, Window } from "@pivot/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { EventStore } from "../EventStore.ts"
import type { ReadError } from "../StoreError.ts"
import { ReadModels } from "./ReadModelsService.ts"
import { type UndecodableEvent, UnknownSession, VersionOutOfRange } from "./SessionError.ts"
import * as SessionLog from "./SessionLog.ts"

/** Why a replay failed. */
export type ReplayError = ReadError | UndecodableEvent | UnknownSession | VersionOutOfRange

/** A compaction that formed a pivot, and where to replay to see it. */
export interface Pivot {
  readonly markerId: string
  readonly summaryId: string
  /** The stream version of the event that formed it: `windowAt(session, version)` is the window right after it. */
  readonly version: number
  /** The stream version of its request: `windowAt(session, requestedVersion - 1)` is the window before it. */
  readonly requestedVersion: number
  readonly entry: CompactionHistory.Entry
}

/** The pivots of a compaction history, oldest first. */
export const pivotsOf = (entries: ReadonlyArray<CompactionHistory.Entry>): Array<Pivot> =>
  CompactionHistory.pivots({ entries, lastCallTokens: undefined }).flatMap((entry) =>
    entry.settledVersion === undefined || entry.summaryId === undefined
      ? []
      : [
          {
            markerId: entry.markerId,
            summaryId: entry.summaryId,
            version: entry.settledVersion,
            requestedVersion: entry.requestedVersion,
            entry,
          },
        ],
  )

/**
 * The stream version to start the window fold from, to get the window at `version` from a log: 1, or where the
 * oldest message the latest pivot at or before `version` kept (its marker and tail) was added. Pure; reads no
 * further than `version`.
 */
export const originOf = (log: Iterable<SessionLog.Logged>, version: number): number => {
  const added = new Map<string, number>()
  const plans = new Map<string, Events.CompactionPlan>()
  const markers = new Map<string, Message.Message>()
  const pinned = new Map<string, string>()
  let origin = 1
  for (const { event, meta } of log) {
    if (meta.version > version) break
    Pins.track(pinned as Map<string, never>, event as never)
    const message = Conversation.addedMessage(event)
    if (message !== undefined && !added.has(message.id)) added.set(message.id, meta.version)
    if (message !== undefined && Message.isMarker(message)) markers.set(message.id, message)
    if (event._tag === "CompactionStarted") plans.set(event.markerId, event.plan)
    // Only a summary that forms a pivot starts a new window (an errored one is an ordinary message).
    else if (event._tag === "SummaryFinished" && Window.formsPivot(event.summary, markers.get(event.markerId)))
      // The pivot also keeps the pinned messages in force (`Pins`).
      origin = originOfPivot((id) => added.get(id), event.markerId, [
        ...(plans.get(event.markerId)?.tail ?? []),
        ...pinned.values(),
      ])
  }
  return origin
}

/**
 * The origin a finished summary sets: the stream version where the oldest message it keeps (its marker, its plan's
 * tail and the pinned messages in force) was added, given where each message was added (1 for one not found). `originOf` applies it to a log;
 * readers that track added versions as they fold (the web viewer) call it directly.
 */
export const originOfPivot = (
  addedAt: (messageId: string) => number | undefined,
  markerId: string,
  tail: ReadonlyArray<string>,
): number => {
  let from = Number.POSITIVE_INFINITY
  for (const id of [markerId, ...tail]) from = Math.min(from, addedAt(id) ?? 1)
  return from
}

/** The window at `version` of a log held in memory, folded from its origin (see `originOf`). */
export const windowOf = (log: ReadonlyArray<SessionLog.Logged>, version: number): Window.State => {
  const origin = originOf(log, version)
  let state = Window.initial
  for (const { event, meta } of log) {
    if (meta.version > version) break
    if (meta.version >= origin) state = Window.evolve(state, event)
  }
  return state
}

/** The session's stream version, failing when the session has no events. */
const headOf = (sessionId: string) =>
  Effect.flatMap(SessionLog.version(sessionId), (head) =>
    head === 0 ? Effect.fail(new UnknownSession({ sessionId })) : Effect.succeed(head),
  )

/** Checks that `version` is a stream version of the session (0 = before its first event). */
const checkVersion = (sessionId: string, version: number) =>
  Effect.flatMap(headOf(sessionId), (head) =>
    Number.isInteger(version) && version >= 0 && version <= head
      ? Effect.succeed(head)
      : Effect.fail(new VersionOutOfRange({ sessionId, version, head })),
  )

/** The Decider's state of the session after its first `version` events. */
export const stateAt = (sessionId: string, version: number): Effect.Effect<Session.State, ReplayError, EventStore> =>
  Effect.gen(function* () {
    yield* checkVersion(sessionId, version)
    if (version === 0) return Session.initialState
    const log = yield* SessionLog.read(sessionId, { to: version })
    return Session.fold(log.map((l) => l.event))
  }).pipe(Effect.withSpan("Replay.stateAt"))

/**
 * The model-input window of the session after its first `version` events: exactly what the model saw then. Folds
 * from the latest pivot's origin; with `ReadModels` in context, reads only the events after that origin.
 */
export const windowAt = (sessionId: string, version: number): Effect.Effect<Window.State, ReplayError, EventStore> =>
  Effect.gen(function* () {
    yield* checkVersion(sessionId, version)
    if (version === 0) return Window.initial
    const readModels = yield* Effect.serviceOption(ReadModels)
    // The read models know the origin only if they can fold the whole log; an event after `version` this program
    // cannot read must not hide the window before it, so the origin is then found from the prefix.
    const origin = Option.isNone(readModels)
      ? undefined
      : yield* readModels.value
          .origin(sessionId, version)
          .pipe(Effect.catchTag("UndecodableEvent", () => Effect.succeed(undefined)))
    if (origin === undefined) return windowOf(yield* SessionLog.read(sessionId, { to: version }), version)
    const log = yield* SessionLog.read(sessionId, { from: origin, to: version })
    return Window.fold(log.map((l) => l.event))
  }).pipe(Effect.withSpan("Replay.windowAt"))

/** The session's pivots, oldest first; from the compaction-history read model when `ReadModels` is in context. */
export const pivots = (sessionId: string): Effect.Effect<ReadonlyArray<Pivot>, ReplayError, EventStore> =>
  Effect.gen(function* () {
    yield* headOf(sessionId)
    const readModels = yield* Effect.serviceOption(ReadModels)
    if (Option.isSome(readModels)) return pivotsOf(yield* readModels.value.compactions(sessionId))
    const log = yield* SessionLog.read(sessionId)
    return pivotsOf(foldHistory(log).entries)
  }).pipe(Effect.withSpan("Replay.pivots"))

const foldHistory = (log: ReadonlyArray<SessionLog.Logged>) => {
  let state = CompactionHistory.initial
  for (const { event, meta } of log) state = CompactionHistory.evolve(state, event, meta.version)
  return state
}
