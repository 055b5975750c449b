/**
 * The read side in SQL: core's projections of a session kept as tables next to the event log, on SQLite or
 * PostgreSQL, through the store's own `SqlClient`.
 *
 * - `window`: one row per message the model sees, in order (the stored message as JSON);
 * - `usage`: one row per session; `compactions`: one row per compaction; `pruned`: one row per pruned output;
 * - `audit`: one row per (message, event) pair: the events each message came from;
 * - `recall`: one row per recallable document (a pruned output, a finished summary) with its text, searched in full
 *   text by `context_recall`: an FTS5 table on SQLite, a `tsvector` GIN index on PostgreSQL.
 *
 * They are kept inline: the store's `onAppend` hook folds the new events into each projection inside the append's
 * transaction and writes only the rows that changed, so a committed event and its read models are never apart. Each
 * read model has a checkpoint per session (its name, projection version, stream version and position). A read first
 * catches up with the log if its checkpoint is behind (events appended by a store without the hook) or its
 * projection version changed (a bump forces a rebuild), and `rebuild` replays the log at any time. Rebuilt == inline
 * == the pure fold: the property the tests check.
 *
 * **Example**
 *
 * ```ts
 * const program = Effect.gen(function* () {
 *   const readModels = yield* ReadModels.ReadModels
 *   const window = yield* readModels.window("ses_1") // the stored messages the next model call sees
 * }).pipe(Effect.provide(ReadModels.layerSqlite({ filename: ".pivot/pivot.db" })))
 * ```
 */
import {
  Audit,
  CompactionHistory,
  Conversation,
  Events,
  type Ids,
  type Message,
  type Projection,
  PruneIndex,
  Recall,
  Retention,
  StateSnapshot,
  Usage,
  Window,
} from "@pivot/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import type { RecordedEvent } from "../Event.ts"
import {
  EventStore,
  type PostgresStoreOptions,
  type SqlHooks,
  type SqliteStoreOptions,
  type SqlStoreOptions,
} from "../EventStore.ts"
import * as Seal from "../internal/seal.ts"
import { classify, keysOf, streamLock } from "../internal/sql.ts"
import * as Projections from "../projections/Projections.ts"
import * as Snapshot from "../Snapshot.ts"
import { MalformedEvent, type ReadError } from "../StoreError.ts"
import { UndecodableEvent, UnknownSession } from "./SessionError.ts"
import * as SessionLog from "./SessionLog.ts"

type Event = Events.Event
type MessageId = Ids.MessageId
type Meta = Projection.EventMeta

// ---------------------------------------------------------------------------------------------------------------
// The projections, folded together

/** The state of every read model of one session. */
export interface States {
  readonly window: Window.State
  readonly usage: Usage.State
  readonly history: CompactionHistory.State
  readonly pruned: PruneIndex.State
  readonly audit: Audit.State
  /**
   * Resumed from a snapshot: messages before the window's oldest, and old compaction and prune entries, are not held
   * (see `snapshotOf`). Such states serve deltas only; anything needing more is folded from the whole log.
   */
  readonly partial?: true | undefined
}

/** The read models of a session with no events. */
export const initialStates: States = {
  window: Audit.projection.initial.window,
  usage: Usage.projection.initial,
  history: CompactionHistory.projection.initial,
  pruned: PruneIndex.projection.initial,
  audit: Audit.projection.initial,
}

/**
 * Folds one event into every read model. The window is the audit view's own window fold (`Audit` folds
 * `Window.evolve`): one fold instead of two, and one line of versions of the conversation's persistent map, which a
 * second fold from the same initial state would make reroot back and forth on every event.
 */
export const evolveStates = (states: States, event: Event, meta: Meta): States => {
  const audit = Audit.projection.evolve(states.audit, event, meta)
  return {
    window: audit.window,
    usage: Usage.projection.evolve(states.usage, event, meta),
    history: CompactionHistory.projection.evolve(states.history, event, meta),
    pruned: PruneIndex.projection.evolve(states.pruned, event, meta),
    audit,
    ...(states.partial === true ? { partial: true } : {}),
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Snapshots of the folded read models

/**
 * The format of the read models' snapshots: their projections' versions, the window encoding, the event catalog.
 * Version 2: the data names its session and stream version (what the checksum covers binds them, ADR 0013).
 */
export const snapshotFormat = (): string =>
  `pivot-read-models/2;${models.map((m) => `${m.name}:${m.version}`).join(",")};window=${StateSnapshot.FORMAT};events=${Events.catalogFingerprint()}`

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
    partial: true,
  }
}

/**
 * Whether a batch can be projected on partial states: every message an event names, other than one it adds, is held
 * by the window (an event naming an older message, such as a late tool result, needs the whole log).
 */
const heldFor = (states: States, logged: ReadonlyArray<SessionLog.Logged>): boolean => {
  if (states.partial !== true) return true
  const added = new Set<MessageId>()
  for (const { event } of logged) {
    const adds = Conversation.addedMessage(event)?.id
    // A started compaction names its summary before the summary exists.
    const future = event._tag === "CompactionStarted" ? event.summaryId : undefined
    for (const id of touchedIds(event))
      if (id !== adds && id !== future && !added.has(id) && !Conversation.has(states.window.conversation, id))
        return false
    if (adds !== undefined) added.add(adds)
  }
  return true
}

/** Folds a log into every read model (the pure fold the SQL tables must equal). */
export const foldStates = (log: Iterable<SessionLog.Logged>, from: States = initialStates): States => {
  let states = from
  for (const { event, meta } of log) states = evolveStates(states, event, meta)
  return states
}

/** One message of the audit view: a message the model sees and the ids of the events it came from. */
export interface AuditEntry {
  readonly message: Message.Message
  readonly eventIds: ReadonlyArray<string>
}

// Window and conversation states hold persistent sequences: `length` and `buffer` are their public shape.
const seqAt = <A>(seq: { readonly length: number; readonly buffer: ReadonlyArray<A> }, i: number): A => seq.buffer[i]!

/** The messages whose stored form an event can change: the one it adds and the ones it names. */
const touchedIds = (event: Event): Array<MessageId> => {
  const ids: Array<MessageId> = []
  const added = Conversation.addedMessage(event)
  if (added !== undefined) ids.push(added.id)
  const named = event as { readonly messageId?: unknown; readonly markerId?: unknown; readonly summaryId?: unknown }
  for (const id of [named.messageId, named.markerId, named.summaryId])
    if (typeof id === "string") ids.push(id as MessageId)
  return ids
}

// ---------------------------------------------------------------------------------------------------------------
// Tables

const createTables = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE pivot_rm_checkpoints (
  model TEXT NOT NULL,
  session_id TEXT NOT NULL,
  projection_version INTEGER NOT NULL,
  stream_version INTEGER NOT NULL,
  position BIGINT NOT NULL,
  PRIMARY KEY (model, session_id)
)`
  yield* sql`CREATE TABLE pivot_rm_window (
  session_id TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (session_id, ordinal)
)`
  yield* sql`CREATE INDEX pivot_rm_window_message ON pivot_rm_window (session_id, message_id)`
  yield* sql`CREATE TABLE pivot_rm_usage (
  session_id TEXT NOT NULL PRIMARY KEY,
  calls INTEGER NOT NULL,
  last_tokens DOUBLE PRECISION,
  compacting INTEGER NOT NULL,
  state TEXT NOT NULL
)`
  yield* sql`CREATE TABLE pivot_rm_compactions (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  marker_id TEXT NOT NULL,
  status TEXT NOT NULL,
  requested_version INTEGER NOT NULL,
  settled_version INTEGER,
  entry TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
)`
  // Replay finds the latest pivot at or before a version without reading every compaction.
  yield* sql`CREATE INDEX pivot_rm_compactions_settled ON pivot_rm_compactions (session_id, settled_version)`
  yield* sql`CREATE TABLE pivot_rm_pruned (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  part_id TEXT NOT NULL,
  tokens DOUBLE PRECISION NOT NULL,
  event_id TEXT NOT NULL,
  stream_version INTEGER NOT NULL,
  entry TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
)`
  yield* sql`CREATE TABLE pivot_rm_audit (
  session_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  PRIMARY KEY (session_id, message_id, seq)
)`
})

// The recall documents: on SQLite an FTS5 table holding them (its other columns unindexed; `secure-delete` so a
// forgotten session's words leave the full-text index too, ADR 0006), on PostgreSQL a table with a GIN index over
// `to_tsvector('simple', body)`. Both tokenise words without stemming, as the memory scan (`Recall.words`) does.
const createRecallIndex = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function* () {
        yield* sql`CREATE TABLE pivot_rm_recall (
  session_id TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  message_id TEXT NOT NULL,
  tool TEXT,
  body TEXT NOT NULL,
  PRIMARY KEY (session_id, doc_id)
)`
        yield* sql`CREATE INDEX pivot_rm_recall_body ON pivot_rm_recall USING GIN (to_tsvector('simple', body))`
      }),
    orElse: () =>
      Effect.gen(function* () {
        yield* sql`CREATE VIRTUAL TABLE pivot_rm_recall USING fts5(session_id UNINDEXED, doc_id UNINDEXED, kind UNINDEXED, message_id UNINDEXED, tool UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 0')`
        yield* sql`INSERT INTO pivot_rm_recall (pivot_rm_recall, rank) VALUES ('secure-delete', 1)`
      }),
  })
})

/** Creates the read-model tables (append-only migrations in their own table, `pivot_rm_migrations`). */
export const migrate = Migrator.make({})({
  table: "pivot_rm_migrations",
  loader: Migrator.fromRecord({ "1_create_read_models": createTables, "2_recall_index": createRecallIndex }),
})

type Sql = SqlClient.SqlClient
type Write = Effect.Effect<void, SqlError.SqlError>

const CHUNK = 200

const insertAll = (sql: Sql, table: string, rows: ReadonlyArray<Record<string, unknown>>): Write =>
  Effect.gen(function* () {
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK)
      yield* sql`INSERT INTO ${sql(table)} ${sql.insert(chunk as [Record<string, unknown>, ...Array<Record<string, unknown>>])}`
    }
  })

const clearRows =
  (table: string) =>
  (sql: Sql, sessionId: string): Write =>
    Effect.asVoid(sql`DELETE FROM ${sql(table)} WHERE session_id = ${sessionId}`)

/** One read model as tables: how to clear a session's rows, write them all, and write what one event changed. */
interface Model {
  readonly name: string
  readonly version: number
  readonly clear: (sql: Sql, sessionId: string) => Write
  readonly write: (sql: Sql, sessionId: string, states: States) => Write
  readonly delta: (sql: Sql, sessionId: string, prev: States, next: States, event: Event, meta: Meta) => Write
}

/** A stored message as JSON: the text an append already serialised it to, when it is at hand (see `OnAppend`). */
const messageJson = (message: Message.Message | undefined, fields: Fields | undefined): string =>
  (message === undefined ? undefined : fields?.get(message)) ?? JSON.stringify(message)

type Fields = ReadonlyMap<object, string>

const windowRows = (
  sessionId: string,
  state: Window.State,
  from: number,
  to = state.visible.length,
  fields?: Fields,
) => {
  const rows: Array<Record<string, unknown>> = []
  for (let i = from; i < Math.min(to, state.visible.length); i++) {
    const id = seqAt(state.visible, i)
    rows.push({
      session_id: sessionId,
      ordinal: i,
      message_id: id,
      message: messageJson(Conversation.get(state.conversation, id), fields),
    })
  }
  return rows
}

const windowModel: Model = {
  name: Window.projection.name,
  version: Window.projection.version,
  clear: clearRows("pivot_rm_window"),
  // In chunks made as they are inserted: a big window's rows (each message as JSON) never exist all at once.
  write: (sql, sessionId, states) =>
    Effect.gen(function* () {
      const window = states.window
      for (let from = 0; from < window.visible.length; from += CHUNK)
        yield* insertAll(sql, "pivot_rm_window", windowRows(sessionId, window, from, from + CHUNK))
    }),
  delta: (sql, sessionId, prev, next, event) =>
    Effect.gen(function* () {
      const a = prev.window
      const b = next.window
      if (a === b) return
      // A pivot replaces the window, and so does a change the event does not name (a future event type): rewritten
      // rather than guessed. Anything else only appends rows or changes the messages the event names in place.
      const changed = new Set<MessageId>()
      if (!windowStep(a, b, event, changed)) {
        yield* windowModel.clear(sql, sessionId)
        return yield* windowModel.write(sql, sessionId, next)
      }
      yield* insertAll(sql, "pivot_rm_window", windowRows(sessionId, b, a.visible.length))
      for (const id of changed)
        yield* sql`UPDATE pivot_rm_window SET message = ${JSON.stringify(Conversation.get(b.conversation, id))} WHERE session_id = ${sessionId} AND message_id = ${id}`
    }),
}

const usageRow = (sessionId: string, state: Usage.State) => ({
  session_id: sessionId,
  calls: state.calls,
  last_tokens: state.lastCall?.tokens ?? null,
  compacting: state.compacting ? 1 : 0,
  state: JSON.stringify(state),
})

const usageModel: Model = {
  name: Usage.projection.name,
  version: Usage.projection.version,
  clear: clearRows("pivot_rm_usage"),
  // A session whose usage never moved has no row, inline or rebuilt (reads answer the initial usage).
  write: (sql, sessionId, states) =>
    states.usage === Usage.projection.initial
      ? Effect.void
      : insertAll(sql, "pivot_rm_usage", [usageRow(sessionId, states.usage)]),
  delta: (sql, sessionId, prev, next) =>
    prev.usage === next.usage
      ? Effect.void
      : Effect.asVoid(
          sql`INSERT INTO pivot_rm_usage ${sql.insert(usageRow(sessionId, next.usage))} ON CONFLICT (session_id) DO UPDATE SET calls = excluded.calls, last_tokens = excluded.last_tokens, compacting = excluded.compacting, state = excluded.state`,
        ),
}

const compactionRow = (sessionId: string, seq: number, entry: CompactionHistory.Entry) => ({
  session_id: sessionId,
  seq,
  marker_id: entry.markerId,
  status: entry.status,
  requested_version: entry.requestedVersion,
  settled_version: entry.settledVersion ?? null,
  entry: JSON.stringify(entry),
})

const historyModel: Model = {
  name: CompactionHistory.projection.name,
  version: CompactionHistory.projection.version,
  clear: clearRows("pivot_rm_compactions"),
  write: (sql, sessionId, states) =>
    insertAll(
      sql,
      "pivot_rm_compactions",
      states.history.entries.map((entry, seq) => compactionRow(sessionId, seq, entry)),
    ),
  delta: (sql, sessionId, prev, next) =>
    Effect.gen(function* () {
      const a = prev.history.entries
      const b = next.history.entries
      if (a === b) return
      const added: Array<Record<string, unknown>> = []
      for (let seq = 0; seq < b.length; seq++) {
        const entry = b[seq]!
        if (seq >= a.length) added.push(compactionRow(sessionId, seq, entry))
        else if (a[seq] !== entry) {
          const row = compactionRow(sessionId, seq, entry)
          yield* sql`UPDATE pivot_rm_compactions SET marker_id = ${row.marker_id}, status = ${row.status}, requested_version = ${row.requested_version}, settled_version = ${row.settled_version}, entry = ${row.entry} WHERE session_id = ${sessionId} AND seq = ${seq}`
        }
      }
      yield* insertAll(sql, "pivot_rm_compactions", added)
    }),
}

const prunedRow = (sessionId: string, seq: number, entry: PruneIndex.Entry) => ({
  session_id: sessionId,
  seq,
  message_id: entry.messageId,
  part_id: entry.partId,
  tokens: entry.tokens,
  event_id: entry.eventId,
  stream_version: entry.version,
  entry: JSON.stringify(entry),
})

const prunedModel: Model = {
  name: PruneIndex.projection.name,
  version: PruneIndex.projection.version,
  clear: clearRows("pivot_rm_pruned"),
  write: (sql, sessionId, states) =>
    insertAll(
      sql,
      "pivot_rm_pruned",
      states.pruned.entries.map((entry, seq) => prunedRow(sessionId, seq, entry)),
    ),
  delta: (sql, sessionId, prev, next) => {
    const a = prev.pruned.entries
    const b = next.pruned.entries
    if (a === b) return Effect.void
    const added: Array<Record<string, unknown>> = []
    for (let seq = a.length; seq < b.length; seq++) added.push(prunedRow(sessionId, seq, b[seq]!))
    return insertAll(sql, "pivot_rm_pruned", added)
  },
}

const auditRows = (sessionId: string, messageId: string, ids: ReadonlyArray<string>, from: number) => {
  const rows: Array<Record<string, unknown>> = []
  for (let seq = from; seq < ids.length; seq++)
    rows.push({ session_id: sessionId, message_id: messageId, seq, event_id: ids[seq]! })
  return rows
}

const auditModel: Model = {
  name: Audit.projection.name,
  version: Audit.projection.version,
  clear: clearRows("pivot_rm_audit"),
  write: (sql, sessionId, states) => {
    const { sources, window } = states.audit
    const order = window.conversation.order
    const rows: Array<Record<string, unknown>> = []
    for (let i = 0; i < order.length; i++) {
      const id = seqAt(order, i)
      rows.push(...auditRows(sessionId, id, sources.get(id) ?? [], 0))
    }
    return insertAll(sql, "pivot_rm_audit", rows)
  },
  delta: (sql, sessionId, prev, next, event) => {
    const rows: Array<Record<string, unknown>> = []
    for (const id of new Set(touchedIds(event))) {
      const a = prev.audit.sources.get(id) ?? []
      const b = next.audit.sources.get(id) ?? []
      if (a !== b) rows.push(...auditRows(sessionId, id, b, a.length))
    }
    return insertAll(sql, "pivot_rm_audit", rows)
  },
}

const recallRows = (sessionId: string, docs: ReadonlyArray<Recall.Document>) =>
  docs.map((doc) => ({
    session_id: sessionId,
    doc_id: doc.id,
    kind: doc.kind,
    message_id: doc.messageId,
    tool: doc.tool ?? null,
    body: doc.text,
  }))

/** The recall index's projection: its documents are a function of the conversation (`Recall.documents`). */
export const recallProjection = { name: "recall", version: 1 } as const

const recallModel: Model = {
  name: recallProjection.name,
  version: recallProjection.version,
  clear: clearRows("pivot_rm_recall"),
  write: (sql, sessionId, states) =>
    insertAll(
      sql,
      "pivot_rm_recall",
      recallRows(sessionId, Recall.documents(Conversation.messages(states.window.conversation))),
    ),
  // A prune or a summary changes the documents of the messages the event names: rewrite those messages' rows.
  delta: (sql, sessionId, prev, next, event) =>
    Effect.gen(function* () {
      for (const id of new Set(touchedIds(event))) {
        const before = Conversation.get(prev.window.conversation, id)
        const after = Conversation.get(next.window.conversation, id)
        if (before === after || after === undefined) continue
        const was = before === undefined ? [] : Recall.documentsOf(before)
        const now = Recall.documentsOf(after)
        if (was.length === 0 && now.length === 0) continue
        if (was.length > 0)
          yield* sql`DELETE FROM pivot_rm_recall WHERE session_id = ${sessionId} AND message_id = ${id}`
        yield* insertAll(sql, "pivot_rm_recall", recallRows(sessionId, now))
      }
    }),
}

/** The read models, in the order they are written. */
const models: ReadonlyArray<Model> = [windowModel, usageModel, historyModel, prunedModel, auditModel, recallModel]

/** The read models' names and projection versions. */
export const names: ReadonlyArray<{ readonly name: string; readonly version: number }> = models.map((m) => ({
  name: m.name,
  version: m.version,
}))

// ---------------------------------------------------------------------------------------------------------------
// Projecting a session's events

/** Where one read model of one session stands. */
export interface Checkpoint {
  readonly model: string
  readonly projectionVersion: number
  /** The stream version folded so far. */
  readonly streamVersion: number
  /**
   * The global position of the last event folded. Checkpoints are kept by stream version: on Postgres an inline
   * append folds its events before their positions are assigned (ADR 0012), so the position is looked up from the
   * log when the checkpoint is read (the stored copy is only the fallback for a log row that is gone).
   */
  readonly position: number
}

interface EventRow {
  readonly position: number | string
  readonly event_id: string
  readonly stream: string
  readonly stream_version: number | string
  readonly type: string
  readonly schema_version: number | string
  readonly data: string
  readonly metadata: string | null
  readonly recorded_at: number | string
}

type ProjectError = SqlError.SqlError | UndecodableEvent

const readRecorded = (sql: Sql, stream: string, from: number, to: number) =>
  Effect.gen(function* () {
    if (to < from) return []
    const rows =
      yield* sql<EventRow>`SELECT position, event_id, stream, stream_version, type, schema_version, data, metadata, recorded_at FROM pivot_events WHERE stream = ${stream} AND stream_version >= ${from} AND stream_version <= ${to} ORDER BY stream_version`
    const out: Array<RecordedEvent> = []
    for (const row of rows) {
      let data: unknown
      try {
        data = JSON.parse(row.data)
      } catch {
        return yield* new UndecodableEvent({
          sessionId: SessionLog.sessionIdOf(stream) ?? stream,
          streamVersion: Number(row.stream_version),
          eventId: row.event_id,
          type: row.type,
          reason: "malformed",
          detail: "its stored payload is not JSON",
        })
      }
      out.push({
        id: row.event_id,
        type: row.type,
        version: Number(row.schema_version),
        data,
        metadata: null,
        stream: row.stream,
        streamVersion: Number(row.stream_version),
        position: Number(row.position),
        recordedAt: Number(row.recorded_at),
      })
    }
    // Sealed fields (crypto-shredding) are opened as the store's own reads open them; forgotten ones read as erased.
    return yield* Seal.openRecorded(
      out,
      rows.map((row) => row.data),
      (streams) => keysOf(sql, streams),
    ).pipe(
      Effect.catchTag("StoreCorrupt", (error) =>
        Effect.fail(
          new UndecodableEvent({
            sessionId: SessionLog.sessionIdOf(stream) ?? stream,
            streamVersion: from,
            eventId: "",
            type: "",
            reason: "malformed",
            detail: error.reason,
          }),
        ),
      ),
    )
  })

const headOf = (sql: Sql, stream: string) =>
  Effect.map(
    sql<{
      readonly stream_version: number | string
    }>`SELECT stream_version FROM pivot_events WHERE stream = ${stream} ORDER BY stream_version DESC LIMIT 1`,
    (rows) => (rows[0] === undefined ? 0 : Number(rows[0].stream_version)),
  )

const checkpointsOf = (sql: Sql, sessionId: string) =>
  Effect.map(
    sql<{
      readonly model: string
      readonly projection_version: number | string
      readonly stream_version: number | string
      readonly position: number | string
    }>`SELECT c.model, c.projection_version, c.stream_version, COALESCE(e.position, c.position) AS position FROM pivot_rm_checkpoints AS c LEFT JOIN pivot_events AS e ON e.stream = ${Events.streamName(sessionId)} AND e.stream_version = c.stream_version WHERE c.session_id = ${sessionId}`,
    (rows) =>
      new Map(
        rows.map((row): [string, Checkpoint] => [
          row.model,
          {
            model: row.model,
            projectionVersion: Number(row.projection_version),
            streamVersion: Number(row.stream_version),
            position: Number(row.position),
          },
        ]),
      ),
  )

const isCurrent = (checkpoints: ReadonlyMap<string, Checkpoint>, head: number) =>
  models.every((m) => {
    const cp = checkpoints.get(m.name)
    return cp !== undefined && cp.projectionVersion === m.version && cp.streamVersion === head
  })

const saveCheckpoints = (sql: Sql, sessionId: string, streamVersion: number, position: number): Write =>
  Effect.asVoid(
    sql`INSERT INTO pivot_rm_checkpoints ${sql.insert(
      models.map(
        (m): Record<string, unknown> => ({
          model: m.name,
          session_id: sessionId,
          projection_version: m.version,
          stream_version: streamVersion,
          position,
        }),
      ) as [Record<string, unknown>, ...Array<Record<string, unknown>>],
    )} ON CONFLICT (model, session_id) DO UPDATE SET projection_version = excluded.projection_version, stream_version = excluded.stream_version, position = excluded.position`,
  )

// Postgres: the stream lock the store's appends take, so a catch-up or rebuild and an inline append to the same
// session never interleave (SQLite's BEGIN IMMEDIATE already serialises them).
const lock = (sql: Sql, sessionId: string): Write =>
  sql.onDialectOrElse({
    pg: () => streamLock(sql, Events.streamName(sessionId)),
    orElse: () => Effect.void,
  })

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
}

/** The read models' options with users' projections (see `Projections.layerSqlite`). */
export interface ProjectedOptions extends Options {
  /** Your projections, kept beside the built-in read models (inline or async). */
  readonly projections?: ReadonlyArray<Projections.AnyDefinition> | undefined
  /** The options of the projections' background work. */
  readonly projector?: Omit<Projections.Options, "projections"> | undefined
}

/** A session a bulk transaction appended to: its states folded so far, and whether its window rows are in step. */
interface Deferred {
  readonly states: States
  readonly version: number
  readonly position: number
  /** The window's rows stand for `states.window` (written batch by batch); otherwise they are rewritten at the end. */
  readonly windowLive: boolean
}

/**
 * One event's step of the window, for rows written batch by batch: whether `windowModel.delta` would only append rows
 * and update the messages the event names (then those ids go into `changed`); false when it would rewrite the window.
 */
const windowStep = (a: Window.State, b: Window.State, event: Event, changed: Set<MessageId>): boolean => {
  if (a === b) return true
  if (b.pivot !== a.pivot || b.visible.length < a.visible.length) return false
  let accounted = b.visible.length > a.visible.length
  for (const id of touchedIds(event)) {
    const before = Conversation.get(a.conversation, id)
    const after = Conversation.get(b.conversation, id)
    if (before === undefined || after === undefined || before === after) continue
    accounted = true
    changed.add(id)
  }
  return accounted || b.conversation.messages === a.conversation.messages
}

/**
 * The window rows of a batch whose every step `windowStep` accepted: the same rows its events' deltas would leave,
 * written at once (each new row with its message as it stands after the batch; each message named by an event and
 * already in the window before the batch updated to its newest form).
 */
const writeWindowStep = (
  sql: Sql,
  sessionId: string,
  a: Window.State,
  b: Window.State,
  changed: ReadonlySet<MessageId>,
  fields: Fields | undefined,
): Write =>
  Effect.gen(function* () {
    if (a === b) return
    for (let from = a.visible.length; from < b.visible.length; from += CHUNK)
      yield* insertAll(sql, "pivot_rm_window", windowRows(sessionId, b, from, from + CHUNK, fields))
    for (const id of changed) {
      const before = Conversation.get(a.conversation, id)
      const after = Conversation.get(b.conversation, id)
      if (before === undefined || after === undefined || before === after) continue
      yield* sql`UPDATE pivot_rm_window SET message = ${messageJson(after, fields)} WHERE session_id = ${sessionId} AND message_id = ${id}`
    }
  })

/** A session's read-model rows as stored, without `session_id` (see `Tables`). */
const tablesOf = (sql: Sql, sessionId: string) =>
  Effect.gen(function* () {
    const window =
      yield* sql`SELECT ordinal, message_id, message FROM pivot_rm_window WHERE session_id = ${sessionId} ORDER BY ordinal`
    const usage =
      yield* sql`SELECT calls, last_tokens, compacting, state FROM pivot_rm_usage WHERE session_id = ${sessionId}`
    const compactions =
      yield* sql`SELECT seq, marker_id, status, requested_version, settled_version, entry FROM pivot_rm_compactions WHERE session_id = ${sessionId} ORDER BY seq`
    const pruned =
      yield* sql`SELECT seq, message_id, part_id, tokens, event_id, stream_version, entry FROM pivot_rm_pruned WHERE session_id = ${sessionId} ORDER BY seq`
    const audit =
      yield* sql`SELECT message_id, seq, event_id FROM pivot_rm_audit WHERE session_id = ${sessionId} ORDER BY message_id, seq`
    const recall =
      yield* sql`SELECT doc_id, kind, message_id, tool, body FROM pivot_rm_recall WHERE session_id = ${sessionId} ORDER BY doc_id`
    const checkpoints = [...(yield* checkpointsOf(sql, sessionId)).values()].sort((a, b) =>
      a.model.localeCompare(b.model),
    )
    return { window, usage, compactions, pruned, audit, recall, checkpoints } as Tables
  })

const withoutSession = (rows: ReadonlyArray<Record<string, unknown>>) => rows.map(({ session_id: _, ...row }) => row)

/** The rows a fold's states make, per table (what `write` would insert, `session_id` left out). */
const rowsOfStates = (
  sessionId: string,
  states: States,
): Record<Exclude<keyof Tables, "checkpoints">, ReadonlyArray<Record<string, unknown>>> => {
  const { sources, window } = states.audit
  const order = window.conversation.order
  const audit: Array<Record<string, unknown>> = []
  for (let i = 0; i < order.length; i++) {
    const id = seqAt(order, i)
    audit.push(...auditRows(sessionId, id, sources.get(id) ?? [], 0))
  }
  return {
    window: withoutSession(windowRows(sessionId, states.window, 0)),
    usage: states.usage === Usage.projection.initial ? [] : withoutSession([usageRow(sessionId, states.usage)]),
    compactions: withoutSession(states.history.entries.map((entry, seq) => compactionRow(sessionId, seq, entry))),
    pruned: withoutSession(states.pruned.entries.map((entry, seq) => prunedRow(sessionId, seq, entry))),
    audit: withoutSession(audit),
    recall: withoutSession(recallRows(sessionId, Recall.documents(Conversation.messages(states.window.conversation)))),
  }
}

/** Which table each model writes, and the columns that order its rows (sorted here: SQL collations differ). */
const tableOfModel: ReadonlyArray<{
  readonly model: Model
  readonly table: Exclude<keyof Tables, "checkpoints">
  readonly key: ReadonlyArray<string>
}> = [
  { model: windowModel, table: "window", key: ["ordinal"] },
  { model: usageModel, table: "usage", key: [] },
  { model: historyModel, table: "compactions", key: ["seq"] },
  { model: prunedModel, table: "pruned", key: ["seq"] },
  { model: auditModel, table: "audit", key: ["message_id", "seq"] },
  { model: recallModel, table: "recall", key: ["doc_id"] },
]

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

/** Whether the read models' tables exist (a read-only connection never creates them). */
const hasReadModels = (sql: Sql) =>
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

/** The warning logged when a read-model snapshot is not used. */
const snapshotWarning = (stream: string, problem: string) =>
  `${stream}: read-model snapshot ignored (${problem}); folding the events instead`

/**
 * The stream's read-model snapshot, if any: its partial states at a version ≤ `base` when it can be trusted, else
 * why not (another format, a checksum mismatch, beyond `base`, another session's or version's states, unreadable).
 */
const readSnapshot = (sql: Sql, stream: string, base: number) =>
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

/** Folds and writes a session's read models; holds the folded states of recent sessions (committed events only). */
const makeProjector = (options: Options) => {
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
      if (from === undefined && !whole && snapshotting) from = yield* fromSnapshot(sql, stream, base)
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
      for (const m of models) yield* m.clear(sql, sessionId)
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
  ): Effect.Effect<void, ProjectError> =>
    Effect.gen(function* () {
      const last = batch[batch.length - 1]
      if (last === undefined) return
      const stream = Events.streamName(sessionId)
      if (deferred !== undefined) {
        // Written whole at the end of the transaction: whole states are needed.
        const held = deferred.get(sessionId)
        const continues = held !== undefined && held.version === base
        const start = continues ? held.states : yield* statesAt(sql, sessionId, stream, base, true)
        // Written as it goes only from a new session on (its table holds no rows to keep in step with).
        let live = continues ? held.windowLive : held === undefined && base === 0
        const changed = new Set<MessageId>()
        let folded = start
        for (const r of batch) {
          const decoded = decoder(r)
          if (Result.isFailure(decoded)) return yield* decoded.failure
          if (decoded.success === undefined) continue
          const { event, meta } = decoded.success
          const next = evolveStates(folded, event, meta)
          if (live) live = windowStep(folded.window, next.window, event, changed)
          folded = next
        }
        if (live) {
          if (!continues) yield* windowModel.clear(sql, sessionId)
          yield* writeWindowStep(sql, sessionId, start.window, folded.window, changed, fields)
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
      const logged = yield* decodeAll(batch)
      const checkpoints = yield* checkpointsOf(sql, sessionId)
      let states = yield* statesAt(sql, sessionId, stream, base)
      // A new session's first batch (an import) is cheaper written once from the folded state than event by event:
      // one bulk insert per table instead of a few statements per event. Same rows either way (rebuilt == inline).
      const bulk = base === 0 && batch.length > 1
      const fresh = models.map((m) => {
        const cp = checkpoints.get(m.name)
        if (bulk) return false
        return cp === undefined ? base === 0 : cp.projectionVersion === m.version && cp.streamVersion === base
      })
      // Partial states serve deltas only: a model rewritten whole, or an event naming a message they do not hold,
      // needs the whole log.
      if (states.partial === true && (fresh.some((f) => !f) || !heldFor(states, logged)))
        states = yield* statesAt(sql, sessionId, stream, base, true)
      for (const [i, m] of models.entries()) if (fresh[i] && !checkpoints.has(m.name)) yield* m.clear(sql, sessionId)
      const anyFresh = fresh.some((f) => f)
      for (const { event, meta } of logged) {
        const next = evolveStates(states, event, meta)
        if (anyFresh)
          for (const [i, m] of models.entries()) if (fresh[i]) yield* m.delta(sql, sessionId, states, next, event, meta)
        states = next
      }
      for (const [i, m] of models.entries())
        if (!fresh[i]) {
          yield* m.clear(sql, sessionId)
          yield* m.write(sql, sessionId, states)
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
            if (m === windowModel && held.windowLive) continue
            yield* m.clear(sql, sessionId)
            yield* m.write(sql, sessionId, held.states)
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
        yield* m.clear(sql, sessionId)
        yield* m.write(sql, sessionId, states)
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

  /** The store hook: projects the session events of an append in its transaction. */
  const onAppend = (
    sql: Sql,
    events: ReadonlyArray<RecordedEvent>,
    fields?: Fields,
  ): Effect.Effect<void, SqlError.SqlError | MalformedEvent> => {
    const first = events[0]
    const sessionId = first === undefined ? undefined : SessionLog.sessionIdOf(first.stream)
    if (first === undefined || sessionId === undefined) return Effect.void
    return project(sql, sessionId, first.streamVersion - 1, events, fields).pipe(
      Effect.catchTag("UndecodableEvent", (error) =>
        Effect.fail(
          new MalformedEvent({
            path: `${first.stream}@${error.streamVersion}`,
            message: `the inline read models cannot fold it: ${error.message}`,
          }),
        ),
      ),
    )
  }

  /**
   * The store hook of `forget`: the session's read-model rows (copies of its data in plain text) are deleted with its
   * key, and rebuilt from the log, with the erased fields, on the next read.
   */
  const onForget = (sql: Sql, stream: string): Effect.Effect<void, SqlError.SqlError> => {
    const sessionId = SessionLog.sessionIdOf(stream)
    return sessionId === undefined ? Effect.void : drop(sql, sessionId)
  }

  /**
   * Compares a session's stored read models with a fold of its log, writing nothing: one line per difference. A model
   * not projected yet, or by another projection version, is skipped (the next read rebuilds it); one behind the log is
   * compared with the fold at its checkpoint. A snapshot that a new process would ignore (other than for its format,
   * which an upgrade changes) or whose states are not the fold's at its version is a difference too.
   */
  const verify = (sql: Sql, sessionId: string): Effect.Effect<Verified, ProjectError | UnknownSession> =>
    Effect.gen(function* () {
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
      for (const { model } of tableOfModel) {
        const cp = checkpoints.get(model.name)
        if (cp !== undefined && cp.projectionVersion === model.version) wanted.add(Math.min(cp.streamVersion, head))
      }
      if (snapshot?._tag === "Success") wanted.add(snapshot.success.version)
      const at = new Map<number, States>()
      let states = initialStates
      if (wanted.has(0)) at.set(0, states)
      for (const { event, meta } of yield* decodeAll(yield* readRecorded(sql, stream, 1, Math.max(0, ...wanted)))) {
        states = evolveStates(states, event, meta)
        if (wanted.has(meta.version)) at.set(meta.version, states)
      }
      const differences: Array<string> = []
      let compared = 0
      for (const { model, table, key } of tableOfModel) {
        const cp = checkpoints.get(model.name)
        if (cp === undefined || cp.projectionVersion !== model.version) continue
        compared++
        const folded = at.get(Math.min(cp.streamVersion, head)) ?? states
        differences.push(...compareRows(table, key, tables[table], rowsOfStates(sessionId, folded)[table]))
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

  return { project, rewrite, onAppend, onForget, bulk, verify }
}

// ---------------------------------------------------------------------------------------------------------------
// The service

/** Why a read-model query failed. */
export type ReadModelError = ReadError | UndecodableEvent | UnknownSession

/** The raw rows of a session's read models, for audits and for tests comparing inline and rebuilt tables. */
export interface Tables {
  readonly window: ReadonlyArray<unknown>
  readonly usage: ReadonlyArray<unknown>
  readonly compactions: ReadonlyArray<unknown>
  readonly pruned: ReadonlyArray<unknown>
  readonly audit: ReadonlyArray<unknown>
  readonly recall: ReadonlyArray<unknown>
  readonly checkpoints: ReadonlyArray<Checkpoint>
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
   * The session's recallable documents (pruned outputs, summaries) matching any word of `query`, best first (FTS5
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
  readonly tables: (sessionId: string) => Effect.Effect<Tables, ReadError>
  /**
   * Runs `effect` (appends through the same store) as ONE transaction, all or nothing, with the read models of the
   * sessions it appends to folded in memory and written once at the end: how a large import appends in batches.
   */
  readonly bulk: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ReadError, R>
}

/** The read models service. */
export class ReadModels extends Context.Service<ReadModels, ReadModelsShape>()("@pivot/store/ReadModels") {}

const parse = <A>(text: string): A => JSON.parse(text) as A

interface RecallRow {
  readonly doc_id: string
  readonly kind: string
  readonly message_id: string
  readonly tool: string | null
  readonly body: string
}

const makeService = (
  sql: Sql,
  projector: ReturnType<typeof makeProjector>,
  path: string | undefined,
): ReadModelsShape => {
  const toStoreError = classify(path)
  const query = <A>(effect: Effect.Effect<A, SqlError.SqlError | UndecodableEvent | UnknownSession>) =>
    effect.pipe(Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))))

  const sync = (sessionId: string) =>
    query(
      Effect.gen(function* () {
        const stream = Events.streamName(sessionId)
        const head = yield* headOf(sql, stream)
        if (head === 0) return yield* new UnknownSession({ sessionId })
        if (isCurrent(yield* checkpointsOf(sql, sessionId), head)) return head
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* lock(sql, sessionId)
            const now = yield* headOf(sql, stream)
            const checkpoints = yield* checkpointsOf(sql, sessionId)
            if (isCurrent(checkpoints, now)) return now
            const base = Math.min(
              ...models.map((m) => {
                const cp = checkpoints.get(m.name)
                return cp !== undefined && cp.projectionVersion === m.version ? Math.min(cp.streamVersion, now) : 0
              }),
            )
            const recorded = yield* readRecorded(sql, stream, base + 1, now)
            // Forgotten since the checkpoint (by a store without these hooks): rebuilt from the whole log.
            if (base > 0 && SessionLog.forgottenIn(recorded))
              yield* projector.project(sql, sessionId, 0, yield* readRecorded(sql, stream, 1, now))
            else yield* projector.project(sql, sessionId, base, recorded)
            return now
          }),
        )
      }),
    ).pipe(Effect.withSpan("ReadModels.sync"))

  const synced = <A>(sessionId: string, read: Effect.Effect<A, SqlError.SqlError>) =>
    Effect.andThen(sync(sessionId), query(read))

  const rebuildOne = (sessionId: string) =>
    query(sql.withTransaction(Effect.andThen(lock(sql, sessionId), projector.rewrite(sql, sessionId))))

  const sessions = query(
    sql<{
      readonly stream: string
      readonly version: number | string
    }>`SELECT stream, MAX(stream_version) AS version FROM pivot_events WHERE stream LIKE 'session-%' GROUP BY stream ORDER BY stream`,
  ).pipe(
    Effect.map((rows) =>
      rows.map((row) => ({ sessionId: SessionLog.sessionIdOf(row.stream)!, version: Number(row.version) })),
    ),
  ) as Effect.Effect<ReadonlyArray<{ readonly sessionId: string; readonly version: number }>, ReadError>

  return {
    sync,
    window: (sessionId) =>
      synced(
        sessionId,
        Effect.map(
          sql<{
            readonly message: string
          }>`SELECT message FROM pivot_rm_window WHERE session_id = ${sessionId} ORDER BY ordinal`,
          (rows) => rows.map((row) => parse<Message.Message>(row.message)),
        ),
      ),
    usage: (sessionId) =>
      synced(
        sessionId,
        Effect.map(
          sql<{ readonly state: string }>`SELECT state FROM pivot_rm_usage WHERE session_id = ${sessionId}`,
          (rows) => (rows[0] === undefined ? Usage.initial : parse<Usage.State>(rows[0].state)),
        ),
      ),
    compactions: (sessionId) =>
      synced(
        sessionId,
        Effect.map(
          sql<{
            readonly entry: string
          }>`SELECT entry FROM pivot_rm_compactions WHERE session_id = ${sessionId} ORDER BY seq`,
          (rows) => rows.map((row) => parse<CompactionHistory.Entry>(row.entry)),
        ),
      ),
    pruned: (sessionId) =>
      synced(
        sessionId,
        Effect.map(
          sql<{
            readonly entry: string
          }>`SELECT entry FROM pivot_rm_pruned WHERE session_id = ${sessionId} ORDER BY seq`,
          (rows) => {
            const entries = rows.map((row) => parse<PruneIndex.Entry>(row.entry))
            let tokensFreed = 0
            for (const entry of entries) tokensFreed += entry.tokens
            return { entries, tokensFreed }
          },
        ),
      ),
    audit: (sessionId) =>
      synced(
        sessionId,
        Effect.map(
          sql<{
            readonly ordinal: number | string
            readonly message: string
            readonly event_id: string | null
          }>`SELECT w.ordinal, w.message, a.event_id FROM pivot_rm_window w LEFT JOIN pivot_rm_audit a ON a.session_id = w.session_id AND a.message_id = w.message_id WHERE w.session_id = ${sessionId} ORDER BY w.ordinal, a.seq`,
          (rows) => {
            const out: Array<{ message: Message.Message; eventIds: Array<string> }> = []
            let ordinal: number | undefined
            for (const row of rows) {
              if (Number(row.ordinal) !== ordinal) {
                ordinal = Number(row.ordinal)
                out.push({ message: parse<Message.Message>(row.message), eventIds: [] })
              }
              if (row.event_id !== null) out[out.length - 1]!.eventIds.push(row.event_id)
            }
            return out
          },
        ),
      ),
    origin: (sessionId, version) =>
      synced(
        sessionId,
        Effect.gen(function* () {
          const pivot = yield* sql<{
            readonly entry: string
          }>`SELECT entry FROM pivot_rm_compactions WHERE session_id = ${sessionId} AND status IN ('finished', 'continued') AND settled_version IS NOT NULL AND settled_version <= ${version} ORDER BY settled_version DESC LIMIT 1`
          const entry = pivot[0] === undefined ? undefined : parse<CompactionHistory.Entry>(pivot[0].entry)
          if (entry === undefined) return 1
          // Where each kept message was added: the event of its first audit row.
          const ids = [...new Set([entry.markerId, ...(entry.plan?.tail ?? [])])]
          let origin = Number.POSITIVE_INFINITY
          let found = 0
          for (let i = 0; i < ids.length; i += CHUNK) {
            const rows = yield* sql<{
              readonly v: number | string
            }>`SELECT e.stream_version AS v FROM pivot_rm_audit a JOIN pivot_events e ON e.event_id = a.event_id WHERE a.session_id = ${sessionId} AND a.seq = 0 AND ${sql.in("a.message_id", ids.slice(i, i + CHUNK))}`
            for (const row of rows) origin = Math.min(origin, Number(row.v))
            found += rows.length
          }
          return found === ids.length ? origin : 1
        }),
      ),
    recall: (sessionId, query, limit) => {
      const terms = Recall.terms(query)
      if (terms.length === 0 || limit <= 0) return Effect.map(sync(sessionId), () => [])
      const { words, substrings } = Recall.termKinds(terms)
      const documentOf = (row: RecallRow): Recall.Document => ({
        id: row.doc_id,
        kind: row.kind === "summary" ? "summary" : "output",
        messageId: row.message_id,
        ...(row.tool === null ? {} : { tool: row.tool }),
        text: row.body,
      })
      // Terms are letters and digits only, so quoting each makes a valid FTS5 query whatever the model typed.
      const fts5 = words.map((t) => `"${t}"`).join(" OR ")
      if (substrings.length === 0)
        return synced(
          sessionId,
          Effect.map(
            sql.onDialectOrElse({
              pg: () =>
                sql<RecallRow>`SELECT doc_id, kind, message_id, tool, body FROM pivot_rm_recall, to_tsquery('simple', ${words.join(" | ")}) q WHERE session_id = ${sessionId} AND to_tsvector('simple', body) @@ q ORDER BY ts_rank_cd(to_tsvector('simple', body), q, 1) DESC, doc_id DESC LIMIT ${limit}`,
              orElse: () =>
                sql<RecallRow>`SELECT doc_id, kind, message_id, tool, body FROM pivot_rm_recall WHERE pivot_rm_recall MATCH ${fts5} AND session_id = ${sessionId} ORDER BY bm25(pivot_rm_recall), doc_id DESC LIMIT ${limit}`,
            }),
            (rows) => rows.map(documentOf),
          ),
        )
      // CJK terms match as substrings (a word index holds an unbroken CJK run as one word): the session's documents
      // that hold one of them or match a word are read and ranked by the scan's rule (`Recall.rank`).
      return synced(
        sessionId,
        Effect.map(
          sql.onDialectOrElse({
            pg: () =>
              sql<RecallRow>`SELECT doc_id, kind, message_id, tool, body FROM pivot_rm_recall WHERE session_id = ${sessionId} AND ${sql.or(
                [
                  ...substrings.map((t) => sql`strpos(body, ${t}) > 0`),
                  ...(words.length === 0
                    ? []
                    : [sql`to_tsvector('simple', body) @@ to_tsquery('simple', ${words.join(" | ")})`]),
                ],
              )}`,
            orElse: () =>
              sql<RecallRow>`SELECT doc_id, kind, message_id, tool, body FROM pivot_rm_recall WHERE session_id = ${sessionId} AND ${sql.or(
                [
                  ...substrings.map((t) => sql`instr(body, ${t}) > 0`),
                  ...(words.length === 0
                    ? []
                    : [sql`rowid IN (SELECT rowid FROM pivot_rm_recall WHERE pivot_rm_recall MATCH ${fts5})`]),
                ],
              )}`,
          }),
          (rows) => Recall.rank(rows.map(documentOf), query, limit),
        ),
      )
    },
    rebuild: (target) =>
      Effect.gen(function* () {
        if (typeof target === "string") {
          yield* rebuildOne(target)
          return 1
        }
        const all = yield* sessions
        for (const { sessionId } of all) yield* rebuildOne(sessionId)
        return all.length
      }).pipe(Effect.withSpan("ReadModels.rebuild")),
    sessions,
    bulk: (effect) =>
      projector.bulk(sql, effect).pipe(
        Effect.catchIf(
          (error): error is SqlError.SqlError => (error as { _tag?: unknown })?._tag === "SqlError",
          (error) => Effect.fail(toStoreError(error)),
        ),
      ),
    verify: (sessionId) => query(projector.verify(sql, sessionId)).pipe(Effect.withSpan("ReadModels.verify")),
    tables: (sessionId) => query(tablesOf(sql, sessionId)) as Effect.Effect<Tables, ReadError>,
  }
}

/**
 * The read models over a store layer built with the given hooks: the store projects inline on every append, and
 * the service queries the same connection.
 */
export const withStore = <E, R>(
  options: ProjectedOptions & { readonly readonly?: boolean | undefined; readonly path?: string | undefined },
  store: (hooks: SqlHooks) => Layer.Layer<EventStore, E, R>,
): Layer.Layer<ReadModels | EventStore | Projections.Projections, E | ReadError | Projections.InvalidProjection, R> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const definitions = options.projections ?? []
      yield* Effect.fromResult(Projections.validate(definitions))
      const projector = makeProjector(options)
      const decoder = SessionLog.makeDecoder(options)
      const user = Projections.hooks(definitions, decoder, options.readonly === true)
      let client: Sql | undefined
      const hooks: SqlHooks = {
        onOpen: (sql) => {
          client = sql
          return options.readonly === true
            ? Effect.void
            : Effect.andThen(Effect.asVoid(Effect.provideService(migrate, SqlClient.SqlClient, sql)), user.onOpen(sql))
        },
        onAppend: (sql, events, fields) =>
          definitions.length === 0
            ? projector.onAppend(sql, events, fields)
            : Effect.andThen(projector.onAppend(sql, events, fields), user.onAppend(sql, events)),
        onForget: (sql, stream) => Effect.andThen(projector.onForget(sql, stream), user.onForget(sql, stream)),
      }
      // Built after the store: its `onOpen` hands over the connection.
      const opened = Effect.gen(function* () {
        yield* EventStore
        if (client === undefined) return yield* Effect.die(new Error("ReadModels: the store did not open"))
        return client
      })
      const service = Layer.effect(
        ReadModels,
        Effect.map(opened, (sql) => makeService(sql, projector, options.path)),
      )
      const projections = Layer.effect(
        Projections.Projections,
        Effect.gen(function* () {
          const sql = yield* opened
          return yield* Projections.make(sql, yield* EventStore, {
            ...options.projector,
            projections: definitions,
            decoder,
            readonly: options.readonly,
            path: options.path,
          })
        }),
      )
      return Layer.provideMerge(Layer.merge(service, projections), store(hooks))
    }),
  )

// The layers without users' projections (`Projections.layerSqlite` & co. take them): with none, none is invalid.
const withoutProjections = <R>(
  layer: Layer.Layer<ReadModels | EventStore | Projections.Projections, ReadError | Projections.InvalidProjection, R>,
) => layer as Layer.Layer<ReadModels | EventStore, ReadError, R>

/** The SQLite event store with inline read models (see `EventStore.layerSqlite` for the options). */
export const layerSqlite = (options: SqliteStoreOptions & Options): Layer.Layer<ReadModels | EventStore, ReadError> =>
  withStore({ ...options, path: options.filename }, (hooks) => EventStore.layerSqlite({ ...options, ...hooks })).pipe(
    withoutProjections,
  )

/** The PostgreSQL event store with inline read models (see `EventStore.layerPostgres` for the options). */
export const layerPostgres = (
  options: PostgresStoreOptions & Options,
): Layer.Layer<ReadModels | EventStore, ReadError> =>
  withStore(options, (hooks) => EventStore.layerPostgres({ ...options, ...hooks })).pipe(withoutProjections)

/** The store over the `SqlClient` provided, with inline read models. */
export const layerSql = (
  options: SqlStoreOptions & Options = {},
): Layer.Layer<ReadModels | EventStore, ReadError, SqlClient.SqlClient> =>
  withStore(options, (hooks) => EventStore.layerSql({ ...options, ...hooks })).pipe(withoutProjections)
