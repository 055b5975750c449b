/**
 * Benchmark (issue 29, items 3 and 4): the real OpenCode (npm `opencode-ai`, its linux binary, offline) driven through
 * the same coding session several ways, and every request it sends billed under Anthropic's and OpenAI's cache rules.
 *
 * Contenders (each its own scratch project, home and `opencode serve` process; the session's turns are posted to its
 * HTTP API, `POST /session/:id/message`, one after the other):
 * - `opencode`: OpenCode alone, its defaults (automatic compaction and prune on);
 * - `opencode + dcp`: `@tarquinen/opencode-dcp` at `DCP_VERSION`, installed by this bench into its own folder
 *   (`$TMPDIR/pivot-bench-dcp-VERSION`, kept between runs) and loaded by `file://` URL, its default config; the
 *   scripted model calls DCP's `compress` when DCP's reminders are in the request (once per turn at most), on the
 *   closed turns;
 * - `pivot`: this repository's built plugin (packages/opencode-plugin/dist) with `PIVOT_OPTIONS`: drive mode with
 *   cache-aware's prune and the zero-cost rules, the HUD as each request's last message. pivot's prune waits for a
 *   cold cache, which only real time makes: before each turn after a pause longer than the cache's TTL the driver
 *   really waits the TTL and `COLD_MARGIN` (not the whole pause: only "longer than the TTL" decides anything);
 * - `pivot-compacts`: the same with `driveCompaction: true`: pivot asks OpenCode to compact when its strategy says so;
 * - `pivot-nohud`: the same with the plugin's `hud: false` (what the HUD costs);
 * - `pivot-record`: record mode with its defaults (no HUD): the plugin changes nothing OpenCode sends.
 *
 * The session (support/opencodeSession.ts): 8 turns over four ≈ 8k-token files, with re-reads, edits read back, a
 * failing edit, shell commands, a file written and read back, and two 8-minute pauses (simulated time: each request is
 * stamped 20 s after the previous one of its turn, turns 1 min apart, nothing sleeps). Every request the scripted
 * model receives is captured: title, agent and summariser calls alike, all billed.
 *
 * The bill (support/opencodeBill.ts over support/providerCache.ts): the request body serialised as the provider sees
 * it (tool schemas, system prompt, messages; tokens = characters / 4), Anthropic with OpenCode's own breakpoints
 * (first two system messages, last two messages), 5-minute TTL, 1,024-token minimum, write 1.25×, read 0.1×; OpenAI
 * automatic prefix caching from 1,024 tokens in 128-token steps, read 0.5× (GPT-4o; GPT-5's 0.1× is printed too).
 * The model's output is left out (the same script for every contender, but for DCP's `compress` calls, whose
 * summaries are the model's output: their characters are printed apart).
 *
 * Then what each contender's model could still see of the session's artifacts (files read and written, edits,
 * commands, the failed call's input): the artifact's marker in the last agent request; for pivot, also whether its
 * store holds it (what `context_recall` can give back, byte for byte).
 *
 * `--startup` (item 4): the first `opencode run` in a new project with and without the plugin, `--runs N` of each
 * interleaved, wall time and peak RSS of the process tree (sampled from /proc every 50 ms), then `--continue`.
 * Before those runs, the plugin's entry alone imported by OpenCode's own Bun (the binary with BUN_BE_BUN=1): what
 * loading the plugin costs OpenCode at start — and, in the same process, its first hook call about a session, which
 * loads the hooks (`--imports-only` stops there).
 * `--plugin FILE` measures another build of the plugin; `--before FILE` adds a build to compare with, interleaved
 * (e.g. an earlier commit's packages/opencode-plugin/dist/index.js).
 *
 * Run: `npm run bench:opencode [-- --only opencode,dcp,pivot,pivot-compacts] [--session compacting] [--no-pauses]
 * [--save FILE]`, `npm run bench:opencode -- --merge FILE,FILE` (bill saved runs side by side), or
 * `npm run bench:opencode -- --startup [--runs 5] [--before FILE] [--imports-only] [--save FILE]`; `npm run
 * bench:opencode -- --startup --pool FILE,FILE` reports startup rounds saved with `--save` as one.
 */
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { Pricing } from "@pivot/core"
import { Config } from "@pivot/runtime"
import { memorySteps } from "./support/memorySteps.ts"
import { type Bill, bill, type Floor, floorOf, promptOf, type Timed } from "./support/opencodeBill.ts"
import { Agent, ARTIFACTS, FILES, SHAPES, withoutPauses } from "./support/opencodeSession.ts"
import { counted, footprint, type Member, spaceOf, statFields } from "./support/processTree.ts"

// The harnesses the OpenCode tests use (loaded by path: they belong to those packages' tests): the scripted model on
// loopback (model-server.ts) and the oracle's offline OpenCode (scratch project and home, `opencode serve`, its HTTP API).
type Model = typeof import("../../packages/opencode/test/oracle/model-server.ts")
type Oracle = typeof import("../../packages/opencode/test/oracle/opencode.ts")
type Workspace = import("../../packages/opencode/test/oracle/opencode.ts").Workspace
const ROOT = Path.resolve(import.meta.dirname, "../..")
const { start } = (await import(Path.join(ROOT, "packages/opencode/test/oracle/model-server.ts"))) as Model
const { binaryPath, createSession, MODEL, serve, workspace } = (await import(
  Path.join(ROOT, "packages/opencode/test/oracle/opencode.ts")
)) as Oracle

/**
 * One user turn (`POST /session/:id/message`), answered when OpenCode's loop for it has finished: the oracle's
 * `prompt`, over node:http without a deadline. fetch gives up on a response whose headers take more than 300 s
 * (undici's `headersTimeout`), and on the shared machine a turn of a drive contender took longer than that.
 */
const prompt = (server: { readonly url: string }, sessionId: string, text: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const [providerID, modelID] = MODEL.split("/")
    const body = JSON.stringify({ model: { providerID, modelID }, parts: [{ type: "text", text }] })
    const request = Http.request(
      `${server.url}/session/${sessionId}/message`,
      { method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (response) => {
        let answer = ""
        response.on("data", (chunk: Buffer) => {
          answer += chunk.toString("utf8")
        })
        response.on("end", () =>
          response.statusCode === 200
            ? resolve()
            : reject(
                new Error(`POST /session/${sessionId}/message: HTTP ${response.statusCode} ${answer.slice(0, 500)}`),
              ),
        )
        response.on("error", reject)
      },
    )
    request.on("error", reject)
    request.end(body)
  })

/** The DCP release this bench installs (`npm view @tarquinen/opencode-dcp version` on 2026-12-01). */
export const DCP_VERSION = "3.1.14"
/** The plugin API DCP imports (a peer dependency), at OpenCode's own version. */
const PLUGIN_API = "@opencode-ai/plugin@1.18.33"
/**
 * The pivot contender's plugin options: drive mode, the HUD at the end of each request (drive's default). The record
 * row (`pivot-record`) keeps record mode's defaults for reference.
 */
export const PIVOT_OPTIONS: Readonly<Record<string, unknown>> = {
  drive: true,
  strategy: "cache-aware",
  // The zero-cost prune rules, by name (the plugin's DriveStrategy.RULES): every one of them.
  rules: ["duplicate-calls", "superseded-writes", "errored-inputs"],
}

/**
 * The scripted model's `cost` in opencode.json (USD per million tokens, models.dev's fields): Claude Sonnet 4.5's, so
 * pivot prices its rent-or-buy as an Anthropic user's would (its multipliers: write 1.25×, read 0.1×, output 5×).
 * OpenCode reads it too (its own cost display); the bill does not: it prices every request under both providers' rules.
 */
export const MODEL_COST = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } as const

const { values } = parseArgs({
  allowNegative: true,
  options: {
    only: { type: "string", default: "opencode,dcp,pivot,pivot-nohud,pivot-record" },
    /** The session's shape (support/opencodeSession.ts SHAPES): `base` (160k context) or `compacting` (48k). */
    session: { type: "string", default: "base" },
    /** Every pause longer than the TTL shortened to a turn's gap: the same session on a warm cache throughout. */
    "no-pauses": { type: "boolean", default: false },
    /** Writes the runs (every captured request, what each contender could see and recall) to this JSON file. */
    save: { type: "string", default: "" },
    /** Bills runs saved with --save (comma-separated files) side by side, without driving OpenCode. */
    merge: { type: "string", default: "" },
    /** With --startup: reports the rounds saved with --save (comma-separated files) as one, without running OpenCode. */
    pool: { type: "string", default: "" },
    startup: { type: "boolean", default: false },
    runs: { type: "string", default: "5" },
    keep: { type: "boolean", default: false },
    /** Writes each contender's per-request bill (kind, time, tokens, read, write, break, cold) to this JSON file. */
    lines: { type: "string", default: "" },
    plugin: { type: "string", default: "" },
    before: { type: "string", default: "" },
    "imports-only": { type: "boolean", default: false },
    // Each run's process tree at its RSS peak (command, RSS/PSS MB).
    verbose: { type: "boolean", default: false },
    // --no-sample: no stack sampler in the timing wrapper (it slows the runs with the plugin; the share is then not given).
    sample: { type: "boolean", default: true },
    // A folder for each run's `--print-logs` output (OpenCode's own timeline), to see where a slower run waits.
    logs: { type: "string" },
  },
})

/** The built plugin OpenCode loads (`--plugin FILE`: another build, e.g. an earlier commit's, for --startup). */
const PLUGIN =
  values.plugin === "" ? Path.join(ROOT, "packages/opencode-plugin/dist/index.js") : Path.resolve(values.plugin)
const DCP_DIR = Path.join(Os.tmpdir(), `pivot-bench-dcp-${DCP_VERSION}`)
const STEP = 20_000
/** Real time between turns (ms), for the plugins' end-of-turn work. */
const SETTLE = 5_000
const GAP = 60_000

const pivotLabel = PIVOT_OPTIONS.drive === true ? "pivot (drive)" : "pivot (record)"

const SHAPE = SHAPES[values.session]
if (SHAPE === undefined) throw new Error(`--session must be one of ${Object.keys(SHAPES).join(", ")}`)
/** The session's turns as this run drives them (with or without its pauses longer than the TTL). */
const TURNS = values["no-pauses"] ? withoutPauses(SHAPE.turns) : SHAPE.turns
/** The session as the report names it. */
const SESSION = `${values.session}${values["no-pauses"] ? ", no pauses" : ""}`

/** Installs DCP into scripts/bench/.dcp once; its entry as a file:// URL. */
const dcpEntry = (): string => {
  const entry = Path.join(DCP_DIR, "node_modules/@tarquinen/opencode-dcp/dist/index.js")
  const installed = Path.join(DCP_DIR, "node_modules/@tarquinen/opencode-dcp/package.json")
  const version = Fs.existsSync(installed)
    ? (JSON.parse(Fs.readFileSync(installed, "utf8")) as { version: string }).version
    : undefined
  if (version !== DCP_VERSION) {
    Fs.mkdirSync(DCP_DIR, { recursive: true })
    Fs.writeFileSync(Path.join(DCP_DIR, "package.json"), '{ "private": true }\n')
    console.log(`installing @tarquinen/opencode-dcp@${DCP_VERSION} into ${Path.relative(ROOT, DCP_DIR)} …`)
    execFileSync(
      "npm",
      [
        "install",
        "--prefix",
        DCP_DIR,
        "--no-audit",
        "--no-fund",
        "--omit=peer",
        "--ignore-scripts",
        `@tarquinen/opencode-dcp@${DCP_VERSION}`,
        PLUGIN_API,
      ],
      { stdio: "inherit" },
    )
  }
  return pathToFileURL(entry).href
}

interface Contender {
  readonly name: string
  readonly plugin?: string | [string, Readonly<Record<string, unknown>>]
  /** Waits out the cache's TTL in real time before a turn that follows a longer pause (its plugin reads the clock). */
  readonly realPauses?: boolean
}

/** The provider cache's TTL the plugin's strategy assumes (5 minutes), and how much longer the driver waits. */
const CACHE_TTL = 5 * 60_000
const COLD_MARGIN = 15_000

const contenders = (): ReadonlyArray<Contender> => {
  const only = new Set(values.only.split(","))
  const all: Array<Contender & { key: string }> = [
    { key: "opencode", name: "opencode" },
    ...(only.has("dcp") ? [{ key: "dcp", name: "opencode + dcp", plugin: dcpEntry() }] : []),
    {
      key: "pivot",
      name: `opencode + ${pivotLabel}`,
      plugin: [pathToFileURL(PLUGIN).href, PIVOT_OPTIONS],
      realPauses: PIVOT_OPTIONS.strategy !== undefined,
    },
    // The same, and pivot asks OpenCode to compact when its strategy says so (option `driveCompaction`), before
    // OpenCode's own limit.
    {
      key: "pivot-compacts",
      name: `opencode + ${pivotLabel.slice(0, -1)}, pivot compacts)`,
      plugin: [pathToFileURL(PLUGIN).href, { ...PIVOT_OPTIONS, driveCompaction: true }],
      realPauses: PIVOT_OPTIONS.strategy !== undefined,
    },
    // The same without the usage HUD: what the HUD costs.
    {
      key: "pivot-nohud",
      name: `opencode + ${pivotLabel.slice(0, -1)}, no HUD)`,
      plugin: [pathToFileURL(PLUGIN).href, { ...PIVOT_OPTIONS, hud: false }],
      realPauses: PIVOT_OPTIONS.strategy !== undefined,
    },
    // Record mode with its defaults (no HUD): the plugin changes nothing OpenCode sends, for reference.
    { key: "pivot-record", name: "opencode + pivot (record)", plugin: [pathToFileURL(PLUGIN).href, {}] },
  ]
  return all.filter((c) => only.has(c.key))
}

/** The scratch project: the session's files committed, and the contender's plugin in opencode.json. */
const setUp = async (port: number, plugin: Contender["plugin"]): Promise<Workspace> => {
  const ws = await workspace({ baseURL: `http://127.0.0.1:${port}/v1`, context: SHAPE.context, output: SHAPE.output })
  for (const [name, text] of Object.entries(FILES)) {
    Fs.mkdirSync(Path.dirname(Path.join(ws.repo, name)), { recursive: true })
    Fs.writeFileSync(Path.join(ws.repo, name), text)
  }
  const configFile = Path.join(ws.repo, "opencode.json")
  const config = JSON.parse(Fs.readFileSync(configFile, "utf8")) as {
    plugin?: unknown
    provider: Record<string, { models: Record<string, Record<string, unknown>> }>
  }
  if (plugin !== undefined) config.plugin = [plugin]
  // The scripted model's price, as a user declares one for a custom provider's model (pivot reads OpenCode's `cost`).
  const [providerID, modelID] = MODEL.split("/") as [string, string]
  config.provider[providerID]!.models[modelID]!.cost = MODEL_COST
  Fs.writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`)
  const git = (args: ReadonlyArray<string>) => execFileSync("git", args, { cwd: ws.repo, stdio: "pipe" })
  git(["add", "-A"])
  git(["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qm", "files"])
  // The oracle's OPENCODE_PURE=1 keeps OpenCode from loading any plugin but its own: the contenders need theirs.
  const { OPENCODE_PURE: _, ...env } = ws.env
  return { ...ws, env }
}

interface Run {
  readonly contender: string
  /** The session it drove (`SESSION`). */
  readonly session: string
  readonly requests: ReadonlyArray<Timed & { readonly kind: string }>
  readonly lastAgent: string
  readonly store?: string
  readonly compressChars: number
  readonly seconds: number
  /** pivot's own prunes (`PartCompacted` with a rule): each cleared part, and the first request that showed it so. */
  readonly cleared?: ReadonlyArray<Cleared>
}

/** A part a rule of pivot's cleared: its rule, output or input, and the request (1-based) and turn first sent so. */
interface Cleared {
  readonly rule: string
  readonly target: "output" | "input"
  readonly request: number | undefined
  readonly turn: number | undefined
}

/**
 * The parts pivot's rules cleared in a store (its events as JSON lines), each with the first captured request whose
 * body shows its placeholder (the recall id: the part's for an output, `…-input` for an input).
 */
const clearedOf = (
  store: string,
  captured: ReadonlyArray<{ readonly turn: number; readonly request: { readonly body: unknown } }>,
): ReadonlyArray<Cleared> => {
  const bodies = captured.map((c) => JSON.stringify(c.request.body))
  return store.split("\n").flatMap((line): Array<Cleared> => {
    const event = JSON.parse(line) as { _tag: string; rule?: string; partId?: string; target?: string }
    if (event._tag !== "PartCompacted" || event.rule === undefined) return []
    const target = event.target === "input" ? "input" : "output"
    const placeholder = `recall id: ${event.partId}${target === "input" ? "-input" : ""}]`
    const at = bodies.findIndex((body) => body.includes(placeholder))
    return [
      {
        rule: event.rule,
        target,
        request: at < 0 ? undefined : at + 1,
        turn: at < 0 ? undefined : captured[at]!.turn + 1,
      },
    ]
  })
}

/** One line per rule: how many parts it cleared, and at which requests (turn and request number). */
const clearedText = (cleared: ReadonlyArray<Cleared>): string => {
  const rules = [...new Set(cleared.map((c) => c.rule))]
  const zeroCost = (PIVOT_OPTIONS.rules as ReadonlyArray<string>).filter((r) => !rules.includes(r))
  const at = (c: Cleared) => (c.request === undefined ? "never sent" : `turn ${c.turn} req ${c.request}`)
  return [
    ...rules.map((rule) => {
      const mine = cleared.filter((c) => c.rule === rule)
      const when = [...new Set(mine.map(at))]
      const inputs = mine.filter((c) => c.target === "input").length
      return `${rule} ${mine.length}${inputs > 0 ? ` (${inputs} inputs)` : ""} at ${when.join(", ")}`
    }),
    ...zeroCost.map((rule) => `${rule} 0`),
  ].join("; ")
}

/** Drives one contender through the session; every request, stamped with simulated time. */
const drive = async (contender: Contender): Promise<Run> => {
  const began = performance.now()
  const agent = new Agent("")
  const model = await start((body) => agent.answer(body))
  const ws = await setUp(model.port, contender.plugin)
  agent.repo = ws.repo
  const server = await serve(ws, 300_000)
  try {
    const session = await createSession(server)
    for (const [n, turn] of TURNS.entries()) {
      // A user's next message comes seconds after the answer, not at once: without this pause the plugin's sync at
      // the previous turn's end (session.idle) can run after the next turn's first step has begun, and it records
      // that step unfinished (a defect of the recorder, found here; recording then stops for the session).
      if (n > 0) await new Promise((resolve) => setTimeout(resolve, SETTLE))
      if (contender.realPauses === true && TURNS[n]!.pauseBefore > CACHE_TTL) {
        process.stdout.write(`  ${contender.name}: waiting out the cache's TTL before turn ${n + 1}\n`)
        await new Promise((resolve) => setTimeout(resolve, CACHE_TTL + COLD_MARGIN))
      }
      agent.begin(n)
      await prompt(server, session, turn.prompt)
      process.stdout.write(`  ${contender.name}: turn ${n + 1}/${TURNS.length}\r`)
    }
  } finally {
    await server.close()
    await model.close()
  }
  // Simulated time: each turn begins its pause after the previous turn's last request; its requests 20 s apart.
  const requests: Array<Timed & { kind: string }> = []
  let clock = 0
  let turn = -1
  for (const { turn: t, request } of agent.log) {
    if (t !== turn) {
      clock += t === 0 ? 0 : Math.max(GAP, TURNS[t]!.pauseBefore)
      turn = t
    } else clock += STEP
    requests.push({ body: request.body, at: clock, kind: request.kind, output: Math.round(request.output / 4) })
  }
  const agents = requests.filter((r) => r.kind === "agent")
  const compress = new Set<string>()
  for (const r of agents)
    for (const m of r.body.messages)
      for (const call of (m as { tool_calls?: ReadonlyArray<{ function: { name: string; arguments: string } }> })
        .tool_calls ?? [])
        if (call.function.name === "compress") compress.add(call.function.arguments)
  const db = Path.join(ws.repo, ".pivot/opencode.db")
  let store: string | undefined
  if (Fs.existsSync(db)) {
    const sqlite = new DatabaseSync(db, { readOnly: true })
    const rows = sqlite.prepare("SELECT data FROM pivot_events").all() as Array<{ data: string }>
    store = rows.map((r) => r.data).join("\n")
    sqlite.close()
  }
  if (!values.keep) ws.remove()
  else console.log(`  kept ${ws.root}`)
  return {
    contender: contender.name,
    session: SESSION,
    requests,
    lastAgent: agents.length === 0 ? "" : promptOf(agents.at(-1)!.body).text,
    ...(store === undefined ? {} : { store, cleared: clearedOf(store, agent.log) }),
    compressChars: [...compress].reduce((n, a) => n + a.length, 0),
    seconds: (performance.now() - began) / 1000,
  }
}

const pad = (s: string, n: number) => s.padStart(n)
const k = (n: number) => `${(n / 1000).toFixed(1)}k`
const pct = (n: number) => `${(100 * n).toFixed(0)}%`

/** GPT-5's multipliers (its price in the runtime's catalog): read 0.1×, output 8×. */
const GPT5 = Pricing.ratesOf(Config.DEFAULT_PRICES["openai/gpt-5"]!)!

/** A change against a reference, as a signed percentage ("—" without one). */
const versus = (n: number, ref: number | undefined) => {
  if (ref === undefined) return "—"
  const v = n / ref - 1
  return `${v >= 0 ? "+" : ""}${pct(v)}`
}

/** One session's runs side by side: each provider's bill, the output, the calls by kind. */
const reportSession = (session: string, runs: ReadonlyArray<Run>) => {
  const alone = runs.find((r) => r.contender === "opencode")
  const dcp = runs.find((r) => r.contender === "opencode + dcp")
  console.log(`\n═══ session: ${session} ═══`)
  for (const provider of ["anthropic", "openai"] as const) {
    console.log(
      `\n${provider === "anthropic" ? "Anthropic (OpenCode's breakpoints, write 1.25×, read 0.1×, output 5×)" : "OpenAI (automatic, read 0.5×, output 4×: GPT-4o; GPT-5 read 0.1×, output 8×)"}`,
    )
    const bills = new Map(runs.map((run) => [run, bill(run.requests, provider)]))
    const gpt5 = (b: Bill) => b.input + b.cacheRead * GPT5.read + b.output * GPT5.output
    // A figure and its change against OpenCode alone and against DCP (the same session's runs).
    const compared = (name: string, width: number, f: (b: Bill) => number) => [
      { name, width, cell: (b: Bill) => k(f(b)) },
      { name: "vs alone", width: 9, cell: (b: Bill) => versus(f(b), alone && f(bills.get(alone)!)) },
      { name: "vs dcp", width: 8, cell: (b: Bill) => versus(f(b), dcp && f(bills.get(dcp)!)) },
    ]
    const columns: ReadonlyArray<{ name: string; width: number; cell: (b: Bill, run: Run) => string }> = [
      { name: "req", width: 5, cell: (_, run) => String(run.requests.length) },
      { name: "summ", width: 5, cell: (_, run) => String(run.requests.filter((r) => r.kind === "summary").length) },
      ...compared("billed", 10, (b) => b.billed),
      { name: "input", width: 9, cell: (b) => k(b.input) },
      { name: "read", width: 9, cell: (b) => k(b.cacheRead) },
      { name: "write", width: 9, cell: (b) => k(b.cacheWrite) },
      { name: "breaks", width: 7, cell: (b) => String(b.breaks) },
      { name: "cold", width: 5, cell: (b) => String(b.colds) },
      { name: "hit", width: 5, cell: (b) => pct(b.hitRate) },
      { name: "out", width: 8, cell: (b) => k(b.output) },
      ...compared("total", 10, (b) => b.total),
      ...(provider === "openai" ? compared("GPT-5", 10, gpt5) : []),
      { name: "chars", width: 10, cell: (b) => k(b.characters) },
    ]
    console.log(`${"contender".padEnd(36)}${columns.map((c) => pad(c.name, c.width)).join("")}`)
    for (const run of runs)
      console.log(
        `${run.contender.padEnd(36)}${columns.map((c) => pad(c.cell(bills.get(run)!, run), c.width)).join("")}`,
      )
    // The floor beside each contender (support/opencodeBill.ts `floorOf`): each message written once, the fixed prompt
    // read on every other call (written again after a pause longer than the TTL), the summariser calls it made.
    console.log(
      `  floor (input: writes + reads + summariser input; the 30% target is 0.7 × OpenCode alone's billed${alone === undefined ? ", not in this run" : ` = ${k(0.7 * bills.get(alone)!.billed)}`})`,
    )
    const floorColumns: ReadonlyArray<{ name: string; width: number; cell: (f: Floor, b: Bill) => string }> = [
      { name: "writes", width: 10, cell: (f) => k(f.writes) },
      { name: "reads", width: 9, cell: (f) => k(f.reads) },
      { name: "summariser", width: 11, cell: (f) => k(f.summariser) },
      { name: "floor", width: 9, cell: (f) => k(f.billed) },
      { name: "vs alone", width: 9, cell: (f) => versus(f.billed, alone && bills.get(alone)!.billed) },
      { name: "billed", width: 9, cell: (_, b) => k(b.billed) },
      { name: "above", width: 9, cell: (f, b) => k(b.billed - f.billed) },
      { name: "no summ.", width: 9, cell: (f) => k(f.writes + f.reads) },
      { name: "vs alone", width: 9, cell: (f) => versus(f.writes + f.reads, alone && bills.get(alone)!.billed) },
    ]
    console.log(`  ${"contender".padEnd(34)}${floorColumns.map((c) => pad(c.name, c.width)).join("")}`)
    for (const run of runs) {
      const f = floorOf(run.requests, provider)
      console.log(
        `  ${run.contender.padEnd(34)}${floorColumns.map((c) => pad(c.cell(f, bills.get(run)!), c.width)).join("")}`,
      )
    }
  }
  console.log("\nWhat the model could still see (in the last agent request) or recall (pivot's store) of the session:")
  console.log(`${"artifact".padEnd(34)}${runs.map((r) => pad(r.contender.slice(0, 34), 36)).join("")}`)
  for (const a of ARTIFACTS) {
    const cells = runs.map((r) => {
      const seen = r.lastAgent.includes(a.marker) ? "seen" : "gone"
      const recall = r.store === undefined ? "" : r.store.includes(a.marker) ? " / recallable" : " / not stored"
      return pad(`${seen}${recall}`, 36)
    })
    console.log(`${`${a.kind} ${a.name}`.padEnd(34)}${cells.join("")}`)
  }
  for (const run of runs) {
    const of = (kind: string) => run.requests.filter((r) => r.kind === kind)
    console.log(
      `${run.contender}: ${of("agent").length} agent, ${of("summary").length} summariser (output ${k(of("summary").reduce((n, r) => n + (r.output ?? 0), 0))} tokens), ${of("title").length} title requests; ${run.compressChars > 0 ? `compress arguments ${run.compressChars} chars (model output); ` : ""}driven in ${run.seconds.toFixed(0)} s`,
    )
  }
  // pivot's prunes by rule (drive mode with a strategy): what each rule cleared, first sent at which request.
  // And its compactions: how many, and how many pivot asked for (`CompactionRequestedByStrategy`) and why.
  for (const run of runs)
    if (run.cleared !== undefined && run.contender.includes("drive")) {
      console.log(`${run.contender} cleared: ${clearedText(run.cleared)}`)
      const events = run.store!.split("\n").map((line) => JSON.parse(line) as { _tag: string; reason?: string })
      const asked = events.filter((e) => e._tag === "CompactionRequestedByStrategy")
      console.log(
        `${run.contender} compactions: ${events.filter((e) => e._tag === "CompactionRequested").length}, asked by pivot: ${asked.length}${asked.length === 0 ? "" : ` (${asked.map((e) => e.reason).join(", ")})`}`,
      )
    }
}

const report = (runs: ReadonlyArray<Run>) => {
  const sessions = [...new Set(runs.map((r) => r.session))]
  for (const session of sessions)
    reportSession(
      session,
      runs.filter((r) => r.session === session),
    )
  if (values.lines !== "")
    Fs.writeFileSync(
      values.lines,
      JSON.stringify(
        runs.map((run) => ({
          contender: run.contender,
          session: run.session,
          bills: (["anthropic", "openai"] as const).map((provider) => ({
            provider,
            lines: bill(run.requests, provider).lines.map((line, i) => ({
              kind: run.requests[i]!.kind,
              at: run.requests[i]!.at,
              tokens: line.tokens,
              input: line.input,
              read: line.cacheRead,
              write: line.cacheWrite,
              output: line.output,
              broke: line.broke,
              cold: line.cold,
            })),
          })),
        })),
        null,
        1,
      ),
    )
}

// ── --startup: the first request with and without the plugin ───────────────────────────────────────────────────

/** The kernel's clock ticks per second, the unit of the CPU times in /proc. */
const TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100

/** The process and its descendants at this moment, from /proc. */
const tree = (pid: number): ReadonlyArray<Member> => {
  const children = new Map<number, Array<number>>()
  const cpu = new Map<number, number>()
  const parent = new Map<number, number>()
  const space = new Map<number, string>()
  for (const entry of Fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const fields = statFields(Fs.readFileSync(`/proc/${entry}/stat`, "utf8"))
      const ppid = Number(fields[1])
      const list = children.get(ppid) ?? []
      list.push(Number(entry))
      children.set(ppid, list)
      parent.set(Number(entry), ppid)
      space.set(Number(entry), spaceOf(fields))
      // utime and stime (fields 14 and 15).
      cpu.set(Number(entry), ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS)
    } catch {
      // the process ended while listed
    }
  }
  const members: Array<Member> = []
  const visit = (p: number) => {
    try {
      const status = Fs.readFileSync(`/proc/${p}/status`, "utf8")
      const rollup = Fs.readFileSync(`/proc/${p}/smaps_rollup`, "utf8")
      const command = Fs.readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").filter(Boolean).slice(0, 3).join(" ")
      members.push({
        pid: p,
        ppid: parent.get(p) ?? 0,
        space: space.get(p) ?? "",
        command: command.replace(/^.*\//, "").slice(0, 60),
        rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024,
        pss: Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) * 1024,
        cpuMs: cpu.get(p) ?? 0,
      })
    } catch {
      // gone
    }
    for (const c of children.get(p) ?? []) visit(c)
  }
  visit(pid)
  return members
}

/**
 * The CPU time (user + system, ms) of this process's children that have ended and been waited for, each with its own
 * waited-for descendants: the kernel adds a child's times and its children's to its parent's `cutime`/`cstime` when
 * the parent waits for it (/proc/self/stat, fields 16 and 17). Across one `opencode` run (nothing else of this process
 * runs as a child meanwhile), its growth is the CPU of that run's whole process tree.
 */
const reapedCpuMs = (): number => {
  const fields = statFields(Fs.readFileSync("/proc/self/stat", "utf8"))
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS
}

/** One hook call as the timing wrapper saw it: when it began (epoch ms), how long OpenCode waited, the process's CPU meanwhile. */
interface HookCall {
  readonly name: string
  readonly at: number
  readonly ms: number
  readonly cpuMs: number
}

/**
 * The plugin as the with-plugin runs load it: a wrapper around its entry that times the entry's import and the
 * plugin's set-up (`load`) and every hook call (the wall time from the call to its answer, and the CPU time the whole
 * process used meanwhile), kept in memory and written as JSON at the process's exit to the file `PIVOT_BENCH_HOOKS`
 * names. It adds two clock reads and an array push to each call.
 */
const hookTimer = (entry: string): string => {
  const file = Path.join(Os.tmpdir(), `pivot-bench-hooks-${Buffer.from(entry).toString("base64url").slice(-40)}.mjs`)
  // The plugin's own files: the entry's folder (dist/), the bundle's chunks under it.
  const own = `${Path.dirname(entry)}${Path.sep}`
  Fs.writeFileSync(
    file,
    [
      'import * as Fs from "node:fs"',
      "const now = () => performance.timeOrigin + performance.now()",
      "const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }",
      "const calls = []",
      // The plugin's own per-phase counters (its Phases.ts, ADR 0056): it pushes to this array when it is there.
      'const phases = (globalThis[Symbol.for("pivot.phases")] = [])',
      // JavaScriptCore's sampling profiler (bun:jsc, OpenCode's Bun): a stack every ~1 ms while JavaScript runs, none
      // while the thread waits. Each sample is kept as its time (epoch ms) and whether a frame of the plugin's own
      // files was on the stack (`plugin`: its code, or what it called synchronously: SQLite, OpenCode's client).
      // Drained every second so the profiler's buffer stays small; the stacks' timestamps are the monotonic clock
      // since boot, which /proc/uptime reads too (10 ms resolution).
      `const own = ${JSON.stringify(own)}`,
      "const samples = []",
      "let jsc",
      'try { if (process.env.PIVOT_BENCH_SAMPLE === "0") throw 0; jsc = await import("bun:jsc"); jsc.startSamplingProfiler() } catch { jsc = undefined }',
      'const offset = Date.now() - Number(Fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 1000',
      'const mine = (f) => typeof f.sourceURL === "string" && f.sourceURL.replace(/^file:\\/\\//, "").startsWith(own)',
      "let sampleError",
      "const drain = () => { if (jsc === undefined) return; try { for (const t of jsc.samplingProfilerStackTraces().traces) samples.push(Math.round(t.timestamp * 1000 + offset), t.frames.some(mine) ? 1 : 0) } catch (e) { sampleError = String(e) } }",
      "setInterval(drain, 1000).unref()",
      "const out = process.env.PIVOT_BENCH_HOOKS",
      "const save = () => { if (out) { drain(); Fs.writeFileSync(out, JSON.stringify({ calls, samples, sampleError, phases })) } }",
      'process.on("exit", save)',
      "const timed = (name, fn) => async (...args) => {",
      "  const at = now(), c = cpu()",
      "  try { return await fn(...args) } finally { calls.push({ name, at, ms: now() - at, cpuMs: cpu() - c }) }",
      "}",
      // The plugin's reads of the session through OpenCode's server (its SDK client), timed like the hooks.
      "const reading = (client) => {",
      "  const session = client?.session",
      "  if (session === undefined) return client",
      "  const read = new Proxy(session, { get: (t, k) => { const v = Reflect.get(t, k); return typeof v !== 'function' ? v : k === 'get' || k === 'messages' || k === 'list' ? timed('read ' + k, v.bind(t)) : v.bind(t) } })",
      "  return new Proxy(client, { get: (t, k) => (k === 'session' ? read : Reflect.get(t, k)) })",
      "}",
      "export default async (input, options) => {",
      "  const at = now(), c = cpu()",
      `  const plugin = (await import(${JSON.stringify(pathToFileURL(entry).href)})).default`,
      "  const hooks = await plugin({ ...input, client: reading(input.client) }, options)",
      '  calls.push({ name: "load", at, ms: now() - at, cpuMs: cpu() - c })',
      "  const wrapped = {}",
      "  for (const [name, value] of Object.entries(hooks))",
      '    if (name === "tool")',
      '      wrapped.tool = Object.fromEntries(Object.entries(value).map(([t, d]) => [t, { ...d, execute: timed("tool " + t, d.execute) }]))',
      // Each event call named by its type (event session.updated, …), for the timeline.
      '    else if (name === "event") wrapped.event = (arg) => timed("event " + arg?.event?.type, value)(arg)',
      '    else wrapped[name] = typeof value === "function" ? timed(name, value) : value',
      "  const dispose = wrapped.dispose",
      "  wrapped.dispose = async () => { try { await dispose?.() } finally { save() } }",
      "  return wrapped",
      "}",
      "",
    ].join("\n"),
  )
  return file
}

interface Sample {
  readonly seconds: number
  /** Peak of the tree's summed RSS (shared pages counted once per process). */
  readonly peak: number
  /** Peak of the tree's summed PSS (shared pages divided): the tree's real footprint. */
  readonly peakPss: number
  /** When the PSS peak was sampled, s after the spawn: before or after the first agent request. */
  readonly peakPssAt: number
  /** The tree's highest PSS sampled before the first agent request (that request's own peak), 0 if none. */
  readonly pssBeforeAgent: number
  /** The tree at its RSS peak. */
  readonly atPeak: ReadonlyArray<Member>
  /** CPU time of the whole process tree (user + system of every process, waited for), s: `reapedCpuMs`. */
  readonly cpu: number
  /** The same summed from the 50 ms samples (each process's last sample: a lower bound, a check on `cpu`). */
  readonly sampledCpu: number
  /** From the spawn to the first agent request (one with tools) the scripted model received, s. */
  readonly firstAgent: number | undefined
  /** When it was spawned (epoch ms). */
  readonly spawnedAt: number
  /** The hook calls of the plugin (its timing wrapper), empty without it. */
  readonly hooks: ReadonlyArray<HookCall>
  /** The plugin's own phases (its per-phase counters, ADR 0056), empty without it or with a build that has none. */
  readonly phases: ReadonlyArray<HookCall>
  /**
   * The JavaScript thread's stack samples (the wrapper's, ~1 ms apart while JavaScript runs), flat: epoch ms, then 1
   * when a frame of the plugin's files was on the stack, else 0. Empty without the plugin.
   */
  readonly samples: ReadonlyArray<number>
}

/** When each request reached the scripted model (epoch ms), and whether it was the agent's (it carries tools). */
type Arrivals = Array<{ readonly at: number; readonly agent: boolean }>

const timed = (ws: Workspace, args: ReadonlyArray<string>, logName: string, arrivals: Arrivals): Promise<Sample> =>
  new Promise((resolve, reject) => {
    const hookLog = Path.join(ws.root, `hooks-${logName}.json`)
    Fs.rmSync(hookLog, { force: true })
    const argv = values.logs === undefined ? args : [...args, "--print-logs", "--log-level", "DEBUG"]
    const epoch = Date.now()
    const began = performance.now()
    const cpuBefore = reapedCpuMs()
    const child = spawn(binaryPath(), argv, {
      cwd: ws.repo,
      env: { ...ws.env, PIVOT_BENCH_HOOKS: hookLog, PIVOT_BENCH_SAMPLE: values.sample ? "1" : "0" },
      stdio: ["ignore", "ignore", "pipe"],
    })
    let peak = 0
    let peakPss = 0
    let peakPssAt = 0
    // Every sample's time (s after the spawn) and PSS: the peak before the first agent request is read at the end.
    const pssSeries: Array<readonly [number, number]> = []
    let atPeak: ReadonlyArray<Member> = []
    const lastCpu = new Map<number, number>()
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString("utf8")
    })
    const timer = setInterval(() => {
      if (child.pid === undefined) return
      const members = tree(child.pid)
      for (const m of members) lastCpu.set(m.pid, m.cpuMs)
      // Each address space once: a child between its spawn and its exec shows its parent's memory (processTree.ts).
      const { rss, pss } = footprint(members)
      if (rss > peak) [peak, atPeak] = [rss, members]
      const t = (performance.now() - began) / 1000
      pssSeries.push([t, pss])
      if (pss > peakPss) [peakPss, peakPssAt] = [pss, t]
    }, 50)
    child.on("error", reject)
    child.on("close", (code) => {
      clearInterval(timer)
      const seconds = (performance.now() - began) / 1000
      const cpu = (reapedCpuMs() - cpuBefore) / 1000
      if (values.logs !== undefined) {
        Fs.mkdirSync(values.logs, { recursive: true })
        Fs.writeFileSync(Path.join(values.logs, `${logName}.log`), stderr)
      }
      const firstAgent = arrivals.find((a) => a.agent && a.at >= epoch)
      const agentAt = firstAgent === undefined ? Number.POSITIVE_INFINITY : (firstAgent.at - epoch) / 1000
      const pssBeforeAgent = pssSeries.reduce((max, [t, pss]) => (t < agentAt ? Math.max(max, pss) : max), 0)
      const logged = Fs.existsSync(hookLog)
        ? (JSON.parse(Fs.readFileSync(hookLog, "utf8")) as {
            calls: Array<HookCall>
            samples: Array<number>
            phases?: Array<HookCall>
          })
        : { calls: [], samples: [], phases: [] }
      if (code !== 0) reject(new Error(`opencode ${args[0]} exited ${code}: ${stderr.slice(-1000)}`))
      else
        resolve({
          seconds,
          peak,
          peakPss,
          peakPssAt,
          pssBeforeAgent,
          atPeak,
          cpu,
          sampledCpu: [...lastCpu.values()].reduce((n, c) => n + c, 0) / 1000,
          firstAgent: firstAgent === undefined ? undefined : (firstAgent.at - epoch) / 1000,
          spawnedAt: epoch,
          hooks: logged.calls,
          phases: logged.phases ?? [],
          samples: logged.samples,
        })
    })
  })

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0)

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** Median and range, e.g. `1.2 (0.9–1.6)`. */
const spread = (xs: ReadonlyArray<number>, digits: number, sign = false) => {
  const f = (x: number) => `${sign && x >= 0 ? "+" : ""}${x.toFixed(digits)}`
  return xs.length === 0 ? "—" : `${f(median(xs))} (${f(Math.min(...xs))} … ${f(Math.max(...xs))})`
}

/**
 * What the plugin's hooks held up on the way to the first agent request: the hooks OpenCode awaits (all but `event`,
 * which it calls without waiting, and `dispose`) that began before that request, their wall time summed and the CPU
 * time the process used during them; the `event` calls before it, apart; the load (the entry's import and the
 * plugin's set-up, awaited at OpenCode's start); and `dispose` (after the answer).
 */
/** The longest gap between two stack samples counted as JavaScript running (the profiler samples every ~1 ms). */
const SAMPLE_CAP_MS = 4

/** The length of the union of the calls' intervals (ms). */
const union = (calls: ReadonlyArray<HookCall>): number => {
  let total = 0
  let end = Number.NEGATIVE_INFINITY
  for (const c of [...calls].sort((a, b) => a.at - b.at)) {
    const stop = c.at + c.ms
    if (stop <= end) continue
    total += stop - Math.max(c.at, end)
    end = stop
  }
  return total
}

const hookTimes = (sample: Sample) => {
  const cutoff =
    sample.firstAgent === undefined ? Number.POSITIVE_INFINITY : sample.spawnedAt + sample.firstAgent * 1000
  const before = sample.hooks.filter((h) => h.at < cutoff)
  const sum = (xs: ReadonlyArray<HookCall>, k: "ms" | "cpuMs") => xs.reduce((n, h) => n + h[k], 0)
  const isEvent = (h: HookCall) => h.name === "event" || h.name.startsWith("event ")
  // The plugin's reads of the session through OpenCode's server happen inside its hooks (counted there already).
  const isRead = (h: HookCall) => h.name.startsWith("read ")
  const awaited = before.filter((h) => !isEvent(h) && !isRead(h) && h.name !== "dispose" && h.name !== "load")
  const events = before.filter(isEvent)
  const reads = before.filter(isRead)
  const load = sample.hooks.filter((h) => h.name === "load")
  const dispose = sample.hooks.filter((h) => h.name === "dispose")
  const byName = new Map<string, { n: number; ms: number }>()
  for (const h of awaited) {
    const entry = byName.get(h.name) ?? { n: 0, ms: 0 }
    entry.n++
    entry.ms += h.ms
    byName.set(h.name, entry)
  }
  // The sampled JavaScript thread: each sample stands for the time since the one before, up to `SAMPLE_CAP_MS` (a longer
  // gap is a wait, not JavaScript running). Samples within the load or an awaited call are in their wall time already.
  const within = (t: number) =>
    [...load, ...awaited].some((h) => t >= h.at && t <= h.at + h.ms) || t < (load[0]?.at ?? Number.NEGATIVE_INFINITY)
  let jsMs = 0
  let pluginMs = 0
  let pluginOutsideMs = 0
  for (let i = 0; i < sample.samples.length; i += 2) {
    const t = sample.samples[i]!
    if (t >= cutoff) break
    const weight = i === 0 ? 1 : Math.min(SAMPLE_CAP_MS, Math.max(0, t - sample.samples[i - 2]!))
    jsMs += weight
    if (sample.samples[i + 1] !== 1) continue
    pluginMs += weight
    if (!within(t)) pluginOutsideMs += weight
  }
  const loadMs = sum(load, "ms")
  // OpenCode awaits some hooks side by side (its 15 `tool.definition` calls): the time it waited is the union of the
  // calls' intervals, not the sum of their wall times.
  const awaitedSpanMs = union(awaited)
  return {
    awaitedSpanMs,
    /** Samples were taken (bun:jsc was there). */
    sampled: sample.samples.length > 0,
    jsMs,
    pluginMs,
    pluginOutsideMs,
    /** What the plugin can have added to the first request on a quiet machine (docs/benchmarks.md, ADR 0051). */
    boundMs: loadMs + awaitedSpanMs + pluginOutsideMs,
    loadMs: sum(load, "ms"),
    loadCpuMs: sum(load, "cpuMs"),
    awaitedMs: sum(awaited, "ms"),
    awaitedCpuMs: sum(awaited, "cpuMs"),
    awaitedCalls: awaited.length,
    byName,
    eventMs: sum(events, "ms"),
    eventCalls: events.length,
    readMs: sum(reads, "ms"),
    reads: reads.length,
    disposeMs: sum(dispose, "ms"),
  }
}

/**
 * The plugin's own phases (ADR 0056) that began before the first agent request, by name: how many, their wall time and
 * the process's CPU during them (ms). A phase that awaits holds OpenCode's work meanwhile in its CPU (Phases.ts).
 */
const phasesBefore = (sample: Sample, whole = false): Map<string, { n: number; ms: number; cpuMs: number }> => {
  const cutoff =
    whole || sample.firstAgent === undefined ? Number.POSITIVE_INFINITY : sample.spawnedAt + sample.firstAgent * 1000
  const by = new Map<string, { n: number; ms: number; cpuMs: number }>()
  for (const p of sample.phases) {
    if (p.at >= cutoff) continue
    const entry = by.get(p.name) ?? { n: 0, ms: 0, cpuMs: 0 }
    entry.n++
    entry.ms += p.ms
    entry.cpuMs += p.cpuMs
    by.set(p.name, entry)
  }
  return by
}

const phasesLine = (sample: Sample, whole = false) =>
  sample.phases.length === 0
    ? "— (no phases: a build without them)"
    : [...phasesBefore(sample, whole)]
        .map(([name, x]) => `${name} ${x.n}× ${x.ms.toFixed(0)}/${x.cpuMs.toFixed(0)}`)
        .join(", ")

/** One run's share of the plugin in its first agent request, as printed. */
const share = (sample: Sample) =>
  sample.hooks.length === 0 ? "— (the wrapper wrote no hook log)" : shareOf(hookTimes(sample))
const shareOf = (h: ReturnType<typeof hookTimes>) =>
  `≤ ${h.boundMs.toFixed(0)} ms = load ${h.loadMs.toFixed(0)} + awaited ${h.awaitedSpanMs.toFixed(0)} (the calls' union) + its JavaScript outside them ${h.sampled ? h.pluginOutsideMs.toFixed(0) : "(not sampled)"} ms` +
  (h.sampled
    ? ` (its JavaScript before the request ${h.pluginMs.toFixed(0)} ms of the thread's ${h.jsMs.toFixed(0)} ms)`
    : "")

/** `--startup --pool A,B`: rounds saved with --save reported as one, each variant's runs in the order of the files. */
const pooled = () => {
  const files = values.pool.split(",")
  const results: StartupRuns = new Map()
  for (const file of files)
    for (const [name, runs] of Object.entries(
      JSON.parse(Fs.readFileSync(file, "utf8")) as Record<string, VariantRuns>,
    )) {
      const into = results.get(name) ?? { first: [], continue: [] }
      into.first.push(...runs.first)
      into.continue.push(...runs.continue)
      results.set(name, into)
    }
  // Run against run needs the same count: the rounds pooled must have had the same variants and runs each.
  const counts = new Set([...results.values()].flatMap((r) => [r.first.length, r.continue.length]))
  if (counts.size !== 1) {
    console.error(`--pool: the files hold different numbers of runs per variant (${[...counts].join(", ")})`)
    process.exit(2)
  }
  startupReport(results, `${files.length} rounds pooled, median of ${[...counts][0]}`)
}

const startup = async () => {
  const runs = Number(values.runs)
  // One answer for every request (title and agent alike): the turn is a greeting, no tools. Each request's arrival is
  // noted: the first agent request is what the user waits for.
  const arrivals: Arrivals = []
  const model = await start((body) => {
    arrivals.push({ at: Date.now(), agent: (body.tools?.length ?? 0) > 0 })
    return { _tag: "answer", text: "Hello.", usage: { prompt_tokens: 1_000, completion_tokens: 5 } }
  })
  // Without the plugin, with this build, and with `--before FILE` (another build) when given: interleaved, the order
  // rotating from run to run, so that the machine's load falls on each alike.
  const variants: Array<{ name: string; plugin?: string }> = [
    { name: "without plugin" },
    { name: "with plugin", plugin: PLUGIN },
    ...(values.before === "" ? [] : [{ name: "with plugin (before)", plugin: Path.resolve(values.before) }]),
  ]
  // What loading the plugin's entry costs OpenCode when it starts: the binary run as Bun (BUN_BE_BUN=1, OpenCode's own
  // runtime) importing the entry and nothing else; the time to import it and the process's RSS after, beside Bun alone.
  // Then, in the same process, what the first hook call about a session costs (the entry loads the hooks then: pivot's
  // store and runtime; the bundle, ADR 0033): `context_compact` on a session with no model yet, answered without a
  // model call, on a fresh database; the time from the call to its answer and the RSS after.
  const probe = Path.join(Os.tmpdir(), "pivot-bench-import.mjs")
  Fs.writeFileSync(
    probe,
    [
      "const t = performance.now()",
      "const plugin = process.argv[2] ? await import(process.argv[2]) : undefined",
      "const entry = { ms: performance.now() - t, rss: process.memoryUsage().rss }",
      "let hook = { ms: 0, rss: entry.rss }",
      "if (plugin) {",
      "  const client = { session: { get: async () => ({ data: { id: 'ses_probe' } }), messages: async () => ({ data: [] }) } }",
      "  const hooks = await plugin.default({ client, directory: process.argv[3] }, { db: process.argv[3] + '/probe.db' })",
      "  const h = performance.now()",
      "  await hooks.tool.context_compact.execute({}, { sessionID: 'ses_probe', messageID: 'msg_probe' })",
      "  hook = { ms: performance.now() - h, rss: process.memoryUsage().rss }",
      "  await hooks.dispose()",
      "}",
      "console.log(JSON.stringify({ ...entry, hookMs: hook.ms, hookRss: hook.rss }))",
      "",
    ].join("\n"),
  )
  type Imported = { ms: number; rss: number; hookMs: number; hookRss: number }
  const imports = new Map(variants.map((v) => [v.name, [] as Array<Imported>]))
  for (let n = 0; n < runs; n++)
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(i + n) % variants.length]!
      const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-bench-hook-"))
      const out = execFileSync(
        binaryPath(),
        [probe, ...(variant.plugin === undefined ? [] : [variant.plugin, folder])],
        { env: { ...process.env, BUN_BE_BUN: "1" }, encoding: "utf8" },
      )
      Fs.rmSync(folder, { recursive: true, force: true })
      imports.get(variant.name)!.push(JSON.parse(out.trim().split("\n").at(-1)!) as Imported)
    }
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
  console.log(
    `\nthe plugin in OpenCode's Bun, median of ${runs} interleaved: importing the entry (ms; RSS after, MB), then the first hook call about a session (ms; RSS after, MB):`,
  )
  for (const v of variants) {
    const xs = imports.get(v.name)!
    console.log(
      `  ${v.name.padEnd(22)} entry ${median(xs.map((x) => x.ms)).toFixed(0)} ms, ${mb(median(xs.map((x) => x.rss)))} MB  [${xs.map((x) => x.ms.toFixed(0)).join(" ")}]; ` +
        `first hook ${median(xs.map((x) => x.hookMs)).toFixed(0)} ms, ${mb(median(xs.map((x) => x.hookRss)))} MB  [${xs.map((x) => x.hookMs.toFixed(0)).join(" ")}]`,
    )
  }
  if (values["imports-only"]) {
    await model.close()
    return
  }
  const results = new Map(variants.map((v) => [v.name, { first: [] as Array<Sample>, continue: [] as Array<Sample> }]))
  const loadAtEnd = () => Os.loadavg()[0]!.toFixed(1)
  try {
    for (let n = 0; n < runs; n++)
      for (let i = 0; i < variants.length; i++) {
        const variant = variants[(i + n) % variants.length]!
        // OpenCode loads the plugin through the timing wrapper (`hookTimer`), with the bench's options.
        const plugin =
          variant.plugin === undefined
            ? undefined
            : ([pathToFileURL(hookTimer(variant.plugin)).href, PIVOT_OPTIONS] as const)
        const ws = await setUp(model.port, plugin === undefined ? undefined : [plugin[0], plugin[1]])
        const label = `${n + 1}-${variant.name.replace(/[ ()]+/g, "-").replace(/-$/, "")}`
        try {
          results
            .get(variant.name)!
            .first.push(await timed(ws, ["run", "-m", MODEL, "Say hello."], `${label}-first`, arrivals))
          results
            .get(variant.name)!
            .continue.push(await timed(ws, ["run", "--continue", "-m", MODEL, "Again."], `${label}-continue`, arrivals))
        } finally {
          ws.remove()
        }
        // Each run's figures as it ends, so a run cut short still says what it measured.
        const done = results.get(variant.name)!
        // --save FILE: every run so far (the hooks' and phases' timelines included), for --pool or a look at one run.
        if (values.save !== "") Fs.writeFileSync(values.save, JSON.stringify(Object.fromEntries(results)))
        const [first, again] = [done.first.at(-1)!, done.continue.at(-1)!]
        const line = (s: Sample) =>
          `${s.seconds.toFixed(1)} s (first agent request at ${s.firstAgent?.toFixed(1) ?? "—"} s), CPU ${s.cpu.toFixed(2)} s, ${mib(s.peak)} MB RSS, ${mib(s.peakPss)} MB PSS`
        console.log(
          `  run ${n + 1}/${runs}: ${variant.name}: first ${line(first)}; --continue ${line(again)} (load ${loadAtEnd()})`,
        )
        // The plugin's share of each first agent request (ADR 0051): its load and the awaited calls before it (wall),
        // plus its own JavaScript time outside them (sampled).
        if (variant.plugin !== undefined)
          console.log(
            `    the plugin's share: first ${share(first)}; --continue ${share(again)}\n` +
              `    its phases before the first agent request (n× wall/CPU ms): first ${phasesLine(first)}; --continue ${phasesLine(again)}\n` +
              `    its phases in the whole run: first ${phasesLine(first, true)}; --continue ${phasesLine(again, true)}`,
          )
        if (values.verbose)
          for (const [phase, sample] of [
            ["first", first],
            ["--continue", again],
          ] as const) {
            console.log(
              `    ${phase} PSS peak ${mib(sample.peakPss)} MB at ${sample.peakPssAt.toFixed(1)} s; before the first agent request (${sample.firstAgent?.toFixed(1) ?? "—"} s) at most ${mib(sample.pssBeforeAgent)} MB`,
            )
            console.log(
              `    ${phase} at its RSS peak: ${sample.atPeak.map((m) => `${m.command} ${mib(m.rss)}/${mib(m.pss)}${counted(sample.atPeak).includes(m) ? "" : " (its parent's memory, not counted)"}`).join("; ")}; CPU sampled ${sample.sampledCpu.toFixed(2)} s`,
            )
            if (sample.hooks.length > 0) {
              const h = hookTimes(sample)
              console.log(
                `    ${phase} hooks: load ${h.loadMs.toFixed(0)} ms; awaited before the first agent request ${h.awaitedMs.toFixed(0)} ms (CPU ${h.awaitedCpuMs.toFixed(0)} ms): ${[...h.byName].map(([name, x]) => `${name} ${x.n}× ${x.ms.toFixed(0)} ms`).join(", ")}; events before it ${h.eventCalls}× ${h.eventMs.toFixed(0)} ms; reads of the session before it ${h.reads}× ${h.readMs.toFixed(0)} ms; dispose ${h.disposeMs.toFixed(0)} ms`,
              )
              // The timeline up to the first agent request: each call's start (s after the spawn), wall and CPU ms.
              const cutoff = sample.firstAgent === undefined ? Number.POSITIVE_INFINITY : sample.firstAgent
              console.log(
                `    ${phase} timeline to the first agent request (${sample.firstAgent?.toFixed(2) ?? "—"} s): ${sample.hooks
                  .map((c) => ({ ...c, t: (c.at - sample.spawnedAt) / 1000 }))
                  .filter((c) => c.t < cutoff)
                  .sort((a, b) => a.t - b.t)
                  .map((c) => `${c.t.toFixed(2)} ${c.name} ${c.ms.toFixed(0)}/${c.cpuMs.toFixed(0)}`)
                  .join("; ")}`,
              )
            }
          }
      }
  } finally {
    await model.close()
  }
  startupReport(results, `median of ${runs} interleaved`)
}

/** The startup rounds' runs by variant (the first is OpenCode alone), as `--save` writes them and `--pool` reads them. */
type StartupRuns = Map<string, VariantRuns>
/** One variant's runs: each first run in a new project, and each `--continue` after it. */
type VariantRuns = { first: Array<Sample>; continue: Array<Sample> }

const startupReport = (results: StartupRuns, how: string) => {
  const variants = [...results.keys()].map((name) => ({ name }))
  console.log(
    `\nopencode run, ${how} (range): wall s; first agent request, s after the spawn; CPU s of the process tree (user + system, every process); peak RSS and PSS of the tree, MB:`,
  )
  const baseline = results.get(variants[0]!.name)!
  for (const phase of ["first", "continue"] as const) {
    console.log(phase === "first" ? "first run, new project:" : "--continue:")
    for (const v of variants) {
      const xs = results.get(v.name)![phase]
      console.log(
        `  ${v.name.padEnd(22)} wall ${spread(
          xs.map((x) => x.seconds),
          1,
        )}; first agent request ${spread(
          xs.flatMap((x) => (x.firstAgent === undefined ? [] : [x.firstAgent])),
          1,
        )}; CPU ${spread(
          xs.map((x) => x.cpu),
          2,
        )}; ${mib(median(xs.map((x) => x.peak)))} MB RSS, ${mib(median(xs.map((x) => x.peakPss)))} MB PSS [${xs.map((x) => `${mib(x.peakPss)} at ${x.peakPssAt.toFixed(1)} s`).join(", ")}]; PSS before the first agent request ${mib(median(xs.map((x) => x.pssBeforeAgent)))} MB [${xs.map((x) => mib(x.pssBeforeAgent)).join(" ")}]`,
      )
    }
    // Step against step: each variant's peaks on OpenCode's lower and upper step, and what each adds on the same step.
    const stepped = variants.map((v) => memorySteps(results.get(v.name)![phase].map((x) => x.peakPss / 2 ** 20)))
    const stepLine = (xs: ReadonlyArray<number>) =>
      xs.length === 0
        ? "none"
        : `${xs.length}× ${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`
    const added = (xs: ReadonlyArray<number>, base: ReadonlyArray<number>) => {
      const d = median(xs) - median(base)
      return `${d >= 0 ? "+" : ""}${d.toFixed(0)}`
    }
    // A variant whose runs all fell on one step cannot say which one from its own peaks: no step-against-step figure.
    const split = (s: { upper: ReadonlyArray<number> }) => s.upper.length > 0
    variants.forEach((v, i) => {
      const [own, base] = [stepped[i]!, stepped[0]!]
      const against =
        i === 0
          ? ""
          : split(own) && split(base)
            ? `; added step against step: lower ${added(own.lower, base.lower)}, upper ${added(own.upper, base.upper)} MB`
            : "; added step against step: — (a variant's runs all on one step)"
      console.log(
        `  ${`${v.name}, by step`.padEnd(22)} peak PSS ${
          split(own)
            ? `on OpenCode's lower step ${stepLine(own.lower)}, upper ${stepLine(own.upper)}`
            : `on one step only, ${stepLine(own.lower)}`
        } MB${against}`,
      )
    })
    // Run by run against the run without the plugin of the same round (the rounds interleave the variants).
    for (const v of variants.slice(1)) {
      const xs = results.get(v.name)![phase]
      const paired = (of: (s: Sample) => number | undefined) =>
        xs.flatMap((x, n) => {
          const [a, b] = [of(x), of(baseline[phase][n]!)]
          return a === undefined || b === undefined ? [] : [a - b]
        })
      console.log(
        `  ${`${v.name}, added`.padEnd(22)} CPU ${spread(
          paired((s) => s.cpu),
          2,
          true,
        )} s; first agent request ${spread(
          paired((s) => s.firstAgent),
          1,
          true,
        )} s; PSS ${spread(
          paired((s) => s.peakPss / 2 ** 20),
          0,
          true,
        )} MB`,
      )
      // Runs whose wrapper wrote nothing (none so far but one, cause unknown) are left out, not counted as zero.
      const hooks = xs.filter((x) => x.hooks.length > 0).map(hookTimes)
      console.log(
        `  ${`${v.name}, its hooks`.padEnd(22)} load ${spread(
          hooks.map((h) => h.loadMs),
          0,
        )} ms (CPU ${spread(
          hooks.map((h) => h.loadCpuMs),
          0,
        )}); awaited before the first agent request ${spread(
          hooks.map((h) => h.awaitedMs),
          0,
        )} ms (process CPU meanwhile ${spread(
          hooks.map((h) => h.awaitedCpuMs),
          0,
        )}); events before it ${spread(
          hooks.map((h) => h.eventMs),
          0,
        )} ms, not awaited; dispose ${spread(
          hooks.map((h) => h.disposeMs),
          0,
        )} ms`,
      )
      console.log(
        `  ${`${v.name}, its share`.padEnd(22)} ≤ ${spread(
          hooks.map((h) => h.boundMs),
          0,
        )} ms before the first agent request (load + awaited + its JavaScript outside them ${spread(
          hooks.map((h) => h.pluginOutsideMs),
          0,
        )} ms); its JavaScript before the request ${spread(
          hooks.map((h) => h.pluginMs),
          0,
        )} ms of the thread's ${spread(
          hooks.map((h) => h.jsMs),
          0,
        )} ms [${hooks.map((h) => h.boundMs.toFixed(0)).join(" ")}]`,
      )
      // The plugin's phases before the first agent request (ADR 0056): median over the runs that have them of each
      // phase's summed CPU (and wall), ms; a run without the phase counts 0.
      const phased = xs.filter((x) => x.phases.length > 0).map((x) => phasesBefore(x))
      if (phased.length > 0) {
        const names = [...new Set(phased.flatMap((m) => [...m.keys()]))]
        console.log(
          `  ${`${v.name}, its phases`.padEnd(22)} before the first agent request, CPU ms (wall ms), median of ${phased.length}: ${names
            .map(
              (name) =>
                `${name} ${median(phased.map((m) => m.get(name)?.cpuMs ?? 0)).toFixed(0)} (${median(phased.map((m) => m.get(name)?.ms ?? 0)).toFixed(0)})`,
            )
            .join(", ")}`,
        )
      }
    }
  }
  console.log(
    `load at the end: ${Os.loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  )
}

// ── main ────────────────────────────────────────────────────────────────────────────────────────────────────────

console.log(
  `bench:opencode — OpenCode ${"1.18.33"}, ${Os.cpus().length} cores, load ${Os.loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} (${new Date().toISOString()})`,
)
if (!Fs.existsSync(PLUGIN)) throw new Error(`no built plugin at ${PLUGIN}: run npm run build`)
if (values.startup && values.pool !== "") pooled()
else if (values.startup) {
  console.log(`plugin: ${PLUGIN}`)
  await startup()
} else {
  console.log(
    `session: ${SESSION} (context ${SHAPE.context}); pivot runs as "${pivotLabel}" (PIVOT_OPTIONS = ${JSON.stringify(PIVOT_OPTIONS)} in scripts/bench/opencode.ts)`,
  )
  const runs: Array<Run> = []
  if (values.merge !== "")
    for (const file of values.merge.split(","))
      runs.push(...(JSON.parse(Fs.readFileSync(file, "utf8")) as ReadonlyArray<Run>))
  else
    for (const c of contenders()) {
      runs.push(await drive(c))
      // Saved after each contender, so a run cut short keeps what it measured.
      if (values.save !== "") Fs.writeFileSync(values.save, JSON.stringify(runs))
    }
  report(runs)
  console.log(
    `\nload after: ${Os.loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  )
}
