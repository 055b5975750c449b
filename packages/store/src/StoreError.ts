/**
 * The typed failures of the event store. Each one says what went wrong in terms a caller can act on: retry after
 * re-reading (`WrongExpectedVersion`), fix the input (`MalformedEvent`, `DuplicateEventId`), or stop and tell a
 * person (`StoreUnavailable`, `StoreCorrupt`).
 */
import * as Schema from "effect/Schema"
import * as Busy from "./internal/busy.ts"

/** The expected version of an append, as carried by `WrongExpectedVersion` (see `ExpectedVersion`). */
export const ExpectedVersionSchema = Schema.Union([
  Schema.Literals(["any", "no-stream", "stream-exists"]),
  Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)),
])

/** The stream's version did not match what the append expected; `actual` is its version (0 = no stream). */
export class WrongExpectedVersion extends Schema.TaggedError<WrongExpectedVersion>()("WrongExpectedVersion", {
  stream: Schema.String,
  expected: ExpectedVersionSchema,
  actual: Schema.Number,
}) {
  override get message(): string {
    return `stream ${this.stream}: expected version ${this.expected}, but it is at ${this.actual}`
  }
}

/** An event with one of these ids is already stored (or appears twice in the batch); nothing was written. */
export class DuplicateEventId extends Schema.TaggedError<DuplicateEventId>()("DuplicateEventId", {
  ids: Schema.Array(Schema.String),
}) {
  override get message(): string {
    return `duplicate event id(s): ${this.ids.join(", ")}`
  }
}

/** An event to append, or a stored event being decoded, is not well formed; `path` points at the bad field. */
export class MalformedEvent extends Schema.TaggedError<MalformedEvent>()("MalformedEvent", {
  path: Schema.String,
  message: Schema.String,
}) {}

/** The store could not be reached or did not answer (locked past the busy timeout, server down, ...). */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  reason: Schema.String,
  cause: Schema.optionalKey(Schema.Defect()),
}) {
  override get message(): string {
    return `event store unavailable: ${this.reason}`
  }
}

/**
 * True when the store gave up waiting for another connection's lock (SQLite's `database is locked`, past the busy
 * timeout): nothing was written, so the same write may be tried again once the holder is done.
 */
export const isLocked = (error: { readonly _tag: string }): boolean =>
  error._tag === "StoreUnavailable" && Busy.isBusy(error as StoreUnavailable)

/** The database is damaged or is not a pivot event store (random bytes, truncated, another schema); untouched. */
export class StoreCorrupt extends Schema.TaggedError<StoreCorrupt>()("StoreCorrupt", {
  path: Schema.optionalKey(Schema.String),
  reason: Schema.String,
}) {
  override get message(): string {
    return this.path === undefined ? `event store corrupt: ${this.reason}` : `${this.path}: ${this.reason}`
  }
}

/** Any failure of an append. */
export type AppendError = WrongExpectedVersion | DuplicateEventId | MalformedEvent | StoreUnavailable | StoreCorrupt

/** Any failure of a read. */
export type ReadError = StoreUnavailable | StoreCorrupt
