// One `pivot import` in this process, as the installed command runs it (compiled CLI, Node's compile cache), for
// scripts/bench/import.ts: plain JavaScript, so that no TypeScript stripping is measured with it. Prints what it
// measured as one JSON line: exit code, wall time since the process started, CPU time (user + system), peak RSS.
import { enableCompileCache } from "node:module"
import { parseArgs } from "node:util"

enableCompileCache?.()
const { values } = parseArgs({ options: { file: { type: "string" }, db: { type: "string" } } })
const { run } = await import("@pivot/cli")
const code = await run(["import", values.file, "--db", values.db], {
  out: () => {},
  err: (line) => process.stderr.write(`${line}\n`),
  isTTY: false,
  columns: undefined,
  env: {},
})
// From the process's start: Node's start-up and loading pivot's modules are part of what a user waits for.
const wallMs = performance.now()
const usage = process.resourceUsage()
console.log(
  JSON.stringify({
    code,
    wallMs,
    cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
    maxRssMb: usage.maxRSS / 1024,
  }),
)
