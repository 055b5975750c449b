// The plugin's own start in OpenCode's Bun, by phase (issue 29 item 4, ADR 0061): for each build, a fresh process
// imports the entry, loads the hooks' bundle on `session.created` and opens the store — first on a new file, then
// again on the file the first made (what `--continue` opens). CPU ms of each phase (`process.cpuUsage`, the whole
// process during the phase: the bundle's evaluation and SQLite's calls do not yield), median and range of --runs,
// the builds interleaved in rotating order. Build first (`npm run build`).
//
//   node scripts/bench/plugin-open.ts [--runs 10] [--before /path/to/other/packages/opencode-plugin/dist/index.js]

import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const { values } = parseArgs({ options: { runs: { type: "string", default: "10" }, before: { type: "string" } } })
const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const { binaryPath } = (await import(path.join(ROOT, "packages/opencode/test/oracle/opencode.ts"))) as {
  binaryPath: () => string
}
const probe = fileURLToPath(new URL("./plugin-open-probe.mjs", import.meta.url))
const builds = [
  { name: "this build", entry: path.join(ROOT, "packages/opencode-plugin/dist/index.js") },
  ...(values.before === undefined ? [] : [{ name: "before", entry: path.resolve(values.before) }]),
]
type Probe = { entry: number; bundle: number; make: number; storeOpen: number; rss: number }
const seen = new Map(builds.map((b) => [b.name, { new: [] as Array<Probe>, existing: [] as Array<Probe> }]))
const run = (entry: string, dir: string): Probe =>
  JSON.parse(
    execFileSync(binaryPath(), [probe, entry, dir], { env: { ...process.env, BUN_BE_BUN: "1" }, encoding: "utf8" })
      .trim()
      .split("\n")
      .at(-1)!,
  ) as Probe
const load = () => os.loadavg()[0]!.toFixed(1)
const loadAtStart = load()
for (let n = 0; n < Number(values.runs); n++)
  for (let i = 0; i < builds.length; i++) {
    const build = builds[(i + n) % builds.length]!
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-plugin-open-"))
    try {
      seen.get(build.name)!.new.push(run(build.entry, dir))
      seen.get(build.name)!.existing.push(run(build.entry, dir))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
const median = (xs: Array<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const cell = (xs: Array<number>) =>
  `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)} … ${Math.max(...xs).toFixed(0)})`
console.log(
  `the plugin's start in OpenCode's Bun, CPU ms, median (range) of ${values.runs}; load ${loadAtStart} → ${load()}`,
)
console.log("| build | store | entry | bundle | make | store.open | RSS after, MB |")
console.log("|---|---|---:|---:|---:|---:|---:|")
for (const build of builds)
  for (const kind of ["new", "existing"] as const) {
    const xs = seen.get(build.name)![kind]
    const field = (key: keyof Probe) => cell(xs.map((x) => x[key]))
    console.log(
      `| ${build.name} | ${kind} | ${field("entry")} | ${field("bundle")} | ${field("make")} | ${field("storeOpen")} | ${(median(xs.map((x) => x.rss)) / 2 ** 20).toFixed(0)} |`,
    )
  }
