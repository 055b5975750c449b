/**
 * The typed failures of reading a session: a stored event this program cannot read, a session that is not in the
 * store, a version outside the stream. Each message is one line a person can act on.
 */
import * as Schema from "effect/Schema"

/** Why a stored event could not be read. */
export const UndecodableReason = Schema.Literals(["unknown-type", "newer-version", "missing-upcaster", "malformed"])
export type UndecodableReason = typeof UndecodableReason.Type

/** A stored event of a session cannot be read: unknown type, a newer schema version than this program, or bad data. */
export class UndecodableEvent extends Schema.TaggedError<UndecodableEvent>()("UndecodableEvent", {
  sessionId: Schema.String,
  streamVersion: Schema.Number,
  eventId: Schema.String,
  type: Schema.String,
  reason: UndecodableReason,
  detail: Schema.String,
}) {
  override get message(): string {
    return `session ${this.sessionId}, event ${this.streamVersion} (${this.type}): ${this.detail}`
  }
}

/** No events are stored for this session. */
export class UnknownSession extends Schema.TaggedError<UnknownSession>()("UnknownSession", {
  sessionId: Schema.String,
}) {
  override get message(): string {
    return `unknown session ${this.sessionId}: the store has no events for it`
  }
}

/** A replay was asked for a version the session's stream does not have (valid: 0 to `head`). */
export class VersionOutOfRange extends Schema.TaggedError<VersionOutOfRange>()("VersionOutOfRange", {
  sessionId: Schema.String,
  version: Schema.Number,
  head: Schema.Number,
}) {
  override get message(): string {
    return `version ${this.version} is out of range: session ${this.sessionId} has ${this.head} events (use 0 to ${this.head})`
  }
}
