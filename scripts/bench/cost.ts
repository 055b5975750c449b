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
 * Figures: billed input in input-token equivalents (uncached input + reads and writes at the provider's multipliers),
 * summariser calls included with each summary's output at the provider's output rate (a strategy that compacts more
 * pays for it), the conversation's output left out (the same answers for every strategy); the cache hit
 * ratio (tokens read over all input tokens); calls whose prompt was over the context window (a provider would refuse
 * them; they are billed as if sent); and the artifacts of the whole session (files, commands, errors, requests:
 * `ArtifactCheck`) that the last call's prompt still names. Then where the Anthropic bill goes (new content written,
 * prefixes re-written, reads, summariser calls) and the floor: the sessions' content written to the cache once.
 *
 * Then the same on the ten sessions the OpenCode oracle captured from the real OpenCode (its exports, replayed turn by
 * turn), in the 20,000-token window of its compaction scenarios.
 *
 * Run: `npm run bench:cost [-- --sessions N] [--turns N] [--seed N]`.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { gunzipSync } from "node:zlib"
import { ArtifactCheck, Conversation, ExtractiveSummary, Facts, Ids, type Message, Pricing, Tokens } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { ContextManager, type Options, Sessions, Summarizer, type SummarizerShape } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { type ModelMessage, pruneMessages } from "ai"
import { Clock, Effect, Layer } from "effect"
import { type Billed, equivalents, type Provider, ProviderCache, RATES } from "./support/providerCache.ts"

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "4" },
    turns: { type: "string", default: "30" },
    seed: { type: "string", default: "20" },
  },
})
const SESSIONS = Number(values.sessions)
const TURNS = Number(values.turns)
const SEED = Number(values.seed)

const MODEL = {
  ref: { providerId: "anthropic", modelId: "claude-sonnet-4-5" },
  limits: { context: 64_000, output: 8_000 },
}
// A fixed system prompt and tool list, first in every prompt (what a provider cache can always keep).
const SYSTEM = `You are a coding agent. ${"Follow the repository's conventions and keep changes small. ".repeat(60)}\nTools: ${JSON.stringify(
  ["read", "edit", "write", "bash", "grep"].map((name) => ({
    name,
    description: `${name} ${"a file or a command; returns its output. ".repeat(8)}`,
    parameters: { type: "object", properties: { filePath: { type: "string" }, command: { type: "string" } } },
  })),
)}`
const OVERHEAD = Tokens.estimate(SYSTEM)
const SESSION = "ses_cost"

// ── Generated sessions ───────────────────────────────────────────────────────────────────────────────────────────

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

interface Tool {
  readonly tool: string
  readonly input: Record<string, unknown>
  readonly output: string
  readonly error?: string
}
interface Step {
  readonly tools: ReadonlyArray<Tool>
  readonly text: string
  readonly at: number
}
interface Turn {
  readonly request: string
  readonly at: number
  readonly steps: ReadonlyArray<Step>
}

const AREAS = ["parser", "router", "limiter", "scheduler", "cache", "billing", "auth", "exporter", "indexer", "mailer"]
const VERBS = ["Fix", "Refactor", "Speed up", "Document", "Add tests for", "Harden"]

const generate = (seed: number): ReadonlyArray<Turn> => {
  const random = mulberry32(seed)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!
  const code = (file: string, chars: number) => {
    const lines: Array<string> = []
    for (let n = 0; lines.join("\n").length < chars; n++)
      lines.push(`export const ${file.replace(/\W/g, "_")}_${n} = (x${n}: number) => x${n} * ${n} // ${file}`)
    return lines.join("\n")
  }
  let at = 1_767_000_000_000
  const turns: Array<Turn> = []
  for (let t = 0; t < TURNS; t++) {
    const area = pick(AREAS)
    const file = `src/${area}/${area}${t}.ts`
    // Between turns: mostly a minute or two, sometimes a break longer than the cache's 5 minutes.
    at += random() < 0.2 ? 8 * 60_000 : 60_000 + Math.floor(random() * 120_000)
    const request = `${pick(VERBS)} the ${area} module: ${file} mishandles case${t}x${seed}; keep the public API of ${area}${t}`
    const steps: Array<Step> = []
    const count = 2 + Math.floor(random() * 4)
    for (let s = 0; s < count; s++) {
      at += 10_000 + Math.floor(random() * 30_000)
      const last = s === count - 1
      const tools: Array<Tool> = last
        ? []
        : [
            {
              tool: "read",
              input: { filePath: s === 0 ? file : `src/${area}/helper${t}_${s}.ts` },
              output: code(file, 2_000 + Math.floor(random() * 14_000)),
            },
            ...(random() < 0.6
              ? [
                  {
                    tool: "edit",
                    input: { filePath: file, oldString: `case${t}`, newString: `case${t}Fixed` },
                    output: "Edit applied.",
                  },
                ]
              : []),
            random() < 0.15
              ? {
                  tool: "bash",
                  input: { command: `npm test -- ${area}${t}` },
                  output: "",
                  error: `TypeError: ${area}${t} is not a function`,
                }
              : {
                  tool: "bash",
                  input: { command: `npm test -- ${area}${t}` },
                  output: `PASS test/${area}${t}.test.ts\n${"  ✓ case\n".repeat(40)}`,
                },
          ]
      steps.push({ tools, text: last ? "Done; the change is in place and the tests pass." : "Looking into it.", at })
    }
    turns.push({ request, at, steps })
  }
  return turns
}

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

const realSessions = (): ReadonlyArray<{ readonly name: string; readonly turns: ReadonlyArray<Turn> }> =>
  readdirSync(ORACLE)
    .filter((f) => f.endsWith(".export.json.gz"))
    .sort()
    .map((f) => ({ name: f.replace(".export.json.gz", ""), turns: turnsOf(join(ORACLE, f)) }))
    .filter((s) => s.turns.length > 0)

// ── Running a strategy ───────────────────────────────────────────────────────────────────────────────────────────

interface Request {
  readonly kind: "step" | "summary"
  readonly text: string
  readonly at: number
  /** A summary's output tokens: billed at the provider's output rate (a strategy that compacts more pays for it). */
  readonly output?: number
}

interface Run {
  readonly requests: ReadonlyArray<Request>
  readonly overWindow: number
  readonly retained: ArtifactCheck.Tally
}

// A prompt as its blocks in order, one per line: an earlier prompt is a prefix of a later one when the later one only
// appends messages (what a cache breakpoint on the last message reuses).
const serialise = (system: string, messages: ReadonlyArray<unknown>) =>
  `${JSON.stringify(system)}\n${messages.map((m) => `${JSON.stringify(m)}\n`).join("")}`

/** The shared summariser stand-in: the extractive summary without its facts block, billed as a model call. */
const standIn = (clock: { now: number }, requests: Array<Request>): SummarizerShape => ({
  summarize: (request) =>
    Effect.sync(() => {
      const text = Facts.strip(
        ExtractiveSummary.summarize({
          head: request.head,
          ...(request.previousSummary === undefined ? {} : { previousSummary: request.previousSummary }),
        }),
      )
      const prompt = serialise(request.system, request.messages)
      requests.push({ kind: "summary", text: prompt, at: clock.now, output: Tokens.estimate(text) })
      return {
        text,
        usage: { ...Tokens.zero, input: Tokens.estimate(prompt), output: Tokens.estimate(text) },
        finish: "stop",
        model: request.model,
      }
    }),
})

/** Runs the session through pivot's runtime with `options`; `view` turns each prepared input into the prompt sent. */
const runPivot = (
  turns: ReadonlyArray<Turn>,
  model: typeof MODEL,
  options: Partial<Options>,
  pruneAfterTurn: boolean,
  view: (messages: Array<ModelMessage>) => ReadonlyArray<unknown> = (m) => m,
) => {
  const clock = { now: 0 }
  const requests: Array<Request> = []
  let overWindow = 0
  let lastPrompt = ""
  const program = Effect.gen(function* () {
    const cm = yield* ContextManager
    const sessions = yield* Sessions.Sessions
    let call = 0
    for (const turn of turns) {
      clock.now = turn.at
      yield* cm.recordUserMessage(SESSION, { text: turn.request })
      for (const step of turn.steps) {
        clock.now = step.at
        const prepared = yield* cm.prepare(SESSION)
        const prompt = serialise(SYSTEM, view(prepared.modelMessages as Array<ModelMessage>))
        const tokens = Tokens.estimate(prompt)
        if (tokens > model.limits.context) overWindow++
        requests.push({ kind: "step", text: prompt, at: clock.now })
        lastPrompt = prompt
        call++
        yield* cm.recordAssistantStep(SESSION, {
          parts: [
            { type: "text", text: step.text },
            ...step.tools.map((t, i) => ({
              type: "tool" as const,
              callId: `call_${call}_${i}`,
              tool: t.tool,
              state:
                t.error === undefined
                  ? { status: "completed" as const, input: t.input, output: t.output, title: t.tool }
                  : { status: "error" as const, input: t.input, error: t.error },
            })),
          ],
          usage: { ...Tokens.zero, input: tokens, output: Tokens.estimate(step.text) + 40 * step.tools.length },
          finish: step.tools.length === 0 ? "stop" : "tool-calls",
        })
      }
      if (pruneAfterTurn) yield* cm.prune(SESSION)
    }
    // Every message recorded (the live state keeps only what the window can still reach).
    let conversation = Conversation.initial
    for (const event of yield* sessions.events(SESSION)) conversation = Conversation.evolve(conversation, event)
    return Conversation.messages(conversation) as ReadonlyArray<Message.Message>
  })
  const layer = ContextManager.layer({ model, overheadTokens: OVERHEAD, ...options }).pipe(
    Layer.provide(Layer.succeed(Summarizer, standIn(clock, requests))),
    Layer.provide(Ids.Ids.layerSequential),
    Layer.provideMerge(EventStore.layerMemory()),
  )
  // The session's own clock: the runtime stamps events with it, and cache-aware prune reads the cache's age from it.
  const sessionClock: Clock.Clock = {
    currentTimeMillisUnsafe: () => clock.now,
    currentTimeMillis: Effect.sync(() => clock.now),
    currentTimeNanosUnsafe: () => BigInt(clock.now) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(clock.now) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => BigInt(clock.now) * 1_000_000n,
    monotonicTimeNanos: Effect.sync(() => BigInt(clock.now) * 1_000_000n),
    sleep: () => Effect.never,
  }
  const all = Effect.runSync(
    program.pipe(Effect.provide(layer), Effect.provideService(Clock.Clock, sessionClock)) as Effect.Effect<
      ReadonlyArray<Message.Message>
    >,
  )
  return { requests, overWindow, retained: ArtifactCheck.tally(ArtifactCheck.check(all, lastPrompt)) } satisfies Run
}

const aiSdkPrune = (messages: Array<ModelMessage>) =>
  pruneMessages({
    messages,
    reasoning: "before-last-message",
    toolCalls: "before-last-2-messages",
    emptyMessages: "remove",
  })

type Window = typeof MODEL
const STRATEGIES: ReadonlyArray<{
  readonly name: string
  readonly run: (turns: ReadonlyArray<Turn>, model: Window) => Run
}> = [
  { name: "none", run: (t, m) => runPivot(t, m, { config: { auto: false, prune: false } }, false) },
  { name: "opencode", run: (t, m) => runPivot(t, m, { config: { prune: true }, factsBlock: false }, true) },
  { name: "ai-sdk prune", run: (t, m) => runPivot(t, m, { config: { auto: false, prune: false } }, false, aiSdkPrune) },
  { name: "pivot", run: (t, m) => runPivot(t, m, {}, false) },
  {
    name: "pivot cache-aware",
    run: (t, m) => runPivot(t, m, { cacheAware: { system: SYSTEM }, config: { prune: true } }, true),
  },
  {
    name: "pivot cache-aware, 2k tail",
    run: (t, m) =>
      runPivot(t, m, { cacheAware: { system: SYSTEM }, config: { prune: true, preserve_recent_tokens: 2_000 } }, true),
  },
]

// ── Billing and the table ────────────────────────────────────────────────────────────────────────────────────────

interface Totals {
  calls: number
  summaries: number
  overWindow: number
  billed: Record<Provider, number>
  /** Of `billed`: the summariser calls (input and output), and the cache writes of conversation calls. */
  summary: Record<Provider, number>
  writes: Record<Provider, number>
  /** Of `writes` (Anthropic): what extended the previous call's prompt (new content), and the rest (re-written). */
  fresh: number
  read: Record<Provider, number>
  total: number
  named: number
  artifacts: number
}

const bill = (requests: ReadonlyArray<Request>, provider: Provider) => {
  const cache = new ProviderCache(provider)
  const rates = RATES[provider]
  let billed = 0
  let read = 0
  let summary = 0
  let writes = 0
  let fresh = 0
  let previous: Request | undefined
  for (const r of requests) {
    const b: Billed = cache.bill(r.text, r.at)
    const eq = equivalents(b, provider) + (r.output ?? 0) * Pricing.PROVIDER_RATES[provider]!.output
    billed += eq
    read += b.cacheRead
    if (r.kind === "summary") summary += eq
    else {
      writes += equivalents({ input: b.input, cacheRead: 0, cacheWrite: b.cacheWrite }, provider)
      // New content: what this prompt adds to the previous conversation call's, when it extends it.
      const added =
        previous !== undefined && r.text.startsWith(previous.text)
          ? Tokens.estimate(r.text) - Tokens.estimate(previous.text)
          : 0
      fresh += Math.min(added, b.cacheWrite) * rates.write
      previous = r
    }
  }
  return { billed, read, summary, writes, fresh }
}

/**
 * What no strategy can avoid: every token of the session sent once and written to the cache once (the `none` run
 * only appends, so its last prompt holds the session's whole content), at the provider's write rate.
 */
const floorOf = (run: Run, provider: Provider) => {
  const steps = run.requests.filter((r) => r.kind === "step")
  return Tokens.estimate(steps.at(-1)?.text ?? "") * RATES[provider].write
}

/** Runs every strategy on `sessions` in `model`'s window and prints the two tables. */
const compare = (label: string, sessions: ReadonlyArray<ReadonlyArray<Turn>>, model: Window) => {
  const totals = new Map<string, Totals>()
  const floor: Record<Provider, number> = { anthropic: 0, openai: 0 }
  for (const turns of sessions) {
    for (const strategy of STRATEGIES) {
      const run = strategy.run(turns, model)
      const t = totals.get(strategy.name) ?? {
        calls: 0,
        summaries: 0,
        overWindow: 0,
        billed: { anthropic: 0, openai: 0 },
        summary: { anthropic: 0, openai: 0 },
        writes: { anthropic: 0, openai: 0 },
        fresh: 0,
        read: { anthropic: 0, openai: 0 },
        total: 0,
        named: 0,
        artifacts: 0,
      }
      t.calls += run.requests.filter((r) => r.kind === "step").length
      t.summaries += run.requests.filter((r) => r.kind === "summary").length
      t.overWindow += run.overWindow
      t.total += run.requests.reduce((n, r) => n + Tokens.estimate(r.text), 0)
      for (const provider of ["anthropic", "openai"] as const) {
        const b = bill(run.requests, provider)
        t.billed[provider] += b.billed
        t.summary[provider] += b.summary
        t.writes[provider] += b.writes
        t.read[provider] += b.read
        if (provider === "anthropic") t.fresh += b.fresh
      }
      if (strategy.name === "none")
        for (const provider of ["anthropic", "openai"] as const) floor[provider] += floorOf(run, provider)
      t.named += run.retained.named
      t.artifacts += run.retained.total
      totals.set(strategy.name, t)
    }
  }
  const base = totals.get("opencode")!
  const k = (n: number) => `${(n / 1000).toFixed(0)}k`
  const pct = (a: number, b: number) => (b === 0 ? "–" : `${Math.round((a / b) * 100)}%`)
  const usable = model.limits.context - model.limits.output
  console.log(
    `bench:cost · ${label} · window ${model.limits.context.toLocaleString("en-US")} (usable ${usable.toLocaleString("en-US")}) · system prompt and tools ~${OVERHEAD.toLocaleString("en-US")} tokens\n`,
  )
  console.log(
    "| strategy | calls | summary calls | over window | input tokens sent | Anthropic billed (eq) | vs opencode | hit ratio | OpenAI billed (eq) | vs opencode | hit ratio | artifacts named |",
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const [name, t] of totals)
    console.log(
      `| ${name} | ${t.calls} | ${t.summaries} | ${t.overWindow} | ${k(t.total)} | ${k(t.billed.anthropic)} | ${pct(t.billed.anthropic, base.billed.anthropic)} | ${pct(t.read.anthropic, t.total)} | ${k(t.billed.openai)} | ${pct(t.billed.openai, base.billed.openai)} | ${pct(t.read.openai, t.total)} | ${t.named}/${t.artifacts} (${pct(t.named, t.artifacts)}) |`,
    )
  console.log("\nWhere the Anthropic bill goes (input-token equivalents):\n")
  console.log(
    "| strategy | summariser calls (input, output 5×) | cache writes: new content (1.25×) | cache writes: prefix re-written | cache reads (0.1×) |",
  )
  console.log("|---|---:|---:|---:|---:|")
  for (const [name, t] of totals) {
    const reads = t.billed.anthropic - t.summary.anthropic - t.writes.anthropic
    console.log(
      `| ${name} | ${k(t.summary.anthropic)} | ${k(t.fresh)} | ${k(t.writes.anthropic - t.fresh)} | ${k(reads)} |`,
    )
  }
  console.log(
    `\nFloor (the sessions' content written to the cache once, nothing else): Anthropic ${k(floor.anthropic)} (${pct(floor.anthropic, base.billed.anthropic)} of opencode's bill), OpenAI ${k(floor.openai)} (${pct(floor.openai, base.billed.openai)}).\n`,
  )
}

/** The window the oracle's compaction scenarios run OpenCode in (a 20k context). */
const ORACLE_WINDOW: Window = {
  ref: MODEL.ref,
  limits: { context: 20_000, output: 4_000 },
}

compare(
  `${SESSIONS} generated sessions × ${TURNS} turns (seed ${SEED})`,
  Array.from({ length: SESSIONS }, (_, s) => generate(SEED * 1_000 + s)),
  MODEL,
)
const real = realSessions()
compare(
  `${real.length} real OpenCode sessions (${real.map((r) => r.name).join(", ")}; the oracle's captures)`,
  real.map((r) => r.turns),
  ORACLE_WINDOW,
)
