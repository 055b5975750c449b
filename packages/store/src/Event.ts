/**
 * The shapes the store deals in: an event to append, a recorded event, the expected version of an append and its
 * result. The store is generic over payloads: `data` and `metadata` are JSON values, typed by the caller's schemas
 * (see `Upcast.decodeRecorded`).
 *
 * Versions: a stream's version is the number of events in it, so a stream that does not exist has version 0, and
 * the n-th event of a stream (counting from 1) has `streamVersion` n. Positions are global, strictly increasing in
 * append (commit) order, and start at 1; they may have gaps (a failed Postgres append can burn a sequence value).
 */
import * as Result from "effect/Result"
import { DuplicateEventId, MalformedEvent } from "./StoreError.ts"

/**
 * A path into an event's data: property names, and `"*"` for every element of an array (or value of an object).
 * Every string at the path, or anywhere below its end, is meant.
 */
export type FieldPath = ReadonlyArray<string>

/** An event to append: a unique id, its type, the version of its payload schema, and JSON data. */
export interface NewEvent {
  /** Unique across the whole store; appending an id twice fails with `DuplicateEventId`. */
  readonly id: string
  /** The event type, e.g. `"UserMessageAdded"`. */
  readonly type: string
  /** The schema version of `data` (an integer ≥ 1), used by upcasters on read. */
  readonly version: number
  /** The payload: any JSON value (checked on append; `-0` is stored as `0`, as JSON has no `-0`). */
  readonly data: unknown
  /** Optional JSON metadata (causation, correlation, actor, ...). */
  readonly metadata?: unknown
  /**
   * Crypto-shredding: the fields of `data` stored encrypted with the stream's key (created with the stream's first
   * sealed event). Reads decrypt them; after `forget(stream)` they read as `ERASED`. Metadata is never sealed.
   */
  readonly sealed?: ReadonlyArray<FieldPath> | undefined
}

/** An event as stored: the appended event plus its stream, place in the stream, global position and time. */
export interface RecordedEvent {
  readonly id: string
  readonly type: string
  readonly version: number
  readonly data: unknown
  /** `null` when the event was appended without metadata. */
  readonly metadata: unknown
  /** The stream the event belongs to. */
  readonly stream: string
  /** 1 for the first event of the stream, n for the n-th. */
  readonly streamVersion: number
  /** The global position: strictly increasing in append order across all streams. */
  readonly position: number
  /** When the event was recorded, in epoch milliseconds from `Clock`. */
  readonly recordedAt: number
}

/**
 * What an append expects of the stream: `"any"` (no check), `"no-stream"` (version 0), `"stream-exists"`
 * (version ≥ 1), or an exact version (the number of events the caller has seen; 0 is the same as `"no-stream"`).
 */
export type ExpectedVersion = "any" | "no-stream" | "stream-exists" | number

/** The outcome of an append: the stream's new version and the global position of its last event. */
export interface AppendResult {
  /** The version of the stream after the append (= number of events in it). */
  readonly streamVersion: number
  /** The global position of the last event written; for an empty batch, of the stream's last event (0 if none). */
  readonly position: number
}

/** Whether a stream at version `actual` satisfies `expected`. */
export const expectedVersionMatches = (expected: ExpectedVersion, actual: number): boolean => {
  switch (expected) {
    case "any":
      return true
    case "no-stream":
      return actual === 0
    case "stream-exists":
      return actual > 0
    default:
      return expected === actual
  }
}

/** An event ready to be written: its payloads already serialised to JSON text. */
export interface SerializedEvent {
  readonly id: string
  readonly type: string
  readonly version: number
  readonly data: string
  readonly metadata: string | null
  /** The fields to seal (see `NewEvent.sealed`); the data as given, to seal before it is written. */
  readonly sealed?: { readonly paths: ReadonlyArray<FieldPath>; readonly data: unknown } | undefined
}

const isFieldPaths = (value: unknown): value is ReadonlyArray<FieldPath> =>
  Array.isArray(value) &&
  value.every((path) => Array.isArray(path) && path.every((segment) => typeof segment === "string"))

const describe = (value: unknown): string => {
  if (value === undefined) return "undefined"
  if (typeof value === "number") return String(value)
  if (typeof value === "object" && value !== null) return value.constructor?.name ?? "object"
  return typeof value
}

/** How deep the fast check goes; a deeper value (or a cycle, which is endlessly deep) gets the full check. */
const FAST_DEPTH = 64

// The fast check of the common case (every value is plain JSON, nested less than FAST_DEPTH): no paths are built and
// no set of visited objects kept (a cycle shows as too deep); findNonJson runs only when it answers false.
const isPlainJson = (value: unknown, depth: number): boolean => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(value)
    case "object": {
      if (value === null) return true
      if (depth >= FAST_DEPTH) return false
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!isPlainJson(value[i], depth + 1)) return false
        return true
      }
      const proto = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) return false
      for (const key in value) {
        if (Object.hasOwn(value, key) && !isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false
      }
      return true
    }
    default:
      return false
  }
}

// Finds the first non-JSON value: JSON.stringify would silently drop or rewrite it (undefined, NaN, Date, Map, ...).
const findNonJson = (value: unknown, path: string, seen: Set<object>): MalformedEvent | undefined => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined
    case "number":
      return Number.isFinite(value) ? undefined : new MalformedEvent({ path, message: `${value} is not a JSON number` })
    case "object": {
      if (value === null) return undefined
      if (seen.has(value)) return new MalformedEvent({ path, message: "circular reference" })
      const proto = Object.getPrototypeOf(value)
      const isArray = Array.isArray(value)
      if (!isArray && proto !== Object.prototype && proto !== null) {
        return new MalformedEvent({ path, message: `${describe(value)} is not a plain JSON object` })
      }
      seen.add(value)
      if (isArray) {
        for (let i = 0; i < value.length; i++) {
          const bad = findNonJson(value[i], `${path}[${i}]`, seen)
          if (bad !== undefined) return bad
        }
      } else {
        for (const [key, child] of Object.entries(value)) {
          const bad = findNonJson(
            child,
            /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`,
            seen,
          )
          if (bad !== undefined) return bad
        }
      }
      seen.delete(value)
      return undefined
    }
    default:
      return new MalformedEvent({ path, message: `${describe(value)} is not a JSON value` })
  }
}

/**
 * The JSON text of a value `isPlainJson` admitted. With `fields`, a plain object's text is put together field by
 * field, and each object-valued field's own text is recorded there (keyed by the field's value): the same text
 * `JSON.stringify` gives, since it writes the same keys in the same order (`Object.keys`: no undefined, function or
 * symbol values are left to skip) with each value's text unchanged inside its parent's.
 */
const stringify = (value: unknown, fields: Map<object, string> | undefined): string => {
  if (fields === undefined || typeof value !== "object" || value === null || Array.isArray(value))
    return JSON.stringify(value)
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  let text = "{"
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!
    const field = record[key]
    const fieldText = JSON.stringify(field)
    if (typeof field === "object" && field !== null) fields.set(field, fieldText)
    text += `${k === 0 ? "" : ","}${JSON.stringify(key)}:${fieldText}`
  }
  return `${text}}`
}

/**
 * Checks a batch and serialises its payloads: ids and types are non-empty strings, versions integers ≥ 1, data and
 * metadata JSON values, and no id appears twice in the batch. Pure, but for `fields`: when given, the JSON text of
 * every object-valued top-level field of each event's data is recorded there, keyed by the field's value (what a
 * store hook that keeps such values as JSON, like the read models' window rows, can reuse instead of serialising
 * them again).
 */
export const serializeBatch = (
  events: ReadonlyArray<NewEvent>,
  fields?: Map<object, string> | undefined,
): Result.Result<ReadonlyArray<SerializedEvent>, MalformedEvent | DuplicateEventId> => {
  const out: Array<SerializedEvent> = []
  const ids = new Set<string>()
  const repeated = new Set<string>()
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as NewEvent | undefined
    const at = `events[${i}]`
    const fail = (path: string, message: string) => Result.fail(new MalformedEvent({ path: `${at}${path}`, message }))
    if (typeof event !== "object" || event === null) return fail("", "an event must be an object")
    if (typeof event.id !== "string" || event.id.length === 0) return fail(".id", "must be a non-empty string")
    if (typeof event.type !== "string" || event.type.length === 0) return fail(".type", "must be a non-empty string")
    if (typeof event.version !== "number" || !Number.isInteger(event.version) || event.version < 1) {
      return fail(".version", `must be an integer ≥ 1, got ${describe(event.version)}`)
    }
    const badData = isPlainJson(event.data, 0) ? undefined : findNonJson(event.data, `${at}.data`, new Set())
    if (badData !== undefined) return Result.fail(badData)
    const badMeta =
      event.metadata === undefined || isPlainJson(event.metadata, 0)
        ? undefined
        : findNonJson(event.metadata, `${at}.metadata`, new Set())
    if (badMeta !== undefined) return Result.fail(badMeta)
    if (event.sealed !== undefined && !isFieldPaths(event.sealed))
      return fail(".sealed", "must be a list of field paths (lists of strings)")
    if (ids.has(event.id)) repeated.add(event.id)
    ids.add(event.id)
    out.push({
      id: event.id,
      type: event.type,
      version: event.version,
      data: stringify(event.data, fields),
      metadata: event.metadata === undefined ? null : JSON.stringify(event.metadata),
      ...(event.sealed === undefined || event.sealed.length === 0
        ? {}
        : { sealed: { paths: event.sealed, data: event.data } }),
    })
  }
  if (repeated.size > 0) return Result.fail(new DuplicateEventId({ ids: [...repeated] }))
  return Result.succeed(out)
}

/**
 * Checks a whole append: the stream name is a non-empty string, the expected version one of the four kinds (an
 * exact version is an integer ≥ 0), and the batch passes `serializeBatch` (which records into `fields`, when given).
 */
export const prepareAppend = (
  stream: string,
  expectedVersion: ExpectedVersion,
  events: ReadonlyArray<NewEvent>,
  fields?: Map<object, string> | undefined,
): Result.Result<ReadonlyArray<SerializedEvent>, MalformedEvent | DuplicateEventId> => {
  if (typeof stream !== "string" || stream.length === 0) {
    return Result.fail(new MalformedEvent({ path: "stream", message: "must be a non-empty string" }))
  }
  const kind =
    expectedVersion === "any" || expectedVersion === "no-stream" || expectedVersion === "stream-exists"
      ? "named"
      : typeof expectedVersion === "number" && Number.isInteger(expectedVersion) && expectedVersion >= 0
        ? "exact"
        : "invalid"
  if (kind === "invalid") {
    return Result.fail(
      new MalformedEvent({
        path: "expectedVersion",
        message: `must be "any", "no-stream", "stream-exists" or an integer ≥ 0, got ${describe(expectedVersion)}`,
      }),
    )
  }
  if (!Array.isArray(events)) return Result.fail(new MalformedEvent({ path: "events", message: "must be an array" }))
  return serializeBatch(events, fields)
}

/**
 * The rule that makes a repeated `forget` a no-op (every backend asks it, inside its forget): the stream was forgotten
 * before (`sinceMarker`: the types of its events after its last event of the marker's type; `undefined` when it has
 * none), no event since holds text to erase (`erasable` says which types can), and the stream has no key (nothing
 * sealed to delete). A forget after new text still erases it and appends its marker.
 */
export const alreadyForgotten = (
  sinceMarker: ReadonlyArray<string> | undefined,
  keyed: boolean,
  erasable: (type: string) => boolean,
): boolean => sinceMarker !== undefined && !keyed && !sinceMarker.some(erasable)

/**
 * A snapshot to store: a checkpoint of a stream's folded state at a stream version, in a format named by the writer.
 * An optimisation only: readers check it and fall back to the events.
 */
export interface NewSnapshot {
  /** The stream version the state stands at (events 1..version folded). */
  readonly version: number
  /** The writer's name for the state's format; a reader ignores a snapshot of a format it does not know. */
  readonly format: string
  /** The state, as text (JSON). */
  readonly data: string
  /**
   * An event type: nothing is written when the stream holds an event of this type after `version` (checked in the
   * write's own transaction, so a `forget` whose marker committed first wins over a snapshot of what it erased).
   * Not stored.
   */
  readonly unlessAfter?: string | undefined
}

/** A snapshot as stored: the checksum of `data` taken when it was written (`Snapshot.checksum`; see `Snapshot.intact`). */
export interface StoredSnapshot extends NewSnapshot {
  readonly stream: string
  readonly checksum: string
  readonly recordedAt: number
}
