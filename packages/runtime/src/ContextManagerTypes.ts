/**
 * The types of `ContextManager`'s API: its options, what it records and answers, and its errors (the service itself
 * and its wiring are in ContextManager.ts, which re-exports all of this).
 */
import {
  CacheAwareStrategy,
  type CacheEconomy,
  type Config as CoreConfig,
  type Facts,
  type Ids,
  type Message,
  type Model,
  type ModelMessage,
  type Prune,
  type Render,
  type Strategy,
  type SummaryInput,
  type Tokens,
} from "@pivot/core"
import { type Duration, type Effect, Schema } from "effect"
import type * as Compaction from "./Compaction.ts"
import type { ImpossibleLimits, ModelSpec } from "./Config.ts"
import type * as Hud from "./Hud.ts"
import type * as PinOps from "./Pins.ts"
import type * as Plugins from "./Plugins.ts"
import type * as Probes from "./Probes.ts"
import type * as Recall from "./Recall.ts"
import type { Event, ExecuteError, ForkError, Forked, Options as SessionsOptions } from "./Sessions.ts"

/** What can be overridden for one session. */
export interface SessionOverride {
  readonly model?: ModelSpec | undefined
  readonly compactionModel?: ModelSpec | undefined
  readonly config?: CoreConfig.CompactionConfig | undefined
}

/** Cache-aware compaction's settings (ADR 0017). */
export interface CacheAware {
  /** The conversation's system prompt, which the summariser request then starts with. Default: the compaction agent's. */
  readonly system?: string | undefined
  /**
   * Prune only when it frees more than this many tokens (estimated), unless the cache is cold or at a pivot. Default
   * twice the prune minimum (40,000 with OpenCode's thresholds).
   */
  readonly batch?: number | undefined
  /** The provider cache's time to live: past it since the last call, the cache is cold. Default 5 minutes. */
  readonly ttl?: Duration.Input | undefined
  /**
   * Before a call on a cold cache, old outputs are cleared down to this many newest output tokens (the prefix is
   * written again anyway). Default 0: every output older than the `coldTurns` newest turns goes.
   */
  readonly coldProtect?: number | undefined
  /**
   * The newest user turns whose outputs the cold prune keeps whatever `coldProtect` says. Default 1: the current
   * turn's (the break was between turns or inside this one); other prunes keep OpenCode's two.
   */
  readonly coldTurns?: number | undefined
  /**
   * Compact when it pays (`CacheEconomy.due`): once the cache reads paid since the latest pivot for what the window
   * grew by reach what a compaction costs now. The threshold stays the upper bound. Default true.
   */
  readonly rentOrBuy?: boolean | undefined
  /**
   * The multipliers `rentOrBuy` and the summariser request form (ADR 0047) price with. Default the model's price
   * (`Config.priceOf`), else its provider's (`Pricing.PROVIDER_RATES`); a model with neither gets no rent-or-buy (the
   * threshold alone decides) and the cache-safe request whenever it fits.
   */
  readonly rates?: CacheEconomy.Multipliers | undefined
}

/**
 * Cache-aware mode's default compaction threshold (share of the usable window): the window at the trigger plus one
 * step's output, the instruction and the summary must fit the summariser's input room (90 % of the usable window).
 */
export const CACHE_AWARE_THRESHOLD = CacheAwareStrategy.THRESHOLD

/**
 * Cache-aware mode's default tail budget: none. Every kept token is written again at each compaction and read on
 * every call after it; the summariser reads the whole window (the latest turn included) and the facts block names
 * its artifacts, so the summary carries what a tail would have kept.
 */
export const CACHE_AWARE_TAIL = CacheAwareStrategy.TAIL

/** The newest user turns whose outputs cache-aware mode's cold prune keeps by default (the current one). */
export const COLD_TURNS = CacheAwareStrategy.COLD_TURNS

/** The default prune batch of cache-aware mode, as a multiple of the prune minimum (40,000 with OpenCode's 20,000). */
export const CACHE_AWARE_BATCH = CacheAwareStrategy.BATCH

/** Options of `ContextManager.layer`. */
export interface Options {
  /** The session model and its limits. */
  readonly model: ModelSpec
  /** The summariser's model; the session model when absent. Used only when a `Summarizer` is provided. */
  readonly compactionModel?: ModelSpec | undefined
  /** Compaction settings (OpenCode's keys); see `Config.compaction` to read them from configuration. */
  readonly config?: CoreConfig.CompactionConfig | undefined
  /** Per-session overrides of the model, the compaction model or the settings. */
  readonly session?: ((sessionId: string) => SessionOverride | undefined) | undefined
  readonly plugins?: ReadonlyArray<Plugins.Plugin> | undefined
  /** Most automatic compactions in a row without progress; default 2 (OpenCode has no bound). */
  readonly maxConsecutiveCompactions?: number | undefined
  /** Time limit of one summariser call; default 2 minutes. */
  readonly summaryTimeout?: Duration.Input | undefined
  /** Fall back to the extractive summary when the model's fails; default true. `false` records the failure. */
  readonly fallback?: boolean | undefined
  /**
   * Redact secrets from the summariser input, the stored summary, a model's focus note (`context_compact`) and its
   * recall queries (`context_recall`); default true.
   */
  readonly redactSecrets?: boolean | undefined
  /**
   * Record-time redaction (opt-in, default false): secrets in every recorded text (user and assistant text,
   * reasoning, tool inputs and outputs, errors, prompts, summaries) are replaced by `[REDACTED:<kind>]` before they
   * are decided, so they never reach the store; a `SecretsRedactedOnRecord` event says what kinds were found where.
   * Applies to `ContextManager.layer`'s own `Sessions`; with `layerWithSessions`, set it on `Sessions.layer`.
   */
  readonly redactOnRecord?: boolean | undefined
  /**
   * Crypto-shredding (opt-in, default false): the sensitive fields of every event (message text, reasoning, tool
   * inputs and outputs, prompts, summaries) are stored encrypted with the session's key, and `forget` erases them
   * for good. Applies to `ContextManager.layer`'s own `Sessions`; with `layerWithSessions`, set it on `Sessions.layer`.
   */
  readonly encryptAtRest?: boolean | undefined
  /**
   * Snapshots of each session's state, so a restart reads the latest one and the events after it (default: every
   * 200 events, after each pivot, and at the head once at rest and at the close; `false`: none). See
   * `Sessions.Options.snapshots`; applies to `layer`'s own
   * `Sessions`.
   */
  readonly snapshots?: SessionsOptions["snapshots"]
  /**
   * Keep each live session's state bounded by its window, reading older messages from the store when needed
   * (default true). See `Sessions.Options.boundedMemory`; applies to `layer`'s own `Sessions`.
   */
  readonly boundedMemory?: boolean | undefined
  /** Append the facts block to every summary; default true. */
  readonly factsBlock?: boolean | undefined
  /**
   * Your tool names mapped to what they do, for the facts block and the extractive summary: `read` (looks at a path),
   * `edit` (changes one), `command` (runs one), or `none`. Laid over OpenCode's names (`Facts.READ_TOOLS`,
   * `EDIT_TOOLS`, `COMMAND_TOOLS`), which stay the default: `{ read_file: "read", run_cmd: "command" }`.
   */
  readonly toolKinds?: Facts.ToolKinds | undefined
  /** Share of the trigger at which the HUD status turns to "warn"; default 0.8. */
  readonly warnAt?: number | undefined
  /** Tokens the caller adds to every request besides the window (system prompt, tools), for usage estimates. */
  readonly overheadTokens?: number | undefined
  /**
   * Prune thresholds instead of OpenCode's (protect the newest 40,000 tokens of outputs, act only above 20,000, never
   * `skill`): for models whose window is too small for those to ever fire.
   */
  readonly prune?: Prune.Options | undefined
  /**
   * The usage HUD (opt-in, default off): `prepare` answers a short status block for the system prompt (`Prepared.hud`)
   * and records it (`HudShown`) whenever its text changes. `true` uses the default levels.
   */
  readonly hud?: boolean | Hud.Options | undefined
  /**
   * Recall (opt-in, default off): each pruned output's placeholder names its recall id
   * (`[Old tool result content cleared — recall id: prt_…]`) for a model given the `context_recall` tool, and
   * `recall` answers with a bound on its size. Off, the placeholder is OpenCode's exact text (`recall` still works).
   */
  readonly recall?: boolean | Recall.Options | undefined
  /**
   * Cache-aware compaction (opt-in, ADR 0017; `true` for the defaults). The summariser request is the conversation's
   * own prompt (its system prompt, the window as last rendered) with the compaction prompt appended as the last user
   * message, so a provider's prompt cache serves the window instead of it being written again; prune clears only in
   * batches (`batch` tokens or more), or anything when the cache is cold (`ttl` since the last call) or right after a
   * pivot. Off (the default): OpenCode's exact requests and prune.
   */
  readonly cacheAware?: boolean | CacheAware | undefined
  /**
   * The context strategy (`Strategy.Strategy`, docs/strategies.md): what to prune, when to compact and what a
   * compaction keeps, decided before each call and after each step. Default: `cacheAware`'s when it is set
   * (`CacheAwareStrategy`), else OpenCode's (`OpenCodeStrategy.byConfig`). Give `strategy` or `cacheAware`, not both.
   */
  readonly strategy?: Strategy.Strategy | undefined
  /**
   * Probes (opt-in, default off; needs a `Judge` in context, else nothing happens): after each pivot forms, questions
   * about the span its summary replaced, derived from its retention check, are answered by the judge from the summary
   * alone, graded, and recorded (`ProbesAnswered`). One more model call per compaction; a judge that fails or times out
   * is recorded as such and never fails the call that compacted. See docs/ledger.md.
   */
  readonly probes?: boolean | Probes.Options | undefined
}

/** A part to record; its id is made when absent. */
export type PartInput<P> = P extends { readonly id: infer I } ? Omit<P, "id"> & { readonly id?: I | undefined } : never

/**
 * A user message to record. A retry with the same ids (message and parts) and the same content is acknowledged and
 * stored once, whatever time it is recorded at; give the ids to retry after a lost acknowledgement.
 */
export interface UserMessageInput {
  readonly id?: Ids.MessageId | undefined
  /** Shorthand for one text part. */
  readonly text?: string | undefined
  readonly parts?: ReadonlyArray<PartInput<Message.UserPart>> | undefined
  readonly agent?: string | undefined
  readonly model?: Model.ModelRef | undefined
  readonly system?: string | undefined
}

/** One finished model call to record (retried with the same ids, `parentId` included: stored once, as a user message). */
export interface AssistantStepInput {
  readonly id?: Ids.MessageId | undefined
  /** The user message it answers; the newest one when absent. */
  readonly parentId?: Ids.MessageId | undefined
  /** The model that answered; the session model when absent. */
  readonly model?: Model.ModelRef | undefined
  readonly agent?: string | undefined
  readonly mode?: string | undefined
  readonly parts: ReadonlyArray<PartInput<Message.AssistantPart>>
  readonly usage: Tokens.TokenUsage
  readonly finish?: string | undefined
  readonly cost?: number | undefined
  readonly createdAt?: number | undefined
}

/** A tool result to record for a tool call of an earlier step. */
export interface ToolResultInput {
  readonly messageId: Ids.MessageId
  readonly partId: Ids.PartId
  readonly state: Message.ToolCompleted | typeof Message.ToolError.Type
}

/** A failed model call to record. */
export interface ProviderErrorInput {
  /** What the provider or the SDK threw or streamed; classified with `ProviderError.fromUnknown`. */
  readonly error: unknown
  readonly id?: Ids.MessageId | undefined
  readonly parentId?: Ids.MessageId | undefined
  readonly model?: Model.ModelRef | undefined
  readonly agent?: string | undefined
  /** Output produced before the failure. */
  readonly parts?: ReadonlyArray<PartInput<Message.AssistantPart>> | undefined
  /** Set when the call had finished before it failed (then an overflow is not replayed). */
  readonly finish?: string | undefined
}

/** What recording did: the events, and whether a compaction was asked for (or refused by the bound). */
export interface Recorded {
  readonly events: ReadonlyArray<Event>
  readonly overflow: boolean
  readonly compaction?: "requested" | "abandoned" | undefined
  readonly messageId?: Ids.MessageId | undefined
}

/** What the caller should do after a provider error. */
export interface ProviderErrorOutcome extends Recorded {
  readonly error: Message.MessageError
  /** `compact`: call `prepare` and try again; `retry`: retry the same request; `stop`: give up the turn. */
  readonly action: "compact" | "retry" | "stop"
}

/** The HUD: how full the context is. */
export interface Usage {
  /** Tokens of the last call, or the estimate of the window when no call was made since the last pivot. */
  readonly tokens: number
  readonly source: "reported" | "estimated"
  /** The usable window (spec §2.3). */
  readonly usable: number
  /** The count at which compaction triggers; undefined when automatic compaction cannot trigger. */
  readonly trigger: number | undefined
  /** `tokens` as a percentage of `usable` (0 when unknown). */
  readonly percent: number
  readonly status: "ok" | "warn" | "compacting" | "over"
  readonly pivots: number
  /** Consecutive automatic compactions without progress, and whether compaction stopped because of the bound. */
  readonly streak: number
  readonly suspended: boolean
}

/** Whether the strategy would compact before the next call (`ContextManagerShape.compactionDue`). */
export interface CompactionDue {
  /**
   * `threshold`: the last call's usage reached the strategy's trigger (`usage.trigger`; the overflow check `prepare`
   * runs); `rent-or-buy`: the strategy's rule before a call says compacting pays; undefined: neither.
   */
  readonly reason: "threshold" | "rent-or-buy" | undefined
  /** The usage now, as the HUD reads it. */
  readonly usage: Usage
  /** The window as it stands, estimated in tokens as rendered for the next call (no system prompt nor tools). */
  readonly estimated: number
}

/** The model input for the next call. */
export interface Prepared {
  /** The window rendered, each message with the id of the stored message it came from. */
  readonly messages: ReadonlyArray<Render.Rendered>
  /** The same, as plain model messages: a fresh array each call, so `generateText({ messages })` takes it as is. */
  readonly modelMessages: Array<ModelMessage.ModelMessage>
  /** What a compaction run during this call did. */
  readonly compaction?: Compaction.Settled | undefined
  /**
   * `call`: the model has something to answer; `wait`: the agent had finished and is waiting for the user (e.g. a
   * compaction ran but skipped the continue message); `stop`: the context is still over the limit and automatic
   * compaction stopped at its bound (`CompactionAbandoned`), so a call would overflow again.
   */
  readonly next: "call" | "wait" | "stop"
  readonly usage: Usage
  /** The usage HUD for the system prompt, when the `hud` option is on. */
  readonly hud?: string | undefined
}

/** Who asked for a manual compaction, and what the summary should focus on. */
export interface CompactRequest {
  /** `model`: the model asked (the `context_compact` tool); bounded to once per user turn. Default `user`. */
  readonly requestedBy?: "user" | "model" | undefined
  /** A note for the summariser's prompt (model requests only), e.g. what must survive the compaction. */
  readonly focus?: string | undefined
  /**
   * The tool call that asked (model requests only). The step carrying it is recorded after the pivot its call formed,
   * so its usage, measured before the pivot, is not taken as the new window's size nor checked for an overflow.
   */
  readonly callId?: string | undefined
}

/** Why a model's compaction request was declined: nothing was written. */
export type CompactDeclined = "compaction-pending" | "once-per-turn" | "nothing-to-compact"

/** A manual compaction's result. */
export interface Compacted {
  readonly outcome?: Compaction.Outcome | undefined
  /** Set when a model's request was declined (then nothing was recorded). */
  readonly declined?: CompactDeclined | undefined
}

/** The longest focus note kept, in characters; a longer one is cut. */
export const MAX_FOCUS_CHARS = 2_000

/** A prune's result. */
export interface Pruned {
  readonly parts: number
  readonly tokens: number
}

/** A session id that is not `ses_…`. */
export class InvalidSessionId extends Schema.TaggedError<InvalidSessionId>()("InvalidSessionId", {
  sessionId: Schema.String,
}) {
  override get message(): string {
    return `invalid session id ${JSON.stringify(this.sessionId)}: expected ses_<letters, digits, _ or ->`
  }
}

/** A `toolKinds` entry that is not `read`, `edit`, `command` or `none`. */
export class InvalidToolKind extends Schema.TaggedError<InvalidToolKind>()("InvalidToolKind", {
  tool: Schema.String,
  kind: Schema.String,
}) {
  override get message(): string {
    return `invalid tool kind ${JSON.stringify(this.kind)} for tool ${JSON.stringify(this.tool)}: expected "read", "edit", "command" or "none"`
  }
}

/** An option of `ContextManager.layer` that is not what it takes: which one, what it got, what it takes. */
export class InvalidOption extends Schema.TaggedError<InvalidOption>()("InvalidOption", {
  option: Schema.String,
  value: Schema.String,
  expected: Schema.String,
}) {
  override get message(): string {
    return `invalid option ${this.option}: ${this.value}; expected ${this.expected}`
  }
}

/** A step's usage that is not a `TokenUsage`: the field and what was wrong, in one line. */
export class InvalidUsage extends Schema.TaggedError<InvalidUsage>()("InvalidUsage", {
  detail: Schema.String,
}) {
  override get message(): string {
    return `invalid usage: ${this.detail} (a TokenUsage is { input, output, reasoning, cacheRead, cacheWrite, total? }, token counts >= 0; Tokens.fromProvider maps a provider's usage)`
  }
}

/** Any failure of a ContextManager operation. */
export type ContextManagerError =
  | ExecuteError
  | ForkError
  | ImpossibleLimits
  | InvalidSessionId
  | InvalidUsage
  | SummaryInput.CompactionParentNotUser
  | PinOps.InvalidPinTarget
  | PinOps.PinTargetNotFound

/** The service's operations. */
export interface ContextManagerShape {
  /** Starts the session explicitly (recording a user message starts it too). */
  readonly start: (
    sessionId: string,
    options?: { readonly title?: string | undefined; readonly model?: Model.ModelRef | undefined },
  ) => Effect.Effect<Recorded, ContextManagerError>
  readonly recordUserMessage: (
    sessionId: string,
    input: UserMessageInput,
  ) => Effect.Effect<Recorded, ContextManagerError>
  /** Records a model step; when its usage filled the context (rule A), a compaction is requested for `prepare`. */
  readonly recordAssistantStep: (
    sessionId: string,
    input: AssistantStepInput,
  ) => Effect.Effect<Recorded, ContextManagerError>
  readonly recordToolResult: (sessionId: string, input: ToolResultInput) => Effect.Effect<Recorded, ContextManagerError>
  /** Records a failed call; a context overflow asks for a compaction (unless `auto` is off, spec §2.5). */
  readonly reportProviderError: (
    sessionId: string,
    input: ProviderErrorInput,
  ) => Effect.Effect<ProviderErrorOutcome, ContextManagerError>
  /** The model input for the next call, after settling compactions and the overflow pre-check. */
  readonly prepare: (sessionId: string) => Effect.Effect<Prepared, ContextManagerError>
  /** Compacts now, on demand (manual: no continue message afterwards); a model's request may be declined. */
  readonly compact: (sessionId: string, request?: CompactRequest) => Effect.Effect<Compacted, ContextManagerError>
  /** Clears old tool outputs from the model input when pruning is enabled (spec §2.14). */
  readonly prune: (sessionId: string) => Effect.Effect<Pruned, ContextManagerError>
  /**
   * Whether the session's strategy would start a compaction before the next call, and why: read, not executed
   * (nothing is recorded). For a host that compacts on its own (OpenCode's drive mode asks OpenCode then).
   */
  readonly compactionDue: (sessionId: string) => Effect.Effect<CompactionDue, ContextManagerError>
  /** How full the context is, for a HUD. */
  readonly usage: (sessionId: string) => Effect.Effect<Usage, ContextManagerError>
  /**
   * Every message the session ever recorded, in order, with its current parts (pruned outputs keep their text and a
   * `compactedAt`), markers and summaries included: what a chat UI restores. Reads the whole stream.
   */
  readonly transcript: (sessionId: string) => Effect.Effect<ReadonlyArray<Message.Message>, ContextManagerError>
  /**
   * `context_recall`: the original of a pruned output or summary by its recall id, or ranked snippets for a query
   * (full-text search on a SQL store, a scan on memory); bounded, and recorded as `ContextRecalled`.
   */
  readonly recall: (
    sessionId: string,
    request: Recall.Request,
  ) => Effect.Effect<Recall.Recalled, ContextManagerError | Recall.RecallError>
  /**
   * Forks a session at `at` (default: now) into the new session `into`, whose window there equals the parent's at
   * that version; the parent is unchanged and both evolve independently (spec F8). Writes nothing on any error.
   */
  readonly fork: (
    sessionId: string,
    options: { readonly into: string; readonly at?: number | undefined },
  ) => Effect.Effect<Forked, ContextManagerError>
  /**
   * Pins a message, or one part of it, so that it stays verbatim in every window after every pivot (`Pins`); older
   * pins give way when the budget is full. `by` defaults to `"user"`; the model's `context_pin` passes `"model"`.
   */
  readonly pin: (
    sessionId: string,
    target: PinOps.Target,
    by?: PinOps.Actor,
  ) => Effect.Effect<PinOps.Pinned, ContextManagerError>
  /** Removes the pins of a message (or of one part); unpinning what is not pinned records nothing. */
  readonly unpin: (
    sessionId: string,
    target: PinOps.Target,
    by?: PinOps.Actor,
  ) => Effect.Effect<PinOps.Unpinned, ContextManagerError>
  /** The pins in force, oldest first, with the tokens they take and the budget. */
  readonly pins: (sessionId: string) => Effect.Effect<PinOps.PinList, ContextManagerError>
}
