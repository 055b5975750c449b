/**
 * The session's events: immutable facts in the past tense, the storage contract of pivot. Everything that was not
 * deterministic when it happened (the LLM's summary, token usage, the exact prompt sent, plugin contributions) is
 * captured here, so every projection is a pure fold and replay never calls a model again.
 *
 * Each event type has a schema version (`versions`); a stored event keeps the version it was written with, and old
 * versions are upcast on read. Never change a released version's shape: add a new version and an upcaster.
 */
import { Schema } from "effect"
import { MessageId, PartId, SessionId } from "./Ids.ts"
import { AssistantMessage, MessageError, ToolCompleted, ToolError, UserMessage } from "./Message.ts"
import { ModelRef } from "./Model.ts"

const Millis = Schema.Finite

/** A session began. The first event of every stream. */
export const SessionStarted = Schema.TaggedStruct("SessionStarted", {
  sessionId: SessionId,
  at: Millis,
  title: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(ModelRef),
})

/** The user (or the agent's harness) sent a message. */
export const UserMessageAdded = Schema.TaggedStruct("UserMessageAdded", {
  at: Millis,
  message: UserMessage,
})

/** One model call finished: its parts (text, reasoning, tool calls), usage and finish reason. */
export const AssistantStepRecorded = Schema.TaggedStruct("AssistantStepRecorded", {
  at: Millis,
  message: AssistantMessage,
})

/** A tool call of an earlier step got its result. */
export const ToolResultRecorded = Schema.TaggedStruct("ToolResultRecorded", {
  at: Millis,
  messageId: MessageId,
  partId: PartId,
  state: Schema.Union([ToolCompleted, ToolError]),
})

/**
 * A model call failed at the provider. `message` is the assistant message as stored: on an overflow that will be
 * compacted it carries no error (as in OpenCode); otherwise it carries the error and `finish: "error"`.
 */
export const ProviderErrorReported = Schema.TaggedStruct("ProviderErrorReported", {
  at: Millis,
  message: AssistantMessage,
  error: MessageError,
  overflow: Schema.Boolean,
})

/** The context was found full: from a step's usage, a provider error, or the check before the next call. */
export const OverflowDetected = Schema.TaggedStruct("OverflowDetected", {
  at: Millis,
  messageId: MessageId,
  source: Schema.Literals(["usage", "provider-error", "pre-check"]),
  /** Tokens the call used (0 for a provider error). */
  tokens: Schema.Finite,
  /** The count at which compaction triggers (undefined for a provider error). */
  trigger: Schema.optionalKey(Schema.Finite),
})

/** A compaction was asked for: the marker user message (a `compaction` part) was added. */
export const CompactionRequested = Schema.TaggedStruct("CompactionRequested", {
  at: Millis,
  marker: UserMessage,
})

/** What a compaction summarises and keeps: decided purely from the window when it started. */
export const CompactionPlan = Schema.Struct({
  /** Messages sent to the summariser, oldest first. */
  head: Schema.Array(MessageId),
  /** Messages kept verbatim after the summary, oldest first. */
  tail: Schema.Array(MessageId),
  tailStartId: Schema.optionalKey(MessageId),
  /** The last finished summary, updated rather than repeated. */
  previousSummary: Schema.optionalKey(Schema.String),
  /** On a provider overflow: the user turn replayed after the summary instead of a continue message. */
  replayOf: Schema.optionalKey(MessageId),
}).annotate({ identifier: "CompactionPlan" })
export type CompactionPlan = typeof CompactionPlan.Type

/** The summariser was called: the exact prompt, the model and the plan are recorded. */
export const CompactionStarted = Schema.TaggedStruct("CompactionStarted", {
  at: Millis,
  markerId: MessageId,
  summaryId: MessageId,
  model: ModelRef,
  plan: CompactionPlan,
  prompt: Schema.String,
  /** Context lines plugins added to the prompt, in order (already part of `prompt`). */
  pluginContext: Schema.optionalKey(Schema.Array(Schema.String)),
})

/** The summary came back: it and the plan's tail now replace the head in the window. */
export const SummaryFinished = Schema.TaggedStruct("SummaryFinished", {
  at: Millis,
  markerId: MessageId,
  summary: AssistantMessage,
})

/** The summariser failed; the summary message keeps the error and forms no pivot. */
export const SummaryFailed = Schema.TaggedStruct("SummaryFailed", {
  at: Millis,
  markerId: MessageId,
  summary: AssistantMessage,
})

/** After an overflow compaction, the user turn that overflowed was sent again (media as placeholders). */
export const TurnReplayed = Schema.TaggedStruct("TurnReplayed", {
  at: Millis,
  markerId: MessageId,
  replayOf: MessageId,
  message: UserMessage,
})

/** After an auto compaction, the synthetic "continue" user message was added. */
export const ContinueRequested = Schema.TaggedStruct("ContinueRequested", {
  at: Millis,
  markerId: MessageId,
  message: UserMessage,
})

/** A tool output was pruned: cleared from the model input, kept in storage. */
export const PartCompacted = Schema.TaggedStruct("PartCompacted", {
  at: Millis,
  messageId: MessageId,
  partId: PartId,
  /** The output's token estimate: what the model input no longer carries. */
  tokens: Schema.Finite,
})

/** Any session event. */
export const Event = Schema.Union([
  SessionStarted,
  UserMessageAdded,
  AssistantStepRecorded,
  ToolResultRecorded,
  ProviderErrorReported,
  OverflowDetected,
  CompactionRequested,
  CompactionStarted,
  SummaryFinished,
  SummaryFailed,
  TurnReplayed,
  ContinueRequested,
  PartCompacted,
])
export type Event = typeof Event.Type
export type Encoded = typeof Event.Encoded

/** Event type names. */
export type Type = Event["_tag"]

/** The current schema version of each event type; stored with every event. */
export const versions: { readonly [K in Type]: number } = {
  SessionStarted: 1,
  UserMessageAdded: 1,
  AssistantStepRecorded: 1,
  ToolResultRecorded: 1,
  ProviderErrorReported: 1,
  OverflowDetected: 1,
  CompactionRequested: 1,
  CompactionStarted: 1,
  SummaryFinished: 1,
  SummaryFailed: 1,
  TurnReplayed: 1,
  ContinueRequested: 1,
  PartCompacted: 1,
}

/** The schema of each event type, by name: what a store's decoder needs next to `versions`. */
export const schemas: { readonly [K in Type]: Schema.Codec<Extract<Event, { _tag: K }>, Extract<Encoded, { _tag: K }>> } = {
  SessionStarted,
  UserMessageAdded,
  AssistantStepRecorded,
  ToolResultRecorded,
  ProviderErrorReported,
  OverflowDetected,
  CompactionRequested,
  CompactionStarted,
  SummaryFinished,
  SummaryFailed,
  TurnReplayed,
  ContinueRequested,
  PartCompacted,
}

/** Every event type, in catalog order. */
export const types = Object.keys(versions) as ReadonlyArray<Type>

/** Decodes an encoded event (from JSON), failing with a `SchemaError` that names the bad path. */
export const decode = Schema.decodeUnknownSync(Event)
/** Decodes without throwing. */
export const decodeExit = Schema.decodeUnknownExit(Event)
/** Encodes an event to JSON-safe data. */
export const encode = Schema.encodeSync(Event)

/** The stream a session's events live in. */
export const streamName = (sessionId: string): string => `session-${sessionId}`
