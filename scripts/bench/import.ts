// Import benchmark: `pivot import` of a large OpenCode export (the real export's conversation scaled to --messages
// messages, ~39 MB at 20,000) into a fresh SQLite file, each run in a fresh process running the compiled CLI as the
// installed `pivot` does (scripts/bench/import-child.mjs): with the Node flags `bin.mjs` gives an import
// (`packages/cli/src/importFlags.mjs`) and Node's compile cache (warmed by a first, unmeasured run). Reports, median
// of --runs for each set of Node flags in --flags (default: the installed command's): wall time from process start to
// the end (start-up and module loading included), CPU time (user + system, all threads) and peak RSS of the whole
// process. Build first (`npm run build`).
//
//   node scripts/bench/import.ts [--messages 20000] [--runs 5] [--flags= --flags=--max-semi-space-size=16]

import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { realExportPath, scaledExport } from "./scaled-export.ts"

// A computed specifier: the flags come from the plain JavaScript module bin.mjs itself reads.
const flagsModule = new URL("../../packages/cli/src/importFlags.mjs", import.meta.url).href
const { IMPORT_NODE_FLAGS } = (await import(flagsModule)) as { readonly IMPORT_NODE_FLAGS: ReadonlyArray<string> }

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "20000" },
    runs: { type: "string", default: "5" },
    flags: { type: "string", multiple: true, default: [IMPORT_NODE_FLAGS.join(" ")] },
  },
})

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-import-"))
const file = path.join(dir, "export.json")
const source = JSON.parse(fs.readFileSync(realExportPath(), "utf8"))
fs.writeFileSync(file, JSON.stringify(scaledExport(source, Number(values.messages))))
const mb = fs.statSync(file).size / 1e6
const child = fileURLToPath(new URL("./import-child.mjs", import.meta.url))
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const load = () => os.loadavg()[0]!.toFixed(1)
console.log(
  `export: ${Number(values.messages).toLocaleString("en-US")} messages, ${mb.toFixed(1)} MB; ${os.cpus().length} CPUs, load ${load()}`,
)
console.log("| node flags | wall s (median) | CPU s (median) | peak RSS MB (median) |")
console.log("|---|---:|---:|---:|")
for (const flags of values.flags) {
  const samples: Array<{ wallMs: number; cpuMs: number; maxRssMb: number }> = []
  // Run 0 warms Node's compile cache (as any earlier run of the installed command would have) and is not counted.
  for (let i = 0; i <= Number(values.runs); i++) {
    const db = path.join(dir, `run-${i}.db`)
    const args = [...flags.split(" ").filter((f) => f !== ""), child, "--file", file, "--db", db]
    const result = spawnSync(process.execPath, args, { encoding: "utf8" })
    const line = result.stdout.trim().split("\n").at(-1) ?? ""
    const measured = JSON.parse(line)
    if (measured.code !== 0) throw new Error(`import failed: ${result.stderr}`)
    if (i > 0) samples.push(measured)
    fs.rmSync(db, { force: true })
  }
  console.log(
    `| ${flags === "" ? "(none)" : `\`${flags}\``} | ${(median(samples.map((s) => s.wallMs)) / 1000).toFixed(2)} | ` +
      `${(median(samples.map((s) => s.cpuMs)) / 1000).toFixed(2)} | ${median(samples.map((s) => s.maxRssMb)).toFixed(0)} |`,
  )
}
console.log(`load after: ${load()}`)
fs.rmSync(dir, { recursive: true, force: true })
