// The plugin's own start in OpenCode's Bun, by phase (issue 29 item 4, ADR 0061, ADR 0069): for each build, a fresh
// process imports the entry, loads the hooks' bundle (`session.created` on a new file; `chat.message` on the file the
// first run made, what `--continue` opens), opens the store, and answers a first agent call in drive mode (its
// messages and system transforms over a stub session: plugin-open-probe.mjs). CPU ms of each phase
// (`process.cpuUsage`, the whole process during the phase: the bundle's evaluation and SQLite's calls do not yield),
// and what the process holds after each step (RSS, and JavaScriptCore's heap after a full collection), less what it
// held before the entry's import; median and range of --runs, the builds interleaved in rotating order. Build first
// (`npm run build`).
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
// A recorded OpenCode session (a read, a grep, pruned outputs): its first message on a new file, all of it after.
const fixture = path.join(ROOT, "packages/opencode/test/fixtures/pruned.json")
const builds = [
  { name: "this build", entry: path.join(ROOT, "packages/opencode-plugin/dist/index.js") },
  ...(values.before === undefined ? [] : [{ name: "before", entry: path.resolve(values.before) }]),
]
type Probe = {
  entry: number
  bundle: number
  make: number
  storeOpen: number
  request: number
  rss: number
  rssEntry: number
  rssOpen: number
  rssRequest: number
  heapEntry: number
  heapOpen: number
  heapRequest: number
}
const seen = new Map(builds.map((b) => [b.name, { new: [] as Array<Probe>, existing: [] as Array<Probe> }]))
const run = (entry: string, dir: string, store: "new" | "existing"): Probe =>
  JSON.parse(
    execFileSync(binaryPath(), [probe, entry, dir, store, fixture], {
      env: { ...process.env, BUN_BE_BUN: "1" },
      encoding: "utf8",
    })
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
      seen.get(build.name)!.new.push(run(build.entry, dir, "new"))
      seen.get(build.name)!.existing.push(run(build.entry, dir, "existing"))
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
console.log(
  "| build | store | entry | bundle | make | store.open | first request | RSS after, MB | held after entry / open / request: RSS, MB | JS heap, MB |",
)
console.log("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
for (const build of builds)
  for (const kind of ["new", "existing"] as const) {
    const xs = seen.get(build.name)![kind]
    const field = (key: keyof Probe) => cell(xs.map((x) => x[key]))
    const mb = (key: keyof Probe) => median(xs.map((x) => x[key])).toFixed(1)
    console.log(
      `| ${build.name} | ${kind} | ${field("entry")} | ${field("bundle")} | ${field("make")} | ${field("storeOpen")} | ${field("request")} | ${(median(xs.map((x) => x.rss)) / 2 ** 20).toFixed(0)} | ${field("rssEntry")} / ${field("rssOpen")} / ${field("rssRequest")} | ${mb("heapEntry")} / ${mb("heapOpen")} / ${mb("heapRequest")} |`,
    )
  }
