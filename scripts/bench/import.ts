// Import benchmark: `pivot import` of a large OpenCode export (the real export's conversation scaled to --messages
// messages, ~39 MB at 20,000) into a fresh SQLite file, each run in a fresh process. Reports wall time, CPU time and
// peak RSS of the whole process (Node, modules and all), median of --runs, for each set of Node flags in --flags.
//
//   node scripts/bench/import.ts [--messages 20000] [--runs 3] [--flags= --flags=--max-semi-space-size=2]

import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { realExportPath, scaledExport } from "./scaled-export.ts"

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "20000" },
    runs: { type: "string", default: "3" },
    flags: { type: "string", multiple: true, default: [""] },
    child: { type: "boolean", default: false },
    file: { type: "string" },
    db: { type: "string" },
  },
})

if (values.child) {
  // One import in this process; prints what it measured as one JSON line.
  const { run } = await import("@pivot/cli")
  const started = performance.now()
  const code = await run(["import", values.file!, "--db", values.db!], {
    out: () => {},
    err: (line) => process.stderr.write(`${line}\n`),
    isTTY: false,
    columns: undefined,
    env: {},
  })
  const wallMs = performance.now() - started
  const usage = process.resourceUsage()
  console.log(
    JSON.stringify({
      code,
      wallMs,
      cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
      maxRssMb: usage.maxRSS / 1024,
    }),
  )
} else {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-import-"))
  const file = path.join(dir, "export.json")
  const source = JSON.parse(fs.readFileSync(realExportPath(), "utf8"))
  fs.writeFileSync(file, JSON.stringify(scaledExport(source, Number(values.messages))))
  const mb = fs.statSync(file).size / 1e6
  const self = fileURLToPath(import.meta.url)
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(
    `export: ${Number(values.messages).toLocaleString("en-US")} messages, ${mb.toFixed(1)} MB; load ${os.loadavg()[0]!.toFixed(1)}`,
  )
  console.log("| node flags | wall s (median) | CPU s (median) | peak RSS MB (median) |")
  console.log("|---|---:|---:|---:|")
  for (const flags of values.flags) {
    const samples: Array<{ wallMs: number; cpuMs: number; maxRssMb: number }> = []
    for (let i = 0; i < Number(values.runs); i++) {
      const db = path.join(dir, `run-${i}.db`)
      const args = [...flags.split(" ").filter((f) => f !== ""), self, "--child", "--file", file, "--db", db]
      const result = spawnSync(process.execPath, args, { encoding: "utf8" })
      const line = result.stdout.trim().split("\n").at(-1) ?? ""
      const measured = JSON.parse(line)
      if (measured.code !== 0) throw new Error(`import failed: ${result.stderr}`)
      samples.push(measured)
      fs.rmSync(db, { force: true })
    }
    console.log(
      `| ${flags === "" ? "(none)" : `\`${flags}\``} | ${(median(samples.map((s) => s.wallMs)) / 1000).toFixed(2)} | ` +
        `${(median(samples.map((s) => s.cpuMs)) / 1000).toFixed(2)} | ${median(samples.map((s) => s.maxRssMb)).toFixed(0)} |`,
    )
  }
  fs.rmSync(dir, { recursive: true, force: true })
}
