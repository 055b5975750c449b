/**
 * Events the runtime records beyond core's catalog: the "beyond OpenCode" behaviours (bounded compaction, budgeted
 * summariser input, the extractive fallback, secret redaction, the auto-continue decision) and plugin outcomes.
 *
 * They are proposed for core's `Events` union (one catalog in one place); until they move there they live here and the
 * runtime stores them in the same session stream, with their own schema versions. Core's folds ignore them: each is an
 * audit fact plus the little state the runtime needs to resume a compaction after a restart.
 */
import { Ids, Message } from "@pivot/core"
import { Schema } from "effect"

const Millis = Schema.Finite
const Count = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

/**
 * Bounded compaction: the context overflowed again right after `attempts` consecutive automatic compactions that
 * did not bring usage back under the trigger, so no further automatic compaction happens until progress is made (a
 * model step under the trigger, or a new user message).
 */
export const CompactionAbandoned = Schema.TaggedStruct("CompactionAbandoned", {
  at: Millis,
  /** The message whose overflow would have asked for another compaction. */
  messageId: Ids.MessageId,
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
  markerId: Ids.MessageId,
  /** Estimated tokens the model call could take for the head. */
  budget: Schema.Finite,
  /** Estimated tokens of the whole head as planned. */
  estimated: Schema.Finite,
  /** Head messages left out of the model call, oldest first. */
  dropped: Schema.Array(Ids.MessageId),
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
  markerId: Ids.MessageId,
  reason: FallbackReason,
  /** What the summariser said, when it failed; never contains secrets (redacted). */
  error: Schema.optionalKey(Message.MessageError),
})

/** Where secrets were found: what kind, in which message / part / field; never the secret itself. */
export const RedactionFinding = Schema.Struct({
  messageId: Schema.optionalKey(Ids.MessageId),
  partId: Schema.optionalKey(Ids.PartId),
  field: Schema.String,
  /** A `Redaction.Kind`, or `plugin:<name>` for a plugin's redaction. */
  kind: Schema.String,
})
export type RedactionFinding = typeof RedactionFinding.Type

/** Secrets were redacted from the summariser input, the prompt, or the stored summary. */
export const SecretsRedacted = Schema.TaggedStruct("SecretsRedacted", {
  at: Millis,
  markerId: Ids.MessageId,
  stage: Schema.Literals(["summarizer-input", "prompt", "summary"]),
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
  markerId: Schema.optionalKey(Ids.MessageId),
})

/**
 * A plugin contributed to a compaction: context lines (already in the recorded prompt), a replacement prompt, or an
 * auto-continue verdict. Recorded so replay never calls the plugin again.
 */
export const PluginContributed = Schema.TaggedStruct("PluginContributed", {
  at: Millis,
  plugin: Schema.String,
  hook: PluginHook,
  markerId: Ids.MessageId,
  context: Schema.optionalKey(Schema.Array(Schema.String)),
  replacedPrompt: Schema.optionalKey(Schema.Boolean),
  autoContinue: Schema.optionalKey(Schema.Boolean),
})

/** After an automatic compaction, no continue message was added: the agent was waiting for the user, or a plugin vetoed. */
export const AutoContinueSkipped = Schema.TaggedStruct("AutoContinueSkipped", {
  at: Millis,
  markerId: Ids.MessageId,
  reason: Schema.Literals(["waiting-for-user", "plugin-veto"]),
  plugin: Schema.optionalKey(Schema.String),
})

/** Any proposed event. */
export const Event = Schema.Union([
  CompactionAbandoned,
  SummaryInputBudgeted,
  SummaryFallbackUsed,
  SecretsRedacted,
  PluginFailed,
  PluginContributed,
  AutoContinueSkipped,
])
export type Event = typeof Event.Type

/** Proposed event type names. */
export type Type = Event["_tag"]

/** The schema version of each proposed event type. */
export const versions: { readonly [K in Type]: number } = {
  CompactionAbandoned: 1,
  SummaryInputBudgeted: 1,
  SummaryFallbackUsed: 1,
  SecretsRedacted: 1,
  PluginFailed: 1,
  PluginContributed: 1,
  AutoContinueSkipped: 1,
}

/** The schema of each proposed event type, by tag. */
export const schemas = {
  CompactionAbandoned,
  SummaryInputBudgeted,
  SummaryFallbackUsed,
  SecretsRedacted,
  PluginFailed,
  PluginContributed,
  AutoContinueSkipped,
} as const

/** Encodes a proposed event to JSON-safe data. */
export const encode = Schema.encodeSync(Event)

/** Whether an event is one of the proposed ones. */
export const isProposed = (event: { readonly _tag: string }): event is Event => Object.hasOwn(versions, event._tag)
