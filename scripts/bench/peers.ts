/**
 * Benchmark: the cost per turn of producing the next model input, pivot beside its peers, on one session history and
 * one realistic turn, in one run (issue 23).
 *
 * The history (support/bulkSession.ts: a request, a tool step with a ~600-character output and a closing step per
 * turn; a prune every 8 turns, a compaction every 30) is cut just after a pivot once it holds the size's stored
 * messages and written once to a file (its events, and the snapshot the runtime writes after a pivot). Every
 * contender (support/contenders.ts) runs **in a process of its own** (support/contender.ts), loads the session from
 * those files, warms up and runs its turns back to back, one process working at a time: pivot's memory store first,
 * recording each turn's new messages, which every other contender then takes before its own timed call of that turn.
 * So each call follows only its own contender's work. In one process and turn by turn, as before, pivot's prune +
 * `prepare` measured ≈ 250 µs beside the peers against ≈ 115 alone, with no GC pause inside its calls, and the order
 * favoured some peers (docs/benchmarks.md, "Measuring like with like"); `--together` (one process) and
 * `--interleaved` (turn by turn) bring those back, to measure them. Per turn:
 *
 * - pivot (memory store; SQLite with `synchronous = NORMAL`, as OpenCode's): record a user message and 2–5 tool steps
 *   (each step timed: the "record a tool step" figure), then `prune` and `prepare`, timed together (the session has
 *   changed: no cached answer). Prune is on (`PRUNING`: OpenCode's thresholds in proportion to the model, so it acts
 *   on about one turn in ten, in a batch). The memory contender's new events are what the others get;
 * - OpenCode on SQLite (support/openCode.ts): the new messages written as rows (untimed), then one step of its prompt
 *   loop's read: `filterCompacted(stream(…))` over its `message`/`part` tables (pages of 50 newest first, stopping at
 *   the compaction's tail start, as upstream does), `latest`, `toModelMessages` through the AI SDK. Its prune pass
 *   (opt-in upstream, after the loop; it reads every message) is timed in a table of its own;
 * - OpenCode's algorithm on the same messages already in memory: its floor, without SQLite or JSON;
 * - AI SDK `pruneMessages` and LangChain `trimMessages` over the whole plain history (what an app without compaction
 *   keeps: every message, no markers or summaries), as they run every turn.
 *
 * Both pivots and both OpenCodes produce the same window, checked every turn (each process hands back a hash of its
 * model messages' JSON). No collection is forced around a timed call: each contender pays for its own garbage, and
 * only its own. Beside the in-process figures, a restart: a new process opens the SQLite file and answers its first
 * `prepare` (pivot) or first step (OpenCode), median of `--restarts`.
 *
 * Run: `npm run bench:peers [-- --sizes 1000,10000,100000] [--peers-max 100000] [--turns 30] [--restarts 3]
 * [--warm-ms 1000] [--only pivot-memory,…] [--together] [--interleaved]` (about two minutes on 2 cores); add 1000000
 * to the sizes for the million-message row (about two minutes more, 2.5 GB). Above `--peers-max` only pivot and
 * OpenCode's in-memory floor run: at 1M messages `pruneMessages` takes seconds and `trimMessages` hours per turn.
 * Compare ratios, not absolutes: the machine is shared.
 */
import { type ChildProcess, fork, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Sessions } from "@pivot/runtime"
import type { RecordedEvent } from "@pivot/store"
import { percentile, SESSION } from "./support/agentLoop.ts"
import { bulkSession } from "./support/bulkSession.ts"
import {
  type Contender,
  type GcReport,
  gcWatch,
  KINDS,
  type Kind,
  type Loaded,
  make,
  runTurns,
  type Setup,
  type TurnResult,
  WARM_SIZE,
  writeEvents,
} from "./support/contenders.ts"
import type { GcInside } from "./support/gcWatch.ts"

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,10000,100000" },
    "peers-max": { type: "string", default: "100000" },
    turns: { type: "string", default: "30" },
    restarts: { type: "string", default: "3" },
    "warm-ms": { type: "string", default: "1000" },
    only: { type: "string", default: "" },
    together: { type: "boolean", default: false },
    interleaved: { type: "boolean", default: false },
    block: { type: "string", default: "5" },
    samples: { type: "boolean", default: false },
  },
})
const SIZES = values.sizes.split(",").map(Number)
const PEERS_MAX = Number(values["peers-max"])
const TURNS = Number(values.turns)
const RESTARTS = Number(values.restarts)
const WARM_MS = Number(values["warm-ms"])
const TOGETHER = values.together
const INTERLEAVED = values.interleaved
const BLOCK = Math.max(1, Number(values.block))
const ONLY = values.only === "" ? undefined : new Set(values.only.split(","))
for (const k of ONLY ?? [])
  if (!(KINDS as ReadonlyArray<string>).includes(k)) throw new Error(`--only: no contender ${k}`)
/** Whether a contender runs (`--only pivot-memory,…` leaves the others off; pivot's memory store always runs). */
const on = (kind: Kind) => kind === "pivot-memory" || ONLY === undefined || ONLY.has(kind)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-peers-"))
const here = path.dirname(fileURLToPath(import.meta.url))
const median = (xs: ReadonlyArray<number>) =>
  xs.length === 0
    ? Number.NaN
    : percentile(
        [...xs].sort((a, b) => a - b),
        0.5,
      )
const mean = (xs: ReadonlyArray<number>) => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length)
const now = () => performance.now()

// ---- where a contender runs ------------------------------------------------------------------------------------------

interface Runner {
  readonly start: (setup: Setup) => Promise<Loaded>
  readonly warm: (run: boolean) => Promise<void>
  readonly turn: (i: number, events: ReadonlyArray<RecordedEvent>) => Promise<TurnResult>
  /** Every turn back to back, turn `i` taking `events[i]`. */
  readonly turns: (
    from: number,
    n: number,
    events: ReadonlyArray<ReadonlyArray<RecordedEvent>>,
  ) => Promise<Array<TurnResult>>
  /** Closes the contender's stores; a process of its own answers its GC report and exits. */
  readonly finish: () => Promise<GcReport | undefined>
}

/** In this process (`--together`): every contender shares one heap, one JIT and `watch`. */
const inProcess = (watch: ReturnType<typeof gcWatch>): Runner => {
  let contender: Contender | undefined
  return {
    start: (setup) => {
      contender = make(setup, watch)
      return contender.load()
    },
    warm: (run) => contender!.warm(run),
    turn: (i, events) => contender!.turn(i, events),
    turns: (from, n, events) => runTurns(contender!, from, n, events),
    finish: async () => {
      await contender!.close()
      return undefined
    },
  }
}

/** In a process of its own, one request at a time over its IPC channel. */
const forked = (): Runner => {
  const child: ChildProcess = fork(path.join(here, "support", "contender.ts"), [], {
    execArgv: ["--conditions=@pivot/source", "--expose-gc", "--max-old-space-size=8000"],
    serialization: "advanced",
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  })
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  const exited = new Promise<void>((resolve) =>
    child.on("exit", (code) => {
      for (const p of pending.values()) p.reject(new Error(`a contender's process exited (${code}) mid-request`))
      resolve()
    }),
  )
  child.on("message", (m: { readonly id: number; readonly value?: unknown; readonly error?: string }) => {
    const p = pending.get(m.id)
    pending.delete(m.id)
    if (m.error !== undefined) p?.reject(new Error(m.error))
    else p?.resolve(m.value)
  })
  let next = 0
  const call = <A>(op: string, fields: object = {}) =>
    new Promise<A>((resolve, reject) => {
      const id = ++next
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      child.send({ id, op, ...fields })
    })
  return {
    start: (setup) => call("start", { setup }),
    warm: (run) => call("warm", { run }),
    turn: (i, events) => call("turn", { i, events }),
    turns: (from, n, events) => call("turns", { from, n, events }),
    finish: async () => {
      const report = await call<GcReport>("finish")
      await exited
      return report
    },
  }
}

// ---- one size --------------------------------------------------------------------------------------------------------

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
  readonly gcs: ReadonlyArray<readonly [string, GcInside]>
  /** Median CPU time of each contender's call, µs; and of a tool step (pivot). */
  readonly cpu: ReadonlyMap<Kind, number>
  readonly recordCpu: { readonly memory: number; readonly sqlite: number }
}

interface Restart {
  readonly pivot: { readonly first: number; readonly wall: number; readonly window: number }
  readonly openCode: { readonly first: number; readonly wall: number; readonly window: number }
}

let lastTrim: { readonly micros: number; readonly messages: number } | undefined

/** The session of `size` stored messages, written once: every contender loads the same events and snapshot. */
const writeSession = (size: number, name = `${size}`) => {
  const g0 = now()
  const bulk = bulkSession(SESSION)
  const events = bulk.until(size, { messages: true, afterPivot: true })
  const eventsFile = path.join(dir, `session-${name}.ndjson`)
  const snapshotFile = path.join(dir, `snapshot-${name}.json`)
  writeEvents(eventsFile, events)
  fs.writeFileSync(
    snapshotFile,
    JSON.stringify({
      version: bulk.state.session.version,
      format: Sessions.SNAPSHOT_FORMAT,
      data: Sessions.encodeSnapshot(Sessions.retain(bulk.state)),
    }),
  )
  return { messages: bulk.messages, eventCount: events.length, eventsFile, snapshotFile, generated: now() - g0 }
}

let warmSession: ReturnType<typeof writeSession> | undefined

const runSize = async (size: number): Promise<Row> => {
  const peers = size <= PEERS_MAX
  const kinds = KINDS.filter(
    (k) => on(k) && (peers || k === "pivot-memory" || k === "pivot-sqlite" || k === "opencode-memory"),
  )

  // pivot's warm-up session, the same at every size (support/contenders.ts), written once.
  warmSession ??= writeSession(WARM_SIZE, "warm")
  const { messages, eventCount, eventsFile, snapshotFile, generated } = writeSession(size)
  // This process made the history (gigabytes at 1M messages) and keeps none of it: collected now, before any
  // contender starts, so that its collector does not work through it on the cores while they are timed.
  globalThis.gc?.()

  const dbOf = (kind: Kind) => path.join(dir, `${kind}-${size}.db`)
  const watch = gcWatch()
  const runners = new Map<Kind, Runner>(kinds.map((k) => [k, TOGETHER ? inProcess(watch) : forked()]))
  // One contender at a time, from loading on: none is timed while another works.
  const loaded = new Map<Kind, Loaded>()
  for (const [kind, r] of runners)
    loaded.set(
      kind,
      await r.start({
        kind,
        events: eventsFile,
        snapshot: snapshotFile,
        warmEvents: warmSession.eventsFile,
        warmSnapshot: warmSession.snapshotFile,
        db: dbOf(kind),
        warmMs: WARM_MS,
        budget: 5_000_000,
      }),
    )
  console.error(
    `size ${size}: ${messages} messages (${eventCount} events) generated in ${(generated / 1000).toFixed(1)} s; loaded ${[...loaded].map(([k, l]) => `${k} ${(l.ms / 1000).toFixed(1)} s`).join(", ")}`,
  )

  // trimMessages grows with the square of the history (its list counter re-counts the kept list for every message):
  // it runs while its cell has spent under 5 s, and is extrapolated from the previous size when a turn would take
  // over a minute.
  const plainCount = loaded.get("trim-messages")?.plain ?? 0
  const expectedTrim = lastTrim === undefined ? 0 : lastTrim.micros * (plainCount / lastTrim.messages) ** 2
  const trimRuns = runners.has("trim-messages") && expectedTrim < 60_000_000
  const warm = (kind: Kind) => runners.get(kind)!.warm(kind !== "trim-messages" || trimRuns)

  const samples = new Map<Kind, Array<number>>(kinds.map((k) => [k, []]))
  const cpus = new Map<Kind, Array<number>>(kinds.map((k) => [k, []]))
  const records = { "pivot-memory": [] as Array<number>, "pivot-sqlite": [] as Array<number> }
  const recordCpus = { "pivot-memory": [] as Array<number>, "pivot-sqlite": [] as Array<number> }
  const openCodePrune: Array<number> = []
  let windowFirst = 0
  let windowLast = 0
  // Each contender runs its turns in blocks of `--block` back to back (pivot's memory store first: it records the
  // events), so that a call follows only its own contender's work, the first of a block aside; the rounds of blocks
  // spread every contender's calls over the same minutes, so that a burst of load on the shared machine falls on all
  // of them alike. Each contender warms up just before its first block. `--interleaved`: every contender warms up,
  // then turn by turn, every contender in order, as before — each call then follows the other contenders' work
  // (which one depends on the order) and a wait of its process.
  const byTurn: Array<Array<readonly [Kind, TurnResult]>> = Array.from({ length: TURNS }, () => [])
  if (!INTERLEAVED) {
    for (let from = 0; from < TURNS; from += BLOCK) {
      const n = Math.min(BLOCK, TURNS - from)
      if (from === 0) await warm("pivot-memory")
      const sources = await runners.get("pivot-memory")!.turns(from, n, [])
      const events = sources.map((t) => t.events ?? [])
      for (const [k, t] of sources.entries()) byTurn[from + k]!.push(["pivot-memory", t])
      for (const [kind, r] of runners) {
        if (kind === "pivot-memory") continue
        if (from === 0) await warm(kind)
        for (const [k, t] of (await r.turns(from, n, events)).entries()) byTurn[from + k]!.push([kind, t])
      }
    }
  } else {
    for (const kind of runners.keys()) await warm(kind)
    for (let i = 0; i < TURNS; i++) {
      const source = await runners.get("pivot-memory")!.turn(i, [])
      const results: Array<readonly [Kind, TurnResult]> = [["pivot-memory", source]]
      for (const [kind, r] of runners)
        if (kind !== "pivot-memory") results.push([kind, await r.turn(i, source.events ?? [])])
      byTurn[i] = results
    }
  }
  for (const [i, results] of byTurn.entries()) {
    const source = results[0]![1]
    for (const [kind, t] of results) {
      if (t.micros !== undefined) samples.get(kind)!.push(t.micros)
      if (t.cpu !== undefined) cpus.get(kind)!.push(t.cpu)
      if (t.record !== undefined) records[kind as keyof typeof records].push(...t.record)
      if (t.recordCpu !== undefined) recordCpus[kind as keyof typeof recordCpus].push(...t.recordCpu)
      if (t.prunePass !== undefined) openCodePrune.push(t.prunePass)
      if (t.window !== undefined && t.window.hash !== source.window!.hash)
        throw new Error(
          `turn ${i} at ${size}: ${kind}'s window (${t.window.length} model messages) differs from pivot's memory store's (${source.window!.length})`,
        )
    }
    if (i === 0) windowFirst = source.window!.length
    windowLast = source.window!.length
  }
  // `--samples`: every timed call, in turn order, to see the spread behind a median.
  if (values.samples)
    for (const [kind, xs] of samples) console.error(`${size} ${kind}: ${xs.map((x) => x.toFixed(0)).join(" ")}`)
  const gcs: Array<readonly [string, GcInside]> = []
  for (const r of runners.values()) gcs.push(...((await r.finish()) ?? []))
  if (TOGETHER) gcs.push(...watch.report())
  watch.stop()
  const trimSamples = samples.get("trim-messages") ?? []
  const trim = trimRuns
    ? median(trimSamples)
    : runners.has("trim-messages") && lastTrim !== undefined
      ? expectedTrim
      : Number.NaN
  if (trimRuns) lastTrim = { micros: trim, messages: plainCount }
  const restart =
    RESTARTS > 0 && runners.has("pivot-sqlite") && runners.has("opencode-sqlite")
      ? restarts(dbOf("pivot-sqlite"), dbOf("opencode-sqlite"))
      : undefined
  // Every file of this size (pivot's warm-up session is kept for the next sizes).
  for (const f of fs.readdirSync(dir))
    if (!f.endsWith("-warm.ndjson") && !f.endsWith("-warm.json")) fs.rmSync(path.join(dir, f), { force: true })
  const of = (kind: Kind) => median(samples.get(kind) ?? [])
  return {
    size,
    messages,
    windowFirst,
    windowLast,
    pivotMemory: of("pivot-memory"),
    pivotSqlite: of("pivot-sqlite"),
    recordMemory: median(records["pivot-memory"]),
    recordSqlite: median(records["pivot-sqlite"]),
    meanMemory: mean(samples.get("pivot-memory")!),
    meanSqlite: mean(samples.get("pivot-sqlite") ?? []),
    openCodeSqlite: of("opencode-sqlite"),
    openCodeMemory: of("opencode-memory"),
    openCodePrune: median(openCodePrune),
    openCodePruneTurns: openCodePrune.length,
    prune: of("prune-messages"),
    trim,
    trimTurns: trimSamples.length,
    restart,
    gcs,
    cpu: new Map(kinds.map((k) => [k, median(cpus.get(k)!)])),
    recordCpu: { memory: median(recordCpus["pivot-memory"]), sqlite: median(recordCpus["pivot-sqlite"]) },
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
  for (const size of SIZES) rows.push(await runSize(size))
  console.log(
    `\n${started.toISOString().slice(0, 16)} UTC, Node ${process.version}, ${os.cpus().length} cores; load average (1, 5, 15 min) ${loadBefore} before, ${load()} after; median of ${TURNS} turns per cell (each 2–5 tool steps), ${WARM_MS} ms warm-up per contender; ${TOGETHER ? "every contender in this one process (--together)" : "each contender in a process of its own, one process working at a time"}; ${INTERLEAVED ? "turns interleaved (every contender's turn i, then turn i + 1: --interleaved)" : `each contender's turns back to back in blocks of ${BLOCK}, the blocks in rounds`}\n`,
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
    `\nCPU time of the same calls (median µs): every thread of ${TOGETHER ? "the process (shared by every contender here)" : "the contender's process (its collector's helper threads included)"} while the call ran, so not lengthened by other jobs waiting for the cores as the wall times above are; and of recording a tool step:\n`,
  )
  console.log(
    "| stored messages | pivot memory: prune + `prepare` | pivot SQLite: prune + `prepare` | OpenCode on SQLite | OpenCode in memory | AI SDK `pruneMessages` | LangChain `trimMessages` | record a tool step, memory | record a tool step, SQLite |",
  )
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of rows)
    console.log(
      `| ${r.messages.toLocaleString("en-US")} | ${["pivot-memory", "pivot-sqlite", "opencode-sqlite", "opencode-memory", "prune-messages", "trim-messages"].map((k) => fmt(r.cpu.get(k as Kind) ?? Number.NaN)).join(" | ")} | ${fmt(r.recordCpu.memory)} | ${fmt(r.recordCpu.sqlite)} |`,
    )
  console.log(
    `\nGarbage collection inside each contender's timed sections (every pause V8 reports, charged to the section it overlaps; ${TOGETHER ? "one heap for all" : "each its own heap"}): sections hit / timed, pauses (major), pause time ÷ the sections' time:\n`,
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
    // The contenders' processes still hold their IPC channels open: exit rather than wait for them forever.
    fs.rmSync(dir, { recursive: true, force: true })
    process.exit(1)
  })
  .finally(() => fs.rmSync(dir, { recursive: true, force: true }))
