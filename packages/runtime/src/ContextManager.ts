/**
 * The service users embed in their agent loop: record what happens (user messages, model steps, tool results,
 * provider errors), then `prepare` the model input before each call. `prepare` first drives any outstanding
 * compaction to its end, then checks whether the last call filled the context (spec §2.4 rule B) and compacts if
 * so. Compaction is bounded: after `maxConsecutiveCompactions` in a row that brought no progress, it stops and says so.
 *
 * **Example**
 * ```ts
 * const program = Effect.gen(function* () {
 *   const cm = yield* ContextManager
 *   yield* cm.recordUserMessage(sessionId, { text: "Fix the failing test" })
 *   const input = yield* cm.prepare(sessionId)            // input.messages → the model
 *   yield* cm.recordAssistantStep(sessionId, { parts, usage, finish: "tool-calls" })
 * }).pipe(
 *   Effect.provide(ContextManager.layer({ model: { ref, limits } })),
 *   Effect.provide(EventStore.layerSqlite({ filename: ".pivot/pivot.db" })),
 *   Effect.provide(Ids.layer),
 * )
 * ```
 */
import {
  CacheAwareStrategy,
  type CacheEconomy,
  type Commands,
  Conversation,
  Config as CoreConfig,
  ExtractiveSummary,
  type Facts,
  Ids,
  IncrementalWindow,
  Message,
  type Model,
  type ModelMessage,
  OpenCodeStrategy,
  Overflow,
  Prompt,
  ProviderError,
  type Prune,
  Redaction,
  Render,
  SchemaIssues,
  Session,
  type Strategy,
  type SummaryInput,
  Text,
  Tokens,
  Traced,
  Usage as UsageFold,
  ValidWindow,
  Window,
} from "@pivot/core"
import { type EventStore, ReadModels } from "@pivot/store"
import { Clock, Context, Duration, Effect, Layer, Option, Result, Schema, Semaphore } from "effect"
import * as Compaction from "./Compaction.ts"
import { checkLimits, type ImpossibleLimits, type ModelSpec, PriceTable, priceOf } from "./Config.ts"
import * as Hud from "./Hud.ts"
import { Judge } from "./Judge.ts"
import * as LiveLedger from "./LiveLedger.ts"
import * as Plugins from "./Plugins.ts"
import * as Probes from "./Probes.ts"
import * as Recall from "./Recall.ts"
import type * as RuntimeEvents from "./RuntimeEvents.ts"
import * as RuntimeState from "./RuntimeState.ts"
import {
  type Command,
  type Event,
  type ExecuteError,
  type ForkError,
  type Forked,
  Sessions,
  type Options as SessionsOptions,
  type State,
} from "./Sessions.ts"
import * as StrategyRunner from "./StrategyRunner.ts"
import { Summarizer } from "./Summarizer.ts"

/** Whether a decision records nothing. */
const isNoOp = (decided: ReturnType<typeof Session.decide>): boolean =>
  Result.isSuccess(decided) && decided.success.length === 0

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
   * The multipliers `rentOrBuy` prices with. Default the model's price (`Config.priceOf`), else its provider's
   * (`Pricing.PROVIDER_RATES`); a model with neither gets no rent-or-buy (the threshold alone decides).
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
   * 200 events and after each pivot; `false`: none). See `Sessions.Options.snapshots`; applies to `layer`'s own
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

const TOOL_KINDS: ReadonlyArray<string> = ["read", "edit", "command", "none"]

/** The options' `toolKinds`, checked: every value one of the kinds. */
const checkToolKinds = (kinds: Facts.ToolKinds | undefined): Effect.Effect<void, InvalidToolKind> => {
  for (const [tool, kind] of Object.entries(kinds ?? {}))
    if (!TOOL_KINDS.includes(kind as string)) return Effect.fail(new InvalidToolKind({ tool, kind: String(kind) }))
  return Effect.void
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

/**
 * The durations and counts of the options, checked when the layer is built: read later (a `prepare`, a prune, a
 * summary's time box), a bad one would otherwise fail there as a defect.
 */
const checkOptions = (options: Options): Effect.Effect<void, InvalidOption> => {
  // Checked by each command too, but only once the session was written to: a bad key would fail its first step.
  if (options.config !== undefined) {
    const config = decodeConfig(options.config)
    if (Result.isFailure(config))
      return Effect.fail(
        new InvalidOption({
          option: "config",
          value: SchemaIssues.oneLine(config.failure),
          expected: "OpenCode's compaction keys in their ranges (Config.CompactionConfig)",
        }),
      )
  }
  if (options.strategy !== undefined && cacheAwareOf(options) !== undefined)
    return Effect.fail(
      new InvalidOption({
        option: "strategy",
        value: `${options.strategy.name} with cacheAware`,
        expected: "one of strategy or cacheAware (CacheAwareStrategy.make takes cacheAware's settings)",
      }),
    )
  const probes = typeof options.probes === "object" ? options.probes : undefined
  const durations = {
    summaryTimeout: options.summaryTimeout,
    "cacheAware.ttl": cacheAwareOf(options)?.ttl,
    "probes.timeout": probes?.timeout,
  }
  for (const [option, value] of Object.entries(durations))
    if (value !== undefined && Option.isNone(Duration.fromInput(value)))
      return Effect.fail(new InvalidOption({ option, value: String(value), expected: 'a duration ("5 minutes", ms)' }))
  const hud = typeof options.hud === "object" ? options.hud : undefined
  const counts = {
    maxConsecutiveCompactions: options.maxConsecutiveCompactions,
    overheadTokens: options.overheadTokens,
    warnAt: options.warnAt,
    "hud.high": hud?.high,
    "hud.critical": hud?.critical,
    "cacheAware.batch": cacheAwareOf(options)?.batch,
    "cacheAware.coldProtect": cacheAwareOf(options)?.coldProtect,
    "cacheAware.coldTurns": cacheAwareOf(options)?.coldTurns,
    "probes.maxOutputTokens": probes?.maxOutputTokens,
  }
  for (const [option, value] of Object.entries(counts))
    if (value !== undefined && !(Number.isFinite(value) && value >= 0))
      return Effect.fail(new InvalidOption({ option, value: String(value), expected: "a number of 0 or more" }))
  // A high level above the critical one would never show: the HUD would go from ok straight to critical.
  const high = hud?.high ?? Hud.DEFAULT_HIGH
  const critical = hud?.critical ?? Hud.DEFAULT_CRITICAL
  if (high > critical)
    return Effect.fail(
      new InvalidOption({ option: "hud.high", value: String(high), expected: `at most hud.critical (${critical})` }),
    )
  // A price under a key that is not `provider/model` would never be looked up: the cost line would bill without it.
  const cost = hud?.cost
  if (typeof cost === "object" && cost.prices !== undefined) {
    const decoded = decodePrices(cost.prices)
    if (Result.isFailure(decoded))
      return Effect.fail(
        new InvalidOption({
          option: "hud.cost.prices",
          value: decoded.failure.message.replace(/\s*\n\s*/g, " "),
          expected: '{ "provider/model": { input, output, cacheRead, cacheWrite } }',
        }),
      )
  }
  return Effect.void
}

const decodePrices = Schema.decodeUnknownResult(PriceTable)
const decodeConfig = Schema.decodeUnknownResult(CoreConfig.CompactionConfig)

/** The `cacheAware` option as settings, or undefined when it is off. */
const cacheAwareOf = (options: Options): CacheAware | undefined =>
  options.cacheAware === undefined || options.cacheAware === false
    ? undefined
    : options.cacheAware === true
      ? {}
      : options.cacheAware

/** A step's usage that is not a `TokenUsage`: the field and what was wrong, in one line. */
export class InvalidUsage extends Schema.TaggedError<InvalidUsage>()("InvalidUsage", {
  detail: Schema.String,
}) {
  override get message(): string {
    return `invalid usage: ${this.detail} (a TokenUsage is { input, output, reasoning, cacheRead, cacheWrite, total? }, token counts >= 0; Tokens.fromProvider maps a provider's usage)`
  }
}

const decodeUsage = Schema.decodeUnknownResult(Tokens.TokenUsage)

/** Any failure of a ContextManager operation. */
export type ContextManagerError =
  | ExecuteError
  | ForkError
  | ImpossibleLimits
  | InvalidSessionId
  | InvalidUsage
  | SummaryInput.CompactionParentNotUser

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
}

/** The context manager. */
export class ContextManager extends Context.Service<ContextManager, ContextManagerShape>()(
  "@pivot/runtime/ContextManager",
) {
  /**
   * The context manager with its own `Sessions` handler over the `EventStore` in context. Uses the `Summarizer` in
   * context when there is one, else the extractive summariser. Fails with `ImpossibleLimits` for unusable models,
   * `InvalidToolKind` for a `toolKinds` entry that is not a kind and `InvalidOption` for a duration or count that is
   * not one.
   */
  static readonly layer = (
    options: Options,
  ): Layer.Layer<ContextManager | Sessions, ImpossibleLimits | InvalidToolKind | InvalidOption, EventStore | Ids.Ids> =>
    Layer.effect(ContextManager, make(options)).pipe(
      Layer.provideMerge(
        Sessions.layer({
          redactOnRecord: options.redactOnRecord,
          encryptAtRest: options.encryptAtRest,
          snapshots: options.snapshots,
          boundedMemory: options.boundedMemory,
        }),
      ),
    )

  /** The context manager over a `Sessions` handler provided separately. */
  static readonly layerWithSessions = (
    options: Options,
  ): Layer.Layer<ContextManager, ImpossibleLimits | InvalidToolKind | InvalidOption, Sessions | Ids.Ids> =>
    Layer.effect(ContextManager, make(options))
}

const validSessionId = Schema.is(Ids.SessionId)

/** The strategy `options` ask for: `strategy`, else cache-aware's with `cacheAware`'s settings, else OpenCode's. */
export const strategyOf = (options: Options): Strategy.Strategy => {
  if (options.strategy !== undefined) return options.strategy
  const cacheAware = cacheAwareOf(options)
  if (cacheAware === undefined) return OpenCodeStrategy.byConfig
  const { ttl, ...rest } = cacheAware
  return CacheAwareStrategy.make({
    ...rest,
    ...(ttl === undefined ? {} : { ttl: Duration.toMillis(Duration.fromInputUnsafe(ttl)) }),
  })
}

/** Builds the context manager (see `ContextManager.layer`). */
export const make = (
  options: Options,
): Effect.Effect<ContextManagerShape, ImpossibleLimits | InvalidToolKind | InvalidOption, Sessions | Ids.Ids> =>
  Effect.gen(function* () {
    yield* checkToolKinds(options.toolKinds)
    yield* checkOptions(options)
    const sessions = yield* Sessions
    const ids = yield* Ids.Ids
    const provided = Option.getOrUndefined(yield* Effect.serviceOption(Summarizer))
    // The extractive summariser provided as a service is the built-in default, which also reads the kept tail.
    const summarizer = provided === Summarizer.extractive ? undefined : provided
    const plugins = options.plugins ?? []
    const limit = Math.max(1, Math.floor(options.maxConsecutiveCompactions ?? 2))
    const warnAt = options.warnAt ?? 0.8
    const recallOn = options.recall !== undefined && options.recall !== false
    // The HUD says pruned outputs are recallable when the placeholders name their recall ids.
    const hudOptions =
      options.hud === undefined || options.hud === false
        ? undefined
        : { recall: recallOn, ...(options.hud === true ? {} : options.hud) }
    // The HUD's cost line reads the ledger, caught up per session as the log grows.
    const hudCost = hudOptions?.cost
    const ledgerAt =
      hudCost === undefined || hudCost === false
        ? undefined
        : LiveLedger.make(sessions, (ref) => priceOf(ref, hudCost === true ? {} : (hudCost.prices ?? {})))
    const strategy = strategyOf(options)
    // The strategy's settings over the application's (cache-aware: an earlier threshold, no tail of old turns).
    const baseConfig: CoreConfig.CompactionConfig =
      strategy.configure === undefined ? (options.config ?? {}) : strategy.configure(options.config ?? {})
    const recallOptions = typeof options.recall === "object" ? options.recall : {}
    const renderOptions: Render.Options =
      options.recall === undefined || options.recall === false ? {} : { recallIds: true }
    const readModels = Option.getOrUndefined(yield* Effect.serviceOption(ReadModels.ReadModels))
    const judge = Option.getOrUndefined(yield* Effect.serviceOption(Judge))
    const probe =
      options.probes === undefined || options.probes === false || judge === undefined
        ? undefined
        : Probes.make(sessions, judge, options.probes === true ? {} : options.probes)
    /** Probes the pivot a settled compaction formed, when probes are on. */
    const probed = (sessionId: string, settled: Compaction.Settled) =>
      probe === undefined || settled.outcome === undefined ? Effect.void : probe(sessionId, settled.outcome)
    const redactSecrets = options.redactSecrets ?? true
    yield* checkSpec(options.model, baseConfig)
    if (options.compactionModel !== undefined) yield* checkSpec(options.compactionModel, baseConfig)

    const compaction = Compaction.make({
      sessions,
      ids,
      options: {
        summarizer,
        plugins,
        summaryTimeout: options.summaryTimeout ?? "2 minutes",
        fallback: options.fallback ?? true,
        redactSecrets,
        factsBlock: options.factsBlock ?? true,
        ...(strategy.form === "cache-safe"
          ? { cacheAware: { system: strategy.system ?? Prompt.SYSTEM_PROMPT, render: renderOptions } }
          : {}),
        toolKinds: options.toolKinds,
      },
    })

    const locks = new Map<string, Semaphore.Semaphore>()
    /** One compaction-driving operation per session at a time in this process (others still race safely). */
    const locked = <A, E, R>(sessionId: string, effect: Effect.Effect<A, E, R>) => {
      let lock = locks.get(sessionId)
      if (lock === undefined) {
        lock = Semaphore.makeUnsafe(1)
        locks.set(sessionId, lock)
      }
      return Semaphore.withPermit(lock)(effect)
    }

    // Without overrides every call answers these same settings (the same object, so `prepare` can compare them).
    const baseSettings: Compaction.Settings = {
      model: options.model,
      compactionModel: options.compactionModel ?? options.model,
      config: baseConfig,
    }
    const settingsFor = (
      sessionId: string,
    ): Effect.Effect<Compaction.Settings, InvalidSessionId | ImpossibleLimits> => {
      const override = options.session?.(sessionId)
      if (!validSessionId(sessionId)) return Effect.fail(new InvalidSessionId({ sessionId }))
      return override === undefined ? Effect.succeed(baseSettings) : overridden(override)
    }
    const overridden = (override: SessionOverride) =>
      Effect.gen(function* () {
        const config = override.config ?? baseConfig
        const model = override.model ?? options.model
        const compactionModel = override.compactionModel ?? options.compactionModel ?? model
        if (override.model !== undefined || override.config !== undefined) yield* checkSpec(model, config)
        if (override.compactionModel !== undefined) yield* checkSpec(compactionModel, config)
        return { model, compactionModel, config } satisfies Compaction.Settings
      })

    const fillParts = <P extends { readonly id?: Ids.PartId | undefined }>(parts: ReadonlyArray<P>) =>
      Effect.forEach(parts, (part) =>
        part.id === undefined ? Effect.map(ids.part, (id) => ({ ...part, id })) : Effect.succeed(part),
      )

    /** Starts the session in the same batch when it has not started. */
    const withStart = (sessionId: string, state: State, at: number, commands: ReadonlyArray<Command>) =>
      state.session.sessionId === undefined
        ? [
            {
              _tag: "StartSession",
              sessionId: sessionId as Ids.SessionId,
              at,
              model: options.session?.(sessionId)?.model?.ref ?? options.model.ref,
            } satisfies Command,
            ...commands,
          ]
        : commands

    /**
     * Decides `command` and, when it reports an overflow that should be compacted, asks for an automatic compaction in
     * the same batch — or records that the bound stopped it — so no overflow is left without its consequence.
     */
    const withCompaction = (
      command: Commands.Command,
      at: number,
      markerId: Ids.MessageId,
      partId: Ids.PartId,
      replay: boolean,
    ) => {
      return (state: State): ReadonlyArray<Command> => {
        const decided = Session.decide(command, state.session)
        if (Result.isFailure(decided)) return [command]
        const overflow = decided.success.find((e) => e._tag === "OverflowDetected")
        if (overflow === undefined || overflow._tag !== "OverflowDetected") return [command]
        const after = RuntimeState.fold(decided.success, state.runtime)
        return [command, autoCompaction(state, after, at, overflow, markerId, partId, replay)]
      }
    }

    const autoCompaction = (
      state: State,
      after: RuntimeState.State,
      at: number,
      overflow: {
        readonly messageId: Ids.MessageId
        readonly tokens: number
        readonly trigger?: number
        readonly source: "usage" | "provider-error" | "pre-check"
      },
      markerId: Ids.MessageId,
      partId: Ids.PartId,
      replay: boolean,
    ): Command => {
      if (!RuntimeState.mayAutoCompact(after, limit)) {
        if (after.suspended) return { _tag: "Record", events: [] }
        const abandoned: RuntimeEvents.Event = {
          _tag: "CompactionAbandoned",
          at,
          messageId: overflow.messageId,
          attempts: after.streak,
          limit,
          tokens: overflow.tokens,
          ...(overflow.trigger === undefined ? {} : { trigger: overflow.trigger }),
        }
        return { _tag: "Record", events: [abandoned] }
      }
      const parent = after.lastUserId === undefined ? undefined : Session.message(state.session, after.lastUserId)
      return {
        _tag: "CreateCompaction",
        at,
        markerId,
        partId,
        auto: true,
        ...(replay ? { overflow: true } : {}),
        reason: overflow.source === "provider-error" ? "provider-overflow" : "threshold",
        ...(parent?.role === "user" && parent.agent !== undefined ? { agent: parent.agent } : {}),
        ...(parent?.role === "user" && parent.model !== undefined ? { model: parent.model } : {}),
      }
    }

    const summarise = (events: ReadonlyArray<Event>, messageId?: Ids.MessageId): Recorded => ({
      events,
      overflow: events.some((e) => e._tag === "OverflowDetected"),
      ...(events.some((e) => e._tag === "CompactionRequested")
        ? { compaction: "requested" as const }
        : events.some((e) => e._tag === "CompactionAbandoned")
          ? { compaction: "abandoned" as const }
          : {}),
      ...(messageId === undefined ? {} : { messageId }),
    })

    const start = Traced.fn("ContextManager.start")(function* (
      sessionId: string,
      startOptions?: { readonly title?: string | undefined; readonly model?: Model.ModelRef | undefined },
    ) {
      const settings = yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const executed = yield* sessions.execute(sessionId, {
        _tag: "StartSession",
        sessionId: sessionId as Ids.SessionId,
        at,
        model: startOptions?.model ?? settings.model.ref,
        ...(startOptions?.title === undefined ? {} : { title: startOptions.title }),
      })
      return summarise(executed.events)
    })

    const recordUserMessage = Traced.fn("ContextManager.recordUserMessage")(function* (
      sessionId: string,
      input: UserMessageInput,
    ) {
      const settings = yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const id = input.id ?? (yield* ids.message)
      const given = [
        ...(input.text === undefined ? [] : [{ type: "text" as const, text: input.text }]),
        ...(input.parts ?? []),
      ]
      const parts = (yield* fillParts(
        given as ReadonlyArray<PartInput<Message.UserPart>>,
      )) as ReadonlyArray<Message.UserPart>
      const message: Message.UserMessage = {
        role: "user",
        id,
        createdAt: at,
        model: input.model ?? settings.model.ref,
        ...(input.agent === undefined ? {} : { agent: input.agent }),
        ...(input.system === undefined ? {} : { system: input.system }),
        parts,
      }
      const executed = yield* sessions.execute(sessionId, (state) =>
        withStart(sessionId, state, at, [{ _tag: "AddUserMessage", message }]),
      )
      return summarise(executed.events, id)
    })

    const recordAssistantStep = Traced.fn("ContextManager.recordAssistantStep")(function* (
      sessionId: string,
      input: AssistantStepInput,
    ) {
      // Checked where it enters: a wrong usage is one typed line, not a schema error deep in the event encoder.
      const usage = decodeUsage(input.usage)
      if (Result.isFailure(usage))
        return yield* new InvalidUsage({ detail: SchemaIssues.oneLine(usage.failure, "usage") })
      const settings = yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const id = input.id ?? (yield* ids.message)
      const parts = (yield* fillParts(input.parts)) as ReadonlyArray<Message.AssistantPart>
      const markerId = yield* ids.message
      const partId = yield* ids.part
      const state = yield* sessions.load(sessionId)
      const parentId = input.parentId ?? state.runtime.lastUserId ?? id
      const message: Message.AssistantMessage = {
        role: "assistant",
        id,
        parentId,
        createdAt: input.createdAt ?? at,
        completedAt: at,
        model: input.model ?? settings.model.ref,
        ...(input.agent === undefined ? {} : { agent: input.agent }),
        ...(input.mode === undefined ? {} : { mode: input.mode }),
        tokens: usage.success,
        ...(input.cost === undefined ? {} : { cost: input.cost }),
        ...(input.finish === undefined ? {} : { finish: input.finish }),
        parts,
      }
      // Usage measured before the latest pivot says nothing about the window now: no overflow is detected from it.
      const commandOn = (current: State): Commands.Command => ({
        _tag: "RecordAssistantStep",
        message,
        config: settings.config,
        ...(UsageFold.predatesPivot(current.runtime.usage, message) ? {} : { limits: settings.model.limits }),
      })
      const executed = yield* sessions.execute(sessionId, (current) =>
        withCompaction(commandOn(current), at, markerId, partId, false)(current),
      )
      return summarise(executed.events, id)
    })

    const recordToolResult = Traced.fn("ContextManager.recordToolResult")(function* (
      sessionId: string,
      input: ToolResultInput,
    ) {
      yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const executed = yield* sessions.execute(sessionId, {
        _tag: "RecordToolResult",
        at,
        messageId: input.messageId,
        partId: input.partId,
        state: input.state,
      })
      return summarise(executed.events)
    })

    const reportProviderError = Traced.fn("ContextManager.reportProviderError")(function* (
      sessionId: string,
      input: ProviderErrorInput,
    ) {
      const settings = yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const error = ProviderError.fromUnknown(input.error)
      const id = input.id ?? (yield* ids.message)
      const parts = (yield* fillParts(input.parts ?? [])) as ReadonlyArray<Message.AssistantPart>
      const markerId = yield* ids.message
      const partId = yield* ids.part
      const state = yield* sessions.load(sessionId)
      const message: Message.AssistantMessage = {
        role: "assistant",
        id,
        parentId: input.parentId ?? state.runtime.lastUserId ?? id,
        createdAt: at,
        model: input.model ?? settings.model.ref,
        ...(input.agent === undefined ? {} : { agent: input.agent }),
        tokens: Tokens.zero,
        ...(input.finish === undefined ? {} : { finish: input.finish }),
        parts,
      }
      const command: Commands.Command = { _tag: "ReportProviderError", at, message, error, config: settings.config }
      // After a rejection before any output the turn is replayed; after a finished call, a continue message follows.
      const executed = yield* sessions.execute(
        sessionId,
        withCompaction(command, at, markerId, partId, input.finish === undefined),
      )
      const recorded = summarise(executed.events, id)
      const action =
        recorded.compaction === "requested"
          ? ("compact" as const)
          : !recorded.overflow && ProviderError.isRetryable(error)
            ? ("retry" as const)
            : ("stop" as const)
      return { ...recorded, error, action }
    })

    const usageOf = (sessionId: string, state: State, settings: Compaction.Settings): Usage => {
      const cap = settings.config.output_token_max
      const usable = Overflow.usable(settings.config, settings.model.limits, cap)
      const trigger = Overflow.trigger(settings.config, settings.model.limits, cap)
      const runtime = state.runtime
      // After a pivot or a prune no call has measured the new window yet: estimate it (`Usage.measured`).
      const reported =
        runtime.lastCall !== undefined && runtime.lastCall.tokens > 0 && UsageFold.measured(runtime.usage) !== undefined
      const tokens = reported
        ? runtime.lastCall!.tokens
        : estimateWindow(sessionId, state) + (options.overheadTokens ?? 0)
      const status =
        state.session.pending !== undefined || runtime.awaitingContinue !== undefined
          ? "compacting"
          : runtime.suspended || Overflow.reaches(tokens, trigger)
            ? "over"
            : trigger !== undefined && tokens >= trigger * warnAt
              ? "warn"
              : "ok"
      return {
        tokens,
        source: reported ? "reported" : "estimated",
        usable,
        trigger,
        percent: usable > 0 ? Math.round((tokens / usable) * 1000) / 10 : 0,
        status,
        pivots: runtime.pivots,
        streak: runtime.streak,
        suspended: runtime.suspended,
      }
    }

    /** `Tokens.estimate` of the rendered window's JSON, from the session's renderer (nothing rendered twice). */
    const estimateWindow = (sessionId: string, state: State) =>
      Tokens.estimateLength(
        rendererOf(sessionId).jsonLength(renderedOf(sessionId, state.session.window, Window.messages)),
      )

    const hudOf = (state: State, usage: Usage, hud: Hud.Options, cost: Hud.Cost | undefined): string =>
      Hud.render(
        {
          tokens: usage.tokens,
          usable: usage.usable,
          pivots: usage.pivots,
          prunedParts: state.runtime.pruned.parts,
          prunedTokens: state.runtime.pruned.tokens,
          ...(cost === undefined ? {} : { cost }),
        },
        hud,
      )

    /** Why a model's compaction request cannot help now, if it cannot (see `CompactDeclined`). */
    const declineOf = (state: State): CompactDeclined | undefined => {
      if (state.session.pending !== undefined || state.runtime.inFlight !== undefined) return "compaction-pending"
      if (state.runtime.modelCompacted) return "once-per-turn"
      const conversational = Window.messages(state.session.window).some((m) =>
        m.role === "assistant"
          ? m.summary !== true
          : Message.compactionPartOf(m) === undefined &&
            !m.parts.some((part) => part.type === "text" && part.metadata?.compaction_continue === true),
      )
      return conversational ? undefined : "nothing-to-compact"
    }

    const nextStep = (state: State, messages: ReadonlyArray<Message.Message>): Prepared["next"] => {
      if (state.runtime.suspended && state.runtime.lastCall?.overflow === true) return "stop"
      const last = messages.at(-1)
      if (last === undefined) return "wait"
      if (last.role === "user") return "call"
      return ExtractiveSummary.midTask(messages) ? "call" : "wait"
    }

    // Each session's window rendered incrementally: a step renders and checks only its own messages (issue 23).
    const renderers = new Map<string, IncrementalWindow.Renderer>()
    const rendererOf = (sessionId: string) => {
      let renderer = renderers.get(sessionId)
      if (renderer === undefined) {
        renderer = IncrementalWindow.make(renderOptions)
        if (renderers.size >= 1_000) renderers.delete(renderers.keys().next().value!)
      } else renderers.delete(sessionId)
      renderers.set(sessionId, renderer)
      return renderer
    }
    // Each session's latest visible messages, so that a step's window is the previous one plus its messages, not a
    // lookup of every visible message again (`Window.messagesAfter`). Never handed to code that could change it.
    const visibleMemo = new Map<string, { readonly window: Window.State; readonly messages: Array<Message.Message> }>()
    const visibleOf = (sessionId: string, window: Window.State): ReadonlyArray<Message.Message> => {
      const memo = visibleMemo.get(sessionId)
      if (memo !== undefined && memo.window === window) return memo.messages
      const messages =
        memo === undefined ? Window.messages(window) : Window.messagesAfter(memo.window, memo.messages, window)
      visibleMemo.delete(sessionId)
      visibleMemo.set(sessionId, { window, messages })
      if (visibleMemo.size > 1_000) visibleMemo.delete(visibleMemo.keys().next().value!)
      return messages
    }
    // The strategy, asked before each call, after each step and when a compaction starts.
    const runner = StrategyRunner.make({ sessions, ids, strategy, prune: options.prune ?? {}, limit, visibleOf })
    /** Drives the session's outstanding compaction, with what the strategy keeps of the turn in progress. */
    const settle = (sessionId: string, settings: Compaction.Settings) =>
      Effect.flatMap(runner.forCompaction(sessionId, settings), (withKeep) => compaction.settle(sessionId, withKeep))

    // The rendering of the latest window states (states are immutable: same state, same rendering), so that `prepare`
    // and its usage estimate render a window once.
    const rendered = new WeakMap<Window.State, ReadonlyArray<Render.Rendered>>()
    const renderedOf = (
      sessionId: string,
      window: Window.State,
      visible: ReadonlyArray<Message.Message> | ((window: Window.State) => ReadonlyArray<Message.Message>),
    ) => {
      const known = rendered.get(window)
      if (known !== undefined) return known
      const fresh = rendererOf(sessionId).render(typeof visible === "function" ? visible(window) : visible)
      rendered.set(window, fresh)
      return fresh
    }

    // The latest answer of `prepare` per session, with the state and settings it was made from: asked again on the
    // same state (no event since, nothing pending) it is the same answer, so it is answered without the lock.
    const lastPrepared = new Map<
      string,
      { readonly state: State; readonly settings: Compaction.Settings; readonly prepared: Prepared }
    >()
    const transformsWindow = plugins.some((p) => p.transformWindow !== undefined)
    const sameSettings = (a: Compaction.Settings, b: Compaction.Settings) =>
      a.model === b.model && a.compactionModel === b.compactionModel && a.config === b.config

    const overflowCheck = (settings: Compaction.Settings, at: number): Commands.Command => ({
      _tag: "CheckOverflow",
      at,
      config: settings.config,
      limits: settings.model.limits,
    })
    /**
     * Whether the overflow check would record on `state` (an overflow, a compaction to request). Usage measured before
     * the latest pivot is not checked (`Usage`'s staleness rule); nothing is while a compaction is pending.
     */
    const overflowsIn = (state: State, check: Commands.Command) =>
      state.session.sessionId !== undefined &&
      state.session.pending === undefined &&
      state.runtime.usage.stale !== "pivot" &&
      !isNoOp(Session.decide(check, state.session))

    /**
     * `prepare`'s answer on `state` and the window `shown` (the visible messages, or a plugin's change of them), with
     * the HUD it would show; recording that HUD is the caller's business.
     */
    const answerOf = (
      sessionId: string,
      settings: Compaction.Settings,
      state: State,
      visible: ReadonlyArray<Message.Message>,
      shown: ReadonlyArray<Message.Message>,
      settled: Compaction.Settled | undefined,
    ) =>
      Effect.gen(function* () {
        // The repair is a no-op on a valid window; it only ever changes a corrupt imported history. The session's
        // renderer renders only what changed since its last window; its messages are shared from turn to turn and
        // frozen, so a caller cannot change them in place (ADR 0023: it copies what it changes).
        const messages =
          shown === visible
            ? renderedOf(sessionId, state.session.window, visible)
            : ValidWindow.render(shown, renderOptions).map(Render.freeze)
        // Kept beside the rendering by the session's renderer (a plugin's window: read from each message).
        const modelMessages =
          shown === visible ? rendererOf(sessionId).modelMessages(messages) : messages.map((r) => r.message)
        const usage = usageOf(sessionId, state, settings)
        // The cost line: the ledger of the log exactly as `state` stands (a compaction just settled included).
        const cost = ledgerAt === undefined ? undefined : Hud.costOf(yield* ledgerAt(sessionId, state.session.version))
        const hud = hudOptions === undefined ? undefined : hudOf(state, usage, hudOptions, cost)
        return {
          messages,
          modelMessages: modelMessages as Array<ModelMessage.ModelMessage>,
          ...(settled === undefined ? {} : { compaction: settled }),
          next: nextStep(state, visible),
          usage,
          ...(hud === undefined ? {} : { hud }),
        } satisfies Prepared as Prepared
      })

    /** Keeps (or forgets) the session's latest answer, for a `prepare` asked again on the same state. */
    const remember = (
      sessionId: string,
      latest:
        | { readonly state: State; readonly settings: Compaction.Settings; readonly prepared: Prepared }
        | undefined,
    ) => {
      lastPrepared.delete(sessionId)
      if (latest === undefined) return
      lastPrepared.set(sessionId, latest)
      if (lastPrepared.size > 1_000) lastPrepared.delete(lastPrepared.keys().next().value!)
    }

    /** An answer as handed out: arrays of the caller's own (the renderings in them are frozen and shared). */
    const handedOut = (prepared: Prepared): Prepared => ({
      ...prepared,
      messages: [...prepared.messages],
      modelMessages: [...prepared.modelMessages],
    })

    const prepare = Traced.fn("ContextManager.prepare")(function* (sessionId: string) {
      const settings = yield* settingsFor(sessionId)
      yield* runner.beforeCall(sessionId, settings)
      const last = lastPrepared.get(sessionId)
      if (last !== undefined && sameSettings(last.settings, settings)) {
        const state = yield* sessions.load(sessionId)
        if (state === last.state) return handedOut(last.prepared)
      }
      // The common turn records nothing (nothing outstanding, no overflow, no plugin, the HUD unchanged): answered on
      // the state in hand without the session's lock, as if it ran just before any operation holding it.
      if (!transformsWindow) {
        const state = yield* sessions.load(sessionId)
        if (state.session.pending === undefined && state.runtime.awaitingContinue === undefined) {
          const check = overflowCheck(settings, yield* Clock.currentTimeMillis)
          if (!overflowsIn(state, check)) {
            const visible = visibleOf(sessionId, state.session.window)
            const prepared = yield* answerOf(sessionId, settings, state, visible, visible, undefined)
            if (prepared.hud === undefined || prepared.hud === state.runtime.hud) {
              remember(sessionId, { state, settings, prepared })
              return handedOut(prepared)
            }
          }
        }
      }
      const prepared = yield* locked(
        sessionId,
        Effect.gen(function* () {
          let state = yield* sessions.load(sessionId)
          let settled: Compaction.Settled | undefined
          // Nothing outstanding (the common turn): `settle` would load the same state and find nothing to do.
          if (state.session.pending !== undefined || state.runtime.awaitingContinue !== undefined) {
            const first = yield* settle(sessionId, settings)
            yield* probed(sessionId, first)
            settled = first.outcome === undefined && first.continuation === undefined ? undefined : first
            state = yield* sessions.load(sessionId)
          }
          const at = yield* Clock.currentTimeMillis
          const check = overflowCheck(settings, at)
          // The pre-check on the state in hand: when it finds nothing, nothing would be recorded (the common turn).
          if (overflowsIn(state, check)) {
            const markerId = yield* ids.message
            const partId = yield* ids.part
            const executed = yield* sessions.execute(sessionId, withCompaction(check, at, markerId, partId, false))
            state = executed.state
            if (executed.events.some((e) => e._tag === "CompactionRequested")) {
              const second = yield* settle(sessionId, settings)
              yield* probed(sessionId, second)
              settled = second
              state = yield* sessions.load(sessionId)
            }
          }
          // A plugin gets an array of its own; otherwise the session's kept one (read, never changed, here).
          const visible = transformsWindow
            ? Window.messages(state.session.window)
            : visibleOf(sessionId, state.session.window)
          const transformed = transformsWindow
            ? yield* Plugins.transformWindow(plugins, { sessionId, messages: visible })
            : { messages: visible, failures: [] }
          if (transformed.failures.length > 0) {
            const at = yield* Clock.currentTimeMillis
            yield* sessions.execute(sessionId, {
              _tag: "Record",
              events: transformed.failures.map((f) => Compaction.pluginFailed(at, f)),
            })
          }
          const prepared = yield* answerOf(sessionId, settings, state, visible, transformed.messages, settled)
          if (
            prepared.hud !== undefined &&
            prepared.hud !== state.runtime.hud &&
            state.session.sessionId !== undefined
          ) {
            const at = yield* Clock.currentTimeMillis
            yield* sessions.execute(sessionId, {
              _tag: "Record",
              events: [{ _tag: "HudShown", at, text: prepared.hud }],
            })
          }
          // Reusable when nothing was recorded after `state` here (no HUD change, no plugin failure) and nothing waits.
          const canReuse =
            !transformsWindow &&
            settled === undefined &&
            (prepared.hud === undefined || prepared.hud === state.runtime.hud) &&
            state.session.pending === undefined &&
            state.runtime.awaitingContinue === undefined
          remember(sessionId, canReuse ? { state, settings, prepared } : undefined)
          return prepared
        }),
      )
      return handedOut(prepared)
    })

    const compact = Traced.fn("ContextManager.compact")(function* (sessionId: string, request?: CompactRequest) {
      const settings = yield* settingsFor(sessionId)
      const byModel = request?.requestedBy === "model"
      return yield* locked(
        sessionId,
        Effect.gen(function* () {
          const state = yield* sessions.load(sessionId)
          if (byModel) {
            const declined = declineOf(state)
            if (declined !== undefined) return { declined } satisfies Compacted
          }
          if (state.session.pending === undefined) {
            const at = yield* Clock.currentTimeMillis
            const markerId = yield* ids.message
            const partId = yield* ids.part
            const last = state.runtime.lastUserId
            const parent = last === undefined ? undefined : Session.message(state.session, last)
            // Cut on a grapheme boundary: half an emoji would put a lone surrogate into the summariser's prompt.
            const note = request?.focus === undefined ? undefined : Text.clip(request.focus.trim(), MAX_FOCUS_CHARS)
            // The model's note is stored and printed (inspect): redacted like a summary, kinds recorded.
            const found = note === undefined || !redactSecrets ? undefined : Redaction.redact(note)
            const redacted = found !== undefined && found.redactions.length > 0 ? found : undefined
            const focus = redacted?.text ?? note
            const create: Command = {
              _tag: "CreateCompaction",
              at,
              markerId,
              partId,
              auto: false,
              reason: byModel ? "model" : "user",
              ...(parent?.role === "user" && parent.agent !== undefined ? { agent: parent.agent } : {}),
              ...(parent?.role === "user" && parent.model !== undefined ? { model: parent.model } : {}),
            }
            const secrets = (found: Redaction.Redacted): RuntimeEvents.Event => ({
              _tag: "SecretsRedacted",
              at,
              markerId,
              stage: "prompt",
              findings: found.redactions.map((r) => ({ messageId: markerId, field: "focus", kind: r.kind })),
            })
            const asked: RuntimeEvents.Event = {
              _tag: "CompactionRequestedByModel",
              at,
              markerId,
              ...(focus === undefined || focus === "" ? {} : { focus }),
              ...(request?.callId === undefined ? {} : { callId: request.callId }),
            }
            // A model's request is re-judged on the state it is decided on: another writer may have compacted first.
            const executed = yield* sessions.execute(sessionId, (current) =>
              !byModel
                ? [create]
                : declineOf(current) === undefined
                  ? [create, { _tag: "Record", events: redacted === undefined ? [asked] : [asked, secrets(redacted)] }]
                  : [],
            )
            if (byModel && executed.events.length === 0)
              return { declined: declineOf(executed.state) ?? "compaction-pending" } satisfies Compacted
          }
          const settled = yield* settle(sessionId, settings)
          yield* probed(sessionId, settled)
          return { outcome: settled.outcome } satisfies Compacted
        }),
      )
    })

    const prune = Traced.fn("ContextManager.prune")(function* (sessionId: string) {
      const settings = yield* settingsFor(sessionId)
      return (yield* runner.afterStep(sessionId, settings)) satisfies Pruned
    })

    const fork = Traced.fn("ContextManager.fork")(function* (
      sessionId: string,
      forkOptions: { readonly into: string; readonly at?: number | undefined },
    ) {
      yield* settingsFor(sessionId)
      yield* settingsFor(forkOptions.into)
      return yield* sessions.fork(sessionId, forkOptions.into, forkOptions.at)
    })

    const usage = Traced.fn("ContextManager.usage")(function* (sessionId: string) {
      const settings = yield* settingsFor(sessionId)
      return usageOf(sessionId, yield* sessions.load(sessionId), settings)
    })

    const transcript = Traced.fn("ContextManager.transcript")(function* (sessionId: string) {
      yield* settingsFor(sessionId)
      const state = yield* sessions.history(sessionId)
      return Conversation.messages(state.session.window.conversation)
    })

    const recallIn = Recall.make(sessions, readModels?.recall, { ...recallOptions, redactSecrets })
    const recall = Traced.fn("ContextManager.recall")(function* (sessionId: string, request: Recall.Request) {
      yield* settingsFor(sessionId)
      return yield* recallIn(sessionId, request)
    })

    return {
      recall,
      start,
      recordUserMessage,
      recordAssistantStep,
      recordToolResult,
      reportProviderError,
      prepare,
      compact,
      prune,
      usage,
      transcript,
      fork,
    } satisfies ContextManagerShape
  })

const checkSpec = (spec: ModelSpec, config: CoreConfig.CompactionConfig) => {
  const checked = checkLimits(spec.ref, spec.limits, config)
  return Result.isFailure(checked) ? Effect.fail(checked.failure) : Effect.void
}
