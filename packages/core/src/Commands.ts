/**
 * What can be asked of a session. Commands carry everything a decision needs that is not in the log — time, fresh
 * ids, the settings and model limits in force — so `decide` stays pure and replays deterministically.
 */
import * as Schema from "effect/Schema"
import { CompactionConfig } from "./Config.ts"
import { CompactionReason } from "./Events.ts"
import { MessageId, PartId, SessionId } from "./Ids.ts"
import { AssistantMessage, MessageError, ToolCompleted, ToolError, UserMessage } from "./Message.ts"
import { ModelLimits, ModelRef } from "./Model.ts"
import { PinnedBy } from "./Pins.ts"
import { TokenUsage } from "./Tokens.ts"

const Millis = Schema.Finite

/**
 * The fixed prompt's tokens (system prompt and tools, `FixedPrompt`) a `threshold` is a share of the room above
 * (`Overflow.trigger`); absent: the whole usable window.
 */
const Fixed = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

/** Open the session's stream. */
export const StartSession = Schema.TaggedStruct("StartSession", {
  sessionId: SessionId,
  at: Millis,
  title: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(ModelRef),
})

/** Record a user message. */
export const AddUserMessage = Schema.TaggedStruct("AddUserMessage", { message: UserMessage })

/**
 * Record one finished model call. With `limits`, its usage is checked for overflow (spec §2.4 rule A: always with
 * the default output cap, never for a summary).
 */
export const RecordAssistantStep = Schema.TaggedStruct("RecordAssistantStep", {
  message: AssistantMessage,
  config: Schema.optionalKey(CompactionConfig),
  limits: Schema.optionalKey(ModelLimits),
  fixed: Schema.optionalKey(Fixed),
})

/** Record the result of a tool call made in an earlier step. */
export const RecordToolResult = Schema.TaggedStruct("RecordToolResult", {
  at: Millis,
  messageId: MessageId,
  partId: PartId,
  state: Schema.Union([ToolCompleted, ToolError]),
})

/** Record a failed model call; `error` is already classified (see `ProviderError.classify`). */
export const ReportProviderError = Schema.TaggedStruct("ReportProviderError", {
  at: Millis,
  message: AssistantMessage,
  error: MessageError,
  config: Schema.optionalKey(CompactionConfig),
})

/** Check, before the next model call, whether the last finished step filled the context (spec §2.4 rule B). */
export const CheckOverflow = Schema.TaggedStruct("CheckOverflow", {
  at: Millis,
  config: CompactionConfig,
  limits: ModelLimits,
  fixed: Schema.optionalKey(Fixed),
})

/** Ask for a compaction: adds the marker user message (spec §2.7). */
export const CreateCompaction = Schema.TaggedStruct("CreateCompaction", {
  at: Millis,
  markerId: MessageId,
  partId: PartId,
  auto: Schema.Boolean,
  overflow: Schema.optionalKey(Schema.Boolean),
  agent: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(ModelRef),
  /** Recorded on `CompactionRequested`. */
  reason: Schema.optionalKey(CompactionReason),
})

/**
 * Start a requested compaction: plan head and tail from the window (spec §2.8) and record the exact prompt.
 * `prompt`, when given, is the prompt as sent (a plugin's replacement, or one the runtime built); otherwise the
 * prompt is built from the plan with the `pluginContext` lines appended.
 */
export const ProcessCompaction = Schema.TaggedStruct("ProcessCompaction", {
  at: Millis,
  markerId: MessageId,
  summaryId: MessageId,
  model: ModelRef,
  compactionLimits: ModelLimits,
  config: CompactionConfig,
  prompt: Schema.optionalKey(Schema.String),
  pluginContext: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Messages the strategy keeps verbatim besides the tail (`SummaryInput.PlanInput.keep`). */
  keep: Schema.optionalKey(Schema.Array(MessageId)),
})

/** The summariser answered: the pivot forms. */
export const FinishSummary = Schema.TaggedStruct("FinishSummary", {
  at: Millis,
  markerId: MessageId,
  partId: PartId,
  text: Schema.String,
  tokens: TokenUsage,
  finish: Schema.optionalKey(Schema.String),
})

/** The summariser failed: no pivot. */
export const FailSummary = Schema.TaggedStruct("FailSummary", {
  at: Millis,
  markerId: MessageId,
  error: MessageError,
})

/**
 * After an auto compaction: replay the overflowing turn, or add the continue message (spec §2.8 step 13).
 * `autoContinue: false` is a veto (a plugin's, or because the agent was waiting for the user).
 */
export const Continue = Schema.TaggedStruct("Continue", {
  at: Millis,
  markerId: MessageId,
  messageId: MessageId,
  autoContinue: Schema.optionalKey(Schema.Boolean),
})

/** One tool output a strategy's rule chose to clear, and why. */
export const PruneTarget = Schema.Struct({
  messageId: MessageId,
  partId: PartId,
  rule: Schema.String,
  reason: Schema.String,
  /** Clear the call's input (its arguments) instead of its output (ADR 0030). */
  target: Schema.optionalKey(Schema.Literal("input")),
})
export type PruneTarget = typeof PruneTarget.Type

/**
 * Clear old tool outputs from the model input: OpenCode's walk (spec §2.14) with these thresholds, or, with `parts`,
 * exactly those outputs (each still a completed output not yet cleared), recorded with their rule and reason. `rule`
 * and `reason` name the walk's choice too when given. A part with `target: "input"` clears that call's input instead
 * (a completed or errored call whose input is not cleared yet and has something to clear: `Render.inputShed`).
 */
export const Prune = Schema.TaggedStruct("Prune", {
  at: Millis,
  protect: Schema.optionalKey(Schema.Finite),
  minimum: Schema.optionalKey(Schema.Finite),
  protectedTools: Schema.optionalKey(Schema.Array(Schema.String)),
  /** The newest user turns whose outputs are never cleared; default 2 (OpenCode). */
  turns: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))),
  parts: Schema.optionalKey(Schema.Array(PruneTarget)),
  rule: Schema.optionalKey(Schema.String),
  reason: Schema.optionalKey(Schema.String),
})

/**
 * Pin a message, or one part of it (`Pins`): it stays verbatim in every window after every pivot. `budget` is the pin
 * budget in force (`Pins.budget`); older pins are unpinned to make room. A `default` pin that does not fit is not made.
 */
export const Pin = Schema.TaggedStruct("Pin", {
  at: Millis,
  messageId: MessageId,
  partId: Schema.optionalKey(PartId),
  by: PinnedBy,
  budget: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)),
})

/** Unpin a message (every pin on it), or only the pin of one part (`partId`). Unpinning what is not pinned adds nothing. */
export const Unpin = Schema.TaggedStruct("Unpin", {
  at: Millis,
  messageId: MessageId,
  partId: Schema.optionalKey(PartId),
  by: Schema.Literals(["user", "model"]),
})

/** Any command. */
export const Command = Schema.Union([
  StartSession,
  AddUserMessage,
  RecordAssistantStep,
  RecordToolResult,
  ReportProviderError,
  CheckOverflow,
  CreateCompaction,
  ProcessCompaction,
  FinishSummary,
  FailSummary,
  Continue,
  Prune,
  Pin,
  Unpin,
])
export type Command = typeof Command.Type

/**
 * A command as its schema declares it: keys the schema does not declare (an OpenCode tool state's `time`, a caller's
 * own fields) are dropped, as the event encoder drops them from the log, and a wrong value fails. Applied where
 * commands enter the runtime (`Sessions.execute`), so that the live state, its snapshots and a fold of the log agree.
 */
export const decode = Schema.decodeUnknownResult(Schema.toType(Command))
