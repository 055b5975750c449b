/**
 * Projection plugins: users' read models, kept up to date, stored and served by pivot on SQLite and PostgreSQL.
 *
 * A projection is core's `Projection` (a named, versioned, pure fold). Registered with the store's layer it runs:
 *
 * - **inline** (per session): folded inside each append's transaction, so a read after a write sees it. A row per
 *   session holds the state and the stream version it covers; an append whose events do not follow on (a session
 *   written by a process without the projection, a row reset by a rebuild) leaves the row behind, and the next `get`
 *   catches it up from the session's log.
 * - **async** (per session or across sessions): a checkpointed subscription over the store's global position. Each
 *   batch's states and the new checkpoint are committed in one transaction that only succeeds if the checkpoint is
 *   still the one the batch started from (compare-and-set): an event takes effect once, whoever dies when. A lease
 *   (renewed with each batch) lets one process of many do the work; another takes over when it expires.
 *
 * A new version (bump `projection.version`) is built from the first event in the background while writers go on,
 * then swapped in: older versions' rows are deleted once it has caught up. A projection that throws is isolated: the
 * failure is recorded on its status, the append or the other projections go on, and the batch is retried with
 * exponential backoff. See ADR 0018.
 */
import type { Events, Projection } from "@pivot/core"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { type Migrator, SqlClient, type SqlError } from "effect/sql"
import type { RecordedEvent } from "../Event.ts"
import type { EventStoreShape } from "../EventStore.ts"
import { migrateUnlessCurrent, recordedSqlite, runAll, script } from "../internal/migrations.ts"
import { classify, streamLock } from "../internal/sql.ts"
import type { ReadError } from "../StoreError.ts"
import * as SessionLog from "../session/SessionLog.ts"

/** How a projection runs: in the append's transaction, or behind it on a checkpointed subscription. */
export type Mode = "inline" | "async"

/** What a projection's states are keyed by: one per session, or one across all sessions. */
export type Scope = "session" | "global"

/** A projection registered with the store: the fold, how it runs and what its state is keyed by. */
export interface Definition<S> {
  readonly projection: Projection.Projection<S>
  readonly mode: Mode
  readonly scope: Scope
  /**
   * Row-level storage: the projection's state kept as rows of its own tables, written by these functions, instead of
   * one JSON row per key. The built-in read models (`store/src/readmodels/`) are such inline projections; users'
   * projections are stored as JSON (a definition of theirs with rows is refused).
   */
  readonly rows?: Rows<S> | undefined
}

/**
 * How an inline projection stored as rows writes its state, inside the append's transaction: clear a key's rows,
 * write them all from a state, or write only what one event changed (`prev` → `next`).
 */
export interface Rows<S> {
  readonly clear: (sql: Sql, key: string) => Effect.Effect<void, SqlError.SqlError>
  readonly write: (sql: Sql, key: string, state: S) => Effect.Effect<void, SqlError.SqlError>
  readonly apply: (
    sql: Sql,
    key: string,
    prev: S,
    next: S,
    event: Events.Event,
    meta: Projection.EventMeta,
  ) => Effect.Effect<void, SqlError.SqlError>
}

/** A definition of any state type (the registry holds many; `get` is typed by the definition given). */
// biome-ignore lint/suspicious/noExplicitAny: the registry erases each projection's state type
export type AnyDefinition = Definition<any>

/** An inline projection: one state per session, updated in the append's own transaction (read-your-writes). */
export const inline = <S>(projection: Projection.Projection<S>): Definition<S> => ({
  projection,
  mode: "inline",
  scope: "session",
})

/** An async projection (default: one state across all sessions), kept by a checkpointed subscription. */
export const async = <S>(
  projection: Projection.Projection<S>,
  options: { readonly scope?: Scope | undefined } = {},
): Definition<S> => ({ projection, mode: "async", scope: options.scope ?? "global" })

/** The key of the one state of a global projection. */
export const GLOBAL_KEY = "*"

/** A definition the projector cannot run (a duplicate name, an inline projection across sessions, …). */
export class InvalidProjection extends Schema.TaggedError<InvalidProjection>()("InvalidProjection", {
  name: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `projection ${this.name}: ${this.reason}`
  }
}

/** `get` of a projection that is not registered with this store's layer. */
export class UnknownProjection extends Schema.TaggedError<UnknownProjection>()("UnknownProjection", {
  name: Schema.String,
}) {
  override get message(): string {
    return `projection ${this.name} is not registered: pass it to the store layer's projections option`
  }
}

/** An async projection (or a new version of one) that has not yet caught up with the log once. */
export class ProjectionNotReady extends Schema.TaggedError<ProjectionNotReady>()("ProjectionNotReady", {
  name: Schema.String,
  version: Schema.Number,
  checkpoint: Schema.Number,
  head: Schema.Number,
}) {
  override get message(): string {
    return `projection ${this.name} v${this.version} is being built: at position ${this.checkpoint} of ${this.head}`
  }
}

/** The projection's fold threw on an event. */
export class ProjectionFailed extends Schema.TaggedError<ProjectionFailed>()("ProjectionFailed", {
  name: Schema.String,
  version: Schema.Number,
  reason: Schema.String,
}) {
  override get message(): string {
    return `projection ${this.name} v${this.version} failed: ${this.reason}`
  }
}

/** Why `get` failed. */
export type GetError = UnknownProjection | ProjectionNotReady | ProjectionFailed | ReadError

/** A projection's status, as stored: what `pivot projections status` and the JSON API show. */
export interface Status {
  readonly name: string
  readonly version: number
  readonly mode: Mode
  readonly scope: Scope
  /** Caught up with the log at least once (an inline projection: every session existing when it was added). */
  readonly ready: boolean
  /**
   * The global position its states include (an inline projection's background build; appends go beyond it). For a
   * built-in read model: the head less its lag.
   */
  readonly checkpoint: number
  /** The store's newest position when the status was read. */
  readonly head: number
  /** Events not yet applied (`head − checkpoint`; 0 for a ready inline projection, whose appends apply at once). */
  readonly lag: number
  /** Failures in a row (0 when the last attempt succeeded), and the last one's message. */
  readonly failures: number
  readonly error: string | undefined
  /** The process holding its lease (async work), and until when (epoch ms). */
  readonly owner: string | undefined
  readonly leaseUntil: number | undefined
  /** Rows of state stored. */
  readonly keys: number
}

/** The projections' operations. */
export interface ProjectionsShape {
  /**
   * The state of a projection for a key: a session id (scope `session`), or nothing (scope `global`). An inline
   * projection is first caught up with the session's log; an async one answers its state at its checkpoint (see
   * `status` for its lag) once it has caught up once.
   */
  readonly get: <S>(definition: Definition<S>, key?: string) => Effect.Effect<S, GetError>
  /** Every projection stored, registered here or not, with its progress. */
  readonly status: Effect.Effect<ReadonlyArray<Status>, ReadError>
  /**
   * The built-in read models' progress in the same shape (`store/src/readmodels/status.ts`): `keys` the sessions each
   * holds at its version, `lag` the events not yet folded into it (a version bump, events written without the hook).
   */
  readonly builtIns: Effect.Effect<ReadonlyArray<Status>, ReadError>
  /** Deletes a projection's states and checkpoint (its current version, or all): it is built again from the first event. */
  readonly rebuild: (name: string) => Effect.Effect<number, ReadError>
  /**
   * The stored state of a projection by name (registered here or not), for viewers: its newest ready version's state
   * for `key` (default: the global key), as stored JSON, and up to 100 of its keys. `undefined` when none is stored.
   */
  readonly stored: (
    name: string,
    key?: string,
  ) => Effect.Effect<
    { readonly version: number; readonly state: unknown; readonly keys: ReadonlyArray<string> } | undefined,
    ReadError
  >
  /** Waits until every registered async projection (and inline build) has caught up with the log as it is now. */
  readonly awaitCaughtUp: Effect.Effect<void, ReadError>
}

/** The projections service. */
export class Projections extends Context.Service<Projections, ProjectionsShape>()("@pivot/store/Projections") {}

/** Options of the projector. */
export interface Options {
  readonly projections?: ReadonlyArray<AnyDefinition> | undefined
  /** Events read per batch of the background work; default 500. */
  readonly batchSize?: number | undefined
  /** How often caught-up async work looks for new events; default 100 ms. */
  readonly pollInterval?: Duration.Input | undefined
  /** How long a lease lasts without renewal; default 10 s. */
  readonly leaseTime?: Duration.Input | undefined
  /** The longest one batch may take before it counts as a failure; default 30 s. */
  readonly batchTimeout?: Duration.Input | undefined
  /** This process's name on leases; default a random id. */
  readonly owner?: string | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Tables

const tablesDdl = [
  `CREATE TABLE pivot_pj_state (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  key TEXT NOT NULL,
  state TEXT NOT NULL,
  stream_version INTEGER NOT NULL,
  PRIMARY KEY (name, version, key)
)`,
  `CREATE TABLE pivot_pj_status (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  mode TEXT NOT NULL,
  scope TEXT NOT NULL,
  checkpoint BIGINT NOT NULL,
  ready INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  error TEXT,
  owner TEXT,
  lease_until BIGINT,
  PRIMARY KEY (name, version)
)`,
] as const

const createTables = runAll(tablesDdl)

/** Creates the projections' tables (migrations in their own table, `pivot_pj_migrations`); one read when current. */
export const migrate = migrateUnlessCurrent("pivot_pj_migrations", { "1_create_projections": createTables })

/** SQLite: the projections' tables of a new store, in one script (ADR 0061); what `migrate` leaves in an empty one. */
export const freshSqlite = `${recordedSqlite("pivot_pj_migrations", ["1_create_projections"])}
${script(tablesDdl)}`

type Sql = SqlClient.SqlClient
type Num = number | string | bigint

interface StateRow {
  readonly key: string
  readonly state: string
  readonly stream_version: Num
}

interface StatusRow {
  readonly name: string
  readonly version: Num
  readonly mode: string
  readonly scope: string
  readonly checkpoint: Num
  readonly ready: Num
  readonly failures: Num
  readonly error: string | null
  readonly owner: string | null
  readonly lease_until: Num | null
}

/**
 * Checks a set of users' definitions before anything runs: unique names (none a built-in read model's, `builtIns`),
 * inline only per session, sane versions, JSON storage.
 */
export const validate = (
  definitions: ReadonlyArray<AnyDefinition>,
  builtIns: ReadonlyArray<AnyDefinition> = [],
): Result.Result<void, InvalidProjection> => {
  const seen = new Set<string>()
  const reserved = new Set(builtIns.map((definition) => definition.projection.name))
  for (const { projection, mode, scope, rows } of definitions) {
    const fail = (reason: string) => Result.fail(new InvalidProjection({ name: projection.name, reason }))
    if (!/^[A-Za-z0-9_.:-]{1,100}$/.test(projection.name))
      return fail("a name is 1 to 100 letters, digits, '_', '.', ':' or '-'")
    if (reserved.has(projection.name)) return fail("the name of a built-in read model")
    if (seen.has(projection.name)) return fail("registered twice")
    if (rows !== undefined) return fail("row-level storage is the built-in read models' own; yours is stored as JSON")
    if (!Number.isSafeInteger(projection.version) || projection.version < 1)
      return fail(`version ${projection.version} is not a positive integer`)
    if (mode === "inline" && scope === "global")
      return fail("an inline projection is per session: one state across sessions would serialise every append")
    seen.add(projection.name)
  }
  return Result.succeed(undefined)
}

/**
 * The projector's options, checked where the projections are: a duration that is not one (`leaseTime: "10 secs"`)
 * or a batch size that is not a positive integer is refused by name, not thrown later by the background work.
 */
export const validateOptions = (
  options: Omit<Options, "projections"> | undefined,
): Result.Result<void, InvalidProjection> => {
  const fail = (option: string, value: unknown, expected: string) =>
    Result.fail(
      new InvalidProjection({ name: "options", reason: `projector.${option} ${String(value)} is not ${expected}` }),
    )
  for (const option of ["pollInterval", "leaseTime", "batchTimeout"] as const) {
    const value = options?.[option]
    if (value !== undefined && Option.isNone(Duration.fromInput(value)))
      return fail(option, value, 'a duration ("10 seconds", ms)')
  }
  const batchSize = options?.batchSize
  if (batchSize !== undefined && !(Number.isSafeInteger(batchSize) && batchSize >= 1))
    return fail("batchSize", batchSize, "a positive integer")
  return Result.succeed(undefined)
}

// One session's or the store's events applied to a state; a throw of the user's fold becomes a typed failure.
const applyAll = <S>(
  projection: Projection.Projection<S>,
  state: S,
  logged: ReadonlyArray<SessionLog.Logged>,
): Result.Result<S, ProjectionFailed> => {
  try {
    let next = state
    for (const { event, meta } of logged) next = projection.evolve(next, event, meta)
    return Result.succeed(next)
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0]!
    return Result.fail(new ProjectionFailed({ name: projection.name, version: projection.version, reason }))
  }
}

const encodeState = (state: unknown): string => JSON.stringify(state) ?? "null"

const upsertState = (sql: Sql, definition: AnyDefinition, key: string, state: unknown, streamVersion: number) => {
  const { name, version } = definition.projection
  const text = encodeState(state)
  // A session's row never moves back: a late writer (a slower catch-up) loses to the one that covered more.
  return sql`INSERT INTO pivot_pj_state (name, version, key, state, stream_version)
VALUES (${name}, ${version}, ${key}, ${text}, ${streamVersion})
ON CONFLICT (name, version, key) DO UPDATE SET state = excluded.state, stream_version = excluded.stream_version
WHERE pivot_pj_state.stream_version <= excluded.stream_version`
}

const readState = (sql: Sql, name: string, version: number, key: string) =>
  Effect.map(
    sql<StateRow>`SELECT key, state, stream_version FROM pivot_pj_state
WHERE name = ${name} AND version = ${version} AND key = ${key}`,
    (rows) => rows[0],
  )

const recordFailure = (sql: Sql, name: string, version: number, reason: string) =>
  sql`UPDATE pivot_pj_status SET failures = failures + 1, error = ${reason.slice(0, 1000)}
WHERE name = ${name} AND version = ${version}`

const headPosition = (sql: Sql) =>
  Effect.map(sql<{ readonly head: Num | null }>`SELECT MAX(position) AS head FROM pivot_events`, (rows) =>
    Number(rows[0]?.head ?? 0),
  )

const statusOf = (row: StatusRow, head: number, keys: number): Status => {
  const checkpoint = Number(row.checkpoint)
  const ready = Number(row.ready) === 1
  return {
    name: row.name,
    version: Number(row.version),
    mode: row.mode === "inline" ? "inline" : "async",
    scope: row.scope === "global" ? "global" : "session",
    ready,
    checkpoint,
    head,
    lag: row.mode === "inline" && ready ? 0 : Math.max(0, head - checkpoint),
    failures: Number(row.failures),
    error: row.error ?? undefined,
    owner: row.owner ?? undefined,
    leaseUntil: row.lease_until === null ? undefined : Number(row.lease_until),
    keys,
  }
}

/**
 * The store-side half: the hooks the SQL store calls on open and forget. Appends go through the one inline projector
 * (`store/src/readmodels/projector.ts`), which runs the built-in read models and then `applyInline`.
 */
export interface Hooks {
  readonly onOpen: (sql: Sql) => Effect.Effect<void, SqlError.SqlError | Migrator.MigrationError>
  readonly onForget: (sql: Sql, stream: string) => Effect.Effect<void, SqlError.SqlError>
}

/** The inline projections among a set of definitions, each stored as one JSON state per session. */
export const inlineOf = (definitions: ReadonlyArray<AnyDefinition>): ReadonlyArray<AnyDefinition> =>
  definitions.filter((definition) => definition.mode === "inline" && definition.rows === undefined)

/**
 * Applies one session's appended events (decoded once by the projector, for every inline projection) to inline
 * projections stored as JSON, in the append's transaction. A fold that throws is recorded on the projection's status
 * and the append commits; a row that does not follow on is left for `get` (or the background build) to catch up.
 */
export const applyInline = (
  sql: Sql,
  inlines: ReadonlyArray<AnyDefinition>,
  sessionId: string,
  events: ReadonlyArray<RecordedEvent>,
  logged: ReadonlyArray<SessionLog.Logged>,
): Effect.Effect<void, SqlError.SqlError> =>
  Effect.gen(function* () {
    if (inlines.length === 0 || events.length === 0) return
    for (const definition of inlines) {
      const { name, version } = definition.projection
      const row = yield* readState(sql, name, version, sessionId)
      const covered = row === undefined ? 0 : Number(row.stream_version)
      // Not contiguous: the row is caught up from the log by the next `get` (or the background build).
      if (covered !== events[0]!.streamVersion - 1) continue
      const from = row === undefined ? definition.projection.initial : (JSON.parse(row.state) as never)
      const next = applyAll(definition.projection, from, logged)
      if (Result.isFailure(next)) {
        yield* recordFailure(sql, name, version, next.failure.reason)
        continue
      }
      yield* upsertState(sql, definition, sessionId, next.success, events.at(-1)!.streamVersion)
    }
  })

/** The open and forget hooks of the projections' tables. */
export const hooks = (readonly: boolean): Hooks => {
  return {
    onOpen: (sql) => (readonly ? Effect.void : Effect.asVoid(Effect.provideService(migrate, SqlClient.SqlClient, sql))),
    onForget: (sql, stream) => {
      const sessionId = SessionLog.sessionIdOf(stream)
      // An erased session's derived copies go with it (ADR 0006); global states keep no session's text by key.
      return sessionId === undefined
        ? Effect.void
        : Effect.asVoid(sql`DELETE FROM pivot_pj_state WHERE key = ${sessionId}`)
    },
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The service and its background work

/** The service over the store's connection, with one background fiber per registered projection (scoped). */
export const make = (
  sql: Sql,
  store: EventStoreShape,
  options: Options & {
    readonly decoder: SessionLog.Decoder
    readonly readonly?: boolean | undefined
    readonly path?: string | undefined
    /** The built-in read models' status (`builtIns`). */
    readonly builtIns?: Effect.Effect<ReadonlyArray<Status>, SqlError.SqlError> | undefined
  },
) =>
  Effect.gen(function* () {
    const definitions = options.projections ?? []
    const byName = new Map(definitions.map((definition) => [definition.projection.name, definition]))
    const batchSize = options.batchSize ?? 500
    const pollInterval = Duration.fromInputUnsafe(options.pollInterval ?? "100 millis")
    const leaseTime = Duration.toMillis(Duration.fromInputUnsafe(options.leaseTime ?? "10 seconds"))
    const batchTimeout = Duration.fromInputUnsafe(options.batchTimeout ?? "30 seconds")
    const owner = options.owner ?? `pj-${Math.random().toString(36).slice(2, 10)}-${process.pid}`
    const decoder = options.decoder

    const register = (definition: AnyDefinition) => {
      const { name, version } = definition.projection
      return sql`INSERT INTO pivot_pj_status (name, version, mode, scope, checkpoint, ready, failures)
VALUES (${name}, ${version}, ${definition.mode}, ${definition.scope}, 0, 0, 0)
ON CONFLICT (name, version) DO NOTHING`
    }
    const toStoreError = classify(options.path)
    if (options.readonly !== true)
      for (const definition of definitions) yield* register(definition).pipe(Effect.mapError(toStoreError))

    const statusRow = (name: string, version: number) =>
      Effect.map(
        sql<StatusRow>`SELECT * FROM pivot_pj_status WHERE name = ${name} AND version = ${version}`,
        (rows) => rows[0],
      )

    // Takes or renews the lease; answers the row when this process holds it.
    const lease = (definition: AnyDefinition) =>
      Effect.gen(function* () {
        const { name, version } = definition.projection
        const now = yield* Clock.currentTimeMillis
        yield* sql`UPDATE pivot_pj_status SET owner = ${owner}, lease_until = ${now + leaseTime}
WHERE name = ${name} AND version = ${version}
AND (owner IS NULL OR owner = ${owner} OR lease_until IS NULL OR lease_until < ${now})`
        const row = yield* statusRow(name, version)
        return row !== undefined && row.owner === owner ? row : undefined
      })

    // One batch of events after the checkpoint, applied and committed with the checkpoint moved (compare-and-set).
    const batch = (definition: AnyDefinition, row: StatusRow) =>
      Effect.gen(function* () {
        const { projection } = definition
        const after = Number(row.checkpoint)
        const page = yield* Stream.runCollect(Stream.take(store.readAll({ after, pageSize: batchSize }), batchSize))
        const events = Array.from(page)
        if (events.length === 0) return 0
        const last = events.at(-1)!.position
        const keyed = new Map<string, Array<RecordedEvent>>()
        for (const event of events) {
          const sessionId = SessionLog.sessionIdOf(event.stream)
          if (sessionId === undefined) continue
          const key = definition.scope === "global" ? GLOBAL_KEY : sessionId
          const list = keyed.get(key)
          if (list === undefined) keyed.set(key, [event])
          else list.push(event)
        }
        const writes: Array<{ key: string; state: unknown; streamVersion: number }> = []
        for (const [key, recorded] of keyed) {
          const stored = yield* readState(sql, projection.name, projection.version, key)
          const covered = stored === undefined ? 0 : Number(stored.stream_version)
          // A session's row may already cover some of these (written inline): those are skipped, never applied twice.
          const fresh = definition.scope === "global" ? recorded : recorded.filter((e) => e.streamVersion > covered)
          if (fresh.length === 0) continue
          if (definition.scope === "session" && fresh[0]!.streamVersion !== covered + 1) continue
          const decoded = SessionLog.decodeAll(fresh, decoder)
          if (Result.isFailure(decoded)) return yield* decoded.failure
          const from = stored === undefined ? projection.initial : (JSON.parse(stored.state) as never)
          const next = applyAll(projection, from, decoded.success)
          if (Result.isFailure(next)) return yield* next.failure
          // A global state covers many streams: its stream version means nothing (0), its checkpoint is the position.
          const covers = definition.scope === "global" ? 0 : fresh.at(-1)!.streamVersion
          writes.push({ key, state: next.success, streamVersion: covers })
        }
        const now = yield* Clock.currentTimeMillis
        yield* sql.withTransaction(
          Effect.gen(function* () {
            const moved = yield* sql<{ readonly checkpoint: Num }>`UPDATE pivot_pj_status
SET checkpoint = ${last}, failures = 0, error = NULL, lease_until = ${now + leaseTime}
WHERE name = ${projection.name} AND version = ${projection.version} AND checkpoint = ${after} AND owner = ${owner}
RETURNING checkpoint`
            if (moved.length === 0) return yield* Effect.fail(new LostLease())
            for (const write of writes) yield* upsertState(sql, definition, write.key, write.state, write.streamVersion)
          }),
        )
        return events.length
      })

    // Once a version has caught up: it is ready, and older versions of the same name are retired (their rows deleted).
    const markReady = (definition: AnyDefinition) =>
      Effect.gen(function* () {
        const { name, version } = definition.projection
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`UPDATE pivot_pj_status SET ready = 1 WHERE name = ${name} AND version = ${version}`
            yield* sql`DELETE FROM pivot_pj_state WHERE name = ${name} AND version < ${version}`
            yield* sql`DELETE FROM pivot_pj_status WHERE name = ${name} AND version < ${version}`
          }),
        )
      })

    const backoff = Schedule.exponential("200 millis", 2).pipe(
      Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
    )

    // The background work of one projection: catch up batch by batch, then poll; an inline one stops once built.
    const work = (definition: AnyDefinition) => {
      const { name, version } = definition.projection
      const step = Effect.gen(function* () {
        const row = yield* lease(definition)
        if (row === undefined) return "idle" as const
        const applied = yield* batch(definition, row).pipe(
          Effect.timeoutOrElse({
            duration: batchTimeout,
            orElse: () => Effect.fail(new BatchTimeout({ seconds: Duration.toSeconds(batchTimeout) })),
          }),
        )
        if (applied > 0) return "busy" as const
        if (Number(row.ready) !== 1) yield* markReady(definition)
        return definition.mode === "inline" ? ("done" as const) : ("idle" as const)
      })
      const attempt = step.pipe(
        Effect.tapError((error) =>
          error instanceof LostLease
            ? Effect.void
            : Effect.ignore(
                recordFailure(sql, name, version, error instanceof ProjectionFailed ? error.reason : error.message),
              ),
        ),
        Effect.retry({ schedule: backoff, while: (error) => !(error instanceof LostLease) }),
        Effect.catch(() => Effect.succeed("idle" as const)),
      )
      return Effect.gen(function* () {
        while (true) {
          const outcome = yield* attempt
          if (outcome === "done") return
          if (outcome === "idle") yield* Effect.sleep(pollInterval)
        }
      })
    }

    const workers = new Map<string, ReturnType<typeof work>>()
    if (options.readonly !== true)
      for (const definition of definitions) {
        const worker = work(definition)
        workers.set(definition.projection.name, worker)
        yield* Effect.forkScoped(worker)
      }

    const get = <S>(definition: Definition<S>, key?: string): Effect.Effect<S, GetError> =>
      Effect.gen(function* () {
        const { projection } = definition
        const registered = byName.get(projection.name)
        if (registered === undefined || registered.projection.version !== projection.version)
          return yield* new UnknownProjection({ name: projection.name })
        const stateKey = definition.scope === "global" ? GLOBAL_KEY : (key ?? "")
        if (definition.mode === "async") {
          const row = yield* statusRow(projection.name, projection.version)
          if (row === undefined || Number(row.ready) !== 1)
            return yield* new ProjectionNotReady({
              name: projection.name,
              version: projection.version,
              checkpoint: row === undefined ? 0 : Number(row.checkpoint),
              head: yield* headPosition(sql),
            })
          const stored = yield* readState(sql, projection.name, projection.version, stateKey)
          return stored === undefined ? projection.initial : (JSON.parse(stored.state) as S)
        }
        // Inline: catch the session's row up with its log first (events written without the hook, a rebuild).
        const stream = `${SessionLog.STREAM_PREFIX}${stateKey}`
        const stored = yield* readState(sql, projection.name, projection.version, stateKey)
        const covered = stored === undefined ? 0 : Number(stored.stream_version)
        const from = stored === undefined ? projection.initial : (JSON.parse(stored.state) as S)
        const missing = yield* store.read(stream, { from: covered + 1 })
        if (missing.length === 0) return from
        const decoded = SessionLog.decodeAll(missing, decoder)
        if (Result.isFailure(decoded))
          return yield* new ProjectionFailed({
            name: projection.name,
            version: projection.version,
            reason: decoded.failure.message,
          })
        const next = yield* Effect.fromResult(applyAll(projection, from, decoded.success))
        if (options.readonly !== true)
          yield* sql.withTransaction(
            Effect.gen(function* () {
              yield* sql.onDialectOrElse({ pg: () => streamLock(sql, stream), orElse: () => Effect.void })
              yield* upsertState(sql, definition, stateKey, next, missing.at(-1)!.streamVersion)
            }),
          )
        return next
      }).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))))

    // A database opened read-only may predate the projections' tables: then there is nothing to show.
    const present =
      options.readonly !== true
        ? Effect.succeed(true)
        : Effect.map(
            sql.onDialectOrElse({
              pg: () => sql<{ readonly found: unknown }>`SELECT to_regclass('pivot_pj_status') AS found`,
              orElse: () =>
                sql<{
                  readonly found: unknown
                }>`SELECT name AS found FROM sqlite_master WHERE type = 'table' AND name = 'pivot_pj_status'`,
            }),
            (rows) => rows.length > 0 && rows[0]!.found !== null,
          )

    const status = Effect.gen(function* () {
      if (!(yield* present)) return []
      const rows = yield* sql<StatusRow>`SELECT * FROM pivot_pj_status ORDER BY name, version`
      const counts = yield* sql<{ readonly name: string; readonly version: Num; readonly keys: Num }>`
SELECT name, version, COUNT(*) AS keys FROM pivot_pj_state GROUP BY name, version`
      const head = yield* headPosition(sql)
      const keysOf = (name: string, version: number) =>
        Number(counts.find((c) => c.name === name && Number(c.version) === version)?.keys ?? 0)
      return rows.map((row) => statusOf(row, head, keysOf(row.name, Number(row.version))))
    }).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))))

    const rebuild = (name: string) =>
      Effect.gen(function* () {
        const registered = byName.get(name)
        const reset = yield* sql.withTransaction(
          Effect.gen(function* () {
            const rows = yield* sql<{ readonly version: Num }>`UPDATE pivot_pj_status
SET checkpoint = 0, ready = 0, failures = 0, error = NULL WHERE name = ${name} RETURNING version`
            yield* sql`DELETE FROM pivot_pj_state WHERE name = ${name}`
            return rows.length
          }),
        )
        // An inline projection's build had stopped once done: start it again.
        const worker = workers.get(name)
        if (registered?.mode === "inline" && worker !== undefined) yield* Effect.forkDetach(worker)
        return reset
      }).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))))

    const awaitCaughtUp = Effect.gen(function* () {
      const head = yield* headPosition(sql)
      while (true) {
        const rows = yield* sql<StatusRow>`SELECT * FROM pivot_pj_status`
        const behind = definitions.some((definition) => {
          const row = rows.find(
            (r) => r.name === definition.projection.name && Number(r.version) === definition.projection.version,
          )
          return (
            row === undefined ||
            Number(row.ready) !== 1 ||
            (definition.mode === "async" && Number(row.checkpoint) < head)
          )
        })
        if (!behind) return
        yield* Effect.sleep(pollInterval)
      }
    }).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))))

    const stored = (name: string, key?: string) =>
      Effect.gen(function* () {
        if (!(yield* present)) return undefined
        const versions = yield* sql<{ readonly version: Num }>`SELECT version FROM pivot_pj_status
WHERE name = ${name} AND ready = 1 ORDER BY version DESC`
        if (versions.length === 0) return undefined
        const version = Number(versions[0]!.version)
        const keys = yield* sql<{ readonly key: string }>`SELECT key FROM pivot_pj_state
WHERE name = ${name} AND version = ${version} ORDER BY key LIMIT 100`
        const row = yield* readState(sql, name, version, key ?? GLOBAL_KEY)
        return {
          version,
          state: row === undefined ? null : (JSON.parse(row.state) as unknown),
          keys: keys.map((k) => k.key),
        }
      }).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))))

    const builtIns = (options.builtIns ?? Effect.succeed([])).pipe(
      Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))),
    )

    return { get, status, builtIns, rebuild, awaitCaughtUp, stored } satisfies ProjectionsShape
  })

/** The batch's checkpoint moved under it (another process held the lease): nothing was written. */
class LostLease extends Schema.TaggedError<LostLease>()("LostLease", {}) {}

/** A batch took longer than `batchTimeout`. */
class BatchTimeout extends Schema.TaggedError<BatchTimeout>()("BatchTimeout", { seconds: Schema.Number }) {
  override get message(): string {
    return `a batch took longer than ${this.seconds} s`
  }
}
