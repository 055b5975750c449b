// What the plugin's worker (ADR 0073) adds to each messages transform, in OpenCode's Bun: the same transform run on
// OpenCode's thread and through Thread.ts to a real worker (`node:worker_threads`), over sessions of N messages whose
// tool outputs are `--output-chars` long. The transform stands in for drive's: it hands back a copy of every message
// with a tool part (drive's rewrite copies what it changes; a copy of all is its worst case) and keeps the rest, and
// adds one message (the HUD). Each call's time is OpenCode's wait: posting the copy, the worker's run, the answer
// applied to OpenCode's array. Build first (`npm run build`).
//
//   node scripts/bench/plugin-thread.ts [--sizes 20,200,1000] [--calls 30] [--output-chars 2000]

import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "20,200,1000" },
    calls: { type: "string", default: "30" },
    "output-chars": { type: "string", default: "2000" },
  },
})
const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const { binaryPath } = (await import(path.join(ROOT, "packages/opencode/test/oracle/opencode.ts"))) as {
  binaryPath: () => string
}
const thread = path.join(ROOT, "packages/opencode-plugin/dist/Thread.js")
if (!fs.existsSync(thread)) throw new Error(`${thread} is missing: run npm run build first`)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-thread-"))
const hooks = `
export const make = async () => ({
  dispose: async () => undefined,
  "experimental.chat.messages.transform": async (_input, output) => {
    const next = output.messages.map((m) =>
      m.parts.some((p) => p.type === "tool") ? { ...m, parts: m.parts.map((p) => ({ ...p })) } : m,
    )
    const last = next.at(-1)
    next.push({ info: { ...last.info, id: last.info.id + "z" }, parts: [{ type: "text", text: "[pivot context status]" }] })
    output.messages.splice(0, output.messages.length, ...next)
  },
})
`
fs.writeFileSync(path.join(dir, "hooks.mjs"), hooks)
fs.writeFileSync(
  path.join(dir, "worker.mjs"),
  `import { parentPort } from "node:worker_threads"
import { serve } from ${JSON.stringify(thread)}
import { make } from "./hooks.mjs"
serve(parentPort, make)
`,
)
fs.writeFileSync(
  path.join(dir, "probe.mjs"),
  `import { Worker } from "node:worker_threads"
import { connect } from ${JSON.stringify(thread)}
import { make } from "./hooks.mjs"
const [size, calls, chars] = process.argv.slice(2).map(Number)
const session = () =>
  Array.from({ length: size }, (_, i) => ({
    info: { id: "msg_" + String(i).padStart(6, "0"), sessionID: "ses_1", role: i % 2 === 0 ? "user" : "assistant" },
    parts:
      i % 2 === 0
        ? [{ id: "prt_u" + i, type: "text", text: "x".repeat(200) }]
        : [
            { id: "prt_t" + i, type: "text", text: "y".repeat(300) },
            { id: "prt_c" + i, type: "tool", tool: "read", callID: "c" + i,
              state: { status: "completed", input: { filePath: "src/f" + i + ".ts" }, output: "z".repeat(chars), time: { start: 1, end: 2 } } },
          ],
  }))
const time = async (transform) => {
  const ms = []
  for (let n = 0; n < calls + 3; n++) {
    const output = { messages: session() }
    const t = performance.now()
    await transform({}, output)
    if (n >= 3) ms.push(performance.now() - t)
    if (output.messages.length !== size + 1) throw new Error("the transform did not apply")
  }
  ms.sort((a, b) => a - b)
  return { median: ms[ms.length >> 1], p90: ms[Math.floor(ms.length * 0.9)] }
}
const direct = await time((await make())["experimental.chat.messages.transform"])
const worker = new Worker(new URL("./worker.mjs", import.meta.url))
const remote = connect(worker, { client: { session: {} }, directory: "/tmp" }, {}, { ref: () => worker.ref(), unref: () => worker.unref(), close: () => worker.terminate() })
await remote.ready
const threaded = await time(remote.hooks["experimental.chat.messages.transform"])
await remote.hooks.dispose()
const bytes = JSON.stringify(session()).length
console.log(JSON.stringify({ size, bytes, direct, threaded }))
`,
)

const calls = Number(values.calls)
const chars = Number(values["output-chars"])
console.log(
  `plugin-thread — OpenCode's Bun, load ${os.loadavg()[0]!.toFixed(1)}; ${calls} calls a size after 3 unmeasured, output ${chars} chars`,
)
console.log("messages | session JSON | on OpenCode's thread: median / p90 ms | through the worker: median / p90 ms")
for (const size of values.sizes.split(",").map(Number)) {
  const out = execFileSync(binaryPath(), [path.join(dir, "probe.mjs"), String(size), String(calls), String(chars)], {
    env: { ...process.env, BUN_BE_BUN: "1" },
    encoding: "utf8",
  })
  const r = JSON.parse(out.trim().split("\n").at(-1)!) as {
    bytes: number
    direct: { median: number; p90: number }
    threaded: { median: number; p90: number }
  }
  console.log(
    `${String(size).padStart(8)} | ${(r.bytes / 1024).toFixed(0).padStart(8)} KiB | ${r.direct.median.toFixed(2)} / ${r.direct.p90.toFixed(2)} | ${r.threaded.median.toFixed(2)} / ${r.threaded.p90.toFixed(2)}`,
  )
}
console.log(`load at the end ${os.loadavg()[0]!.toFixed(1)}`)
fs.rmSync(dir, { recursive: true, force: true })
