/**
 * The command handler over the event store: load a session (from a cache of its folded state, reading only the events
 * appended since), decide a command with core's Decider, append the events with the exact expected version, and on a
 * version conflict wait a jittered, growing delay, re-read and decide again on the fresh state, a bounded number of
 * times. Per-command cost does not grow with history.
 *
 * **Example**
 * ```ts
 * const sessions = yield* Sessions
 * yield* sessions.execute(sessionId, { _tag: "AddUserMessage", message })
 * yield* sessions.execute(sessionId, (state) => (state.session.pending ? undefined : createCommand))
 * ```
 */
import { Commands, Conversation, Events, Ids, Redaction, Retention, Session, StateSnapshot, Traced } from "@pivot/core"
import {
  type AppendError,
  EventStore,
  isLocked,
  type NewEvent,
  type ReadError,
  type RecordedEvent,
  SessionLog,
  Snapshot,
  type StoredSnapshot,
  type StoreUnavailable,
  Upcast,
  type WrongExpectedVersion,
} from "@pivot/store"
import {
  Clock,
  Context,
  Duration,
  Effect,
  Layer,
  Queue,
  Result,
  Schedule,
  Schema,
  SchemaIssue,
  type Scope,
  Semaphore,
} from "effect"
import type * as RuntimeEvents from "./RuntimeEvents.ts"
import * as RuntimeState from "./RuntimeState.ts"

/** Any event of a session stream. */
export type Event = RuntimeState.Event

/** A session's folded state: core's session state (its `version` is the stream version) and the runtime's. */
export interface State {
  readonly session: Session.State
  readonly runtime: RuntimeState.State
}

/** The state of a stream with no events. */
export const initialState: State = { session: Session.initialState, runtime: RuntimeState.initial }

/** Records runtime events as they are: facts the runtime observed, not decisions of core's Decider. */
export interface Record {
  readonly _tag: "Record"
  readonly events: ReadonlyArray<RuntimeEvents.Event>
}

/** A command `execute` accepts: one of core's, or a `Record` of runtime events. */
export type Command = Commands.Command | Record

/** What to execute: a command, several commands decided in order and appended atomically, or nothing. */
export type Decision = Command | ReadonlyArray<Command> | undefined

/** A decision, or a function of the freshest state that makes one (called again after a version conflict). */
export type Input = Decision | ((state: State) => Decision)

/** What an execution appended and the state it led to. */
export interface Executed {
  readonly events: ReadonlyArray<Event>
  readonly state: State
}

const pinsDropped = (state: State, event: Event): boolean =>
  event._tag === "ContextPinned" && !Conversation.has(state.session.window.conversation, event.messageId)

/** Folds one event. */
export const evolve = (state: State, event: Event): State => ({
  session: Session.evolve(state.session, event),
  runtime: RuntimeState.evolve(state.runtime, event),
})

/** Folds events onto a state (the empty state by default). */
export const fold = (events: Iterable<Event>, from: State = initialState): State => {
  let state = from
  for (const event of events) state = evolve(state, event)
  return state
}

/**
 * Decides commands in order on `state`, each on the state the previous ones led to. Pure: the first refusal refuses
 * the whole batch. With `redactAt` (record-time redaction, the time to stamp), each command is redacted first (see
 * `redactCommand`) and, when it decided events and had secrets, a `SecretsRedactedOnRecord` event follows them.
 */
export const decide = (
  state: State,
  decision: Decision,
  redactAt?: number,
): Result.Result<{ readonly events: ReadonlyArray<Event>; readonly state: State }, Session.DomainError> => {
  const commands: ReadonlyArray<Command> = decision === undefined ? [] : isCommandList(decision) ? decision : [decision]
  const events: Array<Event> = []
  let current = state
  for (const asked of commands) {
    const { command, findings } = redactAt === undefined ? { command: asked, findings: [] } : redactCommand(asked)
    let produced: ReadonlyArray<Event>
    if (command._tag === "Record") produced = command.events
    else {
      const decided = Session.decide(command, current.session)
      if (Result.isFailure(decided)) return Result.fail(decided.failure)
      produced = decided.success
    }
    if (produced.length > 0 && findings.length > 0 && redactAt !== undefined) {
      produced = [...produced, { _tag: "SecretsRedactedOnRecord", at: redactAt, command: asked._tag, findings }]
    }
    events.push(...produced)
    current = fold(produced, current)
  }
  return Result.succeed({ events, state: current })
}

const isCommandList = (decision: Command | ReadonlyArray<Command>): decision is ReadonlyArray<Command> =>
  Array.isArray(decision)

/**
 * Record-time redaction of one command: every secret in the text it carries becomes `[REDACTED:<kind>]` (see
 * `Redaction.redactCommand`); runtime events recorded as they are get every string redacted the same way. Pure.
 */
export const redactCommand = (
  command: Command,
): { readonly command: Command; readonly findings: ReadonlyArray<Redaction.CommandFinding> } => {
  if (command._tag !== "Record") return Redaction.redactCommand(command)
  const redacted = Redaction.redactValue(command.events, "events")
  return redacted.findings.length === 0
    ? { command, findings: [] }
    : { command: { _tag: "Record", events: redacted.value }, findings: redacted.findings }
}

/** A command (or a recorded runtime event) with a value its schema does not allow. */
export class InvalidCommand extends Schema.TaggedError<InvalidCommand>()("InvalidCommand", {
  command: Schema.String,
  detail: Schema.String,
}) {
  override get message(): string {
    return `invalid ${this.command} command: ${this.detail}`
  }
}

const issues = SchemaIssue.makeFormatterStandardSchemaV1()

/** The first problem of a schema error, one line: `path.to.field: what is wrong`. */
const firstIssue = (error: Schema.SchemaError): string => {
  const issue = issues(error.issue).issues[0]
  if (issue === undefined) return error.message
  const path = (issue.path ?? []).map((p) => String(typeof p === "object" && p !== null ? p.key : p)).join(".")
  return path === "" ? issue.message : `${path}: ${issue.message}`
}

const decodeRuntimeEvents = Schema.decodeUnknownResult(Schema.toType(Schema.Array(Events.Event)))

/**
 * A decision as the schemas declare it (issue 18): the boundary where keys no schema declares are dropped, as the log
 * drops them, so that what is decided, held live and snapshotted is what a fold of the log gives. A wrong value is an
 * `InvalidCommand` instead of a failure deep in the encoder.
 */
export const decodeDecision = (decision: Decision): Result.Result<Decision, InvalidCommand> => {
  if (decision === undefined) return Result.succeed(undefined)
  const one = (command: Command): Result.Result<Command, InvalidCommand> => {
    const tag = typeof command === "object" && command !== null ? String(command._tag) : typeof command
    const decoded: Result.Result<Command, Schema.SchemaError> =
      command._tag === "Record"
        ? Result.map(
            decodeRuntimeEvents(command.events),
            (events): Command => ({ _tag: "Record", events: events as ReadonlyArray<RuntimeEvents.Event> }),
          )
        : Commands.decode(command)
    return Result.mapError(decoded, (error) => new InvalidCommand({ command: tag, detail: firstIssue(error) }))
  }
  if (!isCommandList(decision)) return one(decision)
  const out: Array<Command> = []
  for (const command of decision) {
    const decoded = one(command)
    if (Result.isFailure(decoded)) return decoded
    out.push(decoded.success)
  }
  return Result.succeed(out)
}

/** Too many version conflicts in a row: other writers kept appending to the session. */
export class ConcurrencyConflict extends Schema.TaggedError<ConcurrencyConflict>()("ConcurrencyConflict", {
  sessionId: Schema.String,
  attempts: Schema.Number,
}) {
  override get message(): string {
    return `session ${this.sessionId}: still conflicting after ${this.attempts} attempts`
  }
}

/**
 * The session was forgotten (`SessionForgotten`) after the text this command carries was read: writing it would put
 * erased text back. Nothing was recorded; decide again on the session as it reads now.
 */
export class SessionErased extends Schema.TaggedError<SessionErased>()("SessionErased", {
  sessionId: Schema.String,
}) {
  override get message(): string {
    return `session ${this.sessionId} was forgotten after this command's text was read; nothing was recorded`
  }
}

/** `fork`: the session to fork has no events. */
export class ForkSourceMissing extends Schema.TaggedError<ForkSourceMissing>()("ForkSourceMissing", {
  sessionId: Schema.String,
}) {
  override get message(): string {
    return `cannot fork session ${this.sessionId}: it has no events (check the id with pivot inspect)`
  }
}

/** `fork`: the version to fork at is not one the session has. */
export class ForkVersionOutOfRange extends Schema.TaggedError<ForkVersionOutOfRange>()("ForkVersionOutOfRange", {
  sessionId: Schema.String,
  at: Schema.Number,
  version: Schema.Number,
}) {
  override get message(): string {
    return `cannot fork session ${this.sessionId} at version ${this.at}: it has versions 1 to ${this.version}`
  }
}

/** `fork`: the session to fork into already has events. */
export class ForkTargetExists extends Schema.TaggedError<ForkTargetExists>()("ForkTargetExists", {
  sessionId: Schema.String,
}) {
  override get message(): string {
    return `cannot fork into session ${this.sessionId}: it already exists; choose another name`
  }
}

/** Why a fork failed. */
export type ForkError = LoadError | ForkSourceMissing | ForkVersionOutOfRange | ForkTargetExists | AppendError

/** What `fork` did. */
export interface Forked {
  readonly sessionId: string
  readonly parent: string
  readonly parentVersion: number
  /**
   * Events the child starts with: the parent's first `parentVersion`, then a `SessionForked` for each ancestor the
   * parent was forked from after that version (see `lineageBeyond`), then its own `SessionForked`.
   */
  readonly version: number
  /** Whether the child's text is stored encrypted: asked for (`encryptAtRest`), or because the parent's is. */
  readonly encrypted: boolean
}

/**
 * The ancestors a fork at `at` would lose: the parent's `SessionForked` events after `at` (a fork at or before the
 * parent's own fork point), each saying the parent's first `parentVersion` events are copies of that ancestor's. The
 * child's first `min(at, parentVersion)` events are then copies of the ancestor's too, so each becomes a
 * `SessionForked` at that version, in the parent's order, and the child keeps its whole lineage. Pure.
 */
export const lineageBeyond = (
  after: ReadonlyArray<Event>,
  at: number,
  forkedAt: number,
): Array<Extract<Event, { readonly _tag: "SessionForked" }>> =>
  after.flatMap((e) =>
    e._tag === "SessionForked"
      ? [
          {
            _tag: "SessionForked" as const,
            at: forkedAt,
            parent: e.parent,
            parentVersion: Math.min(at, e.parentVersion),
          },
        ]
      : [],
  )

/** A stored event cannot be read: unknown type, a newer schema version than this program, or malformed data. */
export class UndecodableEvent extends Schema.TaggedError<UndecodableEvent>()("UndecodableEvent", {
  sessionId: Schema.String,
  streamVersion: Schema.Number,
  type: Schema.String,
  reason: Schema.Literals(["unknown-type", "newer-version", "missing-upcaster", "malformed"]),
  detail: Schema.String,
}) {
  override get message(): string {
    return `session ${this.sessionId}, event ${this.streamVersion} (${this.type}): ${this.reason}: ${this.detail}`
  }
}

/** Any failure of loading a session. */
export type LoadError = ReadError | UndecodableEvent

/** Any failure of executing a command. */
export type ExecuteError =
  | Session.DomainError
  | Exclude<AppendError, WrongExpectedVersion>
  | LoadError
  | ConcurrencyConflict
  | SessionErased
  | InvalidCommand

/** Options of one `execute`. */
export interface ExecuteOptions {
  /**
   * The state the input's text was derived from (a summary written from it, a prompt built from it): when the session
   * was forgotten after it (`RuntimeState.forgotten` grew), the command fails with `SessionErased` instead of writing
   * that text back.
   */
  readonly basis?: State | undefined
}

/** Core's event schemas, by type, for the store's upcasting decoder (the store's `SessionLog.coreSchemas`). */
export const schemas: Upcast.Schemas = SessionLog.coreSchemas

const decodeRecorded = Upcast.makeDecoder({ schemas })

/** Decodes one recorded event of a session stream (upcasting older versions); pure. */
export const decodeEvent = (sessionId: string, recorded: RecordedEvent): Result.Result<Event, UndecodableEvent> => {
  const decoded = decodeRecorded(recorded)
  if (Result.isSuccess(decoded)) {
    const event = decoded.success.data as Event
    if (event._tag === recorded.type) return Result.succeed(event)
    return Result.fail(
      new UndecodableEvent({
        sessionId,
        streamVersion: recorded.streamVersion,
        type: recorded.type,
        reason: "malformed",
        detail: `data is a ${event._tag}`,
      }),
    )
  }
  const failure = decoded.failure
  const reason =
    failure._tag === "UnknownEventType"
      ? "unknown-type"
      : failure._tag === "EventFromNewerVersion"
        ? "newer-version"
        : failure._tag === "MissingUpcaster"
          ? "missing-upcaster"
          : "malformed"
  return Result.fail(
    new UndecodableEvent({
      sessionId,
      streamVersion: recorded.streamVersion,
      type: recorded.type,
      reason,
      detail: failure.message,
    }),
  )
}

/**
 * Encodes an event for the store; `id` comes from the `Ids` service. With `seal`, its sensitive fields
 * (`Events.sensitive`) are stored encrypted with the session's key (crypto-shredding).
 */
export const encodeEvent = (id: string, event: Event, seal = false): NewEvent => {
  const sealed = seal ? Events.sensitive[event._tag] : []
  return {
    id,
    type: event._tag,
    version: Events.versions[event._tag],
    data: Events.encode(event),
    ...(sealed.length > 0 ? { sealed } : {}),
  }
}

/** Options of `Sessions.layer`. */
export interface Options {
  /** Attempts of one command under version conflicts; default: as many as `conflictTimeout` allows. */
  readonly maxAttempts?: number | undefined
  /**
   * How long one command keeps trying under version conflicts, from its first attempt (on the `Clock`): no attempt
   * starts later; default 2 minutes. A bound in time rather than in attempts, because under load each attempt takes
   * longer and the same count covers less (issue 32: 30 attempts, ~23 s, left 1–3 commands a run failing at load 20).
   */
  readonly conflictTimeout?: Duration.Input | undefined
  /** The wait before the second attempt, doubled for each further one (±20% jitter); default 5 ms. */
  readonly conflictBackoff?: Duration.Input | undefined
  /** The longest wait between two attempts; default 1 s. */
  readonly maxConflictBackoff?: Duration.Input | undefined
  /** Sessions whose state stays cached (least recently used dropped first); default 1000. */
  readonly cacheSize?: number | undefined
  /**
   * Redact secrets from every command's text before it is decided, so they never reach the store (see
   * `redactCommand`); default false.
   */
  readonly redactOnRecord?: boolean | undefined
  /**
   * Crypto-shredding: store the events' sensitive fields (`Events.sensitive`) encrypted with the session's key, so
   * `EventStore.forget` erases them for good; default false.
   */
  readonly encryptAtRest?: boolean | undefined
  /**
   * Snapshots of each session's state, so a restart resumes from the latest one and the events after it instead of
   * folding the whole log: one every `every` events (default 200, so a restart reads at most that many events) and
   * one after each pivot (`atPivots`, default true). `false`: none are written or read. Never written for sessions encrypted at rest (a snapshot would hold
   * their sealed text in plain). Written after the command returns, by a fiber of the layer's scope (ADR 0024): see
   * `SessionsShape.flushSnapshots`. The layer's close writes the ones still due, waiting at most `flushTimeout`
   * (default 5 s) before it drops them (a restart then folds a few more events).
   *
   * At rest (`idle`, default 1 s; `false`: off): once no event has been appended for `idle`, as between an agent's
   * steps or turns, every session this handler appended to gets one at its head, and so does the close; so a restart
   * after a clean close or a kill at rest folds no event after its snapshot (ADR 0069).
   */
  readonly snapshots?:
    | false
    | {
        readonly every?: number | undefined
        readonly atPivots?: boolean | undefined
        readonly flushTimeout?: Duration.Input | undefined
        readonly idle?: Duration.Input | false | undefined
      }
    | undefined
  /**
   * Keep each live state bounded by its window: after a pivot, messages no rule can reach are dropped from memory
   * (`Retention.retain`) and read from the store when a command names one; default true.
   */
  readonly boundedMemory?: boolean | undefined
}

/** Why a stored snapshot was not used (the state is then folded from the events; nothing is lost). */
export type SnapshotRejection = "format" | "checksum" | "unreadable" | "session" | "beyond-stream"

/** The warning logged when a snapshot is not used. */
export const snapshotWarning = (sessionId: string, reason: SnapshotRejection, detail: string): string =>
  `session ${sessionId}: snapshot ignored (${reason}: ${detail}); folding the events instead`

/**
 * The name of a snapshot format: the state encoding's version and a fingerprint of the event catalog's schema
 * versions (this program's by default), so that a snapshot folded before an event schema (and its upcaster) changed
 * is not trusted.
 */
export const snapshotFormat = (versions: { readonly [type: string]: number } = Events.versions): string =>
  `pivot-session/${StateSnapshot.FORMAT}.${RuntimeState.FORMAT};events=${Events.catalogFingerprint(versions)}`

/** The snapshot format of this program (see `snapshotFormat`). */
export const SNAPSHOT_FORMAT = snapshotFormat()

/** Encodes a state for a snapshot. */
export const encodeSnapshot = (state: State): string =>
  JSON.stringify({ session: StateSnapshot.encode(state.session), runtime: state.runtime })

/** Decodes a snapshot's data, or says why it cannot be used. */
export const decodeSnapshot = (
  sessionId: string,
  stored: StoredSnapshot,
  format: string = SNAPSHOT_FORMAT,
): Result.Result<State, { readonly reason: SnapshotRejection; readonly detail: string }> => {
  if (stored.format !== format)
    return Result.fail({ reason: "format", detail: `written as ${stored.format}, this program reads ${format}` })
  if (!Snapshot.intact(stored))
    return Result.fail({
      reason: "checksum",
      detail: `the data of version ${stored.version} does not match its checksum`,
    })
  try {
    const raw = JSON.parse(stored.data) as { session: unknown; runtime: RuntimeState.State }
    const session = StateSnapshot.decode(raw.session)
    if (session.version !== stored.version)
      return Result.fail({
        reason: "unreadable",
        detail: `state of version ${session.version} stored as ${stored.version}`,
      })
    if (session.sessionId !== sessionId)
      return Result.fail({ reason: "session", detail: `it is a state of session ${String(session.sessionId)}` })
    if (typeof raw.runtime !== "object" || raw.runtime === null) throw new Error("no runtime state")
    return Result.succeed({ session, runtime: RuntimeState.decode(raw.runtime) })
  } catch (error) {
    return Result.fail({ reason: "unreadable", detail: error instanceof Error ? error.message : String(error) })
  }
}

/** How long the snapshot writer waits for a moment without appends before it writes (ADR 0024), in ms. */
export const SNAPSHOT_QUIET = 5

/** The longest the snapshot writer waits for that moment, in ms: a session never idle still gets its snapshots. */
export const SNAPSHOT_DEFER = 1_000

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The ids the runtime's own state points at: a live state keeps these messages (see `Retention.retain`). */
const runtimeIds = (runtime: RuntimeState.State): Array<Ids.MessageId | undefined> => [
  runtime.unconfirmed,
  runtime.inFlight?.markerId,
  runtime.inFlight?.lastReal,
  runtime.awaitingContinue,
  runtime.awaitingLastReal,
  runtime.lastReal,
  runtime.lastUserId,
  runtime.lastCall?.messageId,
]

/** The state without the messages no rule can reach; see `Retention.retain`. */
export const retain = (state: State): State => {
  const session = Retention.retain(state.session, runtimeIds(state.runtime))
  return session === state.session ? state : { session, runtime: state.runtime }
}

/**
 * The waits between attempts after a version conflict: exponential from `conflictBackoff` (default 5 ms), capped at
 * `maxConflictBackoff` (default 1 s), each scaled by a random factor in [0.8, 1.2] so that writers that collided
 * do not collide again in step.
 */
export const conflictSchedule = (options: Pick<Options, "conflictBackoff" | "maxConflictBackoff"> = {}) => {
  const cap = Duration.fromInputUnsafe(options.maxConflictBackoff ?? Duration.seconds(1))
  return Schedule.exponential(options.conflictBackoff ?? Duration.millis(5)).pipe(
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, cap))),
    Schedule.jittered,
  )
}

/** The command handler's operations. */
export interface SessionsShape {
  /** Decides and appends; answers the appended events (none when the decision was a no-op) and the new state. */
  readonly execute: (sessionId: string, input: Input, options?: ExecuteOptions) => Effect.Effect<Executed, ExecuteError>
  /** The session's current state (catching up with events appended elsewhere). */
  readonly load: (sessionId: string) => Effect.Effect<State, LoadError>
  /**
   * The session's whole state folded from its first event, messages a live state dropped included (for reads of
   * old messages, such as recall); costs a read of the whole stream.
   */
  readonly history: (sessionId: string) => Effect.Effect<State, LoadError>
  /** The session's events, decoded, from stream version `from` and up to `to` (both inclusive) when given. */
  readonly events: (
    sessionId: string,
    options?: { readonly from?: number | undefined; readonly to?: number | undefined },
  ) => Effect.Effect<ReadonlyArray<Event>, LoadError>
  /**
   * Forks `parentId` at version `at` (default: its current version) into the new session `childId`: the child's
   * stream starts with copies of the parent's first `at` events, then `SessionForked`. Writes nothing on any error.
   */
  readonly fork: (parentId: string, childId: string, at?: number | undefined) => Effect.Effect<Forked, ForkError>
  /**
   * Waits until every snapshot due so far is written (or its write failed, with a warning). Snapshots are written off
   * `execute`'s path, after it returns (ADR 0024); nothing needs this for correctness (a snapshot only shortens a
   * restart's replay), only callers that read the store's snapshots themselves.
   */
  readonly flushSnapshots: Effect.Effect<void>
}

/** The command handler over the event store. */
export class Sessions extends Context.Service<Sessions, SessionsShape>()("@pivot/runtime/Sessions") {
  /** The handler over the `EventStore` in context, with ids from `Ids`. */
  static readonly layer = (options: Options = {}): Layer.Layer<Sessions, never, EventStore | Ids.Ids> =>
    Layer.effect(Sessions, make(options))
}

/**
 * Builds the handler (see `Sessions.layer`); its snapshot writer lives in the scope, whose close writes the snapshots
 * still due.
 */
export const make = (options: Options = {}): Effect.Effect<SessionsShape, never, EventStore | Ids.Ids | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const ids = yield* Ids.Ids
    const maxAttempts = Math.max(1, options.maxAttempts ?? Number.POSITIVE_INFINITY)
    const conflictTimeout = Duration.fromInputUnsafe(options.conflictTimeout ?? Duration.minutes(2))
    const conflictMillis = Duration.toMillis(conflictTimeout)
    const backoff = conflictSchedule(options)
    const cacheSize = Math.max(1, options.cacheSize ?? 1000)
    const cache = new Map<string, State>()
    const bounded = options.boundedMemory !== false
    const snapshotting = options.snapshots !== false && options.encryptAtRest !== true
    const snapshotEvery = Math.max(1, (options.snapshots === false ? undefined : options.snapshots?.every) ?? 200)
    const snapshotAtPivots = options.snapshots === false ? false : options.snapshots?.atPivots !== false
    // Read at build, as `conflictSchedule` reads its durations: a bad value fails here, not at the close.
    const flushTimeout = Duration.fromInputUnsafe(
      (options.snapshots === false ? undefined : options.snapshots?.flushTimeout) ?? Duration.seconds(5),
    )
    // The version of each cached session's latest snapshot (due, written or resumed from).
    const snapshotAt = new Map<string, number>()
    // At rest, the sessions appended to are snapshotted at their heads (never one only read: a reader writes nothing).
    const idleOption = options.snapshots === false ? false : options.snapshots?.idle
    const idleAfter = idleOption === false ? undefined : Duration.fromInputUnsafe(idleOption ?? Duration.seconds(1))
    const appended = new Set<string>()

    const remember = (sessionId: string, state: State) => {
      cache.delete(sessionId)
      cache.set(sessionId, state)
      if (cache.size > cacheSize) {
        const oldest = cache.keys().next()
        if (!oldest.done) {
          cache.delete(oldest.value)
          snapshotAt.delete(oldest.value)
          appended.delete(oldest.value)
        }
      }
    }

    const decodeAll = (sessionId: string, recorded: ReadonlyArray<RecordedEvent>) =>
      Effect.gen(function* () {
        const out: Array<Event> = []
        for (const r of recorded) {
          const decoded = decodeEvent(sessionId, r)
          if (Result.isFailure(decoded)) return yield* decoded.failure
          out.push(decoded.success)
        }
        return out
      })

    /** Folds the events appended after `from`'s version (up to version `to`, inclusive, when given). */
    const catchUp = (sessionId: string, from: State, to?: number): Effect.Effect<State, LoadError> =>
      // Nothing appended since `from` (the store can tell without I/O): no read.
      store.nothingAfter?.(Events.streamName(sessionId), from.session.version) === true
        ? Effect.succeed(from)
        : catchUpRead(sessionId, from, to)

    const catchUpRead = (sessionId: string, from: State, to?: number) =>
      Effect.gen(function* () {
        const stream = Events.streamName(sessionId)
        const upTo = to === undefined ? {} : { to }
        const recorded = yield* store.read(stream, { from: from.session.version + 1, ...upTo })
        if (recorded.length === 0) return from
        if (from !== initialState && SessionLog.forgottenIn(recorded)) {
          // Forgotten since `from` was read: it holds text the erasure took away. Fold the log again from its first
          // event (the erased fields now read as such); nothing read before is kept.
          snapshotAt.delete(sessionId)
          const whole = fold(yield* decodeAll(sessionId, yield* store.read(stream, upTo)))
          const state = bounded ? retain(whole) : whole
          remember(sessionId, state)
          return state
        }
        let state = fold(yield* decodeAll(sessionId, recorded), from)
        if (bounded && recorded.some((r) => r.type === "SummaryFinished")) state = retain(state)
        remember(sessionId, state)
        return state
      })

    /** `whole` (a state folded from the first event) advanced by the events appended since; not cached. */
    const advance = (sessionId: string, whole: State) =>
      Effect.gen(function* () {
        const recorded = yield* store.read(Events.streamName(sessionId), { from: whole.session.version + 1 })
        if (recorded.length === 0) return whole
        // Forgotten since `whole` was read (see `catchUp`): read again from the first event.
        if (SessionLog.forgottenIn(recorded)) return yield* history(sessionId)
        return fold(yield* decodeAll(sessionId, recorded), whole)
      })

    /** The whole state from the first event (nothing dropped); not cached. */
    const history = Traced.fn("Sessions.history")(function* (sessionId: string) {
      const recorded = yield* store.read(Events.streamName(sessionId))
      return fold(yield* decodeAll(sessionId, recorded))
    })

    /**
     * The latest snapshot's state, when it can be trusted; a warning says why one is not used. Whether the stream
     * reaches the snapshot's version is `resume`'s to check, with the events after it.
     */
    const fromSnapshot = (sessionId: string) =>
      Effect.gen(function* () {
        const stored = yield* store.readSnapshot(Events.streamName(sessionId))
        if (stored === undefined) return undefined
        const decoded = decodeSnapshot(sessionId, stored)
        if (Result.isFailure(decoded)) {
          yield* Effect.logWarning(snapshotWarning(sessionId, decoded.failure.reason, decoded.failure.detail))
          return undefined
        }
        return decoded.success
      })

    /**
     * The snapshot `from`, unless the stream is shorter than its version (a warning then): asked only when no event
     * followed it, since an event after the snapshot's version proves the stream reaches it (issue 32: a restart's
     * first call asks the store one thing less).
     */
    const reached = (sessionId: string, from: State) =>
      Effect.gen(function* () {
        const version = from.session.version
        const head = yield* store.streamVersion(Events.streamName(sessionId))
        if (version <= head) return true
        const detail = `version ${version}, the stream has ${head} events`
        yield* Effect.logWarning(snapshotWarning(sessionId, "beyond-stream", detail))
        return false
      })

    /** A session not in the cache: from its latest snapshot and the events after it, or from its first event. */
    const resume = (sessionId: string) =>
      Effect.gen(function* () {
        let start = snapshotting ? yield* fromSnapshot(sessionId) : undefined
        if (start !== undefined) snapshotAt.set(sessionId, start.session.version)
        let state = yield* catchUp(sessionId, start ?? initialState)
        if (start !== undefined && state === start && !(yield* reached(sessionId, start))) {
          snapshotAt.delete(sessionId)
          start = undefined
          state = yield* catchUp(sessionId, initialState)
        }
        if (state === initialState || !bounded || start !== undefined) return state
        // Folded from the first event: drop what no rule can reach before caching it.
        const kept = retain(state)
        remember(sessionId, kept)
        return kept
      })

    // Snapshots are written off the command's path (ADR 0024): `execute` leaves the due state in its session's slot
    // (a later one replaces it) and one fiber of the layer's scope encodes and writes the slots. A state is immutable,
    // so the one written is exactly the state at the version it names, however late.
    const due = new Map<string, State>()
    const wake = yield* Queue.unbounded<void>()
    // Held while slots are written: by the writer fiber, or by `flushSnapshots` and the close in its stead.
    const writing = yield* Semaphore.make(1)
    let closed = false
    // Appends so far: the writer waits for a quiet moment (no append for `SNAPSHOT_QUIET`), as between an agent's
    // turns, so the encoding does not land in the next command (the same thread runs both); at most `SNAPSHOT_DEFER`.
    let appends = 0
    // Woken by the first append after a rest (`restArmed` until the rest watcher takes it).
    const rest = yield* Queue.unbounded<void>()
    let restArmed = false

    /** Leaves a snapshot for the writer when one is due (synchronous: the command does not wait for it). */
    const snapshotIfDue = (sessionId: string, state: State, events: ReadonlyArray<Event>) => {
      appends++
      if (!snapshotting || closed) return
      if (idleAfter !== undefined) {
        appended.add(sessionId)
        if (!restArmed) {
          restArmed = true
          Queue.offerUnsafe(rest, undefined)
        }
      }
      const last = snapshotAt.get(sessionId) ?? 0
      const pivoted = snapshotAtPivots && events.some((e) => e._tag === "SummaryFinished")
      if (!pivoted && state.session.version - last < snapshotEvery) return
      // The state is already retained: at its latest pivot by `execute`, `catchUp` or `resume`, and nothing more
      // becomes unreachable before the next pivot.
      if (due.size === 0) Queue.offerUnsafe(wake, undefined)
      due.set(sessionId, state)
      // Counted from now: a failed write costs one snapshot, not one attempt per later command.
      snapshotAt.set(sessionId, state.session.version)
    }

    /** Writes one snapshot; a failure is logged, never anyone's error (snapshots are an optimisation). */
    const writeSnapshot = (sessionId: string, state: State) =>
      Effect.suspend(() =>
        store.writeSnapshot(Events.streamName(sessionId), {
          version: state.session.version,
          format: SNAPSHOT_FORMAT,
          data: encodeSnapshot(state),
          // A forget committed after this state was folded wins: its text must not be written back (issue 18).
          unlessAfter: SessionLog.FORGOTTEN,
        }),
      ).pipe(
        Effect.catch((error) => notWritten(sessionId, error)),
        // A defect too (an encoding that throws): the writer fiber lives on for the other sessions.
        Effect.catchDefect((defect) => notWritten(sessionId, defect)),
      )

    const notWritten = (sessionId: string, error: unknown) =>
      Effect.logWarning(`session ${sessionId}: snapshot not written (${messageOf(error)})`)

    /** Writes every slot, the ones filled meanwhile included. */
    const drain = writing.withPermits(1)(
      Effect.gen(function* () {
        for (let next = due.entries().next(); !next.done; next = due.entries().next()) {
          const [sessionId, state] = next.value
          due.delete(sessionId)
          yield* writeSnapshot(sessionId, state)
        }
      }),
    )

    /** Returns once no append came for `SNAPSHOT_QUIET`, or `SNAPSHOT_DEFER` after it began. */
    const quiet = Effect.gen(function* () {
      const start = yield* Clock.currentTimeMillis
      for (;;) {
        const seen = appends
        yield* Effect.sleep(SNAPSHOT_QUIET)
        if (appends === seen || (yield* Clock.currentTimeMillis) - start >= SNAPSHOT_DEFER) return
      }
    })

    /** Leaves each session appended to whose latest snapshot is behind its head for the writer, at its head. */
    const dueAtHeads = () => {
      for (const sessionId of appended) {
        const state = cache.get(sessionId)
        if (state === undefined || state.session.version <= (snapshotAt.get(sessionId) ?? 0)) continue
        due.set(sessionId, state)
        snapshotAt.set(sessionId, state.session.version)
      }
      appended.clear()
    }

    /** Returns once no append came for `after`: the runtime is at rest. */
    const atRest = (after: Duration.Duration) =>
      Effect.gen(function* () {
        for (;;) {
          const seen = appends
          yield* Effect.sleep(after)
          if (appends === seen) return
        }
      })

    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.andThen(Queue.take(wake), quiet), drain)))
    if (idleAfter !== undefined)
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.gen(function* () {
            yield* Queue.take(rest)
            yield* atRest(idleAfter)
            restArmed = false
            dueAtHeads()
            yield* drain
          }),
        ),
      )
    // Runs before the writer is interrupted (finalizers run in reverse), and before the store's own close (the store
    // was built first): what is due is written, or dropped after `flushTimeout`; no write follows the close.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        if (idleAfter !== undefined) dueAtHeads()
        return Effect.ignore(Effect.timeoutOption(drain, flushTimeout)).pipe(
          // Dropped: a `flushSnapshots` after the close must not write them (the store may be closed by then).
          Effect.andThen(Effect.sync(() => due.clear())),
        )
      }),
    )

    const load = Traced.fn("Sessions.load")(function* (sessionId: string) {
      const cached = cache.get(sessionId)
      return yield* cached === undefined ? resume(sessionId) : catchUp(sessionId, cached)
    })

    const execute = Traced.fn("Sessions.execute")(function* (
      sessionId: string,
      input: Input,
      executeOptions?: ExecuteOptions,
    ) {
      const stream = Events.streamName(sessionId)
      const basis = executeOptions?.basis
      let state = cache.get(sessionId) ?? (yield* resume(sessionId))
      // The backoff's steps, made at the first conflict (most commands never meet one).
      let wait: ((input: unknown) => Effect.Effect<unknown, unknown>) | undefined
      // The whole log's state once an attempt needed it, caught up (not read again) by the next attempts.
      let whole: State | undefined
      // The last attempt's refusal for a lock held elsewhere, if that is how it ended.
      let locked: StoreUnavailable | undefined
      const startedAt = yield* Clock.currentTimeMillis
      let attempt = 1
      for (; ; attempt++) {
        // Checked on every attempt: a forget appends an event, so a stale state never gets past the append.
        if (basis !== undefined && state.runtime.forgotten > basis.runtime.forgotten)
          return yield* new SessionErased({ sessionId })
        const decoded = decodeDecision(typeof input === "function" ? input(state) : input)
        if (Result.isFailure(decoded)) return yield* decoded.failure
        let decision = decoded.success
        const redactAt = options.redactOnRecord === true ? yield* Clock.currentTimeMillis : undefined
        let decided = decide(state, decision, redactAt)
        let onWhole = false
        if (Result.isFailure(decided)) {
          // A refusal on a possibly stale cache: refuse only on the freshest state.
          const fresh = yield* catchUp(sessionId, state)
          if (fresh !== state) {
            state = fresh
            continue
          }
        }
        // A live state that dropped old messages decides again on the whole log when the decision may involve one.
        if (
          Retention.mayNeedHistory(state.session, {
            refused: Result.isFailure(decided),
            events: Result.isSuccess(decided) ? decided.success.events : [],
          })
        ) {
          whole = whole === undefined ? yield* history(sessionId) : yield* advance(sessionId, whole)
          if (whole.session.version !== state.session.version) {
            // Another writer appended meanwhile: a decision on the older live state would be stale, so bring the live
            // state to the whole log's version and decide there (a later append is caught by the expected version).
            state = yield* catchUp(sessionId, state, whole.session.version)
            if (typeof input === "function") {
              const again = decodeDecision(input(state))
              if (Result.isFailure(again)) return yield* again.failure
              decision = again.success
            }
          }
          decided = decide(whole, decision, redactAt)
          onWhole = true
        }
        if (Result.isFailure(decided)) return yield* decided.failure
        const { events } = decided.success
        if (events.length === 0) return { events, state }
        // The next live state is the current one advanced (the whole log's state, if decided there, is not kept).
        let next = onWhole ? fold(events, state) : decided.success.state
        // A pin of a message the live state dropped: the live state takes the whole log's, so the next pivot can
        // bring the message back (retained again below, holding the pinned message).
        if (onWhole && whole !== undefined && events.some((e) => pinsDropped(state, e)))
          next = bounded ? retain(fold(events, whole)) : fold(events, whole)
        const encoded: Array<NewEvent> = []
        for (const event of events) encoded.push(encodeEvent(yield* ids.event, event, options.encryptAtRest === true))
        // A lock held past the busy timeout (a large fork or import on SQLite) wrote nothing: waited out like a
        // conflict, on the same schedule, and reported as itself if it outlasts every attempt (issue 32, defect 3).
        const outcome = yield* store.append(stream, state.session.version, encoded).pipe(
          Effect.map(() => "appended" as const),
          Effect.catchTag("WrongExpectedVersion", () => Effect.succeed(undefined)),
          Effect.catchTag("StoreUnavailable", (error) =>
            isLocked(error) ? Effect.succeed(error) : Effect.fail(error),
          ),
        )
        locked = typeof outcome === "object" ? outcome : undefined
        const appended = outcome === "appended"
        if (appended) {
          if (bounded && events.some((e) => e._tag === "SummaryFinished")) next = retain(next)
          snapshotIfDue(sessionId, next, events)
          remember(sessionId, next)
          return { events, state: next }
        }
        yield* Effect.annotateCurrentSpan("conflicts", attempt)
        if (attempt >= maxAttempts) break
        // The schedule never ends (no Done to handle); it only sleeps.
        wait ??= yield* Schedule.toStepWithSleep(backoff)
        yield* Effect.ignore(wait(undefined))
        if ((yield* Clock.currentTimeMillis) - startedAt > conflictMillis) break
        state = yield* catchUp(sessionId, state)
      }
      return yield* locked ?? new ConcurrencyConflict({ sessionId, attempts: attempt })
    })

    const events = Traced.fn("Sessions.events")(function* (
      sessionId: string,
      options?: { readonly from?: number | undefined; readonly to?: number | undefined },
    ) {
      const recorded = yield* store.read(Events.streamName(sessionId), {
        ...(options?.from === undefined ? {} : { from: options.from }),
        ...(options?.to === undefined ? {} : { to: options.to }),
      })
      return yield* decodeAll(sessionId, recorded)
    })

    const fork = Traced.fn("Sessions.fork")(function* (parentId: string, childId: string, at?: number) {
      const head = yield* store.streamVersion(Events.streamName(parentId))
      if (head === 0) return yield* new ForkSourceMissing({ sessionId: parentId })
      const version = at ?? head
      if (!Number.isSafeInteger(version) || version < 1 || version > head)
        return yield* new ForkVersionOutOfRange({ sessionId: parentId, at: version, version: head })
      if ((yield* store.streamVersion(Events.streamName(childId))) > 0)
        return yield* new ForkTargetExists({ sessionId: childId })
      const inherited = yield* events(parentId, { to: version })
      // After the fork point only the parent's own lineage matters (decoded alone: no message is decoded for it).
      const later = yield* store.read(Events.streamName(parentId), { from: version + 1 })
      const ancestry = yield* decodeAll(
        parentId,
        later.filter((r) => r.type === "SessionForked"),
      )
      const forkedAt = yield* Clock.currentTimeMillis
      const copies: Array<Event> = [
        ...inherited.map((e) => (e._tag === "SessionStarted" ? { ...e, sessionId: childId as Ids.SessionId } : e)),
        ...lineageBeyond(ancestry, version, forkedAt),
        { _tag: "SessionForked", at: forkedAt, parent: parentId as Ids.SessionId, parentVersion: version },
      ]
      // A fork of an encrypted session is encrypted too (with its own key): its copies must be erasable.
      const encrypted = options.encryptAtRest === true || (yield* store.isSealed(Events.streamName(parentId)))
      const encoded: Array<NewEvent> = []
      for (const event of copies) encoded.push(encodeEvent(yield* ids.event, event, encrypted))
      // Forks into one id racing: the winner holds SQLite's lock while it copies (seconds for a long parent), and a
      // loser that waited past the busy timeout has written nothing. It looks again: the child stored is its answer
      // (`ForkTargetExists`), otherwise it tries again on the conflict schedule (issue 32, defect 3).
      const appendChild = Effect.gen(function* () {
        if ((yield* store.streamVersion(Events.streamName(childId))) > 0)
          return yield* new ForkTargetExists({ sessionId: childId })
        yield* store
          .append(Events.streamName(childId), 0, encoded)
          .pipe(
            Effect.catchTag("WrongExpectedVersion", () => Effect.fail(new ForkTargetExists({ sessionId: childId }))),
          )
      })
      yield* Effect.retry(appendChild, {
        schedule: Schedule.upTo(backoff, { duration: conflictTimeout }),
        ...(Number.isFinite(maxAttempts) ? { times: maxAttempts - 1 } : {}),
        while: isLocked,
      })
      // The parent forgotten while it was copied (`SessionLog.forget` looks for forks only after its own marker, so
      // one of the two sees the other): the fork is forgotten with it.
      const since = yield* store.read(Events.streamName(parentId), { from: head + 1 })
      if (SessionLog.forgottenIn(since))
        yield* SessionLog.forget(childId).pipe(
          Effect.catchTag("UnknownSession", (error) => Effect.die(error)),
          Effect.provideService(EventStore, store),
        )
      return {
        sessionId: childId,
        parent: parentId,
        parentVersion: version,
        version: copies.length,
        encrypted,
      } satisfies Forked
    })

    return { execute, load, history, events, fork, flushSnapshots: drain } satisfies SessionsShape
  })
