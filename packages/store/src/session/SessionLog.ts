/**
 * A session's events in the event store: core events ↔ stored events. Writing stamps each event with its type and
 * schema version (`Events.versions`); reading upcasts older versions and decodes with `Events.schemas`, built
 * generically over core's catalog, so a new core event type is picked up without a change here. An event this
 * program cannot read is an `UndecodableEvent`, never a crash.
 *
 * **Example**
 *
 * ```ts
 * const program = Effect.gen(function* () {
 *   yield* SessionLog.append("ses_1", "no-stream", [{ id: "evt_1", event: started }])
 *   const log = yield* SessionLog.read("ses_1") // [{ event, meta: { id: "evt_1", version: 1 } }]
 * }).pipe(Effect.provide(EventStore.layerMemory()))
 * ```
 */
import { Events, Ids, type Projection } from "@pivot/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import type { AppendResult, ExpectedVersion, NewEvent, RecordedEvent } from "../Event.ts"
import { EventStore, type Forgotten } from "../EventStore.ts"
import type { AppendError, ReadError } from "../StoreError.ts"
import * as Upcast from "../Upcast.ts"
import { UndecodableEvent, type UndecodableReason, UnknownSession } from "./SessionError.ts"

type Event = Events.Event

/** A session event with where it sits in its stream: its id and stream version (1 for the first). */
export interface Logged {
  readonly event: Event
  readonly meta: Projection.EventMeta
}

/** The prefix of every session stream (`Events.streamName`). */
export const STREAM_PREFIX = "session-"

/** The session id of a session stream's name; `undefined` for any other stream. */
export const sessionIdOf = (stream: string): string | undefined =>
  stream.startsWith(STREAM_PREFIX) ? stream.slice(STREAM_PREFIX.length) : undefined

/** Core's schemas by event type, with their current versions: what the store's upcasting decoder needs. */
export const coreSchemas: Upcast.Schemas = Object.fromEntries(
  Events.types.map((type) => [
    type,
    { version: Events.versions[type], schema: Events.schemas[type], fast: Events.fastDecoders[type] },
  ]),
)

/** How to read stored events. */
export interface DecoderOptions {
  /** Lift older schema versions of core events to the current ones. */
  readonly upcasters?: ReadonlyArray<Upcast.Upcaster> | undefined
  /**
   * Event types other components store in session streams (e.g. the runtime's): validated, then skipped, since
   * core's folds do not read them. Any other unknown type is an `UndecodableEvent`.
   */
  readonly foreign?: Upcast.Schemas | undefined
}

/** Decodes one recorded event: the core event, `undefined` for a foreign one, or why it cannot be read. */
export type Decoder = (recorded: RecordedEvent) => Result.Result<Logged | undefined, UndecodableEvent>

const reasons: Record<Upcast.DecodeError["_tag"], UndecodableReason> = {
  UnknownEventType: "unknown-type",
  EventFromNewerVersion: "newer-version",
  MissingUpcaster: "missing-upcaster",
  MalformedEvent: "malformed",
}

const detailOf = (error: Upcast.DecodeError): string => {
  switch (error._tag) {
    case "UnknownEventType":
      return `unknown event type ${error.type} (written by a newer pivot or another program?)`
    case "EventFromNewerVersion":
      return `schema version ${error.version} is newer than this pivot reads (up to ${error.supported}); upgrade pivot`
    case "MissingUpcaster":
      return `no upcaster from schema version ${error.fromVersion}`
    case "MalformedEvent":
      return `malformed data at ${error.path}: ${error.message}`
  }
}

/**
 * Payloads `toNewEvent` encoded in this process. Core's event schemas have no transformations, so decoding an
 * encoder's output gives back that same value: a decoder handed one of these objects (an append's own payloads,
 * which the store passes to its hook as given) can take it as the event without running the schema again. Held
 * weakly: a payload is forgotten with its batch.
 */
const encodedHere = new WeakSet<object>()

/**
 * Whether `recorded` carries a payload `toNewEvent` made here, at its type's current version (no upcasting to do): its
 * data then IS the decoded event (a property test checks that `Events.decode` gives the same value for every type).
 */
const isEncodedHere = (recorded: RecordedEvent): boolean =>
  typeof recorded.data === "object" &&
  recorded.data !== null &&
  encodedHere.has(recorded.data) &&
  Object.hasOwn(coreSchemas, recorded.type) &&
  (recorded.data as Event)._tag === recorded.type &&
  recorded.version === coreSchemas[recorded.type]!.version

/** Builds a decoder for many events (the schemas and upcasters are indexed once). */
export const makeDecoder = (options: DecoderOptions = {}): Decoder => {
  const decode = Upcast.makeDecoder({ schemas: { ...options.foreign, ...coreSchemas }, upcasters: options.upcasters })
  return (recorded) => {
    if (isEncodedHere(recorded))
      return Result.succeed({
        event: recorded.data as Event,
        meta: { id: recorded.id, version: recorded.streamVersion },
      })
    const undecodable = (reason: UndecodableReason, detail: string) =>
      Result.fail(
        new UndecodableEvent({
          sessionId: sessionIdOf(recorded.stream) ?? recorded.stream,
          streamVersion: recorded.streamVersion,
          eventId: recorded.id,
          type: recorded.type,
          reason,
          detail,
        }),
      )
    const decoded = decode(recorded)
    if (Result.isFailure(decoded)) return undecodable(reasons[decoded.failure._tag], detailOf(decoded.failure))
    if (!Object.hasOwn(coreSchemas, recorded.type)) return Result.succeed(undefined)
    const event = decoded.success.data as Event
    if (event._tag !== recorded.type) return undecodable("malformed", `its data is a ${event._tag}`)
    return Result.succeed({ event, meta: { id: recorded.id, version: recorded.streamVersion } })
  }
}

/** The decoder for core events with no upcasters and no foreign types. */
export const decode: Decoder = makeDecoder()

/** Decodes recorded events in order, skipping foreign ones; fails at the first event that cannot be read. */
export const decodeAll = (
  recorded: ReadonlyArray<RecordedEvent>,
  decoder: Decoder = decode,
): Result.Result<Array<Logged>, UndecodableEvent> => {
  const out: Array<Logged> = []
  for (const r of recorded) {
    const decoded = decoder(r)
    if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
    if (decoded.success !== undefined) out.push(decoded.success)
  }
  return Result.succeed(out)
}

/** How session events are written. */
export interface WriteOptions {
  /** Crypto-shredding: store the sensitive fields (`Events.sensitive`) encrypted with the session's key. */
  readonly seal?: boolean | undefined
}

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * Whether `b` is `a` as JSON sees it: the same values (`===`) at the same paths, plain objects with the same keys in
 * the same order, arrays of the same length. `a` is an encoder's output (plain JSON data).
 */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b) || !isPlain(b)) return false
  const keys = Object.keys(a)
  const other = Object.keys(b)
  if (keys.length !== other.length) return false
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    if (key !== other[i] || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
      return false
  }
  return true
}

/** A core event as an event to append, stamped with its type and current schema version. */
export const toNewEvent = (event: Event, id: string, metadata?: unknown, options: WriteOptions = {}): NewEvent => {
  const sealed = options.seal === true ? Events.sensitive[event._tag] : []
  const encoded = Events.encode(event)
  // An event already in its encoded form (the declared keys in the schema's order, the same values: what the import
  // builds) is stored as it is, and its copy let go at once: one copy fewer of a big session's messages alive, and
  // none for the collector to move into the old generation.
  const data = sameJson(encoded, event) ? event : encoded
  encodedHere.add(data)
  return {
    id,
    type: event._tag,
    version: Events.versions[event._tag],
    data,
    ...(metadata === undefined ? {} : { metadata }),
    ...(sealed.length > 0 ? { sealed } : {}),
  }
}

/**
 * A deterministic event id from the session and the stream version, `evt_<session>_<000042>`: what an import uses,
 * so importing the same export twice produces the same ids, and a log read from a file and from the store agree.
 */
export const eventId = (sessionId: string, version: number): string =>
  `evt_${sessionId.replace(/^ses_/, "").replace(/[^0-9A-Za-z_-]/g, "-")}_${String(version).padStart(6, "0")}`

/** Events not yet stored, numbered from 1 with `eventId` (an imported session, a log held in memory). */
export const fromEvents = (sessionId: string, events: ReadonlyArray<Event>): Array<Logged> =>
  events.map((event, i) => ({ event, meta: { id: eventId(sessionId, i + 1), version: i + 1 } }))

/** Bounds of a read: inclusive stream versions, and the decoder to use. */
export interface ReadOptions {
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly decoder?: Decoder | undefined
}

/** The session's events, decoded, in stream order (between `from` and `to` when given); `[]` for no stream. */
export const read = (
  sessionId: string,
  options: ReadOptions = {},
): Effect.Effect<Array<Logged>, ReadError | UndecodableEvent, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const recorded = yield* store.read(Events.streamName(sessionId), { from: options.from, to: options.to })
    return yield* Effect.fromResult(decodeAll(recorded, options.decoder))
  }).pipe(Effect.withSpan("SessionLog.read"))

/** The session's stream version: its number of events (0 when it has none). */
export const version = (sessionId: string): Effect.Effect<number, ReadError, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    return yield* store.streamVersion(Events.streamName(sessionId))
  })

/** Appends events with the ids given, atomically, if the stream is at `expected`. */
export const append = (
  sessionId: string,
  expected: ExpectedVersion,
  entries: ReadonlyArray<{ readonly id: string; readonly event: Event }>,
  options: WriteOptions = {},
): Effect.Effect<AppendResult, AppendError, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const events = entries.map(({ id, event }) => toNewEvent(event, id, undefined, options))
    return yield* store.append(Events.streamName(sessionId), expected, events)
  }).pipe(Effect.withSpan("SessionLog.append"))

/**
 * Whether recorded events include a `SessionForgotten`: a reader that folded the events before them holds text the
 * erasure took away, and must fold the log again from its first event.
 */
export const forgottenIn = (recorded: ReadonlyArray<RecordedEvent>): boolean =>
  recorded.some((r) => r.type === FORGOTTEN)

/** The type of the marker `forget` appends. */
export const FORGOTTEN: Events.Type = "SessionForgotten"

/** A fresh event id (the `Ids` format) from `Clock` and `Random`, for events the store layer writes itself. */
const freshEventId = Effect.gen(function* () {
  const millis = yield* Clock.currentTimeMillis
  const random: Array<number> = []
  for (let i = 0; i < 14; i++) random.push(yield* Random.nextIntBetween(0, 62))
  return { id: Ids.format("evt", millis, 0, random), at: millis }
})

/** What `forget` did: to the session itself, and the forks forgotten with it. */
export interface ForgottenSession extends Forgotten {
  /** The sessions forked from it, at any depth (they hold copies of its text), forgotten too; in fork order. */
  readonly forks: ReadonlyArray<string>
  /** Those of `forks` that were already forgotten, with nothing recorded since to erase (nothing done to them). */
  readonly forksAlreadyForgotten: ReadonlyArray<string>
}

/**
 * Whether an event of this type can hold text a forget erases: it has sensitive fields (`Events.sensitive`). A type
 * this version does not know counts as text.
 */
export const erasable = (type: string): boolean =>
  (Events.sensitive as Partial<Record<string, ReadonlyArray<unknown>>>)[type]?.length !== 0

/**
 * Forgets one session's stream, with its `SessionForgotten` marker; nothing at all when it was forgotten before and
 * no event with text was recorded since (a repeated forget is idempotent).
 */
const forgetStream = (store: EventStore["Service"], sessionId: string) =>
  Effect.gen(function* () {
    const { id, at } = yield* freshEventId
    return yield* store.forget(Events.streamName(sessionId), {
      marker: toNewEvent({ _tag: "SessionForgotten", at }, id),
      erasable,
    })
  })

/**
 * The sessions forked from `sessionId`, at any depth, in the order they were forked: every stream with a
 * `SessionForked` naming it or one of them (a fork's stream names each ancestor, but an older fork of a fork may
 * name only its parent, so the edges are followed).
 */
export const forksOf = (sessionId: string): Effect.Effect<Array<string>, ReadError, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const edges: Array<{ readonly parent: string; readonly child: string }> = []
    for (const r of yield* store.readType("SessionForked")) {
      const child = sessionIdOf(r.stream)
      const parent = (r.data as { readonly parent?: unknown } | null)?.parent
      if (child !== undefined && typeof parent === "string" && child !== parent) edges.push({ parent, child })
    }
    const found = new Set<string>([sessionId])
    const out: Array<string> = []
    for (let grew = true; grew; ) {
      grew = false
      for (const { parent, child } of edges)
        if (found.has(parent) && !found.has(child)) {
          found.add(child)
          out.push(child)
          grew = true
        }
    }
    return out
  })

/**
 * Erases a session without rewriting its history (crypto-shredding): deletes the session's key, so every sealed
 * field of its events reads as `EventStore.ERASED` from now on, drops derived plain copies (SQL read models,
 * snapshots), and appends `SessionForgotten` in the same transaction, so a process holding the session's text (a live
 * state, a read model's cache) notices on its next read and reads it again, and a writer that read it before gets a
 * version conflict instead of writing it back. Then the same for every session forked from it (`forksOf`): a fork
 * holds copies of its text under its own key. Idempotent: a session (or fork) forgotten before, with no event holding
 * text (`erasable`) recorded since, is left as it is — no new `SessionForgotten` — and reported `alreadyForgotten`
 * (or in `forksAlreadyForgotten`); one written to since is forgotten again. Fails with `UnknownSession` when the
 * store has no events for it. What `pivot forget` runs.
 */
export const forget = (sessionId: string): Effect.Effect<ForgottenSession, ReadError | UnknownSession, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    if ((yield* store.streamVersion(Events.streamName(sessionId))) === 0)
      return yield* new UnknownSession({ sessionId })
    const forgotten = yield* forgetStream(store, sessionId)
    // After the session's own marker: a fork committed later finds it (`Sessions.fork` looks), one committed
    // earlier is found here.
    const forks = yield* forksOf(sessionId)
    // The last checkpoint says it: a log emptied last holds nothing written before.
    let logCleared = forgotten.logCleared
    const forksAlreadyForgotten: Array<string> = []
    for (const fork of forks) {
      const done = yield* forgetStream(store, fork)
      logCleared = done.logCleared
      if (done.alreadyForgotten) forksAlreadyForgotten.push(fork)
    }
    return { ...forgotten, logCleared, forks, forksAlreadyForgotten }
  }).pipe(Effect.withSpan("SessionLog.forget"))

/** Appends events with fresh ids from the `Ids` service, atomically, if the stream is at `expected`. */
export const appendEvents = (
  sessionId: string,
  expected: ExpectedVersion,
  events: ReadonlyArray<Event>,
): Effect.Effect<AppendResult, AppendError, EventStore | Ids.Ids> =>
  Effect.gen(function* () {
    const ids = yield* Ids.Ids
    const entries: Array<{ id: string; event: Event }> = []
    for (const event of events) entries.push({ id: yield* ids.event, event })
    return yield* append(sessionId, expected, entries)
  })
