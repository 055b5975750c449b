// CLI start-up benchmark: how long a `pivot` command takes from the process's start to its exit, run as the installed
// command runs (`packages/cli/src/bin.mjs`: the CLI's bundle in dist/bundle/, ADR 0033, Node's compile cache on; a
// first, unmeasured run warms the cache). Commands: `--help`, `--version`, and `window` and `inspect --limit 5` on the demo's database
// (made once by `pivot demo --db`). Each run is a fresh process; the figures are the median and the fastest of --runs:
// wall time measured around the child (spawn, Node's start-up, module loading, the command, exit), CPU time (user +
// system, all threads) and peak RSS as the child itself reports them at exit (`cli-start-probe.mjs`, preloaded with
// --import, writes `process.resourceUsage()` to file descriptor 3). Build first (`npm run build`).
//
//   node scripts/bench/cli-start.ts [--runs 10] [--bin packages/cli/src/bin.mjs]
//
// `--bin` points at another checkout's bin.mjs to compare a change with what it replaces (that checkout built too).
// The first row is the floor: Node itself starting and exiting on an empty script, measured the same way.

import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10" },
    bin: { type: "string", default: fileURLToPath(new URL("../../packages/cli/src/bin.mjs", import.meta.url)) },
  },
})
const runs = Number(values.runs)
const bin = path.resolve(values.bin)
const probe = fileURLToPath(new URL("./cli-start-probe.mjs", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-cli-"))
const db = path.join(dir, "demo.db")

interface Sample {
  readonly wallMs: number
  readonly cpuMs: number
  readonly maxRssMb: number
}

const empty = path.join(dir, "empty.mjs")
fs.writeFileSync(empty, "")

/** One run of `pivot <args>` (or of `script`) in a fresh process; fails loudly when the command does. */
const once = (args: ReadonlyArray<string>, script = bin): Sample => {
  const started = process.hrtime.bigint()
  const result = spawnSync(process.execPath, ["--import", probe, script, ...args], {
    cwd: dir,
    stdio: ["ignore", "ignore", "pipe", "pipe"],
    encoding: "utf8",
  })
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6
  if (result.status !== 0) throw new Error(`pivot ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  const usage = JSON.parse(String(result.output[3])) as { readonly cpuMs: number; readonly maxRssMb: number }
  return { wallMs, ...usage }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const min = (xs: ReadonlyArray<number>) => Math.min(...xs)
const load = () => os.loadavg()[0]!.toFixed(1)

const demo = spawnSync(process.execPath, [bin, "demo", "--db", db], { cwd: dir, stdio: "ignore" })
if (demo.status !== 0) throw new Error(`pivot demo --db ${db} failed (exit ${demo.status}); build first`)

const commands: ReadonlyArray<ReadonlyArray<string>> = [
  ["--help"],
  ["--version"],
  ["window", "--db", db],
  ["inspect", "--db", db, "--limit", "5"],
]

console.log(`${bin}; ${runs} runs each; ${os.cpus().length} CPUs, load ${load()} at the start`)
console.log("| command | wall ms (median / fastest) | CPU ms (median / fastest) | peak RSS MB (median) |")
console.log("|---|---:|---:|---:|")
const rows: ReadonlyArray<{ readonly shown: string; readonly args: ReadonlyArray<string>; readonly script?: string }> =
  [
    { shown: "node empty.mjs (the floor)", args: [], script: empty },
    ...commands.map((args) => ({ shown: `pivot ${args.map((a) => (a === db ? "demo.db" : a)).join(" ")}`, args })),
  ]
for (const { shown, args, script } of rows) {
  once(args, script) // warms Node's compile cache, as any earlier run of the installed command would have
  const samples = Array.from({ length: runs }, () => once(args, script))
  const wall = samples.map((s) => s.wallMs)
  const cpu = samples.map((s) => s.cpuMs)
  console.log(
    `| \`${shown}\` | ${median(wall).toFixed(0)} / ${min(wall).toFixed(0)} | ${median(cpu).toFixed(0)} / ` +
      `${min(cpu).toFixed(0)} | ${median(samples.map((s) => s.maxRssMb)).toFixed(0)} |`,
  )
}
console.log(`load ${load()} at the end`)
fs.rmSync(dir, { recursive: true, force: true })
