/**
 * Benchmark (issue 20, part 6): what the same sessions cost under each context strategy, billed through a simulated
 * provider prompt cache (support/providerCache.ts: exact prefix match, 5-minute TTL; Anthropic's 1.25× write and
 * 0.1× read, OpenAI's automatic caching), and what each kept. One run, same sessions, same window for every strategy.
 *
 * Strategies:
 * - `none`: the whole history on every call (pivot with automatic compaction and prune off);
 * - `opencode`: OpenCode's strategy, which pivot's parity mode reproduces: automatic compaction with OpenCode's
 *   summariser request, and prune on (`compaction.prune: true`, run after each turn as OpenCode does);
 * - `ai-sdk prune`: the whole history through the AI SDK's `pruneMessages` (reasoning before the last message and tool
 *   calls before the last 2 messages dropped), as its docs show, on every call;
 * - `pivot`: pivot's defaults (automatic compaction, summaries with the facts block, prune off);
 * - `pivot cache-aware`: the `cacheAware` option with its defaults (ADR 0017): the summariser request is the
 *   conversation's own prompt with the compaction prompt appended; compaction when it pays (rent-or-buy,
 *   `CacheEconomy`); no verbatim tail; before a call on a cold cache, every turn's outputs but the current one's
 *   cleared; prune in batches (only when it frees enough, the cache is cold, or at a pivot);
 * - `pivot cache-aware, 2k tail`: the same keeping a 2,000-token tail.
 *
 * The model's answers are scripted (the generated steps); the summariser is a stand-in every strategy shares: pivot's
 * extractive summary of the head without its facts block (a model's prose), so summaries differ only by what a
 * strategy adds. Each call's prompt is a fixed system prompt and tool list, then the messages as JSON; tokens are the
 * project's estimate (characters / 4).
 *
 * The rules by default are the realistic ones (issue 30): a system prompt and tool schemas sized as the real OpenCode
 * capture sends them (~20k tokens, measured from the importer's real export; `--system N`), each summary billed as
 * 2,000 output tokens (`--summary-tokens N`), no break past the cache's 5 minutes between turns (`--breaks SHARE` for
 * that share of 8-minute breaks), OpenCode's Anthropic cache breakpoints (the system prompt and tools, and the last
 * two messages: after a compaction or a prune the system prompt is read from the cache, not written again), a
 * scripted model that, before a step, reads again in a call of its own every read of its turn the prompt no longer
 * shows (billed like any call; `--reread-in-step`: the earlier rule, the turn's first read only, in the step itself),
 * and a prompt over the context refused unbilled, as a provider does: the overflow is reported, pivot compacts, and
 * the step is asked again (`--send-over-window` bills it as if sent, the earlier rule). A strategy whose choices are
 * priced at the provider's rates (cache-aware: rent-or-buy, its summariser request form) runs once per provider at
 * that provider's rates, each run billed under its own rules (ADR 0047).
 *
 * Figures: billed in input-token equivalents (uncached input + reads and writes at the provider's multipliers + every
 * output at its output rate: the conversation's own, the same answers for every strategy but its re-reads, and each
 * summary's); the cache hit ratio (tokens read over all input tokens); calls whose prompt was over the context window
 * (a provider would refuse them; they are billed as if sent); the re-reads; the working set: the calls whose prompt
 * still holds the current turn's request and every output read earlier in the turn; and the artifacts of the whole
 * session (files, commands, errors, requests: `ArtifactCheck`) that the last call's prompt still names, with its
 * summaries' facts blocks and without them (the same rule for every strategy). Then where the Anthropic bill goes
 * (new content written, prefixes re-written, reads, summariser calls), the floor (the sessions' content written to the
 * cache once, plus the conversation's output; and the same with the system prompt and tools read on every call), and the sensitivity table: OpenCode against cache-aware with each
 * assumption varied alone.
 *
 * Then the same on the ten sessions the OpenCode oracle captured from the real OpenCode (its exports, replayed turn by
 * turn), in the 20,000-token window of its compaction scenarios.
 *
 * Run: `npm run bench:cost [-- --sessions N] [--turns N] [--seed N] [--system N] [--summary-tokens N] [--breaks S]`;
 * `--only generated|real`, `--quick` (none, opencode and cache-aware only), `--no-sensitivity`, and `--trace NAME`
 * (a real capture's compactions and refusals, call by call, under opencode and cache-aware, and what each summariser
 * call cost); `--send-over-window` and `--reread-in-step` for the earlier rules. The real set ends with a table per
 * capture (OpenCode against cache-aware). `--retention` prints, per session and run, where each compaction fell and the
 * artifacts the last prompt names without facts blocks.
 *
 * Retention (issue 30) is printed two ways: at the last prompt, and at every turn's start summed over the sessions
 * (`support/retention.ts`: the artifacts of the turns before, named by the turn's first prompt), each as sent, without
 * facts blocks, without facts blocks and the summaries' reach index (ADR 0060: what the sections alone name), and by
 * the verbatim messages only. A summary is billed at the larger of `--summary-tokens` and its own size. `--returns SHARE` makes that share of generated turns return to an
 * earlier turn's file (read again, and billed, when the prompt no longer shows it: `support/costSessions.ts`);
 * `--cache-aware-tail N` runs cache-aware with an N-token verbatim tail, `--no-rent-or-buy` without its rent-or-buy
 * compactions. For a diagnosis: `--strategies "opencode,pivot cache-aware"` runs only those (no floor without `none`:
 * the retention table and the bills only), `--misses FILE` writes each turn start's unnamed artifacts per run.
 */
import { appendFileSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { gunzipSync } from "node:zlib"
import {
  ArtifactCheck,
  CacheEconomy,
  Conversation,
  ExtractiveSummary,
  Facts,
  Ids,
  type Message,
  Pricing,
  type ModelMessage as Shown,
  Tokens,
} from "@pivot/core"
import { Import } from "@pivot/opencode"
import { ContextManager, type Options, Sessions, Summarizer, type SummarizerShape, WhatIf } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { type ModelMessage, pruneMessages } from "ai"
import { Clock, Effect, Layer } from "effect"
import { generate as generateSession, type Step, type Tool, type Turn } from "./support/costSessions.ts"
import { type Billed, type Provider, ProviderCache, RATES, TTL } from "./support/providerCache.ts"
import * as Retention from "./support/retention.ts"

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "4" },
    turns: { type: "string", default: "30" },
    seed: { type: "string", default: "20" },
    system: { type: "string" },
    "summary-tokens": { type: "string", default: String(CacheEconomy.DEFAULT_SUMMARY_TOKENS) },
    breaks: { type: "string", default: "0" },
    // Share of generated turns (from the third on) that come back to an earlier turn's file (issue 30): the file is
    // read again, and billed, when the prompt no longer shows it.
    returns: { type: "string", default: "0" },
    // Cache-aware's verbatim tail in tokens (default: its own, none): what keeping more verbatim costs and names.
    "cache-aware-tail": { type: "string" },
    // Cache-aware without its rent-or-buy compactions (only the hard limit and the turn-start threshold rule).
    "no-rent-or-buy": { type: "boolean", default: false },
    // Which sets to run (`generated`, `real`, or both), whether to print the sensitivity table, and a real capture
    // whose compactions to trace (each with the call it came before, the window, and why: the Decider's hard limit
    // or the strategy's own reason).
    only: { type: "string" },
    "no-sensitivity": { type: "boolean", default: false },
    // Only none (for the floor), opencode and cache-aware.
    quick: { type: "boolean", default: false },
    // Bill a prompt over the context as if sent (the earlier rule) instead of refusing it.
    "send-over-window": { type: "boolean", default: false },
    // Re-read a lost file in the step that lost it, at no call of its own (the earlier rule) instead of in a call.
    "reread-in-step": { type: "boolean", default: false },
    trace: { type: "string" },
    // Per session and run: where each compaction fell (turn and step, and why) and the artifacts the last prompt names
    // without facts blocks (which depend on how many turns follow the session's last compaction).
    retention: { type: "boolean", default: false },
    // A file to write, one JSON line per turn start and run, the artifacts the prompt does not name without facts
    // blocks (kind and text) and what the window held: a diagnostic of where two strategies' retention differs.
    misses: { type: "string" },
    // Only these strategies (comma-separated names), for a diagnostic run; the floor needs `none`.
    strategies: { type: "string" },
  },
})
const SESSIONS = Number(values.sessions)
const TURNS = Number(values.turns)
const SEED = Number(values.seed)

const MODEL = {
  ref: { providerId: "anthropic", modelId: "claude-sonnet-4-5" },
  limits: { context: 64_000, output: 8_000 },
}
// The system prompt and tool schemas, first in every prompt (what a provider cache can always keep), sized as the real
// OpenCode capture sends them: the importer's real v1.16 export, whose every call reported ~20.3k tokens besides the
// window (its recorded usage minus the window's estimate, `WhatIf.inputsOf`). `--system N` sizes it otherwise.
const REAL_EXPORT = join(
  import.meta.dirname,
  "../../packages/opencode/test/fixtures/real/stunning-memory.v1.16.0.export.shape.json",
)
const measuredOverhead = (): number => {
  const imported = Import.importText(readFileSync(REAL_EXPORT, "utf8"))
  if (imported._tag === "Failure") throw new Error(`${REAL_EXPORT}: ${imported.failure.message}`)
  return WhatIf.inputsOf("ses_real", imported.success.events).overhead
}
/** The bench's earlier system prompt and tools: ~1.5k tokens (the sensitivity table's "bench's" row). */
const SMALL_SYSTEM = 1_500
const systemOf = (tokens: number) => `You are a coding agent. ${"s".repeat(Math.max(0, tokens * 4 - 24))}`
const DEFAULT_OVERHEAD = values.system === undefined ? measuredOverhead() : Number(values.system)
const SUMMARY_TOKENS = Number(values["summary-tokens"])
const BREAKS = Number(values.breaks)
const RETURNS = Number(values.returns)
const SESSION = "ses_cost"
/** The previous turns whose requests and calls the retention table's estimate of a skeleton tail shows. */
const SKELETON_TURNS = 2

// ── Generated sessions (support/costSessions.ts) ────────────────────────────────────────────────────────────────

const generate = (seed: number, breaks: number = BREAKS): ReadonlyArray<Turn> =>
  generateSession(seed, { turns: TURNS, breaks, returns: RETURNS })

// ── Real OpenCode sessions ───────────────────────────────────────────────────────────────────────────────────────

/** The oracle's captures of the real OpenCode (packages/opencode/test/fixtures/oracle): each export as turns. */
const ORACLE = join(import.meta.dirname, "../../packages/opencode/test/fixtures/oracle")

/**
 * An OpenCode export as the turns it replays: each real user message (markers and synthetic ones left out) starts a
 * turn, and each assistant step (summaries left out) is a step with its tool calls as they ended. What OpenCode
 * compacted or pruned is not carried over: every strategy manages the same history its own way.
 */
const turnsOf = (file: string): ReadonlyArray<Turn> => {
  const imported = Import.importText(gunzipSync(readFileSync(file)).toString("utf8"))
  if (imported._tag === "Failure") throw new Error(`${file}: ${imported.failure.message}`)
  const turns: Array<{ request: string; at: number; steps: Array<Step> }> = []
  for (const event of imported.success.events) {
    if (event._tag === "UserMessageAdded") {
      const m = event.message
      const text = m.parts
        .flatMap((p) => (p.type === "text" && p.synthetic !== true && p.ignored !== true ? [p.text] : []))
        .join("\n")
      if (text.trim() === "" || m.parts.some((p) => p.type === "compaction")) continue
      turns.push({ request: text, at: m.createdAt, steps: [] })
    } else if (event._tag === "AssistantStepRecorded" && event.message.summary !== true && turns.length > 0) {
      const m = event.message
      const tools = m.parts.flatMap((p): Array<Tool> => {
        if (p.type !== "tool") return []
        const input = p.state.input as Record<string, unknown>
        if (p.state.status === "completed") return [{ tool: p.tool, input, output: p.state.output }]
        if (p.state.status === "error") return [{ tool: p.tool, input, output: "", error: p.state.error }]
        return []
      })
      const text = m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
      turns.at(-1)!.steps.push({ tools, text: text === "" ? "…" : text, at: m.completedAt ?? m.createdAt })
    }
  }
  return turns.filter((t) => t.steps.length > 0)
}

/** The system prompt the oracle's captures sent (kept as its length in each request; no tools), in tokens. */
const oracleSystem = (): number => {
  const file = readdirSync(ORACLE).find((f) => f.endsWith(".requests.json.gz"))!
  const data = JSON.parse(gunzipSync(readFileSync(join(ORACLE, file))).toString("utf8"))
  const first = (Array.isArray(data) ? data : data.requests)[0] as { system: ReadonlyArray<{ chars: number }> }
  return Tokens.estimateLength(first.system.reduce((n, s) => n + s.chars, 0))
}
const ORACLE_SYSTEM = oracleSystem()

const realSessions = (): ReadonlyArray<{ readonly name: string; readonly turns: ReadonlyArray<Turn> }> =>
  readdirSync(ORACLE)
    .filter((f) => f.endsWith(".export.json.gz"))
    .sort()
    .map((f) => ({ name: f.replace(".export.json.gz", ""), turns: turnsOf(join(ORACLE, f)) }))
    .filter((s) => s.turns.length > 0)

// ── The rules a run is billed under ──────────────────────────────────────────────────────────────────────────────

/** What a run assumes; the sensitivity table varies one field at a time. */
interface Rules {
  /** Tokens of system prompt and tool schemas before every call's messages. */
  readonly overhead: number
  /** A summary's billed output tokens; undefined: the extractive stand-in's own size. */
  readonly summaryTokens: number | undefined
  /** Share of turns after an 8-minute break. */
  readonly breaks: number
  /** The cache's time to live (ms) and Anthropic's write multiplier (1.25× for 5 minutes, 2× for an hour). */
  readonly ttl: number
  readonly anthropicWrite: number
  /** Cache-aware's verbatim tail budget; undefined: its default (none). */
  readonly cacheAwareTail: number | undefined
  /**
   * Whether a prompt over the context is refused (unbilled) and answered by a compaction, as a provider and OpenCode
   * do; false: billed as if sent (the bench's rule before 2 Dec 2026, which flatters a strategy that overflows).
   */
  readonly refuse: boolean
  /**
   * Whether a read the turn lost is read again in a call of its own before the step (what an agent pays to get it
   * back: every read of the turn the prompt no longer shows); false: the earlier rule, only the turn's first read, in
   * the step itself, its output landing in the next call's window at no call of its own (which flatters a strategy
   * that drops the working set).
   */
  readonly rereadCall: boolean
}

const REALISTIC: Rules = {
  overhead: DEFAULT_OVERHEAD,
  summaryTokens: SUMMARY_TOKENS,
  breaks: BREAKS,
  ttl: TTL,
  anthropicWrite: RATES.anthropic.write,
  cacheAwareTail: values["cache-aware-tail"] === undefined ? undefined : Number(values["cache-aware-tail"]),
  refuse: !values["send-over-window"],
  rereadCall: !values["reread-in-step"],
}

// ── Running a strategy ───────────────────────────────────────────────────────────────────────────────────────────

interface Request {
  readonly kind: "step" | "summary"
  readonly text: string
  readonly at: number
  /** Output tokens: a step's answer, a summary's text. Billed at the provider's output rate. */
  readonly output: number
  /** Where the request puts Anthropic's cache breakpoints (`breakpointsOf`). */
  readonly breakpoints: ReadonlyArray<number>
}

interface Run {
  readonly requests: ReadonlyArray<Request>
  readonly overWindow: number
  readonly retained: ArtifactCheck.Tally
  /** The same with the facts blocks left out of the last prompt. */
  readonly retainedBare: ArtifactCheck.Tally
  /** Calls, and those whose prompt held the turn's request and every output read earlier in the turn. */
  readonly workingSet: { readonly calls: number; readonly intact: number }
  readonly rereads: number
  /** Calls a provider refused (the prompt over the context), each answered by a compaction and asked again. */
  readonly refused: number
  /** With `--retention`: each compaction as `tTURNsSTEP:reason`, in order; else empty. */
  readonly compactions: ReadonlyArray<string>
  /**
   * Retention sampled at every turn's start (`Retention.sample`: the artifacts of the turns before it, named by the
   * first call's prompt), summed over the session; and the last prompt's, read the same four ways.
   */
  readonly turnStarts: Retention.Totals
  /**
   * At every turn's start, summed: the artifacts named without facts blocks were the previous `SKELETON_TURNS` turns'
   * requests and tool calls (no outputs) shown too, and those skeletons' tokens (an estimate of a kept tail with its
   * outputs cleared: what it would name and cost).
   */
  readonly skeleton: { readonly bare: number; readonly tokens: number }
  readonly last: Retention.Sample
  /** Returning turns (`Turn.returnsTo`): how many, and how many read the file again (the prompt no longer showed it). */
  readonly returned: { readonly turns: number; readonly reread: number }
  /** With `--misses`: each turn start's unnamed artifacts (bare) and the window's make-up; else empty. */
  readonly misses: ReadonlyArray<Miss>
}

/** One turn start's artifacts the prompt does not name without facts blocks (`--misses`). */
interface Miss {
  readonly turn: number
  readonly artifacts: number
  readonly missed: ReadonlyArray<{ readonly kind: string; readonly text: string }>
  /** The window's summaries (characters, without facts blocks) and verbatim messages. */
  readonly summaryChars: number
  readonly summary: string
  readonly verbatim: number
  readonly compactions: number
}

// A prompt as its blocks in order, one per line: an earlier prompt is a prefix of a later one when the later one only
// appends messages (what a cache breakpoint on the last message reuses).
const serialise = WhatIf.serialise

// Where OpenCode puts Anthropic's cache breakpoints (the system prompt and tools, the last two messages): the
// runtime's `WhatIf.breakpointsOf`, the one home of that rule, for the same serialisation.
const breakpointsOf = WhatIf.breakpointsOf

/** A text as it appears inside the serialised prompt (JSON-escaped, without the quotes). */
const inPrompt = (prompt: string, text: string) => prompt.includes(JSON.stringify(text).slice(1, -1))

/** The shared summariser stand-in: the extractive summary without its facts block, billed as a model call. */
const standIn = (clock: { now: number }, requests: Array<Request>, rules: Rules): SummarizerShape => ({
  summarize: (request) =>
    Effect.sync(() => {
      const text = Facts.strip(
        ExtractiveSummary.summarize({
          head: request.head,
          // The stand-in has no facts block: its room goes to the reach index, as in any summary without one (ADR 0065).
          factsBlock: false,
          ...(request.previousSummary === undefined ? {} : { previousSummary: request.previousSummary }),
        }),
      )
      const prompt = serialise(request.system, request.messages)
      // Billed at the rule's size, or at the text's own when it is larger: a bigger summary costs its output.
      const output = Math.max(rules.summaryTokens ?? 0, Tokens.estimate(text))
      const breakpoints = breakpointsOf(request.system, request.messages)
      requests.push({ kind: "summary", text: prompt, at: clock.now, output, breakpoints })
      return {
        text,
        usage: { ...Tokens.zero, input: Tokens.estimate(prompt), output },
        finish: "stop",
        model: request.model,
      }
    }),
})

/**
 * The window as sent (`messages`, rendered from the stored messages `sources`), each message marked when it is a
 * summary of `history`; `view` changes none but the AI SDK's prune, which compacts nothing.
 */
const windowOf = (
  sources: ReadonlyArray<string>,
  messages: ReadonlyArray<ModelMessage>,
  history: ReadonlyArray<Message.Message>,
): ReadonlyArray<Retention.Shown> => {
  if (messages.length !== sources.length)
    return messages.map((message) => ({ message: message as Shown.ModelMessage, summary: false }))
  const summaries = new Set(
    history.flatMap((m) => (m.role === "assistant" && m.summary === true ? [m.id as string] : [])),
  )
  return messages.map((message, i) => ({ message: message as Shown.ModelMessage, summary: summaries.has(sources[i]!) }))
}

/** Runs the session through pivot's runtime with `options`; `view` turns each prepared input into the prompt sent. */
const runPivot = (
  turns: ReadonlyArray<Turn>,
  model: typeof MODEL,
  options: (system: string) => Partial<Options>,
  pruneAfterTurn: boolean,
  rules: Rules,
  view: (messages: Array<ModelMessage>) => ReadonlyArray<ModelMessage> = (m) => m,
  trace?: (line: string) => void,
) => {
  const clock = { now: 0 }
  const compactions: Array<string> = []
  const retention = values.retention
  const system = systemOf(rules.overhead)
  const requests: Array<Request> = []
  let overWindow = 0
  let lastMessages: ReadonlyArray<ModelMessage> = []
  let lastSources: ReadonlyArray<string> = []
  let turnStarts = Retention.empty
  const skeleton = { bare: 0, tokens: 0 }
  const returned = { turns: 0, reread: 0 }
  const workingSet = { calls: 0, intact: 0 }
  const misses: Array<Miss> = []
  let summariesSoFar = 0
  let rereads = 0
  let traced = 0
  let lastTokens = 0
  let refused = 0
  // Only a strategy that compacts can answer a refusal; the others send what they send.
  const refuse = rules.refuse && options("").config?.auto !== false
  const program = Effect.gen(function* () {
    const cm = yield* ContextManager
    const sessions = yield* Sessions.Sessions
    let call = 0
    // Every message recorded so far, folded as the events come (the live state keeps only what the window can reach).
    let conversation = Conversation.initial
    let folded = 0
    const history = Effect.gen(function* () {
      const events = yield* sessions.events(SESSION)
      for (const e of events.slice(folded)) conversation = Conversation.evolve(conversation, e)
      folded = events.length
      return Conversation.messages(conversation) as ReadonlyArray<Message.Message>
    })
    /**
     * The prompt of the next call: the window prepared, and when a provider would refuse it (over the context), the
     * overflow reported — pivot compacts as OpenCode does on a provider's overflow (spec §2.5) — and prepared again.
     * Once: a prompt still over the context after that is sent, billed, and counted over the window.
     */
    const send = (where: string) =>
      Effect.gen(function* () {
        let prepared = yield* cm.prepare(SESSION)
        let messages = view(prepared.modelMessages as Array<ModelMessage>)
        let prompt = serialise(system, messages)
        if (refuse && Tokens.estimate(prompt) > model.limits.context) {
          refused++
          if (trace !== undefined)
            trace(`  refused: prompt ${Tokens.estimate(prompt)} tokens > ${model.limits.context}`)
          yield* cm.reportProviderError(SESSION, {
            error: new Error(`prompt is too long: ${Tokens.estimate(prompt)} tokens > ${model.limits.context} maximum`),
          })
          prepared = yield* cm.prepare(SESSION)
          messages = view(prepared.modelMessages as Array<ModelMessage>)
          prompt = serialise(system, messages)
        }
        if (trace !== undefined || retention) {
          const events = yield* sessions.events(SESSION)
          for (const e of events.slice(traced)) {
            if (e._tag === "OverflowDetected" && trace !== undefined)
              trace(`  overflow (${e.source}): ${e.tokens} tokens ≥ trigger ${e.trigger ?? "–"}`)
            if (e._tag === "CompactionRequested") {
              if (trace !== undefined)
                trace(`  compaction before ${where}: ${e.reason ?? "–"}, last prompt ${lastTokens} tokens`)
              compactions.push(`${where.replace(/^turn (\d+) step (\d+)\/.*$/, "t$1s$2")}:${e.reason ?? "–"}`)
            }
          }
          traced = events.length
        }
        return { messages, prompt, sources: prepared.messages.map((r) => r.sourceMessageId as string) }
      })
    /** Bills a call with `prompt` and records its step (its text and tool calls as they ended). */
    const answer = (
      messages: ReadonlyArray<ModelMessage>,
      sources: ReadonlyArray<string>,
      prompt: string,
      text: string,
      tools: ReadonlyArray<Tool>,
    ) =>
      Effect.gen(function* () {
        const tokens = Tokens.estimate(prompt)
        lastTokens = tokens
        if (tokens > model.limits.context) overWindow++
        const output = Tokens.estimate(text) + 40 * tools.length
        requests.push({
          kind: "step",
          text: prompt,
          at: clock.now,
          output,
          breakpoints: breakpointsOf(system, messages),
        })
        lastMessages = messages
        lastSources = sources
        call++
        yield* cm.recordAssistantStep(SESSION, {
          parts: [
            { type: "text", text },
            ...tools.map((t, i) => ({
              type: "tool" as const,
              callId: `call_${call}_${i}`,
              tool: t.tool,
              state:
                t.error === undefined
                  ? { status: "completed" as const, input: t.input, output: t.output, title: t.tool }
                  : { status: "error" as const, input: t.input, error: t.error },
            })),
          ],
          usage: { ...Tokens.zero, input: tokens, output },
          finish: tools.length === 0 ? "stop" : "tool-calls",
        })
      })
    for (const [n, turn] of turns.entries()) {
      clock.now = turn.at
      // The artifacts of the turns before this one, which the turn's first prompt is checked against.
      const before = yield* history
      yield* cm.recordUserMessage(SESSION, { text: turn.request })
      // What the turn has read so far: its working set, with its request.
      const reads: Array<Tool> = []
      const main = turn.steps[0]?.tools[0]
      for (const [s, step] of turn.steps.entries()) {
        clock.now = step.at
        const where = `turn ${n + 1} step ${s + 1}/${turn.steps.length} (${s === 0 ? "turn start" : "mid-turn"})`
        let { messages, prompt, sources } = yield* send(where)
        if (s === 0 && before.length > 0) {
          const window = windowOf(sources, messages, yield* history)
          turnStarts = Retention.add(turnStarts, Retention.sample(before, system, window))
          // What a kept tail of the previous turns' requests and calls (outputs cleared) would add, and its size.
          const kept = Retention.skeletonOf(before, SKELETON_TURNS)
          skeleton.bare += Retention.sample(before, system, [...window, ...kept.window]).bare
          skeleton.tokens += kept.tokens
          if (values.misses !== undefined) {
            const bare = Retention.textsOf(system, window).bare
            const checked = ArtifactCheck.check(before, bare)
            const summaries = window.filter((w) => w.summary).map((w) => Retention.withoutFacts(w.message))
            summariesSoFar = requests.filter((r) => r.kind === "summary").length
            misses.push({
              turn: n + 1,
              artifacts: checked.length,
              missed: checked.filter((a) => !a.named).map((a) => ({ kind: a.kind, text: a.text })),
              summaryChars: ArtifactCheck.shownText(summaries).length,
              summary: ArtifactCheck.shownText(summaries),
              verbatim: window.length - summaries.length,
              compactions: summariesSoFar,
            })
          }
        }
        if (trace !== undefined) trace(`turn ${n + 1} step ${s + 1}: prompt ${Tokens.estimate(prompt)} tokens`)
        const intact = (text: string) =>
          inPrompt(text, turn.request) && reads.every((r) => inPrompt(text, r.output)) ? 1 : 0
        workingSet.calls++
        workingSet.intact += intact(prompt)
        let tools = step.tools
        if (s === 0 && turn.returnsTo !== undefined) {
          // A returning turn: its first step needs the earlier file's content again; the scripted model reads it
          // (billed like any read) only when the prompt no longer shows it. Either way the turn works with it.
          returned.turns++
          if (!inPrompt(prompt, turn.returnsTo.output)) {
            returned.reread++
            tools = [turn.returnsTo, ...tools]
          } else reads.push(turn.returnsTo)
        }
        if (rules.rereadCall) {
          // The scripted model needs what its turn read: what the prompt no longer shows it reads again, in a call of
          // its own (the read calls are its answer), and the step is then asked with the files in view.
          const lost = reads.filter(
            (r, i) => !inPrompt(prompt, r.output) && reads.findIndex((o) => o.output === r.output) === i,
          )
          if (lost.length > 0) {
            rereads += lost.length
            yield* answer(messages, sources, prompt, "", lost)
            ;({ messages, prompt, sources } = yield* send(`${where}, after its re-read`))
            if (trace !== undefined)
              trace(
                `turn ${n + 1} step ${s + 1}, after re-reading ${lost.length}: prompt ${Tokens.estimate(prompt)} tokens`,
              )
            workingSet.calls++
            workingSet.intact += intact(prompt)
          }
        } else {
          // The earlier rule: only the turn's first read, and in the same step (its output lands in the next call).
          const lost = s > 0 && main !== undefined && main.tool === "read" && !inPrompt(prompt, main.output)
          if (lost) rereads++
          if (lost) tools = [main, ...step.tools]
        }
        yield* answer(messages, sources, prompt, step.text, tools)
        for (const t of tools) if (t.tool === "read" && t.error === undefined) reads.push(t)
      }
      if (pruneAfterTurn) yield* cm.prune(SESSION)
    }
    return yield* history
  })
  const layer = ContextManager.layer({ model, overheadTokens: rules.overhead, ...options(system) }).pipe(
    Layer.provide(Layer.succeed(Summarizer, standIn(clock, requests, rules))),
    Layer.provide(Ids.Ids.layerSequential),
    Layer.provideMerge(EventStore.layerMemory()),
  )
  // The session's own clock: the runtime stamps events with it, and cache-aware prune reads the cache's age from it.
  const sessionClock = WhatIf.clockOf(() => clock.now)
  const all = Effect.runSync(
    program.pipe(Effect.provide(layer), Effect.provideService(Clock.Clock, sessionClock)) as Effect.Effect<
      ReadonlyArray<Message.Message>
    >,
  )
  // What the last call's prompt shows the model (`ArtifactCheck.shownText`), as sent and without its facts blocks.
  const shown = (messages: ReadonlyArray<ModelMessage>) =>
    ArtifactCheck.shownText([{ role: "system", content: system }, ...(messages as ReadonlyArray<Shown.ModelMessage>)])
  const retained = ArtifactCheck.tally(ArtifactCheck.check(all, shown(lastMessages)))
  const retainedBare = ArtifactCheck.tally(
    ArtifactCheck.check(
      all,
      shown(lastMessages.map((m) => Retention.withoutFacts(m as Shown.ModelMessage) as ModelMessage)),
    ),
  )
  // The last prompt read the four ways of the turn-start samples; its first two are the figures above, checked.
  const last = Retention.sample(all, system, windowOf(lastSources, lastMessages, all))
  if (last.named !== retained.named || last.bare !== retainedBare.named)
    throw new Error(
      `retention: the last prompt's sample (${last.named}, ${last.bare}) differs from its check (${retained.named}, ${retainedBare.named})`,
    )
  return {
    requests,
    overWindow,
    retained,
    retainedBare,
    workingSet,
    rereads,
    refused,
    compactions,
    turnStarts,
    skeleton,
    last,
    returned,
    misses,
  } satisfies Run
}

const aiSdkPrune = (messages: Array<ModelMessage>) =>
  pruneMessages({
    messages,
    reasoning: "before-last-message",
    toolCalls: "before-last-2-messages",
    emptyMessages: "remove",
  })

type Window = typeof MODEL
interface Strategy {
  readonly name: string
  /**
   * Whether its decisions depend on the provider's rates (cache-aware's rent-or-buy and its summariser request form,
   * ADR 0047): it is then run once per provider, at that provider's rates, and each run billed under its rules.
   */
  readonly byProvider?: boolean
  readonly run: (
    turns: ReadonlyArray<Turn>,
    model: Window,
    rules: Rules,
    provider: Provider,
    trace?: (line: string) => void,
  ) => Run
}
/** The multipliers a provider bills with under `rules` (what a rate-aware strategy prices its choices with). */
const ratesOf = (provider: Provider, rules: Rules): CacheEconomy.Multipliers => ({
  read: RATES[provider].read,
  write: writeRate(provider, rules),
  output: Pricing.PROVIDER_RATES[provider]!.output,
})
const OPENCODE: Strategy = {
  name: "opencode",
  run: (t, m, r, _provider, trace) =>
    runPivot(t, m, () => ({ config: { prune: true }, factsBlock: false }), true, r, undefined, trace),
}
const CACHE_AWARE: Strategy = {
  name: "pivot cache-aware",
  byProvider: true,
  run: (t, m, r, provider, trace) =>
    runPivot(
      t,
      m,
      (system) => ({
        cacheAware: { system, rates: ratesOf(provider, r), ...(values["no-rent-or-buy"] ? { rentOrBuy: false } : {}) },
        config: {
          prune: true,
          ...(r.cacheAwareTail === undefined ? {} : { preserve_recent_tokens: r.cacheAwareTail }),
        },
      }),
      true,
      r,
      undefined,
      trace,
    ),
}
const STRATEGIES: ReadonlyArray<Strategy> = [
  { name: "none", run: (t, m, r) => runPivot(t, m, () => ({ config: { auto: false, prune: false } }), false, r) },
  OPENCODE,
  {
    name: "ai-sdk prune",
    run: (t, m, r) => runPivot(t, m, () => ({ config: { auto: false, prune: false } }), false, r, aiSdkPrune),
  },
  { name: "pivot", run: (t, m, r) => runPivot(t, m, () => ({}), false, r) },
  CACHE_AWARE,
  {
    name: "pivot cache-aware, 2k tail",
    byProvider: true,
    run: (t, m, r, provider) =>
      runPivot(
        t,
        m,
        (system) => ({
          cacheAware: { system, rates: ratesOf(provider, r) },
          config: { prune: true, preserve_recent_tokens: 2_000 },
        }),
        true,
        r,
      ),
  },
]

// ── Billing and the table ────────────────────────────────────────────────────────────────────────────────────────

/**
 * A strategy's figures over the sessions. Those in a `Record<Provider, number>` come from the run billed under that
 * provider (the same run for both but for a `byProvider` strategy); the others from the Anthropic run.
 */
interface Totals {
  calls: number
  summaries: Record<Provider, number>
  overWindow: number
  rereads: number
  refused: Record<Provider, number>
  billed: Record<Provider, number>
  /** Of `billed`: the summariser calls (input and output), the cache writes of conversation calls, the outputs. */
  summary: Record<Provider, number>
  writes: Record<Provider, number>
  outputs: Record<Provider, number>
  /** Of `writes`: what extended the previous call's prompt (new content), and the rest (re-written). */
  fresh: Record<Provider, number>
  read: Record<Provider, number>
  total: Record<Provider, number>
  named: Record<Provider, number>
  namedBare: Record<Provider, number>
  artifacts: number
  workingCalls: number
  workingIntact: Record<Provider, number>
  /** Retention at every turn's start and at the last prompt, summed over the sessions (`Retention.Totals`). */
  turnStarts: Record<Provider, Retention.Totals>
  skeletonBare: Record<Provider, number>
  skeletonTokens: Record<Provider, number>
  last: Record<Provider, Retention.Totals>
  /** Returning turns, and those that read the file again. */
  returnedTurns: number
  reread: Record<Provider, number>
}

/** One session's bill, summariser calls and refusals under each provider (the per-capture table). */
interface PerSession {
  readonly billed: Record<Provider, number>
  readonly summaries: Record<Provider, number>
  readonly refused: Record<Provider, number>
}

const writeRate = (provider: Provider, rules: Rules) =>
  provider === "anthropic" ? rules.anthropicWrite : RATES[provider].write

const bill = (requests: ReadonlyArray<Request>, provider: Provider, rules: Rules) => {
  const cache = new ProviderCache(provider, rules.ttl)
  const output = Pricing.PROVIDER_RATES[provider]!.output
  const write = writeRate(provider, rules)
  let billed = 0
  let read = 0
  let summary = 0
  let writes = 0
  let outputs = 0
  let fresh = 0
  let previous: Request | undefined
  for (const r of requests) {
    const b: Billed = cache.bill(r.text, r.at, r.breakpoints)
    if (process.env.DBGBILL === provider)
      console.log(
        `BILL ${r.kind} ${Tokens.estimate(r.text)} in ${b.input} read ${b.cacheRead} write ${b.cacheWrite} out ${r.output}`,
      )
    const input = b.input + b.cacheRead * RATES[provider].read + b.cacheWrite * write
    const eq = input + r.output * output
    billed += eq
    read += b.cacheRead
    if (r.kind === "summary") summary += eq
    else {
      writes += b.input + b.cacheWrite * write
      outputs += r.output * output
      // New content: what this prompt adds to the previous conversation call's, when it extends it.
      const added =
        previous !== undefined && r.text.startsWith(previous.text)
          ? Tokens.estimate(r.text) - Tokens.estimate(previous.text)
          : 0
      // Anthropic writes what it caches (at `write`); OpenAI bills what it did not read as plain input.
      fresh += provider === "anthropic" ? Math.min(added, b.cacheWrite) * write : Math.min(added, b.input)
      previous = r
    }
  }
  return { billed, read, summary, writes, outputs, fresh }
}

/**
 * What no strategy can avoid: every token of the session sent once and written to the cache once (the `none` run
 * only appends, so its last prompt holds the session's whole content), at the provider's write rate, and the
 * conversation's own output (`content`); and the same plus the system prompt and tools every call reads from the
 * cache (`fixed`: they are the same on every call, so no compaction or prune sheds them).
 */
const floorOf = (run: Run, provider: Provider, rules: Rules) => {
  const steps = run.requests.filter((r) => r.kind === "step")
  const output = steps.reduce((n, r) => n + r.output, 0) * Pricing.PROVIDER_RATES[provider]!.output
  const content = Tokens.estimate(steps.at(-1)?.text ?? "") * writeRate(provider, rules) + output
  return { content, fixed: content + steps.length * rules.overhead * RATES[provider].read }
}

const PROVIDERS = ["anthropic", "openai"] as const

/** Runs `strategies` on `sessions` under `rules`; answers the totals per strategy and the floor. */
const runAll = (
  sessions: ReadonlyArray<ReadonlyArray<Turn>>,
  model: Window,
  rules: Rules,
  strategies: ReadonlyArray<Strategy>,
) => {
  const totals = new Map<string, Totals>()
  // Each session's bill and compactions per strategy, in the sessions' order (the per-capture table).
  const perSession: Array<Map<string, PerSession>> = []
  const floor: Record<Provider, number> = { anthropic: 0, openai: 0 }
  const fixedFloor: Record<Provider, number> = { anthropic: 0, openai: 0 }
  const zero = (): Record<Provider, number> => ({ anthropic: 0, openai: 0 })
  for (const turns of sessions) {
    const own = new Map<string, PerSession>()
    perSession.push(own)
    for (const strategy of strategies) {
      // A strategy that prices its choices at the provider's rates runs once per provider; the others once.
      const first = strategy.run(turns, model, rules, "anthropic")
      const runs: Record<Provider, Run> = {
        anthropic: first,
        openai: strategy.byProvider === true ? strategy.run(turns, model, rules, "openai") : first,
      }
      if (values.misses !== undefined)
        for (const provider of strategy.byProvider === true ? PROVIDERS : (["anthropic"] as const))
          for (const m of runs[provider].misses)
            appendFileSync(
              values.misses,
              `${JSON.stringify({ session: perSession.length, strategy: strategy.name, provider, ...m })}\n`,
            )
      if (values.retention)
        for (const provider of strategy.byProvider === true ? PROVIDERS : (["anthropic"] as const)) {
          const r = runs[provider]
          console.log(
            `retention · session ${perSession.length} · ${strategy.name}${strategy.byProvider === true ? ` at ${provider}'s rates` : ""}: last prompt names ${r.retainedBare.named}/${r.retainedBare.total} without facts blocks; every turn's start ${r.turnStarts.bare}/${r.turnStarts.artifacts} (${r.turnStarts.samples} turns); returning turns ${r.returned.reread}/${r.returned.turns} read again; compactions ${r.compactions.join(" ") || "none"}`,
          )
        }
      const mine: PerSession = { billed: zero(), summaries: zero(), refused: zero() }
      own.set(strategy.name, mine)
      const t = totals.get(strategy.name) ?? {
        calls: 0,
        summaries: zero(),
        overWindow: 0,
        rereads: 0,
        refused: zero(),
        billed: zero(),
        summary: zero(),
        writes: zero(),
        outputs: zero(),
        fresh: zero(),
        read: zero(),
        total: zero(),
        named: zero(),
        namedBare: zero(),
        artifacts: 0,
        workingCalls: 0,
        workingIntact: zero(),
        turnStarts: { anthropic: Retention.empty, openai: Retention.empty },
        skeletonBare: zero(),
        skeletonTokens: zero(),
        last: { anthropic: Retention.empty, openai: Retention.empty },
        returnedTurns: 0,
        reread: zero(),
      }
      const run = runs.anthropic
      t.calls += run.requests.filter((r) => r.kind === "step").length
      t.overWindow += run.overWindow
      t.rereads += run.rereads
      t.artifacts += run.retained.total
      t.workingCalls += run.workingSet.calls
      t.returnedTurns += run.returned.turns
      for (const provider of PROVIDERS) {
        const mineRun = runs[provider]
        const summaries = mineRun.requests.filter((r) => r.kind === "summary").length
        mine.summaries[provider] = summaries
        mine.refused[provider] = mineRun.refused
        t.summaries[provider] += summaries
        t.refused[provider] += mineRun.refused
        t.total[provider] += mineRun.requests.reduce((n, r) => n + Tokens.estimate(r.text), 0)
        t.named[provider] += mineRun.retained.named
        t.namedBare[provider] += mineRun.retainedBare.named
        t.workingIntact[provider] += mineRun.workingSet.intact
        t.turnStarts[provider] = Retention.add(t.turnStarts[provider], mineRun.turnStarts)
        t.last[provider] = Retention.add(t.last[provider], mineRun.last)
        t.skeletonBare[provider] += mineRun.skeleton.bare
        t.skeletonTokens[provider] += mineRun.skeleton.tokens
        t.reread[provider] += mineRun.returned.reread
        const b = bill(mineRun.requests, provider, rules)
        mine.billed[provider] = b.billed
        t.billed[provider] += b.billed
        t.summary[provider] += b.summary
        t.writes[provider] += b.writes
        t.outputs[provider] += b.outputs
        t.read[provider] += b.read
        t.fresh[provider] += b.fresh
      }
      if (strategy.name === "none")
        for (const provider of PROVIDERS) {
          const f = floorOf(run, provider, rules)
          floor[provider] += f.content
          fixedFloor[provider] += f.fixed
        }
      totals.set(strategy.name, t)
    }
  }
  return { totals, floor, fixedFloor, perSession }
}

/** A figure of a strategy's two runs: one number when they agree, else the Anthropic run's / the OpenAI run's. */
const both = (r: Record<Provider, number>, f: (n: number) => string = String) =>
  r.anthropic === r.openai ? f(r.anthropic) : `${f(r.anthropic)} / ${f(r.openai)}`

const k = (n: number) => `${(n / 1000).toFixed(0)}k`
const k1 = (n: number) => `${(n / 1000).toFixed(1)}k`
const pct = (a: number, b: number) => (b === 0 ? "–" : `${Math.round((a / b) * 100)}%`)
const change = (a: number, b: number) => {
  if (b === 0) return "–"
  const c = Math.round((a / b - 1) * 100)
  return c === 0 ? "±0%" : `${c > 0 ? "+" : "−"}${Math.abs(c)}%`
}

/**
 * Artifact retention two ways (issue 30): the last prompt's, and at every turn's start summed over the sessions
 * (`Retention`: the artifacts of the turns before, named by the turn's first prompt) — each as sent, without facts
 * blocks, and verbatim only (no summary); and the returning turns that had to read their file again.
 */
const retentionTable = (totals: ReadonlyMap<string, Totals>) => {
  console.log(
    "\nArtifact retention (named: as sent; bare: without facts blocks; unindexed: bare and without the summaries' reach index, ADR 0060; verbatim: the messages kept verbatim only):\n",
  )
  console.log(
    `| strategy | last prompt: named | bare | unindexed | verbatim | every turn's start: named | bare | unindexed | verbatim | bare, with the ${SKELETON_TURNS} previous turns' calls | their tokens per turn | returning turns read again |`,
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const [name, t] of totals) {
    const cell = (r: Record<Provider, Retention.Totals>, f: (x: Retention.Totals) => number) => {
      const shares = {
        anthropic: Retention.share(f(r.anthropic), r.anthropic),
        openai: Retention.share(f(r.openai), r.openai),
      }
      return `${both({ anthropic: f(r.anthropic), openai: f(r.openai) })} (${shares.anthropic === shares.openai ? shares.anthropic : `${shares.anthropic} / ${shares.openai}`})`
    }
    console.log(
      `| ${name} | ${cell(t.last, (x) => x.named)} | ${cell(t.last, (x) => x.bare)} | ${cell(t.last, (x) => x.unindexed)} | ${cell(t.last, (x) => x.verbatim)} | ${cell(t.turnStarts, (x) => x.named)} | ${cell(t.turnStarts, (x) => x.bare)} | ${cell(t.turnStarts, (x) => x.unindexed)} | ${cell(t.turnStarts, (x) => x.verbatim)} | ${both(t.skeletonBare)} (${Retention.share(t.skeletonBare.anthropic, t.turnStarts.anthropic)}${t.skeletonBare.anthropic === t.skeletonBare.openai ? "" : ` / ${Retention.share(t.skeletonBare.openai, t.turnStarts.openai)}`}) | ${both({ anthropic: t.skeletonTokens.anthropic / Math.max(1, t.turnStarts.anthropic.samples), openai: t.skeletonTokens.openai / Math.max(1, t.turnStarts.openai.samples) }, (n) => n.toFixed(0))} | ${both(t.reread)}/${t.returnedTurns} |`,
    )
  }
  const any = [...totals.values()][0]
  if (any !== undefined)
    console.log(
      `\nOf ${any.last.anthropic.artifacts} artifacts at the last prompts; ${any.turnStarts.anthropic.artifacts} summed over ${any.turnStarts.anthropic.samples} turn starts.`,
    )
}

/** Runs every strategy on `sessions` in `model`'s window and prints the tables. */
const compare = (
  label: string,
  sessions: ReadonlyArray<ReadonlyArray<Turn>>,
  model: Window,
  rules: Rules,
  names?: ReadonlyArray<string>,
) => {
  const only = values.strategies?.split(",").map((n) => n.trim())
  const strategies = values.quick
    ? STRATEGIES.filter((s) => ["none", OPENCODE.name, CACHE_AWARE.name].includes(s.name))
    : STRATEGIES
  if (only !== undefined) {
    // A diagnostic run: no floor without `none`, so the retention table only.
    const { totals } = runAll(
      sessions,
      model,
      rules,
      strategies.filter((s) => only.includes(s.name)),
    )
    for (const [name, t] of totals)
      console.log(`${name}: billed ${k(t.billed.anthropic)} / ${k(t.billed.openai)}, summaries ${both(t.summaries)}`)
    retentionTable(totals)
    return
  }
  const { totals, floor, fixedFloor, perSession } = runAll(sessions, model, rules, strategies)
  const base = totals.get("opencode")!
  const usable = model.limits.context - model.limits.output
  console.log(
    `bench:cost · ${label} · window ${model.limits.context.toLocaleString("en-US")} (usable ${usable.toLocaleString("en-US")}) · system prompt and tools ~${rules.overhead.toLocaleString("en-US")} tokens · summaries billed as ${rules.summaryTokens === undefined ? "the stand-in's own size" : `${rules.summaryTokens.toLocaleString("en-US")} output tokens`} · ${pct(rules.breaks, 1)} of turns after an 8-minute break\n`,
  )
  console.log(
    "| strategy | calls | summary calls | refused | over window | re-reads | input tokens sent | Anthropic billed (eq) | vs opencode | hit ratio | OpenAI billed (eq) | vs opencode | hit ratio | working set intact | artifacts named | without facts blocks |",
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const [name, t] of totals)
    console.log(
      `| ${name} | ${t.calls} | ${both(t.summaries)} | ${both(t.refused)} | ${t.overWindow} | ${t.rereads} | ${both(t.total, k)} | ${k(t.billed.anthropic)} | ${change(t.billed.anthropic, base.billed.anthropic)} | ${pct(t.read.anthropic, t.total.anthropic)} | ${k(t.billed.openai)} | ${change(t.billed.openai, base.billed.openai)} | ${pct(t.read.openai, t.total.openai)} | ${both(t.workingIntact)}/${t.workingCalls} (${pct(t.workingIntact.anthropic, t.workingCalls)}) | ${both(t.named)}/${t.artifacts} (${pct(t.named.anthropic, t.artifacts)}) | ${both(t.namedBare)}/${t.artifacts} (${pct(t.namedBare.anthropic, t.artifacts)}) |`,
    )
  retentionTable(totals)
  console.log("\nWhere the Anthropic bill goes (input-token equivalents):\n")
  console.log(
    "| strategy | conversation output (5×) | summariser calls (input, output 5×) | cache writes: new content | cache writes: prefix re-written | cache reads (0.1×) |",
  )
  console.log("|---|---:|---:|---:|---:|---:|")
  for (const [name, t] of totals) {
    const reads = t.billed.anthropic - t.summary.anthropic - t.writes.anthropic - t.outputs.anthropic
    console.log(
      `| ${name} | ${k(t.outputs.anthropic)} | ${k(t.summary.anthropic)} | ${k(t.fresh.anthropic)} | ${k(t.writes.anthropic - t.fresh.anthropic)} | ${k(reads)} |`,
    )
  }
  // How far each strategy is above the floor with the fixed prompt, and where the difference is.
  console.log(
    "\nAbove the floor (the content written once, the conversation's output, the system prompt and tools read by every call), Anthropic / OpenAI, input-token equivalents:\n",
  )
  console.log(
    "| strategy | billed | above the floor | conversation reads (beyond the fixed prompt's) | summariser calls | prefixes re-written | new content and output against the floor's |",
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  for (const [name, t] of totals) {
    const cell = (f: (p: Provider) => number) => PROVIDERS.map((p) => k(f(p))).join(" / ")
    const fixedReads = (p: Provider) => t.calls * rules.overhead * RATES[p].read
    const reads = (p: Provider) => t.billed[p] - t.summary[p] - t.writes[p] - t.outputs[p] - fixedReads(p)
    console.log(
      `| ${name} | ${cell((p) => t.billed[p])} | ${cell((p) => t.billed[p] - fixedFloor[p])} | ${cell(reads)} | ${cell((p) => t.summary[p])} | ${cell((p) => t.writes[p] - t.fresh[p])} | ${cell((p) => t.fresh[p] + t.outputs[p] - floor[p])} |`,
    )
  }
  if (names !== undefined) {
    // Each session alone: OpenCode against cache-aware, their compactions (summariser calls) and refusals.
    console.log("\nEach session, OpenCode → cache-aware (Anthropic billed, OpenAI billed, summary calls, refused):\n")
    console.log("| session | opencode | cache-aware | Anthropic | OpenAI | summary calls | refused |")
    console.log("|---|---:|---:|---:|---:|---:|---:|")
    for (const [i, own] of perSession.entries()) {
      const o = own.get(OPENCODE.name)!
      const c = own.get(CACHE_AWARE.name)!
      console.log(
        `| ${names[i]} | ${k1(o.billed.anthropic)} / ${k1(o.billed.openai)} | ${k1(c.billed.anthropic)} / ${k1(c.billed.openai)} | ${change(c.billed.anthropic, o.billed.anthropic)} | ${change(c.billed.openai, o.billed.openai)} | ${both(o.summaries)} → ${both(c.summaries)} | ${both(o.refused)} → ${both(c.refused)} |`,
      )
    }
  }
  // The best of the strategies that compact (none and the AI SDK's prune are not strategies a long session can use).
  const candidates = [...totals].filter(([name]) => name.startsWith("pivot"))
  for (const provider of PROVIDERS) {
    const [name, best] = candidates.reduce((a, b) => (b[1].billed[provider] < a[1].billed[provider] ? b : a))
    const saving = 1 - best.billed[provider] / base.billed[provider]
    const floorSaving = 1 - fixedFloor[provider] / base.billed[provider]
    console.log(
      `\n${provider === "anthropic" ? "Anthropic" : "OpenAI"}: the best built-in strategy, ${name}, bills ${change(best.billed[provider], base.billed[provider])} against opencode: ${saving >= 0.4 ? "reaches" : "does not reach"} −40%. Floor (the content written once, plus the conversation's output): ${k(floor[provider])}, ${change(floor[provider], base.billed[provider])} against opencode; with the system prompt and tools read from the cache on every call (no strategy sheds them): ${k(fixedFloor[provider])}, ${change(fixedFloor[provider], base.billed[provider])}${floorSaving < 0.4 ? ": −40% is out of reach of any strategy under these rules" : ""}.`,
    )
  }
  console.log("")
}

/**
 * The sensitivity table: OpenCode against cache-aware on the generated sessions, the realistic rules with one
 * assumption varied at a time.
 */
const sensitivity = (seeds: ReadonlyArray<number>, model: Window) => {
  const rows: ReadonlyArray<readonly [string, Rules]> = [
    ["realistic (the default rules)", REALISTIC],
    [
      `the bench's earlier system prompt and tools (~${SMALL_SYSTEM.toLocaleString("en-US")} tokens)`,
      { ...REALISTIC, overhead: SMALL_SYSTEM },
    ],
    ["summaries billed at the stand-in's size (~0.7k)", { ...REALISTIC, summaryTokens: undefined }],
    ["20% of turns after an 8-minute break", { ...REALISTIC, breaks: 0.2 }],
    ["Anthropic's 1-hour cache (2× write, 60-minute TTL)", { ...REALISTIC, ttl: 60 * 60_000, anthropicWrite: 2 }],
    ["cache-aware keeps OpenCode's 8k tail", { ...REALISTIC, cacheAwareTail: 8_000 }],
  ]
  console.log("Sensitivity (generated sessions): OpenCode → cache-aware, each assumption varied alone\n")
  console.log(
    "| rule | Anthropic | OpenAI | cache-aware's working set intact | artifacts named without facts (opencode / cache-aware) | at every turn's start (opencode / cache-aware, Anthropic's / OpenAI's rates) |",
  )
  console.log("|---|---:|---:|---:|---:|---:|")
  for (const [label, rules] of rows) {
    const sessions = seeds.map((seed) => generate(seed, rules.breaks))
    const { totals } = runAll(sessions, model, rules, [OPENCODE, CACHE_AWARE])
    const o = totals.get(OPENCODE.name)!
    const c = totals.get(CACHE_AWARE.name)!
    console.log(
      `| ${label} | ${change(c.billed.anthropic, o.billed.anthropic)} | ${change(c.billed.openai, o.billed.openai)} | ${pct(c.workingIntact.anthropic, c.workingCalls)} | ${pct(o.namedBare.anthropic, o.artifacts)} / ${pct(c.namedBare.anthropic, c.artifacts)} | ${Retention.share(o.turnStarts.anthropic.bare, o.turnStarts.anthropic)} / ${Retention.share(c.turnStarts.anthropic.bare, c.turnStarts.anthropic)}, ${Retention.share(c.turnStarts.openai.bare, c.turnStarts.openai)} |`,
    )
  }
  console.log("")
}

/** The window the oracle's compaction scenarios run OpenCode in (a 20k context). */
const ORACLE_WINDOW: Window = {
  ref: MODEL.ref,
  limits: { context: 20_000, output: 4_000 },
}

const seeds = Array.from({ length: SESSIONS }, (_, s) => SEED * 1_000 + s)
const REAL_RULES: Rules = { ...REALISTIC, overhead: ORACLE_SYSTEM }
if (values.trace !== undefined) {
  // One real capture's decisions, call by call, under OpenCode and cache-aware.
  const session = realSessions().find((r) => r.name === values.trace)
  if (session === undefined) throw new Error(`no capture named ${values.trace}`)
  for (const strategy of [OPENCODE, CACHE_AWARE]) {
    console.log(`\n${strategy.name} on ${session.name}:`)
    // What each summariser call cost, and the run's bill, under each provider's rules (input-token equivalents); a
    // strategy that prices its choices at the provider's rates is traced once per provider.
    let run: Run | undefined
    for (const provider of PROVIDERS) {
      if (run === undefined || strategy.byProvider === true) {
        console.log(`  (run at ${provider}'s rates)`)
        run = strategy.run(session.turns, ORACLE_WINDOW, REAL_RULES, provider, (line) => console.log(line))
      }
      const requests = run.requests
      const summaries = requests.flatMap((r, i) =>
        r.kind === "summary" ? [k1(bill(requests.slice(0, i + 1), provider, REAL_RULES).summary)] : [],
      )
      const b = bill(requests, provider, REAL_RULES)
      console.log(
        `  ${provider}: billed ${k1(b.billed)}; summariser calls ${k1(b.summary)} (cumulative after each: ${summaries.join(", ") || "none"})`,
      )
    }
  }
} else {
  if (values.only !== "real") {
    compare(
      `${SESSIONS} generated sessions × ${TURNS} turns (seed ${SEED})`,
      seeds.map((seed) => generate(seed)),
      MODEL,
      REALISTIC,
    )
    if (!values["no-sensitivity"]) sensitivity(seeds, MODEL)
  }
  if (values.only !== "generated") {
    const real = realSessions()
    // The oracle's captures ran OpenCode with a ~0.5k system prompt and no tools in a 20k window: a 20k overhead would
    // not fit, so they keep theirs (what they sent).
    compare(
      `${real.length} real OpenCode sessions (${real.map((r) => r.name).join(", ")}; the oracle's captures, their own ~0.5k system prompt)`,
      real.map((r) => r.turns),
      ORACLE_WINDOW,
      REAL_RULES,
      real.map((r) => r.name),
    )
  }
}
