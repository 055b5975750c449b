/**
 * "What would this session have cost under another strategy?": a recorded session's inputs (the user's messages, the
 * model's steps with their parts and tool results) replayed through a fresh `ContextManager` on a memory store, once
 * per strategy, and each run billed through the same simulated prompt cache (`PromptCache`).
 *
 * - The inputs come from any pivot log: an AI SDK app's, OpenCode's `.pivot/opencode.db`, an imported export. What
 *   the recorded strategy did (compactions, prunes, continue messages) is not carried over: each strategy manages the
 *   same conversation its own way. Provider errors and manual compactions are left out and counted.
 * - Each call's usage is what the provider would have reported for the replayed window: the window's estimate plus
 *   the call's non-window overhead (system prompt and tool schemas), derived as the recorded usage minus pivot's
 *   estimate of the recorded window. Where the replayed window is byte for byte the recorded one, the recorded usage
 *   is used as is, so replaying under the strategy a session was recorded with reproduces its windows.
 * - Summaries: the recorded one where the strategy compacts the same head (the same messages summarised), pivot's
 *   deterministic extractive summary elsewhere; each run says how many of each. An extractive summary is billed as
 *   `CacheEconomy.DEFAULT_SUMMARY_TOKENS` output tokens (what a model's would be), a recorded one as recorded.
 * - Billing: every request (each call's prompt, each summariser call) is serialised as its system prompt (a stand-in
 *   of the overhead's size, the same for every strategy) and its messages, one per line, and billed in time order by
 *   `PromptCache` under one provider's rules, at the model's rates (`Pricing.ratesFor`: its price, else the rules'
 *   provider multipliers). The conversation's own output is in the totals (the same for every strategy).
 */
import {
  ArtifactCheck,
  CacheEconomy,
  Conversation,
  type Events,
  Facts,
  Ids,
  Ledger,
  Message,
  type Model,
  Pricing,
  PromptCache,
  Recall,
  Session,
  Tokens,
  ValidWindow,
  Window,
} from "@pivot/core"
import { EventStore } from "@pivot/store"
import { Clock, Effect, Layer, Logger, Schema } from "effect"
import { catalogLimits, type ImpossibleLimits, type ModelSpec, priceOf } from "./Config.ts"
import { ContextManager, type ContextManagerError, type InvalidOption, type InvalidToolKind } from "./ContextManager.ts"
import { Sessions } from "./Sessions.ts"
import * as Strategies from "./Strategies.ts"
import { Summarizer, type SummarizerShape } from "./Summarizer.ts"

type Event = Events.Event

// ── The recorded inputs ──────────────────────────────────────────────────────────────────────────────────────────

/** One recorded input, in log order. */
export type Action =
  | { readonly _tag: "user"; readonly at: number; readonly message: Message.UserMessage }
  | {
      readonly _tag: "step"
      readonly at: number
      readonly message: Message.AssistantMessage
      /** The window the recorded call was sent, serialised (`Ledger.serialize`). */
      readonly window: string
      /** The call's tokens besides the window: its recorded input minus the window's estimate (0 at least). */
      readonly overhead: number
    }
  | {
      readonly _tag: "tool"
      readonly at: number
      readonly messageId: Ids.MessageId
      readonly partId: Ids.PartId
      readonly state: Message.ToolCompleted | typeof Message.ToolError.Type
    }

/** A recorded summary, found again by the head it summarised. */
export interface RecordedSummary {
  readonly text: string
  readonly usage: Tokens.TokenUsage
  readonly model: Model.ModelRef
}

/** A recorded session's inputs. */
export interface Inputs {
  readonly sessionId: string
  /** The model the session's calls were made with (the first step's), when there was a call. */
  readonly model: Model.ModelRef | undefined
  readonly actions: ReadonlyArray<Action>
  /** Recorded summaries by `headKey` of the messages they summarised. */
  readonly summaries: ReadonlyMap<string, RecordedSummary>
  /** The ids of the recorded user messages and steps. */
  readonly messageIds: ReadonlySet<string>
  /** The median of the calls' overheads: the system prompt's stand-in size. */
  readonly overhead: number
  /** Provider errors left out of the replay. */
  readonly providerErrors: number
  /** Compactions asked for by the user or the model (`compact`, `context_compact`) left out of the replay. */
  readonly manualCompactions: number
}

/**
 * The key of a compaction's head: the ids of the recorded inputs' messages in it, in order. The runtime's own messages
 * (markers, summaries, continue messages) are left out: their ids are made anew by each run.
 */
export const headKey = (head: ReadonlyArray<string>, inputs: ReadonlySet<string>): string =>
  head.filter((id) => inputs.has(id)).join(" ")

/** The context tokens a call's prompt used (uncached input, cache reads and writes). */
const promptTokens = (usage: Tokens.TokenUsage): number => usage.input + usage.cacheRead + usage.cacheWrite

const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]!
}

/** The inputs of a recorded session's events (its whole stream, in order). */
export const inputsOf = (sessionId: string, events: Iterable<Event>): Inputs => {
  let window = Window.initial
  const actions: Array<Action> = []
  const heads = new Map<string, ReadonlyArray<string>>()
  const finished: Array<{ readonly head: ReadonlyArray<string>; readonly summary: RecordedSummary }> = []
  const messageIds = new Set<string>()
  let model: Model.ModelRef | undefined
  let providerErrors = 0
  let manualCompactions = 0
  for (const event of events) {
    switch (event._tag) {
      case "UserMessageAdded":
        actions.push({ _tag: "user", at: event.at, message: event.message })
        messageIds.add(event.message.id)
        break
      case "AssistantStepRecorded": {
        if (event.message.summary === true) break
        const text = Ledger.serialize(window, undefined)
        model ??= event.message.model
        messageIds.add(event.message.id)
        actions.push({
          _tag: "step",
          at: event.at,
          message: event.message,
          window: text,
          overhead: Math.max(0, promptTokens(event.message.tokens) - Tokens.estimate(text)),
        })
        break
      }
      case "ToolResultRecorded":
        actions.push({
          _tag: "tool",
          at: event.at,
          messageId: event.messageId,
          partId: event.partId,
          state: event.state,
        })
        break
      case "ProviderErrorReported":
        providerErrors++
        break
      case "CompactionRequested":
        if (event.reason === "user" || event.reason === "model") manualCompactions++
        break
      case "CompactionStarted":
        heads.set(event.markerId, event.plan.head)
        break
      case "SummaryFinished": {
        const head = heads.get(event.markerId)
        const text = Message.summaryText(event.summary)
        if (head !== undefined && text !== undefined)
          finished.push({ head, summary: { text, usage: event.summary.tokens, model: event.summary.model } })
        break
      }
      default:
        break
    }
    window = Window.evolve(window, event)
  }
  const summaries = new Map<string, RecordedSummary>()
  for (const { head, summary } of finished) summaries.set(headKey(head, messageIds), summary)
  const overheads = actions.flatMap((a) => (a._tag === "step" ? [a.overhead] : []))
  return {
    sessionId,
    model,
    actions,
    summaries,
    messageIds,
    overhead: median(overheads),
    providerErrors,
    manualCompactions,
  }
}

// ── One replay ───────────────────────────────────────────────────────────────────────────────────────────────────

/** A request the replay sent: a call's prompt or a summariser call's, serialised, with its output tokens. */
export interface Request {
  readonly kind: "step" | "summary"
  readonly text: string
  readonly at: number
  readonly output: number
  /** Where it puts Anthropic's cache breakpoints (`breakpointsOf`); default one at its end. */
  readonly breakpoints?: ReadonlyArray<number> | undefined
}

/** How a replay's requests are billed. */
export interface BillingOptions {
  /** Whose prompt cache rules apply. */
  readonly rules: PromptCache.Rules
  /** The multipliers against the input price (reads, writes, output). */
  readonly rates: Pricing.Rates
  /** The model's price, for dollars; undefined when it has none. */
  readonly price: Pricing.Price | undefined
}

/** A run's bill. Tokens are estimates; `billed` and `cost` are input-token equivalents at the rates. */
export interface Billing {
  readonly input: number
  readonly cacheRead: number
  readonly cacheWrite: number
  /** Output tokens: the conversation's (the same for every strategy) and the summaries'. */
  readonly output: number
  /** Input as billed: uncached input plus reads and writes at their rates. */
  readonly billed: number
  /** `billed` plus the output at its rate. */
  readonly cost: number
  /** USD, when the model has a price. */
  readonly dollars: number | undefined
}

/** What a strategy did with the session, and what it cost. */
export interface Run {
  readonly strategy: Strategies.Name
  /** Conversation calls (the recorded steps, replayed). */
  readonly calls: number
  /** Prompt tokens sent over every call, summariser calls included. */
  readonly sent: number
  /** Calls whose prompt was over the model's context window (a provider would refuse them). */
  readonly overWindow: number
  /**
   * The working set: calls, and those whose window still held the current turn's request and every tool output the
   * turn had produced so far (verbatim; a summary or a placeholder in their place does not count).
   */
  readonly workingSet: { readonly calls: number; readonly intact: number }
  readonly compactions: number
  /** Of the compactions' summaries: recorded ones reused, and pivot's deterministic ones written instead. */
  readonly summaries: { readonly recorded: number; readonly extractive: number }
  /** Prune batches, and the outputs they cleared. */
  readonly prunes: number
  readonly prunedParts: number
  readonly billing: Billing
  /**
   * The session's artifacts (files read and edited, commands, errors, requests: `ArtifactCheck`) the last call's
   * window names, with summaries as written and with their facts block left out (the same rule for every strategy);
   * and those in view or recallable: named there or by a document `context_recall` gives back at the end of the run
   * (a part of a message behind a pivot, a pruned output, an earlier summary: `ArtifactCheck.withRecall`).
   */
  readonly artifacts: {
    readonly total: number
    readonly inView: number
    readonly inViewWithoutFacts: number
    readonly inViewOrRecallable: number
  }
  /** Each call's window as sent (serialised model messages), in order. */
  readonly windows: ReadonlyArray<string>
}

/** A request's text: its system prompt and its messages, one per line (a later prompt extends an earlier one). */
export const serialise = (system: string, messages: ReadonlyArray<unknown>): string =>
  `${JSON.stringify(system)}\n${messages.map((m) => `${JSON.stringify(m)}\n`).join("")}`

/**
 * Where OpenCode puts Anthropic's cache breakpoints in a request `serialise` wrote (its provider transform: after the
 * system prompt and tools, and after each of the last two messages), as character offsets: after a compaction or a
 * prune the system prompt and tools are read from the cache, not written again.
 */
export const breakpointsOf = (system: string, messages: ReadonlyArray<unknown>): ReadonlyArray<number> => {
  const head = JSON.stringify(system).length + 1
  let at = head
  const ends = messages.map((m) => {
    at += JSON.stringify(m).length + 1
    return at
  })
  return [...new Set([head, ...ends.slice(-2)])]
}

/** The system prompt's stand-in: a text of `tokens` tokens, the same for every strategy of a session. */
export const standInSystem = (tokens: number): string => "s".repeat(Math.max(0, tokens) * 4)

/** Bills `requests` in order through a fresh cache. */
export const bill = (requests: ReadonlyArray<Request>, options: BillingOptions): Billing => {
  let cache = PromptCache.empty
  let input = 0
  let cacheRead = 0
  let cacheWrite = 0
  let output = 0
  for (const r of requests) {
    const [b, next] = PromptCache.bill(cache, options.rules, r.text, r.at, PromptCache.TTL, {
      breakpoints: r.breakpoints,
    })
    cache = next
    input += b.input
    cacheRead += b.cacheRead
    cacheWrite += b.cacheWrite
    output += r.output
  }
  const usage: Tokens.TokenUsage = { input, cacheRead, cacheWrite, output, reasoning: 0 }
  return {
    input,
    cacheRead,
    cacheWrite,
    output,
    billed: Pricing.inputEquivalent(usage, options.rates),
    cost: Pricing.equivalent(usage, options.rates),
    dollars: options.price === undefined ? undefined : Pricing.dollars(usage, options.price),
  }
}

/**
 * A session clock that reads the time, in milliseconds, from `now` and never sleeps: what a replay (or a scripted
 * session) sets to each input's recorded time, so the runtime stamps events and reads the cache's age from it. Nothing
 * in a replay waits (the summariser answers at once), so a time box never fires.
 */
export const clockOf = (now: () => number): Clock.Clock => ({
  currentTimeMillisUnsafe: now,
  currentTimeMillis: Effect.sync(now),
  currentTimeNanosUnsafe: () => BigInt(now()) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => BigInt(now()) * 1_000_000n,
  monotonicTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
  sleep: () => Effect.never,
})

/** The options of a replay. */
export interface ReplayOptions {
  /** The model the session runs on (its limits decide when the strategies compact). */
  readonly model: ModelSpec
  readonly billing: BillingOptions
}

/** Errors a replay can end with: the strategy's options refused, or a recorded input the runtime refused. */
export type ReplayError = ContextManagerError | ImpossibleLimits | InvalidToolKind | InvalidOption

/** Replays the inputs under the strategy `name`. */
export const replay = (
  inputs: Inputs,
  name: Strategies.Name,
  options: ReplayOptions,
): Effect.Effect<Run, ReplayError> => {
  const clock = { now: inputs.actions[0]?.at ?? 0 }
  const system = standInSystem(inputs.overhead)
  const requests: Array<Request> = []
  const windows: Array<string> = []
  const used = { recorded: 0, extractive: 0 }
  const userIds = new Set(inputs.actions.flatMap((a) => (a._tag === "user" ? [a.message.id] : [])))
  const rules = options.billing.rules
  const sessionId = inputs.sessionId
  const strategy = Strategies.strategyOptions(name, { context: options.model.limits.context, system })

  const summarizer: SummarizerShape = {
    summarize: (request) =>
      Effect.suspend(() => {
        const recorded = inputs.summaries.get(
          headKey(
            request.head.map((m) => m.id),
            inputs.messageIds,
          ),
        )
        const text = serialise(request.system, request.messages)
        const breakpoints = breakpointsOf(request.system, request.messages)
        if (recorded !== undefined) {
          used.recorded++
          requests.push({ kind: "summary", text, at: clock.now, output: recorded.usage.output, breakpoints })
          // A strategy without pivot's facts block gets the recorded summary without it (the model's text alone).
          const kept = strategy.factsBlock === false ? Facts.strip(recorded.text) : recorded.text
          return Effect.succeed({ text: kept, usage: recorded.usage, finish: "stop", model: recorded.model })
        }
        used.extractive++
        requests.push({
          kind: "summary",
          text,
          at: clock.now,
          output: CacheEconomy.DEFAULT_SUMMARY_TOKENS,
          breakpoints,
        })
        return Summarizer.extractive.summarize(request)
      }),
  }

  const program = Effect.gen(function* () {
    const cm = yield* ContextManager
    const sessions = yield* Sessions
    // What the strategy sees of the cache (the usage split into reads and writes): the billing rules' cache.
    let seen = PromptCache.empty
    let turnOpen = false
    let overWindow = 0
    // The working set: the current turn's request and every output it has read so far.
    let working: Array<string> = []
    const workingSet = { calls: 0, intact: 0 }
    for (const action of inputs.actions) {
      // An agent prunes after each turn (as OpenCode does after its loop, and `pivot.run` at a turn's end): before
      // the next user message, at the previous input's time.
      if (action._tag === "user" && turnOpen) yield* cm.prune(sessionId)
      clock.now = action.at
      switch (action._tag) {
        case "user": {
          const m = action.message
          yield* cm.recordUserMessage(sessionId, {
            id: m.id,
            parts: m.parts as ReadonlyArray<never>,
            ...(m.agent === undefined ? {} : { agent: m.agent }),
            ...(m.model === undefined ? {} : { model: m.model }),
            ...(m.system === undefined ? {} : { system: m.system }),
          })
          turnOpen = true
          working = m.parts.flatMap((p) => (p.type === "text" && p.synthetic !== true && p.text !== "" ? [p.text] : []))
          break
        }
        case "step": {
          const prepared = yield* cm.prepare(sessionId)
          const messages = prepared.messages.map((r) => r.message)
          const window = JSON.stringify(messages)
          windows.push(window)
          workingSet.calls++
          if (working.every((text) => window.includes(JSON.stringify(text).slice(1, -1)))) workingSet.intact++
          const prompt = serialise(system, messages)
          const breakpoints = breakpointsOf(system, messages)
          requests.push({
            kind: "step",
            text: prompt,
            at: clock.now,
            output: action.message.tokens.output,
            breakpoints,
          })
          const [split, next] = PromptCache.bill(seen, rules, prompt, clock.now, PromptCache.TTL, { breakpoints })
          seen = next
          const recorded = action.message.tokens
          const context = action.overhead + Tokens.estimate(window)
          if (context > options.model.limits.context) overWindow++
          const read = Math.min(split.cacheRead, context)
          const usage: Tokens.TokenUsage =
            window === action.window
              ? recorded
              : {
                  input: rules === "openai" ? context - read : 0,
                  cacheRead: read,
                  cacheWrite: rules === "openai" ? 0 : context - read,
                  output: recorded.output,
                  reasoning: recorded.reasoning,
                }
          const m = action.message
          yield* cm.recordAssistantStep(sessionId, {
            id: m.id,
            ...(userIds.has(m.parentId) ? { parentId: m.parentId } : {}),
            model: m.model,
            ...(m.agent === undefined ? {} : { agent: m.agent }),
            ...(m.mode === undefined ? {} : { mode: m.mode }),
            parts: m.parts as ReadonlyArray<never>,
            usage,
            ...(m.finish === undefined ? {} : { finish: m.finish }),
            createdAt: m.createdAt,
          })
          for (const p of m.parts)
            if (p.type === "tool" && p.state.status === "completed" && p.state.output !== "")
              working.push(p.state.output)
          break
        }
        case "tool":
          yield* cm.recordToolResult(sessionId, {
            messageId: action.messageId,
            partId: action.partId,
            state: action.state,
          })
          if (action.state.status === "completed" && action.state.output !== "") working.push(action.state.output)
          break
      }
    }
    if (turnOpen) yield* cm.prune(sessionId)
    const events = yield* sessions.events(sessionId)
    return { events, overWindow, workingSet }
  })

  const layer = ContextManager.layer({
    model: options.model,
    overheadTokens: inputs.overhead,
    ...strategy,
  }).pipe(
    Layer.provide(Layer.succeed(Summarizer, summarizer)),
    // Ids from the session clock, as a live session's: a marker or summary made at a recorded time sorts among the
    // recorded messages as it would have then.
    Layer.provide(Ids.Ids.layer),
    Layer.provideMerge(EventStore.layerMemory()),
  )

  return program.pipe(
    Effect.provide(layer),
    Effect.provideService(
      Clock.Clock,
      clockOf(() => clock.now),
    ),
    // A replay logs nothing: what its runtime would warn about (a summary that fell back) is counted in the run, and
    // a warning of a simulated session on the caller's logger (stdout by default) would corrupt `whatif --format json`.
    Effect.provide(Logger.layer([])),
    Effect.map(({ events, overWindow, workingSet }) => {
      const totals = Ledger.totals(Ledger.fold(events))
      const session = Session.fold(events)
      const conversation = session.window.conversation
      const all = Conversation.messages(conversation).filter(
        (m) => !(m.role === "assistant" && m.summary === true) && !Message.isMarker(m),
      )
      // What the last call's window shows the model, as written and with its summaries' facts blocks left out: the
      // text of its parts (`ArtifactCheck.shownText`), never the stored messages' field names or usage.
      const window = Window.fold(events)
      const shown = (messages: ReadonlyArray<Message.Message>) =>
        ArtifactCheck.shownText(ValidWindow.render(messages).map((r) => r.message))
      const artifacts = ArtifactCheck.check(all, shown(Window.messages(window)))
      const stripped = ArtifactCheck.check(all, shown(Window.messages(window).map(stripFacts)))
      const recallable = ArtifactCheck.withRecall(
        artifacts,
        Recall.documents(Conversation.messages(conversation), Recall.behindMap(Recall.sessionPivots(session))),
      )
      return {
        strategy: name,
        calls: windows.length,
        sent: requests.reduce((n, r) => n + Tokens.estimate(r.text), 0),
        overWindow,
        workingSet,
        compactions: totals.compactions,
        summaries: { ...used },
        prunes: totals.prunes,
        prunedParts: events.filter((e) => e._tag === "PartCompacted").length,
        billing: bill(requests, options.billing),
        artifacts: {
          total: artifacts.length,
          inView: artifacts.filter((a) => a.named).length,
          inViewWithoutFacts: stripped.filter((a) => a.named).length,
          inViewOrRecallable: recallable.filter(ArtifactCheck.reachable).length,
        },
        windows,
      } satisfies Run
    }),
  )
}

/** A summary message with its facts block left out (other messages as they are). */
const stripFacts = (m: Message.Message): Message.Message =>
  m.role === "assistant" && m.summary === true
    ? { ...m, parts: m.parts.map((p) => (p.type === "text" ? { ...p, text: Facts.strip(p.text) } : p)) }
    : m

// ── The comparison ───────────────────────────────────────────────────────────────────────────────────────────────

/** The cache rules of a model's provider: Anthropic's for `anthropic`, else OpenAI's automatic caching. */
export const rulesOf = (ref: Model.ModelRef | undefined): PromptCache.Rules =>
  ref?.providerId === "anthropic" ? "anthropic" : "openai"

/** The billing of a model: `rules` (default its provider's), its price's rates, else the rules' provider multipliers. */
export const billingFor = (
  ref: Model.ModelRef,
  price: Pricing.Price | undefined,
  rules: PromptCache.Rules = rulesOf(ref),
): BillingOptions => {
  const priced = price === undefined ? undefined : Pricing.ratesOf(price)
  return { rules, rates: priced ?? Pricing.PROVIDER_RATES[rules]!, price }
}

/** A session replayed under several strategies. */
export interface Comparison {
  readonly sessionId: string
  readonly model: Model.ModelRef
  readonly limits: Model.ModelLimits
  /** The system prompt's and tools' stand-in size (tokens): the median overhead of the recorded calls. */
  readonly overhead: number
  readonly rules: PromptCache.Rules
  readonly rates: Pricing.Rates
  readonly priced: boolean
  readonly providerErrors: number
  readonly manualCompactions: number
  readonly runs: ReadonlyArray<Omit<Run, "windows">>
}

/** Replays `inputs` under each strategy of `names`, in order. */
export const compare = (
  inputs: Inputs,
  names: ReadonlyArray<Strategies.Name>,
  options: ReplayOptions,
): Effect.Effect<Comparison, ReplayError> =>
  Effect.gen(function* () {
    const runs: Array<Omit<Run, "windows">> = []
    for (const name of names) {
      const { windows: _windows, ...run } = yield* replay(inputs, name, options)
      runs.push(run)
    }
    return {
      sessionId: inputs.sessionId,
      model: options.model.ref,
      limits: options.model.limits,
      overhead: inputs.overhead,
      rules: options.billing.rules,
      rates: options.billing.rates,
      priced: options.billing.price !== undefined,
      providerErrors: inputs.providerErrors,
      manualCompactions: inputs.manualCompactions,
      runs,
    }
  })

// ── A stored session ─────────────────────────────────────────────────────────────────────────────────────────────

/** The session has no model call to replay. */
export class NothingToReplay extends Schema.TaggedError<NothingToReplay>()("NothingToReplay", {
  sessionId: Schema.String,
}) {
  override get message(): string {
    return `session ${this.sessionId} has no model call to replay`
  }
}

/** The model's context window is neither in the catalog nor given. */
export class UnknownLimits extends Schema.TaggedError<UnknownLimits>()("UnknownLimits", {
  model: Schema.String,
}) {
  /**
   * The message, naming how its reader gives the window: `context` and `output` (`WhatIf.session`'s options, the
   * viewer's query parameters) unless told otherwise (`pivot whatif`: `--context`, `--output`).
   */
  describe(context = "context", output = "output"): string {
    return `no context window known for ${this.model} (not in the model catalog): give it (${context} N, and ${output} N)`
  }
  override get message(): string {
    return this.describe()
  }
}

/** A strategy name that is not a built-in one. */
export class UnknownStrategy extends Schema.TaggedError<UnknownStrategy>()("UnknownStrategy", {
  name: Schema.String,
}) {
  override get message(): string {
    return `unknown strategy ${JSON.stringify(this.name)}: expected one of ${Strategies.NAMES.join(", ")}`
  }
}

/** The names, checked: each a built-in strategy's. */
export const strategiesOf = (
  names: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<Strategies.Name>, UnknownStrategy> => {
  const unknown = names.find((name) => !Strategies.isName(name))
  return unknown === undefined
    ? Effect.succeed(names as ReadonlyArray<Strategies.Name>)
    : Effect.fail(new UnknownStrategy({ name: unknown }))
}

/** How to compare a stored session. */
export interface SessionOptions {
  /** Default: every built-in strategy. */
  readonly strategies?: ReadonlyArray<Strategies.Name> | undefined
  /** Prices over the catalog's (`Config.PriceTable`). */
  readonly prices?: Readonly<Record<string, Pricing.Price>> | undefined
  /** Where prices come from instead (a viewer's); `prices` is then not read. */
  readonly priceOf?: ((ref: Model.ModelRef) => Pricing.Price | undefined) | undefined
  /** The model's limits over the catalog's: a context (and output) for a model the catalog does not know. */
  readonly context?: number | undefined
  readonly output?: number | undefined
  /** Whose cache rules bill the requests; default the model's provider's. */
  readonly rules?: PromptCache.Rules | undefined
}

/** Default output limit when only the context is given: an eighth of it, at most 32,000. */
const defaultOutput = (context: number): number => Math.min(32_000, Math.floor(context / 8))

/**
 * A stored session's events replayed under each strategy: the model of its calls (limits from the options, else the
 * catalog), billed at its price (the options' prices, else the catalog's) under its provider's cache rules.
 */
export const session = (
  sessionId: string,
  events: Iterable<Event>,
  options: SessionOptions = {},
): Effect.Effect<Comparison, NothingToReplay | UnknownLimits | ReplayError> =>
  Effect.gen(function* () {
    const inputs = inputsOf(sessionId, events)
    const ref = inputs.model
    if (ref === undefined) return yield* new NothingToReplay({ sessionId })
    const catalog = catalogLimits(ref)
    const context = options.context ?? catalog?.context
    if (context === undefined) return yield* new UnknownLimits({ model: `${ref.providerId}/${ref.modelId}` })
    const output =
      options.output ?? (options.context === undefined ? catalog?.output : undefined) ?? defaultOutput(context)
    const limits: Model.ModelLimits =
      options.context === undefined && catalog !== undefined ? { ...catalog, output } : { context, output }
    const model: ModelSpec = { ref, limits }
    const price = options.priceOf === undefined ? priceOf(ref, options.prices ?? {}) : options.priceOf(ref)
    const billing = billingFor(ref, price, options.rules)
    return yield* compare(inputs, options.strategies ?? Strategies.NAMES, { model, billing })
  })
