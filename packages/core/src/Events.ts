/**
 * The session's events: immutable facts in the past tense, the storage contract of pivot. Everything that was not
 * deterministic when it happened (the LLM's summary, token usage, the exact prompt sent, plugin contributions) is
 * captured here, so every projection is a pure fold and replay never calls a model again.
 *
 * Each event type has a schema version (`versions`); a stored event keeps the version it was written with, and old
 * versions are upcast on read. Never change a released version's shape: add a new version and an upcaster.
 */
import * as Schema from "effect/Schema"
import { Artifact } from "./ArtifactCheck.ts"
import { MessageId, PartId, SessionId } from "./Ids.ts"
import {
  COMPACTION_TAGS,
  decodeCompactionEvent,
  decodeMessageEvent,
  encodeMessageEvent,
} from "./internal/fastEncode.ts"
import { AssistantMessage, MessageError, ToolCompleted, ToolError, UserMessage } from "./Message.ts"
import { ModelRef } from "./Model.ts"
import { PinnedBy, UnpinReason } from "./Pins.ts"
import { Probe } from "./Probe.ts"
import { TokenUsage } from "./Tokens.ts"

const Millis = Schema.Finite

/** A session began. The first event of every stream. */
export const SessionStarted = Schema.TaggedStruct("SessionStarted", {
  sessionId: SessionId,
  at: Millis,
  title: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(ModelRef),
})

/**
 * The session got a new title: the newest one stands (`title` folds them). OpenCode names a session with a
 * placeholder when it starts and generates its title from the first message a little later.
 */
export const SessionTitled = Schema.TaggedStruct("SessionTitled", {
  at: Millis,
  title: Schema.String,
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

/**
 * Why a compaction was asked for: `threshold` (a call's usage, or the check before the next call, reached the
 * compaction trigger: the usable window, or `threshold` of it, 75 % in cache-aware mode), `provider-overflow` (the
 * provider refused a call as too long; the turn is replayed after the summary), `rent-or-buy` (cache-aware mode:
 * compacting had become cheaper than reading the window from the cache), `user` (the application called `compact`),
 * `model` (the model called `context_compact`).
 */
export const CompactionReason = Schema.Literals(["threshold", "provider-overflow", "rent-or-buy", "user", "model"])
export type CompactionReason = typeof CompactionReason.Type

/**
 * A compaction was asked for: the marker user message (a `compaction` part) was added. `reason` says why:
 * `threshold` (a call's usage, or the check before the next call, reached the compaction trigger), `provider-overflow`
 * (the provider refused a call as too long), `rent-or-buy` (cache-aware mode: compacting had become cheaper than
 * reading the window from the cache), `user` (the application called `compact`) or `model` (`context_compact`).
 * Logs written before pivot recorded it, and imported OpenCode sessions, have none.
 */
export const CompactionRequested = Schema.TaggedStruct("CompactionRequested", {
  at: Millis,
  marker: UserMessage,
  reason: Schema.optionalKey(CompactionReason),
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

/**
 * A tool output was pruned: cleared from the model input, kept in storage. `rule` names the strategy's rule that chose
 * it (`duplicate-calls`, `cold-cache`, or a user's own) and `reason` says why, in one line; OpenCode's own prune and
 * logs written before strategies record neither. With `target: "input"` it is the tool call's input (its arguments)
 * that was cleared, not its output (ADR 0030): the call shows `Render.clearedInput` and its output stays.
 */
export const PartCompacted = Schema.TaggedStruct("PartCompacted", {
  at: Millis,
  messageId: MessageId,
  partId: PartId,
  /** The token estimate of what the model input no longer carries (the output, or the input's cleared values). */
  tokens: Schema.Finite,
  rule: Schema.optionalKey(Schema.String),
  reason: Schema.optionalKey(Schema.String),
  /** What was cleared: absent for the output (every event before ADR 0030), `input` for the call's arguments. */
  target: Schema.optionalKey(Schema.Literal("input")),
})

// ── Beyond OpenCode: facts the runtime records about its own decisions (bounded compaction, budgeted summariser
// input, the extractive fallback, secret redaction, plugins, the auto-continue decision). Core's folds ignore them;
// they are audit facts plus the little state the runtime needs to resume a compaction after a restart.

const Count = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

/**
 * Bounded compaction: the context overflowed again right after `attempts` consecutive automatic compactions that
 * did not bring usage back under the trigger, so no further automatic compaction happens until progress is made (a
 * model step under the trigger, or a new user message).
 */
export const CompactionAbandoned = Schema.TaggedStruct("CompactionAbandoned", {
  at: Millis,
  /** The message whose overflow would have asked for another compaction. */
  messageId: MessageId,
  /** Consecutive automatic compactions already run without progress. */
  attempts: Count,
  /** The configured most consecutive automatic compactions. */
  limit: Count,
  /** Tokens the overflowing call used (0 for a provider rejection). */
  tokens: Schema.Finite,
  trigger: Schema.optionalKey(Schema.Finite),
})

/**
 * The summariser input did not fit the compaction model's window: the oldest head messages were left out of the model
 * call and summarised deterministically instead (their extractive digest stands in the prompt as the previous summary).
 */
export const SummaryInputBudgeted = Schema.TaggedStruct("SummaryInputBudgeted", {
  at: Millis,
  markerId: MessageId,
  /** Estimated tokens the model call could take for the head. */
  budget: Schema.Finite,
  /** Estimated tokens of the whole head as planned. */
  estimated: Schema.Finite,
  /** Head messages left out of the model call, oldest first. */
  dropped: Schema.Array(MessageId),
  /** Head messages still sent. */
  kept: Count,
  /** Whether the dropped messages' digest was put in the prompt (false: nothing could be sent at all). */
  digest: Schema.Boolean,
})

/** Why the deterministic extractive summary was used instead of the model's. */
export const FallbackReason = Schema.Literals([
  "failed",
  "timeout",
  "empty",
  "overflow",
  "interrupted",
  "invalid",
  "larger",
  "too-large",
])
export type FallbackReason = typeof FallbackReason.Type

/** The model's summary was replaced by the extractive one (the summariser failed, hung, answered nothing or too much). */
export const SummaryFallbackUsed = Schema.TaggedStruct("SummaryFallbackUsed", {
  at: Millis,
  markerId: MessageId,
  reason: FallbackReason,
  /** What the summariser said, when it failed; never contains secrets (redacted). */
  error: Schema.optionalKey(MessageError),
})

/** Where secrets were found: what kind, in which message / part / field; never the secret itself. */
export const RedactionFinding = Schema.Struct({
  messageId: Schema.optionalKey(MessageId),
  partId: Schema.optionalKey(PartId),
  field: Schema.String,
  /** A `Redaction.Kind`, or `plugin:<name>` for a plugin's redaction. */
  kind: Schema.String,
})
export type RedactionFinding = typeof RedactionFinding.Type

/** Secrets were redacted from the summariser input, the prompt, or the stored summary. */
export const SecretsRedacted = Schema.TaggedStruct("SecretsRedacted", {
  at: Millis,
  markerId: MessageId,
  stage: Schema.Literals(["summarizer-input", "prompt", "summary"]),
  findings: Schema.Array(RedactionFinding),
})

/**
 * Record-time redaction (opt-in): secrets were replaced by `[REDACTED:<kind>]` in a command's text before it was
 * decided, so they never reached the store. Findings say where and what kind, never the secret.
 */
export const SecretsRedactedOnRecord = Schema.TaggedStruct("SecretsRedactedOnRecord", {
  at: Millis,
  /** The command whose text was redacted, e.g. `AddUserMessage`. */
  command: Schema.String,
  findings: Schema.Array(RedactionFinding),
})

/** The hooks a plugin can implement. */
export const PluginHook = Schema.Literals(["compactionContext", "autoContinue", "transformWindow", "redact"])
export type PluginHook = typeof PluginHook.Type

/** A plugin hook threw, hung past its time limit, or answered something invalid; its contribution was ignored. */
export const PluginFailed = Schema.TaggedStruct("PluginFailed", {
  at: Millis,
  plugin: Schema.String,
  hook: PluginHook,
  reason: Schema.Literals(["threw", "timeout", "invalid-output"]),
  message: Schema.String,
  markerId: Schema.optionalKey(MessageId),
})

/**
 * A plugin contributed to a compaction: context lines (already in the recorded prompt), a replacement prompt, or an
 * auto-continue verdict. Recorded so replay never calls the plugin again.
 */
export const PluginContributed = Schema.TaggedStruct("PluginContributed", {
  at: Millis,
  plugin: Schema.String,
  hook: PluginHook,
  markerId: MessageId,
  context: Schema.optionalKey(Schema.Array(Schema.String)),
  replacedPrompt: Schema.optionalKey(Schema.Boolean),
  autoContinue: Schema.optionalKey(Schema.Boolean),
})

/** After an automatic compaction, no continue message was added: the agent was waiting for the user, or a plugin vetoed. */
export const AutoContinueSkipped = Schema.TaggedStruct("AutoContinueSkipped", {
  at: Millis,
  markerId: MessageId,
  reason: Schema.Literals(["waiting-for-user", "plugin-veto"]),
  plugin: Schema.optionalKey(Schema.String),
})

/**
 * The model asked for a compaction itself (the `context_compact` tool), recorded in the batch that requests it. The
 * focus note, redacted, reaches the summariser's prompt as a context line; the prompt is recorded as sent.
 */
export const CompactionRequestedByModel = Schema.TaggedStruct("CompactionRequestedByModel", {
  at: Millis,
  markerId: MessageId,
  focus: Schema.optionalKey(Schema.String),
  /** The tool call that asked: the step carrying it was measured before the pivot it formed (`Usage.predatesPivot`). */
  callId: Schema.optionalKey(Schema.String),
})

/**
 * The usage HUD the model saw in its system prompt (or, with `last`, as the request's last message) from this point
 * on: recorded when its text changes, so an audit and a replay show exactly what the model was told about its own
 * context.
 */
export const HudShown = Schema.TaggedStruct("HudShown", {
  at: Millis,
  text: Schema.String,
  /**
   * `true`: the HUD was the request's last message, after the conversation, not in its system prompt (the OpenCode
   * plugin's drive mode); the ledger's prefix estimate puts it there. Absent: in the system prompt.
   */
  last: Schema.optionalKey(Schema.Boolean),
})

/**
 * The model re-read context through the `context_recall` tool: the original of a pruned output or summary by id, or
 * ranked snippets for a query. Records what was asked, which ids came back (none: a miss), and how big the answer was.
 */
export const ContextRecalled = Schema.TaggedStruct("ContextRecalled", {
  at: Millis,
  /** The recall id asked for (a part id or a summary's message id). */
  id: Schema.optionalKey(Schema.String),
  /** The search asked for; free text, so sensitive. */
  query: Schema.optionalKey(Schema.String),
  /** Where in the original the answer starts (a paged recall by id). */
  offset: Schema.optionalKey(Count),
  /** The pivot whose list of dropped messages was asked for (0: the latest); `found` holds the messages listed. */
  pivot: Schema.optionalKey(Count),
  /** The ids the answer gave back, best first; empty when nothing matched. */
  found: Schema.Array(Schema.String),
  /** Characters of the answer the model got. */
  chars: Count,
  /** Whether the answer was cut at the size bound. */
  truncated: Schema.Boolean,
})

/**
 * This session was forked from another: its first `parentVersion` events are copies of the parent's first
 * `parentVersion` events (the parent's `SessionStarted` naming this session instead), so its window there is the
 * parent's window at that version. The parent is unchanged; from here on both evolve independently. A fork names every
 * ancestor, oldest first, each with the version it shares with it.
 */
export const SessionForked = Schema.TaggedStruct("SessionForked", {
  at: Millis,
  parent: SessionId,
  parentVersion: Count,
})

/**
 * What a compaction kept: the exact artifacts of the span it summarised (files read and edited, commands run, errors,
 * the user's requests) and whether the summary names each, checked deterministically (`ArtifactCheck`) when the
 * summary finished.
 */
export const ArtifactsChecked = Schema.TaggedStruct("ArtifactsChecked", {
  at: Millis,
  markerId: MessageId,
  artifacts: Schema.Array(Artifact),
})

/**
 * The session was forgotten (`pivot forget`, `SessionLog.forget`): its key was deleted in the same transaction, so
 * every field stored encrypted before this event reads as `[ERASED]`. Every other fact stands. A reader holding the
 * session's text in memory (a live state, a cache, a read model) folds the log again from its first event, and a
 * writer refuses what it derived from text read before this event. Forgetting again records no second one unless an
 * event with sensitive fields was recorded since (a repeated forget is idempotent).
 */
export const SessionForgotten = Schema.TaggedStruct("SessionForgotten", {
  at: Millis,
})

/**
 * A compaction's probes (optional): questions about the span its summary replaced, derived from its retention check's
 * artifacts, answered by the judge model the user configured from the summary alone, and graded deterministically
 * (`Probe`). Recorded after the pivot formed; `error` says why the judge gave no answers (then `probes` is empty).
 */
export const ProbesAnswered = Schema.TaggedStruct("ProbesAnswered", {
  at: Millis,
  markerId: MessageId,
  /** The judge's model, as it answered. */
  model: Schema.optionalKey(ModelRef),
  /** The judge call's usage (the ledger counts it as a `probe` call). */
  usage: Schema.optionalKey(TokenUsage),
  probes: Schema.Array(Probe),
  error: Schema.optionalKey(Schema.String),
})

/**
 * A message, or one part of it (`partId`), was pinned: from the next pivot on it stays verbatim in every window, right
 * after the summary (`Pins`). `tokens` is the message's size as the pin budget counts it; `budget` the budget then.
 */
export const ContextPinned = Schema.TaggedStruct("ContextPinned", {
  at: Millis,
  messageId: MessageId,
  partId: Schema.optionalKey(PartId),
  by: PinnedBy,
  tokens: Count,
  budget: Count,
})

/**
 * A pin was removed: by the user or the model, or (`reason: "budget"`) to make room in the pin budget for a newer pin
 * (`for`: the key of that pin, its part id or message id). The message stays recorded; it is no longer restored.
 */
export const ContextUnpinned = Schema.TaggedStruct("ContextUnpinned", {
  at: Millis,
  messageId: MessageId,
  partId: Schema.optionalKey(PartId),
  reason: UnpinReason,
  for: Schema.optionalKey(Schema.String),
})

/**
 * pivot's strategy asked the host agent to compact before the host's own limit (OpenCode under the plugin's drive
 * mode with `driveCompaction`, ADR 0044): `reason` is the strategy's (`threshold`: the last call reached its trigger;
 * `rent-or-buy`: compacting had become cheaper than reading the window from the cache), `tokens` the context the last
 * call measured, `trigger` the strategy's trigger, `request` the coming request as estimated (window, system prompt
 * and tools), `usable` the host's own limit (a call reaching it makes the host compact on its own: the limit pivot
 * compacted before). `at` is when pivot asked; `markerId` the marker the host added for it. Recorded once per ask,
 * right after the host's compaction request (its `CompactionRequested`) is recorded. A compaction without one was the
 * host's own, or pivot's runtime's (whose `CompactionRequested` carries its `reason`); older logs have none.
 */
export const CompactionRequestedByStrategy = Schema.TaggedStruct("CompactionRequestedByStrategy", {
  at: Millis,
  markerId: MessageId,
  reason: CompactionReason,
  /** The strategy's name (with its rules), e.g. `cache-aware+duplicate-calls`. */
  strategy: Schema.optionalKey(Schema.String),
  tokens: Count,
  trigger: Schema.optionalKey(Count),
  request: Count,
  usable: Count,
})
export type CompactionRequestedByStrategy = typeof CompactionRequestedByStrategy.Type

/** The schema of each event type, by name, in catalog order: the storage contract a decoder needs. */
export const schemas = {
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
  CompactionAbandoned,
  SummaryInputBudgeted,
  SummaryFallbackUsed,
  SecretsRedacted,
  PluginFailed,
  PluginContributed,
  AutoContinueSkipped,
  SecretsRedactedOnRecord,
  CompactionRequestedByModel,
  HudShown,
  ContextRecalled,
  SessionForked,
  ArtifactsChecked,
  SessionForgotten,
  ProbesAnswered,
  SessionTitled,
  ContextPinned,
  ContextUnpinned,
  CompactionRequestedByStrategy,
} as const

/** Event type names. */
export type Type = keyof typeof schemas

/** Any session event. */
export const Event = Schema.Union(Object.values(schemas))
export type Event = typeof Event.Type
export type Encoded = typeof Event.Encoded

/** The current schema version of each event type; stored with every event. Bump one with an upcaster. */
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
  CompactionAbandoned: 1,
  SummaryInputBudgeted: 1,
  SummaryFallbackUsed: 1,
  SecretsRedacted: 1,
  PluginFailed: 1,
  PluginContributed: 1,
  AutoContinueSkipped: 1,
  SecretsRedactedOnRecord: 1,
  CompactionRequestedByModel: 1,
  HudShown: 1,
  ContextRecalled: 1,
  SessionForked: 1,
  ArtifactsChecked: 1,
  SessionForgotten: 1,
  ProbesAnswered: 1,
  SessionTitled: 1,
  ContextPinned: 1,
  ContextUnpinned: 1,
  CompactionRequestedByStrategy: 1,
}

/**
 * The session's title after `event`: a `SessionTitled` replaces it, `SessionStarted` sets the first one. Fold a
 * stream with it (`events.reduce(title, undefined)`) for the title a reader shows.
 */
export const title = (current: string | undefined, event: Event): string | undefined =>
  event._tag === "SessionTitled" ? event.title : event._tag === "SessionStarted" ? event.title : current

/** Every event type, in catalog order. */
export const types = Object.keys(schemas) as ReadonlyArray<Type>

/**
 * A fingerprint of schema versions (the catalog's by default): it changes whenever an event's schema version does
 * (when an upcaster is added), so that state folded by an earlier catalog (a snapshot) is not trusted.
 */
export const catalogFingerprint = (catalog: { readonly [type: string]: number } = versions): string => {
  const text = Object.keys(catalog)
    .sort()
    .map((type) => `${type}:${catalog[type]}`)
    .join(",")
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(16).padStart(8, "0")
}

/**
 * Hand-written decoders of the current version's data, for the types that have one (the message events, nearly all
 * of a session, and the compaction events a restart finds after its snapshot, some holding a whole message): each
 * answers the value its type's schema decodes the data to, or `undefined` when the schema must judge it (another
 * type, anything unexpected), so a caller runs the schema then. What the store's upcasting decoder
 * takes as `fast` (`Upcast.EventSchema`); internal/fastEncode.ts, checked against the schemas by a property.
 */
export const fastDecoders: { readonly [K in Type]?: (data: unknown) => unknown } = {
  UserMessageAdded: decodeMessageEvent("UserMessageAdded"),
  AssistantStepRecorded: decodeMessageEvent("AssistantStepRecorded"),
  ...Object.fromEntries(COMPACTION_TAGS.map((tag) => [tag, decodeCompactionEvent(tag)])),
}

/** Decodes an encoded event (from JSON), failing with a `SchemaError` that names the bad path. */
export const decode = Schema.decodeUnknownSync(Event)
/** Decodes without throwing. */
export const decodeExit = Schema.decodeUnknownExit(Event)
const encodeAny = Schema.encodeSync(Event)
// The members of `Event` differ in their `_tag` literal, so only an event's own type's schema can encode it: going
// there directly skips the union trying the others (a quarter of an import's encoding time).
const encoders: Record<string, (event: Event) => Encoded> = Object.fromEntries(
  Object.entries(schemas).map(([type, schema]) => [type, Schema.encodeSync(schema as Schema.Codec<Event, Encoded>)]),
)

/** Encodes an event to JSON-safe data (what the union's encoder gives; its error when the event is not valid). */
export const encode = (event: Event): Encoded => {
  // The message events (nearly all of a session) by hand, as the schema would (internal/fastEncode.ts); the rest,
  // and anything that encoder is unsure of, by the schema.
  const fast = encodeMessageEvent(event)
  if (fast !== undefined) return fast as Encoded
  const tag: unknown = typeof event === "object" && event !== null ? event._tag : undefined
  const own = typeof tag === "string" && Object.hasOwn(encoders, tag) ? encoders[tag] : undefined
  if (own !== undefined) {
    try {
      return own(event)
    } catch {
      // The union names what is wrong the way callers expect.
    }
  }
  return encodeAny(event)
}

/** The stream a session's events live in. */
export const streamName = (sessionId: string): string => `session-${sessionId}`

/** A path into an event's encoded data: property names and `"*"` for every array element (strings below it count). */
export type FieldPath = ReadonlyArray<string>

// The free text of a message: text and reasoning, subtask prompts, attached files (their data URLs and names), tool
// inputs, outputs, errors, titles, metadata and attachments, the system prompt and the error message. Ids, roles,
// part types, media types, statuses, times and tokens stay clear.
const messageFields = (...root: ReadonlyArray<string>): ReadonlyArray<FieldPath> => [
  [...root, "system"],
  [...root, "error", "message"],
  [...root, "parts", "*", "text"],
  [...root, "parts", "*", "prompt"],
  [...root, "parts", "*", "description"],
  [...root, "parts", "*", "metadata"],
  [...root, "parts", "*", "url"],
  [...root, "parts", "*", "filename"],
  [...root, "parts", "*", "state", "input"],
  [...root, "parts", "*", "state", "output"],
  [...root, "parts", "*", "state", "error"],
  [...root, "parts", "*", "state", "title"],
  [...root, "parts", "*", "state", "metadata"],
  [...root, "parts", "*", "state", "attachments", "*", "url"],
  [...root, "parts", "*", "state", "attachments", "*", "filename"],
]

/**
 * The sensitive fields of each event type: what crypto-shredding encrypts and `forget` erases. Every one is a free
 * string (or strings inside a free-form value), so an erased event still decodes, and nothing a fold decides by —
 * ids, statuses, token counts, usage, times — is among them.
 */
export const sensitive: { readonly [K in Type]: ReadonlyArray<FieldPath> } = {
  SessionStarted: [["title"]],
  UserMessageAdded: messageFields("message"),
  AssistantStepRecorded: messageFields("message"),
  ToolResultRecorded: [
    ["state", "input"],
    ["state", "output"],
    ["state", "error"],
    ["state", "title"],
    ["state", "metadata"],
    ["state", "attachments", "*", "url"],
    ["state", "attachments", "*", "filename"],
  ],
  ProviderErrorReported: [...messageFields("message"), ["error", "message"]],
  OverflowDetected: [],
  CompactionRequested: [],
  CompactionStarted: [["prompt"], ["plan", "previousSummary"], ["pluginContext"]],
  SummaryFinished: messageFields("summary"),
  SummaryFailed: messageFields("summary"),
  TurnReplayed: messageFields("message"),
  ContinueRequested: messageFields("message"),
  PartCompacted: [],
  CompactionAbandoned: [],
  SummaryInputBudgeted: [],
  SummaryFallbackUsed: [["error", "message"]],
  SecretsRedacted: [],
  PluginFailed: [["message"]],
  PluginContributed: [["context"]],
  AutoContinueSkipped: [],
  SecretsRedactedOnRecord: [],
  CompactionRequestedByModel: [["focus"]],
  HudShown: [],
  ContextRecalled: [["query"]],
  SessionForked: [],
  ArtifactsChecked: [["artifacts", "*", "text"]],
  SessionForgotten: [],
  ProbesAnswered: [
    ["probes", "*", "question"],
    ["probes", "*", "answer"],
    ["probes", "*", "expected", "*", "text"],
    ["error"],
  ],
  SessionTitled: [["title"]],
  ContextPinned: [],
  ContextUnpinned: [],
  CompactionRequestedByStrategy: [],
}
