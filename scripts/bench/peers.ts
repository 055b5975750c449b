/**
 * Benchmark: the cost per turn of producing the next model input, pivot beside its peers, on one session history and
 * one realistic turn, in one run (issue 23).
 *
 * The history (support/bulkSession.ts: a request, a tool step with a ~600-character output and a closing step per
 * turn; a prune every 8 turns, a compaction every 30) is cut just after a pivot once it holds the size's stored
 * messages, loaded into pivot (memory store and SQLite, with a snapshot at the end as the runtime writes one after a
 * pivot) and mirrored event by event into each peer's store. Then every timed turn does, for every contender:
 *
 * - pivot: record a user message and 2–5 tool steps (each step timed: the "record a tool step" figure), then `prune`
 *   and `prepare`, timed together (the session has changed: no cached answer). Prune is on (`PRUNING`: OpenCode's
 *   thresholds in proportion to the model, so it acts on about one turn in five, in a batch); its SQLite
 *   file runs with `synchronous = NORMAL`, as OpenCode's does (pivot's default, FULL, syncs every append);
 * - the same new messages reach the peers (untimed): the pivot memory session's new events, mirrored;
 * - OpenCode on SQLite (support/openCode.ts): one step of its prompt loop's read: `filterCompacted(stream(…))` over its
 *   `message`/`part` tables (pages of 50 newest first, stopping at the compaction's tail start, as upstream does),
 *   `latest`, `toModelMessages` through the AI SDK. Its prune pass (opt-in upstream, after the loop; it reads every
 *   message) is timed in a table of its own, not in this figure;
 * - OpenCode's algorithm on the same messages already in memory: its floor, without SQLite or JSON;
 * - AI SDK `pruneMessages` and LangChain `trimMessages` over the whole plain history (what an app without compaction
 *   keeps: every message, no markers or summaries), as they run every turn.
 *
 * pivot and OpenCode get the same messages and produce the same window (checked every turn: the same model messages,
 * compared as JSON). Warm-up runs on a side session for each contender first, so the measured session only grows by
 * the timed turns. Beside the in-process figures, a restart: a new process opens the SQLite file and answers its
 * first `prepare` (pivot) or first step (OpenCode), median of `--restarts`.
 *
 * Run: `npm run bench:peers [-- --sizes 1000,10000,100000] [--peers-max 100000] [--turns 30] [--restarts 3]`
 * (about a minute on 2 cores); add 1000000 to the sizes for the million-message row (about 4 minutes more, 3.5 GB).
 * Above `--peers-max` only pivot and OpenCode's in-memory floor run: at 1M messages `pruneMessages` takes seconds
 * and `trimMessages` hours per turn, and their histories and OpenCode's SQLite copy would take minutes to build.
 * Compare ratios, not absolutes: the machine is shared.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage, trimMessages } from "@langchain/core/messages"
import { Events, Ids, type Message, Prune, Render } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { type ModelMessage, pruneMessages } from "ai"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { MODEL, PRUNING, percentile, runtime, SESSION, SYNCHRONOUS } from "./support/agentLoop.ts"
import { bulkSession, readStep } from "./support/bulkSession.ts"
import { type GcInside, gcWatch } from "./support/gcWatch.ts"
import * as OpenCode from "./support/openCode.ts"

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,10000,100000" },
    "peers-max": { type: "string", default: "100000" },
    turns: { type: "string", default: "30" },
    restarts: { type: "string", default: "3" },
    "warm-ms": { type: "string", default: "300" },
    only: { type: "string", default: "" },
  },
})
const SIZES = values.sizes.split(",").map(Number)
const PEERS_MAX = Number(values["peers-max"])
const TURNS = Number(values.turns)
const RESTARTS = Number(values.restarts)
const WARM_MS = Number(values["warm-ms"])
const ONLY = values.only === "" ? undefined : new Set(values.only.split(","))
/** Whether a contender runs (`--only pivot-memory,…`: the others are off, for measuring one alone). */
const on = (who: string) => ONLY === undefined || ONLY.has(who)
const watch = gcWatch()
const USABLE = MODEL.limits.context - MODEL.limits.output
const WARM_SESSION = "ses_warm"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-peers-"))
const here = path.dirname(fileURLToPath(import.meta.url))
const gc = () => (globalThis as { gc?: () => void }).gc?.()
const median = (xs: ReadonlyArray<number>) =>
  xs.length === 0
    ? Number.NaN
    : percentile(
        [...xs].sort((a, b) => a - b),
        0.5,
      )
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
const now = () => performance.now()

// ---- pivot's turn ----------------------------------------------------------------------------------------------------

/** The tool steps of timed turn `i`: 2 to 5. */
const stepsOf = (i: number) => 2 + (i % 4)

/**
 * One realistic turn: a user message, `steps` tool steps (each with a ~600-character output), then `prune` and
 * `prepare`. Usage stays under the trigger, so no turn compacts: every contender does the same work each turn.
 */
const pivotTurn = (sessionId: string, i: number, steps: number, who?: string) =>
  Effect.gen(function* () {
    const cm = yield* ContextManager
    yield* cm.recordUserMessage(sessionId, { text: `request ${i}: look at src/module${i % 40}.ts and fix the bug` })
    const record: Array<number> = []
    for (let s = 0; s < steps; s++) {
      const t0 = now()
      yield* cm.recordAssistantStep(sessionId, readStep(i, s))
      const t1 = now()
      record.push((t1 - t0) * 1000)
      if (who !== undefined) watch.section(`${who} record`, t0, t1)
    }
    const t0 = now()
    yield* cm.prune(sessionId)
    const prepared = yield* cm.prepare(sessionId)
    const t1 = now()
    if (who !== undefined) watch.section(who, t0, t1)
    const micros = (t1 - t0) * 1000
    return { record, micros, window: prepared.modelMessages }
  })

// ---- the plain history of an app without compaction -------------------------------------------------------------------

const textOf = (content: unknown): string => (typeof content === "string" ? content : JSON.stringify(content))

const toLangChain = (m: ModelMessage): Array<BaseMessage> => {
  if (m.role === "user" || m.role === "system") return [new HumanMessage(textOf(m.content))]
  if (m.role === "assistant") {
    const parts = typeof m.content === "string" ? [] : m.content
    const calls = parts.flatMap((p) =>
      p.type === "tool-call" ? [{ id: p.toolCallId, name: p.toolName, args: p.input as Record<string, unknown> }] : [],
    )
    const text = parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
    return [new AIMessage({ content: typeof m.content === "string" ? m.content : text, tool_calls: calls })]
  }
  return m.content.flatMap((p) =>
    p.type === "tool-result" ? [new ToolMessage({ content: textOf(p.output), tool_call_id: p.toolCallId })] : [],
  )
}

const approxTokens = (messages: ReadonlyArray<BaseMessage>): number =>
  messages.reduce((n, m) => n + Math.round(textOf(m.content).length / 4) + 4, 0)

// ---- one size --------------------------------------------------------------------------------------------------------

type Runtime = ManagedRuntime.ManagedRuntime<ContextManager | Sessions.Sessions | EventStore, unknown>

const pivotRuntime = (store: Layer.Layer<EventStore, unknown>): Runtime =>
  ManagedRuntime.make(runtime(store, Ids.Ids.layer, PRUNING)) as unknown as Runtime

/** Runs pivot's turn on a side session for `WARM_MS`, so that its code is timed JIT-warm. */
const warmPivot = async (rt: Runtime) => {
  const t0 = now()
  for (let i = 0; now() - t0 < WARM_MS || i < 3; i++) await rt.runPromise(pivotTurn(WARM_SESSION, i, stepsOf(i)))
}

const warm = async (run: () => unknown) => {
  const t0 = now()
  for (let i = 0; now() - t0 < WARM_MS && i < 1_000; i++) await run()
}

/**
 * Times one call, garbage collection included as it falls: no collection is forced before a call, since one that
 * allocates much (`pruneMessages` copies the whole history) pays its scavenges in a real process too.
 */
const timed = async <A>(
  who: string,
  run: () => A | Promise<A>,
): Promise<{ readonly micros: number; readonly value: A }> => {
  const t0 = now()
  const value = await run()
  const t1 = now()
  watch.section(who, t0, t1)
  return { micros: (t1 - t0) * 1000, value }
}

interface Row {
  readonly size: number
  readonly messages: number
  readonly windowFirst: number
  readonly windowLast: number
  readonly pivotMemory: number
  readonly pivotSqlite: number
  readonly recordMemory: number
  readonly recordSqlite: number
  readonly meanMemory: number
  readonly meanSqlite: number
  readonly openCodeSqlite: number
  readonly openCodeMemory: number
  readonly openCodePrune: number
  readonly openCodePruneTurns: number
  readonly prune: number
  readonly trim: number
  readonly trimTurns: number
  readonly restart?: Restart | undefined
  readonly gcs: Map<string, GcInside>
}

interface Restart {
  readonly pivot: { readonly first: number; readonly wall: number; readonly window: number }
  readonly openCode: { readonly first: number; readonly wall: number; readonly window: number }
}

let lastTrim: { readonly micros: number; readonly messages: number } | undefined

const runSize = async (size: number): Promise<Row> => {
  const peers = size <= PEERS_MAX
  const floor = new OpenCode.InMemory()
  const ocFile = path.join(dir, `opencode-${size}.db`)
  const oc = peers && on("opencode-sqlite") ? new OpenCode.OnSqlite(new DatabaseSync(ocFile), SESSION) : undefined
  const plain: Array<ModelMessage> = []
  const langChain: Array<BaseMessage> = []
  const feed = OpenCode.mirror(
    SESSION,
    [...(on("opencode-memory") ? [floor] : []), ...(oc === undefined ? [] : [oc])],
    (m: Message.Message) => {
      if (!peers || !(on("prune-messages") || on("trim-messages"))) return
      for (const rendered of Render.renderMessage(m)) {
        plain.push(rendered as ModelMessage)
        langChain.push(...toLangChain(rendered as ModelMessage))
      }
    },
  )
  const g0 = now()
  const bulk = bulkSession(SESSION, { observe: feed })
  oc?.db.exec("BEGIN")
  const events = bulk.until(size, { messages: true, afterPivot: true })
  oc?.db.exec("COMMIT")
  const generated = now() - g0

  const pivotFile = path.join(dir, `pivot-${size}.db`)
  const memory = pivotRuntime(EventStore.layerMemory())
  const sqlite = pivotRuntime(EventStore.layerSqlite({ filename: pivotFile, synchronous: SYNCHRONOUS }))
  const l0 = now()
  for (const rt of on("pivot-sqlite") ? [memory, sqlite] : [memory])
    await rt.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        for (let at = 0; at < events.length; at += 2_000)
          yield* store.append(bulk.stream, at, events.slice(at, at + 2_000))
        // The runtime writes a snapshot after each pivot; the history ends just after one.
        yield* store.writeSnapshot(bulk.stream, {
          version: bulk.state.session.version,
          format: Sessions.SNAPSHOT_FORMAT,
          data: Sessions.encodeSnapshot(Sessions.retain(bulk.state)),
        })
        yield* (yield* Sessions.Sessions).load(SESSION)
      }),
    )
  const loaded = now() - l0
  events.length = 0
  gc()
  console.error(
    `size ${size}: ${bulk.messages} messages (${bulk.state.session.version} events) generated and mirrored in ${(generated / 1000).toFixed(1)} s, loaded into pivot's stores in ${(loaded / 1000).toFixed(1)} s`,
  )

  await warmPivot(memory)
  if (on("pivot-sqlite")) await warmPivot(sqlite)
  const pruneCall = () =>
    pruneMessages({ messages: plain, reasoning: "before-last-message", toolCalls: "before-last-2-messages" })
  const trimCall = () =>
    trimMessages(langChain, { maxTokens: USABLE, strategy: "last", tokenCounter: approxTokens, startOn: "human" })
  if (peers) {
    if (oc !== undefined) await warm(() => OpenCode.step(oc.newestFirst()))
    if (on("prune-messages")) await warm(pruneCall)
  }
  if (on("opencode-memory")) await warm(() => OpenCode.step(floor.newestFirst()))

  // trimMessages grows with the square of the history (its list counter re-counts the kept list for every message):
  // it runs while its cell has spent under 5 s, and is extrapolated from the previous size when a turn would take
  // over a minute.
  const expectedTrim = lastTrim === undefined ? 0 : lastTrim.micros * (plain.length / lastTrim.messages) ** 2
  const trimRuns = peers && on("trim-messages") && expectedTrim < 60_000_000
  if (trimRuns) await warm(trimCall)

  const samples = {
    pivotMemory: [] as Array<number>,
    pivotSqlite: [] as Array<number>,
    recordMemory: [] as Array<number>,
    recordSqlite: [] as Array<number>,
    openCodeSqlite: [] as Array<number>,
    openCodeMemory: [] as Array<number>,
    prune: [] as Array<number>,
    trim: [] as Array<number>,
    openCodePrune: [] as Array<number>,
  }
  let openCodePruneSpent = 0
  let trimSpent = 0
  let windowFirst = 0
  let windowLast = 0
  const stream = Events.streamName(SESSION)
  let version = bulk.state.session.version
  watch.reset()
  for (let i = 0; i < TURNS; i++) {
    const steps = stepsOf(i)
    const m = await memory.runPromise(pivotTurn(SESSION, i, steps, "pivot memory"))
    samples.pivotMemory.push(m.micros)
    samples.recordMemory.push(...m.record)
    if (on("pivot-sqlite")) {
      const s = await sqlite.runPromise(pivotTurn(SESSION, i, steps, "pivot SQLite"))
      samples.pivotSqlite.push(s.micros)
      samples.recordSqlite.push(...s.record)
    }
    // The same new messages reach the peers, untimed.
    const recorded = await memory.runPromise(
      Effect.gen(function* () {
        return yield* (yield* EventStore).read(stream, { from: version + 1 })
      }),
    )
    oc?.db.exec("BEGIN")
    for (const r of recorded) {
      const decoded = Sessions.decodeEvent(SESSION, r)
      if (decoded._tag === "Failure") throw new Error(decoded.failure.message)
      feed(decoded.success)
      version = r.streamVersion
    }
    oc?.db.exec("COMMIT")
    const pivotWindow = JSON.stringify(m.window)
    const check = (who: string, window: ReadonlyArray<ModelMessage>) => {
      if (JSON.stringify(window) !== pivotWindow)
        throw new Error(
          `turn ${i} at ${size}: ${who}'s window (${window.length} model messages) differs from pivot's (${m.window.length})`,
        )
    }
    if (on("opencode-memory")) {
      const fl = await timed("OpenCode in memory", () => OpenCode.step(floor.newestFirst()))
      samples.openCodeMemory.push(fl.micros)
      check("OpenCode in memory", fl.value)
    }
    if (oc !== undefined) {
      const o = await timed("OpenCode on SQLite", () => OpenCode.step(oc.newestFirst()))
      samples.openCodeSqlite.push(o.micros)
      check("OpenCode on SQLite", o.value)
      // OpenCode's prune pass reads the whole session: timed while its cell has spent under 5 s.
      if (openCodePruneSpent < 5_000_000) {
        const { protect = Prune.PRUNE_PROTECT, minimum = Prune.PRUNE_MINIMUM } = PRUNING.prune
        const p = await timed("OpenCode prune pass", () => OpenCode.prunePass(oc.messages(), protect, minimum))
        samples.openCodePrune.push(p.micros)
        openCodePruneSpent += p.micros
      }
    }
    if (peers) {
      if (on("prune-messages")) samples.prune.push((await timed("pruneMessages", pruneCall)).micros)
      if (trimRuns && (trimSpent < 5_000_000 || samples.trim.length === 0)) {
        const t = await timed("trimMessages", trimCall)
        samples.trim.push(t.micros)
        trimSpent += t.micros
      }
    }
    if (i === 0) windowFirst = m.window.length
    windowLast = m.window.length
  }
  const gcs = watch.report()
  const trim = trimRuns ? median(samples.trim) : peers ? expectedTrim : Number.NaN
  if (trimRuns) lastTrim = { micros: trim, messages: plain.length }
  await memory.dispose()
  await sqlite.dispose()
  oc?.db.close()
  const restart =
    RESTARTS > 0 && peers && oc !== undefined && on("pivot-sqlite") ? restarts(pivotFile, ocFile) : undefined
  return {
    size,
    messages: bulk.messages,
    windowFirst,
    windowLast,
    pivotMemory: median(samples.pivotMemory),
    pivotSqlite: median(samples.pivotSqlite),
    recordMemory: median(samples.recordMemory),
    recordSqlite: median(samples.recordSqlite),
    meanMemory: mean(samples.pivotMemory),
    meanSqlite: mean(samples.pivotSqlite),
    openCodeSqlite: median(samples.openCodeSqlite),
    openCodeMemory: median(samples.openCodeMemory),
    openCodePrune: median(samples.openCodePrune),
    openCodePruneTurns: samples.openCodePrune.length,
    prune: median(samples.prune),
    trim,
    trimTurns: samples.trim.length,
    restart,
    gcs,
  }
}

/** New processes on the SQLite files: each opens the store and answers its first prepare / step. */
const restarts = (pivotFile: string, ocFile: string): Restart => {
  const run = (who: "pivot" | "opencode", file: string) => {
    const firsts: Array<number> = []
    const walls: Array<number> = []
    let window = 0
    for (let r = 0; r < RESTARTS; r++) {
      const t0 = now()
      const child = spawnSync(
        process.execPath,
        ["--conditions=@pivot/source", path.join(here, "support", "restart.ts"), who, file],
        { encoding: "utf8" },
      )
      walls.push(now() - t0)
      if (child.status !== 0) throw new Error(`restart (${who}) failed: ${child.stderr}`)
      const out = JSON.parse(child.stdout) as { readonly ms: number; readonly window: number }
      firsts.push(out.ms)
      window = out.window
    }
    return { first: median(firsts), wall: median(walls), window }
  }
  return { pivot: run("pivot", pivotFile), openCode: run("opencode", ocFile) }
}

// ---- the run ---------------------------------------------------------------------------------------------------------

const fmt = (micros: number) => (Number.isNaN(micros) ? "–" : Math.round(micros).toLocaleString("en-US"))
const ratio = (peer: number, pivot: number) => (Number.isNaN(peer) ? "–" : `×${(peer / pivot).toFixed(1)}`)
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")

const main = async () => {
  const loadBefore = load()
  const started = new Date()
  const rows: Array<Row> = []
  for (const size of SIZES) {
    gc()
    rows.push(await runSize(size))
  }
  console.log(
    `\n${started.toISOString().slice(0, 16)} UTC, Node ${process.version}, ${os.cpus().length} cores; load average (1, 5, 15 min) ${loadBefore} before, ${load()} after; median of ${TURNS} turns per cell (each 2–5 tool steps), ${WARM_MS} ms warm-up per contender\n`,
  )
  console.log(
    "| stored messages | window (model messages, first → last turn) | pivot memory prune + prepare µs | pivot SQLite prune + prepare µs | OpenCode on SQLite µs | OpenCode in memory µs | AI SDK `pruneMessages` µs | LangChain `trimMessages` µs |",
  )
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of rows) {
    const trim = Number.isNaN(r.trim)
      ? "–"
      : r.trimTurns === 0
        ? `≈ ${(r.trim / 1e6).toFixed(0)} s (extrapolated)`
        : `${fmt(r.trim)} (${r.trimTurns} turns)`
    console.log(
      `| ${r.messages.toLocaleString("en-US")} | ${r.windowFirst} → ${r.windowLast} | ${fmt(r.pivotMemory)} | ${fmt(r.pivotSqlite)} | ${fmt(r.openCodeSqlite)} | ${fmt(r.openCodeMemory)} | ${fmt(r.prune)} | ${trim} |`,
    )
  }
  console.log(
    "\nGarbage collection inside each contender's timed sections (every pause V8 reports, charged to the section it overlaps): sections hit / timed, pauses (major), pause time ÷ the sections' time:\n",
  )
  console.log(
    "| stored messages | contender | sections hit | pauses (major) | pause time in sections | share of timed |",
  )
  console.log("|---:|---|---:|---:|---:|---:|")
  for (const r of rows)
    for (const [who, g] of r.gcs)
      console.log(
        `| ${r.messages.toLocaleString("en-US")} | ${who} | ${g.hit} / ${g.sections} | ${g.pauses} (${g.major}) | ${fmt(g.micros)} µs | ${((100 * g.micros) / g.timed).toFixed(1)} % |`,
      )
  console.log("\nRatios (peer ÷ pivot memory prune + prepare):\n")
  console.log("| stored messages | × OpenCode on SQLite | × OpenCode in memory | × pruneMessages | × trimMessages |")
  console.log("|---:|---:|---:|---:|---:|")
  for (const r of rows)
    console.log(
      `| ${r.messages.toLocaleString("en-US")} | ${ratio(r.openCodeSqlite, r.pivotMemory)} | ${ratio(r.openCodeMemory, r.pivotMemory)} | ${ratio(r.prune, r.pivotMemory)} | ${ratio(r.trim, r.pivotMemory)} |`,
    )
  const pruned = rows.filter((r) => r.openCodePruneTurns > 0)
  if (pruned.length > 0) {
    console.log(
      "\nOpenCode's prune pass (opt-in upstream, after each loop; not in the figures above): it loads every message of the session, then walks back to the latest summary:\n",
    )
    console.log("| stored messages | OpenCode prune pass on SQLite µs | turns timed |")
    console.log("|---:|---:|---:|")
    for (const r of pruned)
      console.log(`| ${r.messages.toLocaleString("en-US")} | ${fmt(r.openCodePrune)} | ${r.openCodePruneTurns} |`)
  }
  console.log(
    "\nRecording one tool step (median over every step of the timed turns), and the mean of prune + prepare (the turns where prune acts included):\n",
  )
  console.log(
    "| stored messages | pivot memory µs | pivot SQLite µs | pivot memory prune + prepare, mean µs | pivot SQLite prune + prepare, mean µs |",
  )
  console.log("|---:|---:|---:|---:|---:|")
  for (const r of rows)
    console.log(
      `| ${r.messages.toLocaleString("en-US")} | ${fmt(r.recordMemory)} | ${fmt(r.recordSqlite)} | ${fmt(r.meanMemory)} | ${fmt(r.meanSqlite)} |`,
    )
  const restarted = rows.filter((r) => r.restart !== undefined)
  if (restarted.length > 0) {
    console.log(
      `\nA restart: a new process opens the SQLite file and answers its first call (median of ${RESTARTS}); "open → answer" is timed inside the child, "process" is its whole life (Node start and module loading included):\n`,
    )
    console.log(
      "| stored messages | pivot open → first prepare ms | pivot process ms | pivot in-process µs | OpenCode open → first step ms | OpenCode process ms | OpenCode in-process µs |",
    )
    console.log("|---:|---:|---:|---:|---:|---:|---:|")
    for (const r of restarted) {
      const { pivot, openCode } = r.restart!
      if (pivot.window !== openCode.window)
        throw new Error(`restart at ${r.size}: windows differ (${pivot.window} vs ${openCode.window})`)
      console.log(
        `| ${r.messages.toLocaleString("en-US")} | ${pivot.first.toFixed(1)} | ${pivot.wall.toFixed(0)} | ${fmt(r.pivotSqlite)} | ${openCode.first.toFixed(1)} | ${openCode.wall.toFixed(0)} | ${fmt(r.openCodeSqlite)} |`,
      )
    }
  }
  const at = (n: number) => rows.find((r) => r.size === n)
  const target = (label: string, value: number, goal: number, atLeast: boolean) =>
    console.log(
      `- ${label}: ${Number.isNaN(value) ? "not measured" : `${value.toFixed(2)} (target ${atLeast ? "≥" : "≤"} ${goal}) ${(atLeast ? value >= goal : value <= goal) ? "met" : "MISSED"}`}`,
    )
  console.log("\nIssue 23's targets:\n")
  const k10 = at(10_000)
  const k1 = at(1_000)
  target("10k: × pruneMessages", k10 ? k10.prune / k10.pivotMemory : Number.NaN, 50, true)
  target("10k: × OpenCode in memory", k10 ? k10.openCodeMemory / k10.pivotMemory : Number.NaN, 3, true)
  target("1k: × pruneMessages", k1 ? k1.prune / k1.pivotMemory : Number.NaN, 2, true)
  target("1k: × OpenCode in memory", k1 ? k1.openCodeMemory / k1.pivotMemory : Number.NaN, 2, true)
  const largest = rows[rows.length - 1]
  if (k1 && largest && largest !== k1 && largest.size <= PEERS_MAX !== k1.size <= PEERS_MAX)
    console.log(
      `- (the peers ran beside pivot at ${k1.messages.toLocaleString("en-US")} messages but not at ${largest.messages.toLocaleString("en-US")}: for a like-for-like flatness figure, run both sizes with the same --peers-max)`,
    )
  if (k1 && largest && largest !== k1)
    target(
      `flat: pivot memory ${largest.messages.toLocaleString("en-US")} ÷ 1k`,
      largest.pivotMemory / k1.pivotMemory,
      1.3,
      false,
    )
  target("record a tool step, memory (worst size) µs", Math.max(...rows.map((r) => r.recordMemory)), 250, false)
}

main()
  .catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
  .finally(() => fs.rmSync(dir, { recursive: true, force: true }))
