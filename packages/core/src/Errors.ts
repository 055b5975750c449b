/**
 * Why a command was refused. Each is a typed, schema-backed error that crosses boundaries intact.
 */
import * as Schema from "effect/Schema"

/** A command other than `StartSession` arrived before the session started. */
export class SessionNotStarted extends Schema.TaggedError<SessionNotStarted>()("SessionNotStarted", {}) {
  override get message(): string {
    return "the session has not started: record a user message or start it first"
  }
}

/** `StartSession` for a stream that already holds another session. */
export class SessionAlreadyStarted extends Schema.TaggedError<SessionAlreadyStarted>()("SessionAlreadyStarted", {
  sessionId: Schema.String,
}) {
  override get message(): string {
    return `the stream already holds session ${this.sessionId}`
  }
}

/** A message id was reused for different content, or a settled tool call was given another result (`partId`). */
export class MessageConflict extends Schema.TaggedError<MessageConflict>()("MessageConflict", {
  messageId: Schema.String,
  partId: Schema.optionalKey(Schema.String),
  /** The settled part's status, with `partId`. */
  status: Schema.optionalKey(Schema.String),
}) {
  override get message(): string {
    return this.partId === undefined
      ? `message ${this.messageId} was already recorded with different content; a message id cannot be reused`
      : `tool part ${this.partId} of message ${this.messageId} already has its result (${this.status ?? "settled"}); a result is final`
  }
}

/** A command names a message the session does not have (or one of the wrong role). */
export class UnknownMessage extends Schema.TaggedError<UnknownMessage>()("UnknownMessage", {
  messageId: Schema.String,
  expected: Schema.optionalKey(Schema.String),
}) {
  override get message(): string {
    return this.expected === undefined
      ? `no message ${this.messageId} in this session`
      : `no ${this.expected} message ${this.messageId} in this session`
  }
}

/** A command names a tool part the message does not have. */
export class UnknownPart extends Schema.TaggedError<UnknownPart>()("UnknownPart", {
  messageId: Schema.String,
  partId: Schema.String,
}) {
  override get message(): string {
    return `message ${this.messageId} has no tool part ${this.partId}`
  }
}

/** A command names a compaction that was never requested. */
export class UnknownCompaction extends Schema.TaggedError<UnknownCompaction>()("UnknownCompaction", {
  markerId: Schema.String,
}) {
  override get message(): string {
    return `no compaction ${this.markerId} was requested in this session`
  }
}

/** A command does not fit where the compaction stands (e.g. finishing one that never started). */
export class CompactionOutOfOrder extends Schema.TaggedError<CompactionOutOfOrder>()("CompactionOutOfOrder", {
  markerId: Schema.String,
  status: Schema.String,
  command: Schema.String,
}) {
  override get message(): string {
    return `cannot ${this.command} compaction ${this.markerId}: it is ${this.status}`
  }
}

/** A pin names a message that cannot be pinned (a compaction marker, a summary) or a part the message does not have. */
export class NotPinnable extends Schema.TaggedError<NotPinnable>()("NotPinnable", {
  messageId: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `message ${this.messageId} cannot be pinned: ${this.reason}`
  }
}

/** A pin names a message larger than the whole pin budget (`pin_share` of the usable window). */
export class PinOverBudget extends Schema.TaggedError<PinOverBudget>()("PinOverBudget", {
  messageId: Schema.String,
  tokens: Schema.Number,
  budget: Schema.Number,
}) {
  override get message(): string {
    return `message ${this.messageId} (~${this.tokens} tokens) is larger than the pin budget (${this.budget} tokens): raise pin_share or pin a smaller part`
  }
}
