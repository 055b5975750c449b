/**
 * Benchmark: what recall costs (issue 31 follow-ups). Since read model v2 the recall index holds every part of every
 * message a pivot summarised, so recording a pivot writes a row per part of its head; and the ledger marks each
 * artifact of a pivot recallable or not, on read.
 *
 * - **write** (default): one session of the agent loop's shape (`support/bulkSession.ts`: a request, a read with a
 *   ~600-character output, a closing step per turn; a prune every 8 turns; a compaction every `--every` turns) is
 *   generated once, then appended event by event (one append per event, as the runtime appends one command's events)
 *   to a fresh store per variant: the event store alone, the inline read models without the recall index, and the
 *   inline read models as shipped. Per variant: events/s over the whole session (append time only, generation
 *   excluded), the median append of a `SummaryFinished` (the event that forms a pivot, where the index writes the
 *   head's rows) over the first and the last `--edge` pivots, and the median of every other append. Variants are
 *   interleaved round by round (`--rounds`); each figure is the median over rounds. The "without" variant leaves the
 *   recall model out of the store's built-in list for its run (no option of the store does that: a store without its
 *   recall index is not a configuration users have).
 * - **ledger** (`--ledger`): `Ledger.fold` of a generated session with many pivots (the viewer's and `inspect`'s fold,
 *   retention with recallability included), median of `--runs` folds after one warm-up, wall and CPU time (the process's
 *   user + system time: less moved by other processes on a loaded machine than the wall clock).
 *
 *   npm run bench:recall-index [-- --size 2000] [--every 30] [--rounds 3] [--edge 5] [--stores sqlite,postgres]
 *                                  [--synchronous normal|full] [--ledger --events 8400 --ledger-every 8 --runs 7]
 *
 * PostgreSQL needs `PIVOT_PG_URL` (`scripts/postgres.sh`); each run uses a fresh schema and drops it.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { parseArgs } from "node:util"
import { type Events, Ledger } from "@pivot/core"
import { EventStore, type NewEvent, ReadModels } from "@pivot/store"
import { Effect, type Layer } from "effect"
import { percentile } from "./support/agentLoop.ts"
import { bulkSession } from "./support/bulkSession.ts"

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "2000" },
    every: { type: "string", default: "30" },
    rounds: { type: "string", default: "3" },
    edge: { type: "string", default: "5" },
    stores: { type: "string", default: "sqlite" },
    synchronous: { type: "string", default: "normal" },
    ledger: { type: "boolean", default: false },
    events: { type: "string", default: "8400" },
    "ledger-every": { type: "string", default: "8" },
    runs: { type: "string", default: "7" },
  },
})
const median = (xs: ReadonlyArray<number>) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    0.5,
  )
const fmt = (n: number, digits = 1) => n.toLocaleString("en-US", { maximumFractionDigits: digits })
const load = () => os.loadavg().map((l) => l.toFixed(1))

// ── write: the cost of recording a pivot with and without the recall index ──────────────────────────────────────

type Variant = "events only" | "read models without recall" | "read models"
const VARIANTS: ReadonlyArray<Variant> = ["events only", "read models without recall", "read models"]

interface Appended {
  readonly events: number
  readonly total: number
  /** ms of each SummaryFinished append, in order. */
  readonly pivots: ReadonlyArray<number>
  /** ms of every other append. */
  readonly others: ReadonlyArray<number>
  /** Rows of the recall table at the end (undefined without it). */
  readonly recallRows: number | undefined
}

/** The recall model left out of the built-in read models while `f` runs (see the module comment). */
const withoutRecall = async <A>(f: () => Promise<A>): Promise<A> => {
  const builtIns = ReadModels.builtIns as Array<ReadModels.ReadModel>
  const at = builtIns.findIndex((m) => m.projection.name === "recall")
  const [recall] = builtIns.splice(at, 1)
  try {
    return await f()
  } finally {
    builtIns.splice(at, 0, recall!)
  }
}

const appendAll = (
  layer: Layer.Layer<EventStore, unknown>,
  stream: string,
  events: ReadonlyArray<NewEvent>,
): Promise<Omit<Appended, "recallRows">> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      const pivots: Array<number> = []
      const others: Array<number> = []
      let total = 0
      for (const [i, event] of events.entries()) {
        const t0 = performance.now()
        yield* store.append(stream, i, [event])
        const ms = performance.now() - t0
        total += ms
        ;(event.type === "SummaryFinished" ? pivots : others).push(ms)
      }
      return { events: events.length, total, pivots, others }
    }).pipe(Effect.provide(layer)) as Effect.Effect<Omit<Appended, "recallRows">, unknown>,
  )

const write = async () => {
  const rounds = Number(values.rounds)
  const edge = Number(values.edge)
  const synchronous = values.synchronous === "full" ? "full" : "normal"
  const bulk = bulkSession("ses_recall_bench", { compactEvery: Number(values.every) })
  // At least `--size` events, ending right after a pivot.
  const events = bulk.until(Number(values.size), { afterPivot: true })
  const pivots = events.filter((e) => e.type === "SummaryFinished").length
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-recall-"))
  const pgUrl = process.env.PIVOT_PG_URL ?? ""
  const stores = values.stores.split(",").filter((s) => s === "sqlite" || s === "postgres")
  if (stores.includes("postgres") && pgUrl === "")
    throw new Error("--stores postgres needs PIVOT_PG_URL (scripts/postgres.sh)")
  const psql = (sql: string): string => {
    const bin = fs.readdirSync("/usr/lib/postgresql").sort().at(-1)
    return execFileSync(`/usr/lib/postgresql/${bin}/bin/psql`, [pgUrl, "-q", "-t", "-A", "-c", sql], {
      encoding: "utf8",
    }).trim()
  }
  console.log(
    `recall index write cost: ${fmt(events.length, 0)} events, ${pivots} pivots (a compaction every ${values.every} turns), ` +
      `one append per event, ${rounds} rounds; node ${process.versions.node}; load ${load().join(" ")} at the start`,
  )
  const results = new Map<string, Array<Appended>>()
  let run = 0
  for (let round = 0; round < rounds; round++)
    for (const store of stores)
      for (const variant of VARIANTS) {
        run++
        const filename = path.join(dir, `r${run}.db`)
        const schema = `recall_bench_${process.pid}_${run}`
        const layer: Layer.Layer<EventStore, unknown> =
          store === "sqlite"
            ? variant === "events only"
              ? EventStore.layerSqlite({ filename, synchronous })
              : ReadModels.layerSqlite({ filename, synchronous })
            : variant === "events only"
              ? EventStore.layerPostgres({ url: pgUrl, schema })
              : ReadModels.layerPostgres({ url: pgUrl, schema })
        const go = () => appendAll(layer, bulk.stream, events)
        const appended = variant === "read models without recall" ? await withoutRecall(go) : await go()
        // The recall table's rows once the session is recorded (it exists, empty, without the index's writes).
        const recallRows =
          variant === "events only"
            ? undefined
            : store === "sqlite"
              ? Number(
                  (
                    new DatabaseSync(filename, { readOnly: true })
                      .prepare("SELECT COUNT(*) AS n FROM pivot_rm_recall")
                      .get() as { n: number }
                  ).n,
                )
              : Number(psql(`SELECT COUNT(*) FROM ${schema}.pivot_rm_recall`))
        const result = { ...appended, recallRows }
        const key = `${store}\u0000${variant}`
        results.set(key, [...(results.get(key) ?? []), result])
        if (store === "postgres") psql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        else for (const f of fs.readdirSync(dir)) if (f.startsWith(`r${run}.db`)) fs.rmSync(path.join(dir, f))
      }
  fs.rmSync(dir, { recursive: true, force: true })
  console.log(`load ${load().join(" ")} at the end`)
  console.log(
    "| store | variant | events/s | ms per pivot, first " +
      `${edge} | ms per pivot, last ${edge} | ms per other append | recall rows |`,
  )
  console.log("|---|---|---:|---:|---:|---:|---:|")
  for (const store of stores) {
    const base = results.get(`${store}\u0000read models without recall`)!
    for (const variant of VARIANTS) {
      const rs = results.get(`${store}\u0000${variant}`)!
      const rate = median(rs.map((r) => (r.events / r.total) * 1000))
      const first = median(rs.map((r) => median(r.pivots.slice(0, edge))))
      const last = median(rs.map((r) => median(r.pivots.slice(-edge))))
      const other = median(rs.map((r) => median(r.others)))
      const rows = rs[0]!.recallRows
      console.log(
        `| ${store === "sqlite" ? `SQLite (${synchronous})` : "PostgreSQL"} | ${variant} | ${fmt(rate, 0)} | ${fmt(first, 2)} | ${fmt(last, 2)} | ${fmt(other, 2)} | ${rows === undefined ? "–" : fmt(rows, 0)} |`,
      )
    }
    const shipped = results.get(`${store}\u0000read models`)!
    const extra = (pick: (r: Appended) => ReadonlyArray<number>) =>
      median(shipped.map((r) => median(pick(r)))) - median(base.map((r) => median(pick(r))))
    console.log(
      `  ${store}: the recall index adds ${fmt(
        extra((r) => r.pivots.slice(0, edge)),
        2,
      )} ms to a pivot's append early, ` +
        `${fmt(
          extra((r) => r.pivots.slice(-edge)),
          2,
        )} ms late; ${fmt(
          extra((r) => r.others),
          3,
        )} ms to other appends`,
    )
  }
}

// ── ledger: folding a session with many pivots ─────────────────────────────────────────────────────────────────

const ledger = () => {
  const decoded: Array<Events.Event> = []
  const bulk = bulkSession("ses_ledger_bench", {
    compactEvery: Number(values["ledger-every"]),
    observe: (e) => decoded.push(e),
  })
  bulk.until(Number(values.events), { afterPivot: true })
  const pivots = decoded.filter((e) => e._tag === "SummaryFinished").length
  const runs = Number(values.runs)
  Ledger.fold(decoded)
  const times: Array<number> = []
  const cpu: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    Ledger.fold(decoded)
    times.push(performance.now() - t0)
    const c = process.cpuUsage(c0)
    cpu.push((c.user + c.system) / 1000)
  }
  const entries = Ledger.entries(Ledger.fold(decoded)).filter((e) => e.kind === "compaction")
  const artifacts = entries.reduce((n, e) => n + (e.retention?.artifacts.length ?? 0), 0)
  console.log(
    `Ledger.fold: ${fmt(decoded.length, 0)} events, ${pivots} pivots, ${fmt(artifacts, 0)} artifacts checked; ` +
      `median ${fmt(median(times), 1)} ms wall (min ${fmt(Math.min(...times), 1)}, max ${fmt(Math.max(...times), 1)}), ` +
      `${fmt(median(cpu), 1)} ms CPU (min ${fmt(Math.min(...cpu), 1)}) over ${runs} folds; ` +
      `load ${load().join(" ")}`,
  )
}

const main = async () => {
  if (values.ledger) ledger()
  else await write()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
