/**
 * Why a command was refused. Each is a typed, schema-backed error that crosses boundaries intact.
 */
import { Schema } from "effect"

/** A command other than `StartSession` arrived before the session started. */
export class SessionNotStarted extends Schema.TaggedError<SessionNotStarted>()("SessionNotStarted", {}) {}

/** `StartSession` for a stream that already holds another session. */
export class SessionAlreadyStarted extends Schema.TaggedError<SessionAlreadyStarted>()("SessionAlreadyStarted", {
  sessionId: Schema.String,
}) {}

/** A message id was reused for different content. */
export class MessageConflict extends Schema.TaggedError<MessageConflict>()("MessageConflict", {
  messageId: Schema.String,
}) {}

/** A command names a message the session does not have (or one of the wrong role). */
export class UnknownMessage extends Schema.TaggedError<UnknownMessage>()("UnknownMessage", {
  messageId: Schema.String,
  expected: Schema.optionalKey(Schema.String),
}) {}

/** A command names a tool part the message does not have. */
export class UnknownPart extends Schema.TaggedError<UnknownPart>()("UnknownPart", {
  messageId: Schema.String,
  partId: Schema.String,
}) {}

/** A command names a compaction that was never requested. */
export class UnknownCompaction extends Schema.TaggedError<UnknownCompaction>()("UnknownCompaction", {
  markerId: Schema.String,
}) {}

/** A command does not fit where the compaction stands (e.g. finishing one that never started). */
export class CompactionOutOfOrder extends Schema.TaggedError<CompactionOutOfOrder>()("CompactionOutOfOrder", {
  markerId: Schema.String,
  status: Schema.String,
  command: Schema.String,
}) {}
