/**
 * The compaction process manager: it drives a requested compaction to its end through core's Decider, recording every
 * step as events, so that a crash at any point leaves either no pivot or a whole one, and a restart resumes.
 *
 * 1. Start (`CompactionRequested` → `CompactionStarted`): plan head and tail (spec §2.8), ask the plugins for prompt
 *    context, redact secrets from everything the summariser will read, and budget the input against the compaction
 *    model's window — when the head does not fit, its oldest messages are left out of the model call and their
 *    extractive digest stands in the prompt. The prompt, plugin contributions, redactions and budget are recorded.
 * 2. Summarise (`SummaryFinished` / `SummaryFailed`): call the summariser under a time limit; when it fails, hangs,
 *    answers nothing, something invalid, or more than it replaces, use the extractive summary instead (recorded). Append
 *    the facts block, redact the summary, record it.
 * 3. Continue (`ContinueRequested` / `TurnReplayed` / `AutoContinueSkipped`): after an automatic compaction, replay
 *    the overflowing turn, or add the continue message only when the agent was in the middle of a task and no plugin
 *    vetoes it.
 *
 * Non-deterministic inputs (the prompt, plugin answers, the summary and its usage) are recorded, so replaying the log
 * never calls a plugin or a model again.
 */
import {
  ArtifactCheck,
  CacheEconomy,
  type Config as CoreConfig,
  ExtractiveSummary,
  Facts,
  type Ids,
  Message,
  Model,
  type ModelMessage,
  Pins,
  Prompt,
  Redaction,
  Render,
  Session,
  Strategy,
  SummaryInput,
  Tail,
  Tokens,
  Window,
} from "@pivot/core"
import { Cause, Clock, Duration, Effect, Exit, Option, Result, Schema } from "effect"
import type { ModelSpec } from "./Config.ts"
import { timeBox } from "./internal/timeBox.ts"
import * as Plugins from "./Plugins.ts"
import type * as RuntimeEvents from "./RuntimeEvents.ts"
import type { Command, ExecuteError, SessionsShape, State } from "./Sessions.ts"
import { EXTRACTIVE_MODEL, type SummarizerShape, type SummaryRequest, type SummaryResponse } from "./Summarizer.ts"

/** What one session's compaction runs with. */
export interface Settings {
  /** The session model: its limits size the tail budget when no summariser model is configured. */
  readonly model: ModelSpec
  /** The summariser's model. */
  readonly compactionModel: ModelSpec
  readonly config: CoreConfig.CompactionConfig
  /** The threshold is a share of the room above the fixed prompt (`Strategy.thresholdOf` `conversation`). */
  readonly aboveFixed?: boolean | undefined
  /** The messages the strategy keeps verbatim besides the tail, asked when a compaction starts (`Strategy.keep`). */
  readonly keep?: ((state: State) => ReadonlyArray<Ids.MessageId> | undefined) | undefined
}

/** How the process manager behaves. */
export interface Options {
  /** The model summariser; undefined: the extractive summariser is the summariser. */
  readonly summarizer: SummarizerShape | undefined
  readonly plugins: ReadonlyArray<Plugins.Plugin>
  /** Time limit of one summariser call. */
  readonly summaryTimeout: Duration.Input
  /** Use the extractive summary when the model's fails (true), or record the failure as OpenCode does (false). */
  readonly fallback: boolean
  /** Redact secrets from the summariser input and the stored summary. */
  readonly redactSecrets: boolean
  /** Append the facts block to every summary. */
  readonly factsBlock: boolean
  /**
   * Cache-aware summariser requests (ADR 0017): the conversation's system prompt (`system`), the window as the
   * conversation renders it (`render`), then the compaction prompt. Undefined: OpenCode's request.
   */
  readonly cacheAware?:
    | {
        readonly system: string
        readonly render: Render.Options
        /**
         * The cache multipliers of the session's model: the cache-safe request is sent only when it costs no more
         * than OpenCode's at them (`CacheEconomy.cacheSafePays`, ADR 0047); undefined: always, when it fits.
         */
        readonly rates?: ((model: ModelSpec) => CacheEconomy.Multipliers | undefined) | undefined
        /** The provider cache's time to live in ms: the conversation's last call is cached within it. */
        readonly ttl?: number | undefined
      }
    | undefined
  /** Your tool names mapped to read / edit / command for the facts and the extractive summary (over OpenCode's). */
  readonly toolKinds?: Facts.ToolKinds | undefined
}

/** How a compaction ended. */
export type Outcome =
  | {
      readonly status: "finished"
      readonly markerId: Ids.MessageId
      readonly summaryId: Ids.MessageId
      readonly text: string
      readonly fallback?: RuntimeEvents.FallbackReason | undefined
    }
  | { readonly status: "failed"; readonly markerId: Ids.MessageId; readonly error: Message.MessageError }

/** How the step after a finished compaction went. */
export type Continuation = "continued" | "replayed" | "skipped" | "manual"

/** What `settle` did. */
export interface Settled {
  readonly outcome?: Outcome | undefined
  readonly continuation?: Continuation | undefined
}

/** A step refused by `SessionErased` as nothing done (the caller takes it again on the session as it now reads). */
const erasedAsUndefined = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (error): error is Extract<E, { readonly _tag: "SessionErased" }> => error._tag === "SessionErased",
    () => Effect.succeed(undefined),
  )

/** How a model's focus note reads in the summariser's prompt. */
export const FOCUS_PREFIX = "The model asked for this compaction; focus on: "

/** The share of the compaction model's input room the summariser input may use (estimates are chars / 4). */
export const INPUT_SAFETY = 0.9

const stringsOf = (value: unknown, out: Array<string>): void => {
  if (typeof value === "string") out.push(value)
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out)
  else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) stringsOf(item, out)
}

/** The texts of a model message that a redaction plugin sees: text, reasoning, tool inputs and outputs. */
const textsOf = (message: ModelMessage.ModelMessage): Array<string> => {
  const out: Array<string> = []
  if (typeof message.content === "string") return [message.content]
  for (const part of message.content) {
    switch (part.type) {
      case "text":
      case "reasoning":
        out.push(part.text)
        break
      case "tool-call":
        stringsOf(part.input, out)
        break
      case "tool-result":
        if (part.output.type === "text" || part.output.type === "error-text") out.push(part.output.value)
        else if (part.output.type === "content")
          for (const item of part.output.value) if (item.type === "text") out.push(item.text)
        break
      case "file":
        break
    }
  }
  return out
}

const replaceStrings = (value: unknown, next: () => string): unknown => {
  if (typeof value === "string") return next()
  if (Array.isArray(value)) return value.map((item) => replaceStrings(item, next))
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceStrings(v, next)]))
  return value
}

/** `textsOf` in reverse: puts redacted texts back in the same order. */
const withTexts = (message: ModelMessage.ModelMessage, texts: ReadonlyArray<string>): ModelMessage.ModelMessage => {
  let i = 0
  const next = () => texts[i++] ?? ""
  if (message.role === "system") return { ...message, content: next() }
  if (message.role === "tool") return { ...message, content: message.content.map((part) => withToolResult(part, next)) }
  if (message.role === "user")
    return {
      ...message,
      content: message.content.map((part) => (part.type === "text" ? { ...part, text: next() } : part)),
    }
  return {
    ...message,
    content: message.content.map((part) => {
      switch (part.type) {
        case "text":
        case "reasoning":
          return { ...part, text: next() }
        case "tool-call":
          return { ...part, input: replaceStrings(part.input, next) }
        case "tool-result":
          return withToolResult(part, next)
        default:
          return part
      }
    }),
  }
}

const withToolResult = (part: ModelMessage.ToolResultPart, next: () => string): ModelMessage.ToolResultPart => {
  const output = part.output
  if (output.type === "text" || output.type === "error-text") return { ...part, output: { ...output, value: next() } }
  if (output.type === "content")
    return {
      ...part,
      output: {
        type: "content",
        value: output.value.map((item) => (item.type === "text" ? { ...item, text: next() } : item)),
      },
    }
  return part
}

const estimateJson = (value: unknown): number => Tokens.estimate(JSON.stringify(value))

/** The tokens the summariser call may spend on input: the compaction model's input room, with a safety margin. */
export const inputRoom = (limits: Model.ModelLimits, cap?: number): number => {
  if (limits.context === 0) return Number.POSITIVE_INFINITY
  const room = limits.input ? limits.input : limits.context - Model.maxOutputTokens(limits, cap)
  return Math.max(0, Math.floor(room * INPUT_SAFETY))
}

/** Which head messages (indices into `sizes`) must be left out, oldest first, so the rest fits `budget`. */
export const dropOldest = (sizes: ReadonlyArray<number>, budget: number): number => {
  let total = sizes.reduce((a, b) => a + b, 0)
  let dropped = 0
  while (dropped < sizes.length && total > budget) total -= sizes[dropped++]!
  return dropped
}

/** The summariser request of a started compaction, and what the input preparation found. */
interface Input {
  readonly plan: SummaryInput.CompactionPlan
  readonly prompt: string
  /** The full head, redacted (for facts and the extractive summary). */
  readonly head: ReadonlyArray<Message.Message>
  /** The head messages sent to the model. */
  readonly kept: ReadonlyArray<Message.Message>
  readonly dropped: ReadonlyArray<Ids.MessageId>
  readonly tail: ReadonlyArray<Message.Message>
  /** The previous summary the model updates: the plan's, or the dropped messages' digest. */
  readonly previousSummary: string | undefined
  readonly messages: ReadonlyArray<ModelMessage.ModelMessage>
  readonly inputFindings: ReadonlyArray<RuntimeEvents.RedactionFinding>
  readonly pluginFailures: ReadonlyArray<Plugins.Failure>
  /** The request cannot fit the compaction model at all, even without head. */
  readonly tooLarge: boolean
}

const digestOf = (
  dropped: ReadonlyArray<Message.Message>,
  previousSummary: string | undefined,
  toolKinds: Facts.ToolKinds | undefined,
): string =>
  ExtractiveSummary.summarize({
    head: dropped,
    ...(previousSummary === undefined ? {} : { previousSummary }),
    toolKinds,
    // The prompt's budget reserves MAX_CHARS for it (below): the failures' index may not take it past them here.
    withinMaxChars: true,
  })

const asFinding = (f: Redaction.Finding): RuntimeEvents.RedactionFinding => ({
  messageId: f.messageId,
  ...(f.partId === undefined ? {} : { partId: f.partId }),
  field: f.field,
  kind: f.kind,
})

/** A failed plugin hook as an event. */
export const pluginFailed = (at: number, failure: Plugins.Failure, markerId?: Ids.MessageId): RuntimeEvents.Event => ({
  _tag: "PluginFailed",
  at,
  plugin: failure.plugin,
  hook: failure.hook,
  reason: failure.reason,
  message: failure.message.slice(0, 2_000),
  ...(markerId === undefined ? {} : { markerId }),
})

/**
 * The one-line warning logged when the extractive summary replaced the model's: the session, the compaction, why,
 * and the summariser's error when there was one.
 */
export const fallbackWarning = (
  sessionId: string,
  markerId: string,
  reason: RuntimeEvents.FallbackReason,
  error: string | undefined,
): string =>
  `pivot: session ${sessionId}, compaction ${markerId}: the summariser's summary was replaced by the extractive ` +
  `fallback (${reason}${error === undefined ? "" : `: ${error.replace(/\s+/g, " ").trim()}`})`

/** A summariser response's shape, checked before use: an adapter is outside pivot's control. */
const ResponseSchema = Schema.Struct({
  text: Schema.String,
  usage: Tokens.TokenUsage,
  finish: Schema.String,
  model: Model.ModelRef,
})

/** Builds the process manager over a sessions handler and an id service. */
export const make = (deps: {
  readonly sessions: SessionsShape
  readonly ids: Ids.Ids["Service"]
  readonly options: Options
}) => {
  const { sessions, ids, options } = deps
  const plugins = options.plugins

  const messagesOf = (state: State, idsOf: ReadonlyArray<Ids.MessageId>): Array<Message.Message> => {
    const out: Array<Message.Message> = []
    for (const id of idsOf) {
      const m = Session.message(state.session, id)
      if (m !== undefined) out.push(m)
    }
    return out
  }

  /** Plugin redaction over texts; findings name the plugin and the stage. */
  const pluginRedact = (
    sessionId: string,
    stage: "summarizer-input" | "prompt" | "summary",
    texts: ReadonlyArray<string>,
  ) =>
    options.redactSecrets && plugins.some((p) => p.redact !== undefined)
      ? Plugins.redact(plugins, { sessionId, stage, texts })
      : Effect.succeed<Plugins.Redacted>({ texts, changed: [], failures: [] })

  const redactText = (text: string): { readonly text: string; readonly kinds: ReadonlyArray<string> } => {
    if (!options.redactSecrets) return { text, kinds: [] }
    const redacted = Redaction.redact(text)
    return { text: redacted.text, kinds: redacted.redactions.map((r) => r.kind) }
  }

  /**
   * Everything the summariser reads for a compaction planned as `plan` with `prompt` (recorded or about to be), with
   * `dropped` head messages left out. Deterministic except for redaction plugins.
   */
  const prepareInput = (
    sessionId: string,
    state: State,
    plan: SummaryInput.CompactionPlan,
    prompt: string,
    dropped: ReadonlyArray<Ids.MessageId>,
    settings: Settings,
    model: Model.ModelRef,
  ): Effect.Effect<Input> =>
    Effect.gen(function* () {
      const rawHead = messagesOf(state, plan.head)
      const redacted = options.redactSecrets ? Redaction.redactMessages(rawHead) : { messages: rawHead, findings: [] }
      const head = redacted.messages
      const droppedIds = new Set(dropped)
      const kept = head.filter((m) => !droppedIds.has(m.id))
      const previousSummary =
        dropped.length > 0
          ? digestOf(
              head.filter((m) => droppedIds.has(m.id)),
              plan.previousSummary,
              options.toolKinds,
            )
          : plan.previousSummary
      const byId = new Map(kept.map((m) => [m.id, m] as const))
      const rendered = SummaryInput.summarizerMessages(
        { ...plan, head: kept.map((m) => m.id) },
        (id) => byId.get(id),
        prompt,
        {
          model,
        },
      )
      // Plugin redaction over every text the summariser reads (the prompt included).
      const texts = rendered.map(textsOf)
      const flat = texts.flat()
      const plugged = yield* pluginRedact(sessionId, "summarizer-input", flat)
      let at = 0
      const messages = rendered.map((message, i) => {
        const count = texts[i]!.length
        const slice = plugged.texts.slice(at, at + count)
        at += count
        return plugged.changed.length === 0 ? message : withTexts(message, slice)
      })
      const pluginFindings: Array<RuntimeEvents.RedactionFinding> = plugged.changed.map((c) => ({
        field: `texts[${c.index}]`,
        kind: `plugin:${c.plugin}`,
      }))
      const system = estimateJson(Prompt.SYSTEM_PROMPT)
      const room = inputRoom(settings.compactionModel.limits, settings.config.output_token_max)
      return {
        plan,
        prompt,
        head,
        kept,
        dropped,
        tail: messagesOf(state, plan.tail),
        previousSummary,
        messages,
        inputFindings: [...redacted.findings.map(asFinding), ...pluginFindings],
        pluginFailures: plugged.failures,
        tooLarge: system + estimateJson(messages) > room,
      }
    })

  /** Starts a requested compaction: plugins, redaction, budget, `CompactionStarted`; answers the summariser input. */
  const start = (sessionId: string, state: State, markerId: Ids.MessageId, settings: Settings) =>
    Effect.gen(function* () {
      const compaction = Session.compaction(state.session, markerId)!
      const compactionRef = options.summarizer === undefined ? EXTRACTIVE_MODEL : settings.compactionModel.ref
      // The extractive summariser has no window of its own: the session model's limits size the tail.
      const compactionLimits =
        options.summarizer === undefined ? settings.model.limits : settings.compactionModel.limits
      const keep = settings.keep?.(state)
      const planned = SummaryInput.plan(Window.messages(state.session.window), {
        parentId: markerId,
        overflow: compaction.overflow,
        config: settings.config,
        compactionLimits,
        keep,
      })
      if (Result.isFailure(planned)) return yield* planned.failure
      const plan = planned.success

      const contributed = yield* Plugins.compactionContext(plugins, {
        sessionId,
        markerId,
        auto: compaction.auto,
        overflow: compaction.overflow,
        previousSummary: plan.previousSummary,
      })
      // Plugin text reaches the summariser too: it is redacted like the rest.
      const promptKinds: Array<string> = []
      const clean = (text: string) => {
        const r = redactText(text)
        promptKinds.push(...r.kinds)
        return r.text
      }
      // A model's focus note (`context_compact`) leads the context lines; redacted like the rest.
      const focus = state.runtime.inFlight?.markerId === markerId ? state.runtime.inFlight.focus : undefined
      // The pinned messages stay verbatim after the summary: the summariser is told which (`Pins.promptLine`).
      const pinLine = Pins.promptLine(
        Pins.messageIds(state.session.window.pins).flatMap((id) => {
          const m = Session.message(state.session, id)
          return m === undefined ? [] : [m]
        }),
      )
      const context = [
        ...(focus === undefined || focus === "" ? [] : [`${FOCUS_PREFIX}${focus}`]),
        ...(pinLine === undefined ? [] : [pinLine]),
        ...contributed.context,
      ].map(clean)
      const replacement = contributed.prompt === undefined ? undefined : clean(contributed.prompt)
      const promptWith = (previousSummary: string | undefined) =>
        replacement === undefined
          ? Prompt.buildPrompt({ previousSummary, context })
          : previousSummary === undefined || previousSummary === plan.previousSummary
            ? replacement
            : `${replacement}\n\n${Prompt.anchor(previousSummary)}`

      // Budget: leave the oldest head messages out of the model call until the rest fits the compaction model.
      let prompt = promptWith(plan.previousSummary)
      let dropped: ReadonlyArray<Ids.MessageId> = []
      let budgeted: RuntimeEvents.Event | undefined
      const at = yield* Clock.currentTimeMillis
      if (options.summarizer !== undefined) {
        const head = messagesOf(state, plan.head)
        const sizes = head.map(
          (m) =>
            estimateJson(
              Render.renderMessage(m, { stripMedia: true, toolOutputMaxChars: SummaryInput.TOOL_OUTPUT_MAX_CHARS }),
            ) + 1,
        )
        const room = inputRoom(settings.compactionModel.limits, settings.config.output_token_max)
        const fixed = estimateJson(Prompt.SYSTEM_PROMPT) + estimateJson(prompt) + 16
        const estimated = sizes.reduce((a, b) => a + b, 0)
        if (fixed + estimated > room) {
          // The digest replaces the previous summary in the prompt; reserve room for the longest one.
          const reserve =
            estimateJson(Prompt.SYSTEM_PROMPT) + estimateJson(promptWith("x".repeat(ExtractiveSummary.MAX_CHARS))) + 16
          const budget = Math.max(0, room - reserve)
          const count = dropOldest(sizes, budget)
          dropped = head.slice(0, count).map((m) => m.id)
          const digest = count > 0 && count < head.length
          if (digest) {
            const redactedDropped = options.redactSecrets
              ? Redaction.redactMessages(head.slice(0, count)).messages
              : head.slice(0, count)
            prompt = promptWith(digestOf(redactedDropped, plan.previousSummary, options.toolKinds))
          }
          budgeted = {
            _tag: "SummaryInputBudgeted",
            at,
            markerId,
            budget,
            estimated,
            dropped,
            kept: head.length - count,
            digest,
          }
        }
      }

      const input = yield* prepareInput(sessionId, state, plan, prompt, dropped, settings, compactionRef)
      const summaryId = yield* ids.message
      const records: Array<RuntimeEvents.Event> = [
        ...contributed.failures.map((f) => pluginFailed(at, f, markerId)),
        ...contributed.contributions.map(
          (c): RuntimeEvents.Event => ({
            _tag: "PluginContributed",
            at,
            plugin: c.plugin,
            hook: "compactionContext",
            markerId,
            ...(c.context.length > 0 ? { context: c.context.map((line) => redactText(line).text) } : {}),
            ...(c.replacedPrompt ? { replacedPrompt: true } : {}),
          }),
        ),
        ...(budgeted === undefined ? [] : [budgeted]),
        ...(promptKinds.length > 0
          ? [
              {
                _tag: "SecretsRedacted",
                at,
                markerId,
                stage: "prompt",
                findings: promptKinds.map((kind) => ({ messageId: markerId, field: "prompt", kind })),
              } satisfies RuntimeEvents.Event,
            ]
          : []),
        ...(input.inputFindings.length > 0
          ? [
              {
                _tag: "SecretsRedacted",
                at,
                markerId,
                stage: "summarizer-input",
                findings: input.inputFindings,
              } satisfies RuntimeEvents.Event,
            ]
          : []),
        ...input.pluginFailures.map((f) => pluginFailed(at, f, markerId)),
      ]
      const usesBuiltPrompt = replacement === undefined && dropped.length === 0
      const process: Command = {
        _tag: "ProcessCompaction",
        at,
        markerId,
        summaryId,
        model: compactionRef,
        compactionLimits,
        config: settings.config,
        ...(usesBuiltPrompt ? {} : { prompt }),
        ...(context.length > 0 ? { pluginContext: context } : {}),
        ...(keep === undefined || keep.length === 0 ? {} : { keep }),
      }
      // The prompt and records were built from `state`: never written once the session was forgotten since.
      const executed = yield* sessions.execute(
        sessionId,
        (current) =>
          Session.compaction(current.session, markerId)?.status === "requested"
            ? [process, { _tag: "Record", events: records }]
            : undefined,
        { basis: state },
      )
      const started = executed.events.find((e) => e._tag === "CompactionStarted")
      // Another writer started it first: summarise from what it recorded.
      if (started === undefined || started._tag !== "CompactionStarted" || started.prompt !== prompt) return undefined
      return { input, state: executed.state }
    })

  /** The summariser input of a compaction started earlier (after a restart), from what was recorded. */
  const resumeInput = (sessionId: string, state: State, markerId: Ids.MessageId, settings: Settings) => {
    const compaction = Session.compaction(state.session, markerId)!
    const inFlight = state.runtime.inFlight
    const plan: SummaryInput.CompactionPlan = { ...compaction.plan!, parentId: markerId }
    const prompt =
      inFlight?.markerId === markerId && inFlight.prompt !== undefined
        ? inFlight.prompt
        : Prompt.buildPrompt({ previousSummary: plan.previousSummary, context: [] })
    const dropped = inFlight?.markerId === markerId ? inFlight.dropped : []
    return prepareInput(
      sessionId,
      state,
      plan,
      prompt,
      dropped,
      settings,
      compaction.model ?? settings.compactionModel.ref,
    )
  }

  type Attempt =
    | { readonly ok: true; readonly response: SummaryResponse }
    | { readonly ok: false; readonly reason: RuntimeEvents.FallbackReason; readonly error: Message.MessageError }

  const callSummarizer = (summarizer: SummarizerShape, request: SummaryRequest): Effect.Effect<Attempt> =>
    timeBox(
      Effect.suspend(() => summarizer.summarize(request)),
      options.summaryTimeout,
    ).pipe(
      Effect.exit,
      Effect.map((exit): Attempt => {
        if (Exit.isFailure(exit)) {
          const failure = Cause.findErrorOption(exit.cause)
          if (Option.isSome(failure) && failure.value._tag === "SummarizerError") {
            const e = failure.value
            return {
              ok: false,
              reason: e.reason,
              error: e.error ?? { name: "SummarizerError", message: e.message },
            }
          }
          if (Cause.hasInterruptsOnly(exit.cause))
            return { ok: false, reason: "interrupted", error: { name: "SummarizerError", message: "interrupted" } }
          const squashed = Cause.squash(exit.cause)
          return {
            ok: false,
            reason: "failed",
            error: {
              name: "SummarizerError",
              message: squashed instanceof Error ? squashed.message : String(squashed),
            },
          }
        }
        if (Option.isNone(exit.value))
          return {
            ok: false,
            reason: "timeout",
            error: {
              name: "SummarizerError",
              message: `no summary within ${Duration.format(Duration.fromInputUnsafe(options.summaryTimeout))}`,
            },
          }
        const valid = Schema.decodeUnknownResult(ResponseSchema)(exit.value.value)
        if (Result.isFailure(valid))
          return { ok: false, reason: "invalid", error: { name: "SummarizerError", message: valid.failure.message } }
        if (valid.success.text.trim() === "")
          return { ok: false, reason: "empty", error: { name: "SummarizerError", message: "empty summary" } }
        return { ok: true, response: valid.success }
      }),
    )

  /**
   * The cache-aware request (ADR 0017): the conversation's own prompt with the compaction prompt appended, when that
   * mode is on and it fits the compaction model's input room; undefined otherwise (OpenCode's request is sent). The
   * window is sent as the conversation sent it, so it is not redacted again: the model already read these bytes.
   */
  const cacheAwareRequest = (state: State, markerId: Ids.MessageId, input: Input, settings: Settings, now: number) => {
    const cacheAware = options.cacheAware
    if (cacheAware === undefined) return undefined
    const messages = SummaryInput.cacheAwareMessages(
      Window.messages(state.session.window),
      markerId,
      input.prompt,
      cacheAware.render,
    )
    const room = inputRoom(settings.compactionModel.limits, settings.config.output_token_max)
    const tokens = estimateJson(messages) + Tokens.estimate(cacheAware.system)
    if (tokens > room) return undefined
    // Priced against OpenCode's request (ADR 0047): the prefix the conversation's last call cached, while the cache
    // is warm, is read; the rest of either request is written.
    const rates = cacheAware.rates?.(settings.model)
    if (rates !== undefined) {
      const lastId = state.session.lastFinished
      const last = lastId === undefined ? undefined : Session.message(state.session, lastId)
      const cache = Strategy.cacheAt(last, now, cacheAware.ttl ?? Strategy.DEFAULT_TTL)
      const cached =
        last?.role === "assistant" && last.summary !== true && !cache.cold ? Tokens.contextCount(last.tokens) : 0
      const opencode = estimateJson(Prompt.SYSTEM_PROMPT) + estimateJson(input.messages)
      if (!CacheEconomy.cacheSafePays({ cacheSafe: tokens, cached, opencode }, rates)) return undefined
    }
    return { system: cacheAware.system, messages }
  }

  /** Writes the summary of a started compaction and records it (or the failure). */
  const summarize = (sessionId: string, state: State, markerId: Ids.MessageId, input: Input, settings: Settings) =>
    Effect.gen(function* () {
      const compaction = Session.compaction(state.session, markerId)!
      const summarizer = options.summarizer
      const extractive = () =>
        ExtractiveSummary.summarize({
          head: input.head,
          ...(input.plan.previousSummary === undefined ? {} : { previousSummary: input.plan.previousSummary }),
          tail: input.tail,
          toolKinds: options.toolKinds,
        })
      let text: string
      let usage = Tokens.zero
      let finish = "stop"
      let fallback: { readonly reason: RuntimeEvents.FallbackReason; readonly error?: Message.MessageError } | undefined
      let failure: Message.MessageError | undefined
      if (summarizer === undefined) text = extractive()
      else if (input.tooLarge || (input.kept.length === 0 && input.head.length > 0)) {
        const error = {
          name: "ContextOverflowError",
          message: Prompt.tooLargeMessage(input.plan.replayOf !== undefined),
        }
        if (options.fallback) {
          text = extractive()
          fallback = { reason: "too-large", error }
        } else {
          text = ""
          failure = error
        }
      } else {
        const conversation = cacheAwareRequest(state, markerId, input, settings, yield* Clock.currentTimeMillis)
        const attempt = yield* callSummarizer(summarizer, {
          sessionId,
          model: compaction.model ?? settings.compactionModel.ref,
          limits: settings.compactionModel.limits,
          system: conversation?.system ?? Prompt.SYSTEM_PROMPT,
          messages: conversation?.messages ?? input.messages,
          head: input.kept,
          ...(input.previousSummary === undefined ? {} : { previousSummary: input.previousSummary }),
          maxOutputTokens: Model.maxOutputTokens(settings.compactionModel.limits, settings.config.output_token_max),
        })
        if (attempt.ok) {
          text = attempt.response.text
          usage = attempt.response.usage
          finish = attempt.response.finish
          // A summary longer than what it replaces defeats the purpose: the extractive one, when shorter, wins.
          const replaced = Tail.sizeOf(input.head) + Tokens.estimate(input.plan.previousSummary ?? "")
          if (options.fallback && Tokens.estimate(text) > replaced) {
            const alternative = extractive()
            if (alternative.length < text.length) {
              text = alternative
              usage = attempt.response.usage
              fallback = { reason: "larger" }
            }
          }
        } else if (options.fallback) {
          text = extractive()
          fallback = {
            reason: attempt.reason,
            error: { ...attempt.error, message: redactText(attempt.error.message).text },
          }
        } else {
          text = ""
          failure =
            attempt.reason === "overflow"
              ? { name: "ContextOverflowError", message: Prompt.tooLargeMessage(input.plan.replayOf !== undefined) }
              : attempt.error
        }
      }

      if (fallback !== undefined)
        // Said through the logger as well as recorded (SummaryFallbackUsed): a summariser that always falls back
        // (a wrong model, a missing key) must not go unnoticed.
        yield* Effect.logWarning(fallbackWarning(sessionId, markerId, fallback.reason, fallback.error?.message))
      const at = yield* Clock.currentTimeMillis
      if (failure !== undefined) {
        const error = failure
        yield* sessions.execute(
          sessionId,
          (current) =>
            Session.compaction(current.session, markerId)?.status === "started"
              ? { _tag: "FailSummary", at, markerId, error }
              : undefined,
          { basis: state },
        )
        return { status: "failed", markerId, error } satisfies Outcome
      }

      if (options.factsBlock)
        text = Facts.withBlock(
          text,
          Facts.merge(
            Facts.parse(input.plan.previousSummary ?? ""),
            Facts.facts(input.head, Facts.toolsOf(options.toolKinds)),
          ),
        )
      const summaryId = compaction.summaryId!
      const redacted = redactText(text)
      const plugged = yield* pluginRedact(sessionId, "summary", [redacted.text])
      text = plugged.texts[0] ?? redacted.text
      const findings: Array<RuntimeEvents.RedactionFinding> = [
        ...redacted.kinds.map((kind) => ({ messageId: summaryId, field: "text", kind })),
        ...plugged.changed.map((c) => ({ messageId: summaryId, field: "text", kind: `plugin:${c.plugin}` })),
      ]
      const records: Array<RuntimeEvents.Event> = [
        ...(fallback === undefined
          ? []
          : [
              {
                _tag: "SummaryFallbackUsed",
                at,
                markerId,
                reason: fallback.reason,
                ...(fallback.error === undefined ? {} : { error: fallback.error }),
              } satisfies RuntimeEvents.Event,
            ]),
        ...(findings.length > 0
          ? [{ _tag: "SecretsRedacted", at, markerId, stage: "summary", findings } satisfies RuntimeEvents.Event]
          : []),
        ...plugged.failures.map((f) => pluginFailed(at, f, markerId)),
        // What the summary kept of the span it replaced, checked on the text as stored.
        ...(input.head.length === 0
          ? []
          : [
              {
                _tag: "ArtifactsChecked",
                at,
                markerId,
                artifacts: ArtifactCheck.check(input.head, text, Facts.toolsOf(options.toolKinds)),
              } satisfies RuntimeEvents.Event,
            ]),
      ]
      const partId = yield* ids.part
      const finalText = text
      // The summary was written from `state` (the summariser input): never stored once the session was forgotten since.
      yield* sessions.execute(
        sessionId,
        (current) =>
          Session.compaction(current.session, markerId)?.status === "started"
            ? [
                { _tag: "FinishSummary", at, markerId, partId, text: finalText, tokens: usage, finish },
                { _tag: "Record", events: records },
              ]
            : undefined,
        { basis: state },
      )
      return {
        status: "finished",
        markerId,
        summaryId,
        text: finalText,
        ...(fallback === undefined ? {} : { fallback: fallback.reason }),
      } satisfies Outcome
    })

  /**
   * The continue step of a finished automatic compaction: the replay, or the continue message when the agent was
   * mid-task and no plugin vetoes; otherwise the skip is recorded.
   */
  const continueAfter = (sessionId: string, state: State, markerId: Ids.MessageId) =>
    Effect.gen(function* () {
      const compaction = Session.compaction(state.session, markerId)!
      const at = yield* Clock.currentTimeMillis
      const messageId = yield* ids.message
      const proceed: Command = { _tag: "Continue", at, markerId, messageId, autoContinue: true }
      if (!compaction.auto) return "manual" as const
      if (compaction.plan?.replayOf !== undefined) {
        yield* sessions.execute(sessionId, proceed)
        return "replayed" as const
      }
      // Was the agent working when the context filled up? Read the newest message before the marker.
      const lastReal = state.runtime.awaitingLastReal
      const midTask = lastReal !== undefined && ExtractiveSummary.midTask(messagesOf(state, [lastReal]))
      const skip = (reason: "waiting-for-user" | "plugin-veto", plugin?: string): Command => ({
        _tag: "Record",
        events: [{ _tag: "AutoContinueSkipped", at, markerId, reason, ...(plugin === undefined ? {} : { plugin }) }],
      })
      const veto: Command = { _tag: "Continue", at, markerId, messageId, autoContinue: false }
      if (!midTask) {
        yield* sessions.execute(sessionId, [veto, skip("waiting-for-user")])
        return "skipped" as const
      }
      const summary = Session.message(state.session, compaction.summaryId!)
      const verdict = yield* Plugins.autoContinue(plugins, {
        sessionId,
        markerId,
        overflow: compaction.overflow,
        midTask,
        summary: summary?.role === "assistant" ? (Message.summaryText(summary) ?? "") : "",
      })
      const records: Command = {
        _tag: "Record",
        events: [
          ...verdict.failures.map((f) => pluginFailed(at, f, markerId)),
          ...verdict.verdicts.map(
            (v): RuntimeEvents.Event => ({
              _tag: "PluginContributed",
              at,
              plugin: v.plugin,
              hook: "autoContinue",
              markerId,
              autoContinue: v.enabled,
            }),
          ),
        ],
      }
      if (!verdict.enabled) {
        yield* sessions.execute(sessionId, [veto, records, skip("plugin-veto", verdict.vetoedBy)])
        return "skipped" as const
      }
      yield* sessions.execute(sessionId, [proceed, records])
      return "continued" as const
    })

  /**
   * Drives the session's outstanding compaction to its end: starts a requested one, summarises a started one (also
   * after a restart), and runs the continue step a finished automatic one still owes. Answers what happened; nothing
   * when nothing was outstanding.
   */
  const settle = (
    sessionId: string,
    settings: Settings,
  ): Effect.Effect<Settled, ExecuteError | SummaryInput.CompactionParentNotUser> =>
    Effect.gen(function* () {
      let outcome: Outcome | undefined
      let continuation: Continuation | undefined
      // Each round moves the compaction one step on; a bounded loop, since each step is recorded before the next.
      for (let round = 0; round < 6; round++) {
        const state = yield* sessions.load(sessionId)
        const owed = state.runtime.awaitingContinue
        if (owed !== undefined) {
          continuation = yield* continueAfter(sessionId, state, owed)
          continue
        }
        const pending = state.session.pending
        if (pending === undefined) break
        const compaction = Session.compaction(state.session, pending)!
        // A step refused because the session was forgotten meanwhile (`SessionErased`) is taken again in the next
        // round, from the session as it reads after the erasure.
        if (compaction.status === "requested") {
          const started = yield* start(sessionId, state, pending, settings).pipe(erasedAsUndefined)
          if (started !== undefined) {
            const finished = yield* summarize(sessionId, started.state, pending, started.input, settings).pipe(
              erasedAsUndefined,
            )
            if (finished === undefined) continue
            outcome = finished
            if (outcome.status === "finished" && !compaction.auto) continuation = "manual"
          }
          continue
        }
        if (compaction.status === "started") {
          const input = yield* resumeInput(sessionId, state, pending, settings)
          const finished = yield* summarize(sessionId, state, pending, input, settings).pipe(erasedAsUndefined)
          if (finished === undefined) continue
          outcome = finished
          if (outcome.status === "finished" && !compaction.auto) continuation = "manual"
          continue
        }
        break
      }
      return { outcome, continuation }
    })

  return { settle }
}
