// Probe: forks racing a writer on one SQLite file (issue 32, defect 3). A parent of `--size` events on a fresh file,
// one writer process recording user messages on its own session for `--writer-ms`, and `--forkers` processes forking
// the parent into one child id at once (each opens the file as `pivot fork` does). Prints one JSON line: what each
// fork answered, the writer's successes and failures, and the versions stored. Exactly one fork must succeed, every
// other must answer `ForkTargetExists`, and the writer must not fail.
//   node --conditions=@pivot/source scripts/bench/forks.ts [--size 20000] [--forkers 10] [--writer-ms 4000]
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Ids } from "@pivot/core"
import { EventStore, ReadModels } from "@pivot/store"
import { Effect, Layer } from "effect"
import { bulkSession } from "./support/bulkSession.ts"

const racer = fileURLToPath(new URL("./support/forkRacer.ts", import.meta.url))

interface ForkRaceReport {
  readonly forks: ReadonlyArray<{ readonly ok?: boolean; readonly error?: string; readonly message?: string }>
  readonly writer: { readonly ok: number; readonly errors: ReadonlyArray<string> }
  readonly childVersion: number
  readonly parentVersion: number
}

const start = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, ["--conditions=@pivot/source", racer, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  })
  let out = ""
  let err = ""
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (out += c))
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (err += c))
  const ready = new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (out.includes("ready\n") || child.exitCode !== null) {
        clearInterval(poll)
        resolve()
      }
    }, 20)
  })
  const done = new Promise<string>((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0 ? resolve(out.replace("ready\n", "").trim()) : reject(new Error(`exit ${code}: ${err}`)),
    ),
  )
  return { child: child as ChildProcess, ready, done }
}

const forkRace = async (dir: string, size: number, forkers: number, writerMs: number): Promise<ForkRaceReport> => {
  const file = path.join(dir, "race.db")
  const parent = "ses_parent"
  const layer = ReadModels.layerSqlite({ filename: file })
  const events = bulkSession(parent).until(size)
  await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      for (let i = 0; i < events.length; i += 500) yield* store.append(`session-${parent}`, i, events.slice(i, i + 500))
    }).pipe(Effect.provide(Layer.merge(layer, Ids.Ids.layer))),
  )
  const writer = start(["write", file, "ses_writer", String(writerMs)])
  const forks = Array.from({ length: forkers }, () => start(["fork", file, parent, "ses_child"]))
  await Promise.all([writer, ...forks].map((p) => p.ready))
  for (const p of [writer, ...forks]) p.child.stdin!.write("go\n")
  const outs = await Promise.all(forks.map((p) => p.done))
  const written = JSON.parse(await writer.done)
  const versions = await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      return [yield* store.streamVersion("session-ses_child"), yield* store.streamVersion(`session-${parent}`)]
    }).pipe(Effect.provide(layer)),
  )
  return {
    forks: outs.map((o) => JSON.parse(o)),
    writer: written,
    childVersion: versions[0]!,
    parentVersion: versions[1]!,
  }
}

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "20000" },
    forkers: { type: "string", default: "10" },
    "writer-ms": { type: "string", default: "4000" },
  },
})
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-fork-race-"))
const t0 = performance.now()
const report = await forkRace(dir, Number(values.size), Number(values.forkers), Number(values["writer-ms"]))
const answers: Record<string, number> = {}
for (const f of report.forks) {
  const key = f.ok === true ? "ok" : f.error!
  answers[key] = (answers[key] ?? 0) + 1
}
console.log(
  JSON.stringify({
    size: Number(values.size),
    forkers: report.forks.length,
    answers,
    others: report.forks.filter((f) => f.error !== undefined && f.error !== "ForkTargetExists").map((f) => f.message),
    writer: { ok: report.writer.ok, failed: report.writer.errors.length, errors: report.writer.errors.slice(0, 3) },
    childVersion: report.childVersion,
    parentVersion: report.parentVersion,
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
  }),
)
fs.rmSync(dir, { recursive: true, force: true })
