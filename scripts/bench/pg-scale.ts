/**
 * Benchmark: many processes appending to many sessions at once (issue 11, part 4).
 *
 * PostgreSQL: `--procs` child processes × `--sessions` sessions each, every session appending `--appends` times (one
 * event, exact expected version) concurrently, against one real server (PIVOT_PG_URL, or scripts/postgres.sh). Two
 * modes in the same run, each on a fresh schema: the store-wide lock held by every append transaction (pivot before
 * ADR 0012, `appendLock: "store"`) and the default (stream lock, positions numbered after commit). Reported: aggregate
 * events/s (from "go" to the last child done) and append latency p50/p99, plus the checks: a subscriber in this
 * process sees every acknowledged event exactly once in strictly increasing positions, and `readAll` agrees.
 *
 * SQLite: `--sqlite-procs` processes on one file (WAL, busy timeout 5 s), the same session workload: throughput,
 * appends that failed busy, and nothing lost.
 *
 * Run: `npm run bench:pg-scale [-- --procs 8 --sessions 200 --appends 10 --pool 16 --sqlite-procs 4]`.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { EventStore, type NewEvent, type RecordedEvent } from "@pivot/store"
import { Context, Effect, Fiber, Layer, Stream } from "effect"

const { values } = parseArgs({
  options: {
    child: { type: "string" },
    target: { type: "string" },
    proc: { type: "string", default: "0" },
    procs: { type: "string", default: "8" },
    sessions: { type: "string", default: "200" },
    appends: { type: "string", default: "10" },
    pool: { type: "string", default: "16" },
    "sqlite-procs": { type: "string", default: "4" },
    "sqlite-sessions": { type: "string", default: "50" },
    modes: { type: "string", default: "store,stream" },
    warmup: { type: "string", default: "10" },
  },
})
const WARMUP = Number(values.warmup)
const SESSIONS = Number(values.sessions)
const APPENDS = Number(values.appends)
const POOL = Number(values.pool)
const self = fileURLToPath(import.meta.url)

// A payload shaped like a recorded assistant step: some text, a tool call, token usage.
const event = (id: string, i: number): NewEvent => ({
  id,
  type: "AssistantStepRecorded",
  version: 1,
  data: {
    messageId: `msg_${id}`,
    parts: [
      { type: "text", text: `Step ${i}: I looked at the file and the function returns early when the list is empty.` },
      {
        type: "tool",
        tool: "read",
        callId: `call_${id}`,
        input: { path: `src/file${i % 50}.ts` },
        status: "completed",
      },
    ],
    usage: { input: 1200 + (i % 300), output: 80 + (i % 40), reasoning: 0, cacheRead: 900 },
  },
  metadata: null,
})

const idOf = (proc: number, session: number, n: number) => `e_${proc}_${session}_${n}`

interface ChildResult {
  readonly ok: number
  readonly busy: number
  readonly failed: number
  readonly firstError: string
  readonly latencies: ReadonlyArray<number>
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

// ---------------------------------------------------------------------------------------------------------------
// Child: open the store, say "ready", wait for "go", run every session's appends concurrently, print the result.

const childLayer = (kind: string, target: string): Layer.Layer<EventStore, unknown> => {
  if (kind === "sqlite") return EventStore.layerSqlite({ filename: target, busyTimeout: "5 seconds" })
  const [url, schema, mode] = target.split("|")
  return EventStore.layerPostgres({
    url: url!,
    schema: schema!,
    maxConnections: POOL,
    appendLock: mode === "store" ? "store" : "stream",
  })
}

const runChild = async (kind: string, target: string, proc: number, sessions: number) => {
  const lines = readline.createInterface({ input: process.stdin })
  const go = new Promise<void>((resolve) => lines.once("line", () => resolve()))
  const result = await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      // Warm-up (JIT, pool connections), not measured: the parent's subscriber starts after these events.
      yield* Effect.forEach(
        Array.from({ length: 32 }, (_, s) => s),
        (s) =>
          Effect.forEach(Array.from({ length: WARMUP }), (_, n) =>
            store.append(`warmup-p${proc}-s${s}`, "any", [event(`w_${proc}_${s}_${n}`, n)]),
          ),
        { concurrency: "unbounded", discard: true },
      )
      process.stdout.write("ready\n")
      yield* Effect.promise(() => go)
      const latencies: Array<number> = []
      let ok = 0
      let busy = 0
      let failed = 0
      let firstError = ""
      yield* Effect.forEach(
        Array.from({ length: sessions }, (_, s) => s),
        (s) =>
          Effect.gen(function* () {
            const stream = `session-p${proc}-s${s}`
            for (let n = 0; n < APPENDS; n++) {
              const start = performance.now()
              const outcome = yield* Effect.result(store.append(stream, "any", [event(idOf(proc, s, n), n)]))
              latencies.push(performance.now() - start)
              if (outcome._tag === "Success") ok++
              else {
                const text = String((outcome.failure as { reason?: unknown }).reason ?? outcome.failure)
                if (/busy|locked/i.test(text)) busy++
                else failed++
                if (firstError === "") firstError = text
              }
            }
          }),
        { concurrency: "unbounded", discard: true },
      )
      return { ok, busy, failed, firstError, latencies } satisfies ChildResult
    }).pipe(Effect.provide(childLayer(kind, target))),
  )
  process.stdout.write(`${JSON.stringify(result)}\n`)
  lines.close()
}

// ---------------------------------------------------------------------------------------------------------------
// Parent

const spawnChildren = (kind: string, target: string, procs: number, sessions: number) =>
  Array.from({ length: procs }, (_, proc) =>
    spawn(
      process.execPath,
      [
        "--conditions=@pivot/source",
        self,
        "--child",
        kind,
        "--target",
        target,
        "--proc",
        String(proc),
        "--sessions",
        String(sessions),
        "--appends",
        String(APPENDS),
        "--pool",
        String(POOL),
        "--warmup",
        String(WARMUP),
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    ),
  )

const linesOf = (child: ChildProcess) => {
  const out = readline.createInterface({ input: child.stdout! })
  const queue: Array<string> = []
  const waiting: Array<(line: string) => void> = []
  out.on("line", (line) => {
    const next = waiting.shift()
    if (next) next(line)
    else queue.push(line)
  })
  return () =>
    new Promise<string>((resolve, reject) => {
      const line = queue.shift()
      if (line !== undefined) return resolve(line)
      waiting.push(resolve)
      child.once("exit", (code) => code !== 0 && reject(new Error(`child exited with ${code}`)))
    })
}

/** Starts the children, waits until every one has opened its store, says go, and collects their results. */
const race = async (
  kind: string,
  target: string,
  procs: number,
  sessions: number,
  onReady: () => Promise<void> = async () => {},
) => {
  const children = spawnChildren(kind, target, procs, sessions)
  const reads = children.map(linesOf)
  for (const read of reads) expect((await read()) === "ready", "a child did not get ready")
  await onReady()
  const start = performance.now()
  for (const child of children) child.stdin!.write("go\n")
  const results = await Promise.all(
    reads.map(async (read, i) => {
      const result = JSON.parse(await read()) as ChildResult
      children[i]!.stdin!.end()
      return result
    }),
  )
  const seconds = (performance.now() - start) / 1000
  const latencies = results.flatMap((r) => r.latencies).sort((a, b) => a - b)
  const ok = results.reduce((n, r) => n + r.ok, 0)
  const busy = results.reduce((n, r) => n + r.busy, 0)
  const failed = results.reduce((n, r) => n + r.failed, 0)
  const firstError = results.find((r) => r.firstError !== "")?.firstError ?? ""
  return { seconds, ok, busy, failed, firstError, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

function expect(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message)
}

/** Every expected event exactly once, positions strictly increasing, each stream's versions 1..n in order. */
const check = (seen: ReadonlyArray<RecordedEvent>, expected: number) => {
  const ids = new Set<string>()
  let duplicated = 0
  let unordered = 0
  const versions = new Map<string, number>()
  for (let i = 0; i < seen.length; i++) {
    const e = seen[i]!
    if (ids.has(e.id)) duplicated++
    ids.add(e.id)
    if (i > 0 && e.position <= seen[i - 1]!.position) unordered++
    if (e.streamVersion !== (versions.get(e.stream) ?? 0) + 1) unordered++
    versions.set(e.stream, e.streamVersion)
  }
  return { lost: expected - ids.size, duplicated, unordered }
}

const pgUrl = () => {
  const fromEnv = process.env.PIVOT_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  const script = path.resolve(path.dirname(self), "../postgres.sh")
  return execFileSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim()
}

const dropSchema = (url: string, schema: string) => {
  const bin = execFileSync("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1"], {
    encoding: "utf8",
  }).trim()
  execFileSync(`${bin}/psql`, [url, "-q", "-c", `DROP SCHEMA IF EXISTS ${schema} CASCADE`], { stdio: "ignore" })
}

const postgres = async (url: string, mode: "store" | "stream", procs: number) => {
  const schema = `pivot_bench_scale_${mode}_${process.pid}`
  dropSchema(url, schema)
  const expected = procs * SESSIONS * APPENDS
  try {
    return await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(
            EventStore.layerPostgres({ url, schema, maxConnections: 4, pollInterval: "200 millis" }),
          )
          const store = Context.get(context, EventStore)
          // The subscriber starts at the head once every child has warmed up: it must see exactly the measured events.
          let head = 0
          let subscriber: Fiber.Fiber<ReadonlyArray<RecordedEvent>, unknown> | undefined
          const start = Effect.gen(function* () {
            const warm = yield* Stream.runCollect(store.readAll())
            head = warm.length === 0 ? 0 : warm[warm.length - 1]!.position
            subscriber = yield* store
              .subscribe({ after: head })
              .pipe(Stream.take(expected), Stream.runCollect, Effect.forkDetach)
          })
          const run = yield* Effect.promise(() =>
            race("pg", `${url}|${schema}|${mode}`, procs, SESSIONS, () => Effect.runPromise(start)),
          )
          const seen = yield* Fiber.join(subscriber!).pipe(Effect.timeout("120 seconds"))
          const all = yield* Stream.runCollect(store.readAll({ after: head }))
          const sameAsSubscriber =
            all.length === seen.length && all.every((e, i) => e.id === seen[i]!.id && e.position === seen[i]!.position)
          return { ...run, ...check(seen, run.ok), sameAsSubscriber }
        }),
      ),
    )
  } finally {
    dropSchema(url, schema)
  }
}

const sqlite = async (procs: number, sessions: number) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-scale-"))
  const filename = path.join(dir, "events.db")
  try {
    // The file and its schema exist before the writers race to open it.
    await Effect.runPromise(Effect.provide(Effect.void, EventStore.layerSqlite({ filename })))
    const run = await race("sqlite", filename, procs, sessions)
    const all = await Effect.runPromise(
      Effect.provide(
        Effect.gen(function* () {
          return yield* Stream.runCollect((yield* EventStore).readAll())
        }),
        EventStore.layerSqlite({ filename }),
      ),
    )
    return {
      ...run,
      ...check(
        all.filter((e) => e.stream.startsWith("session-")),
        run.ok,
      ),
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const main = async () => {
  const procs = Number(values.procs)
  const url = pgUrl()
  const modes = (values.modes ?? "store,stream").split(",") as Array<"store" | "stream">
  console.log(
    `PostgreSQL: ${procs} processes × ${SESSIONS} sessions × ${APPENDS} appends of 1 event (pool ${POOL} per process), ${os.cpus().length} CPUs`,
  )
  const rows: Record<string, { eventsPerSecond: number }> = {}
  for (const mode of modes) {
    const r = await postgres(url, mode, procs)
    const eventsPerSecond = r.ok / r.seconds
    rows[mode] = { eventsPerSecond }
    console.log(
      `  ${mode === "store" ? "store-wide lock (before)" : "stream lock + commit order"}: ${r.ok} events in ${r.seconds.toFixed(2)} s = ${eventsPerSecond.toFixed(0)} events/s; append p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; failed ${r.failed + r.busy}${r.firstError === "" ? "" : ` (${r.firstError})`}; subscriber: lost ${r.lost}, duplicated ${r.duplicated}, out of order ${r.unordered}; readAll == subscriber: ${r.sameAsSubscriber}`,
    )
    if (r.lost !== 0 || r.duplicated !== 0 || r.unordered !== 0 || !r.sameAsSubscriber) process.exitCode = 1
  }
  if (rows.store !== undefined && rows.stream !== undefined)
    console.log(`  speed-up: ×${(rows.stream.eventsPerSecond / rows.store.eventsPerSecond).toFixed(2)} (target ≥ ×5)`)

  const sqliteProcs = Number(values["sqlite-procs"])
  if (sqliteProcs > 0) {
    const sessions = Number(values["sqlite-sessions"])
    const r = await sqlite(sqliteProcs, sessions)
    console.log(
      `SQLite: ${sqliteProcs} processes × ${sessions} sessions × ${APPENDS} appends on one file: ${r.ok} events in ${r.seconds.toFixed(2)} s = ${(r.ok / r.seconds).toFixed(0)} events/s; append p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; busy errors ${r.busy}, other failures ${r.failed}${r.firstError === "" ? "" : ` (${r.firstError})`}; lost ${r.lost}, duplicated ${r.duplicated}, out of order ${r.unordered}`,
    )
    if (r.lost !== 0 || r.duplicated !== 0 || r.unordered !== 0) process.exitCode = 1
  }
}

if (values.child !== undefined) await runChild(values.child, values.target!, Number(values.proc), SESSIONS)
else await main()
