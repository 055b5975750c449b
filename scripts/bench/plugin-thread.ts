// What the plugin's worker (ADR 0073) adds to each messages transform, in OpenCode's Bun: the same transform run on
// OpenCode's thread and through Thread.ts to a real worker (`node:worker_threads`), over sessions of N messages whose
// tool outputs are `--output-chars` long. The transform stands in for drive's: it hands back a copy of every message
// with a tool part (drive's rewrite copies what it changes; a copy of all is its worst case) and keeps the rest, and
// adds one message (the HUD). Each call's time is OpenCode's wait: posting the copy, the worker's run, the answer
// applied to OpenCode's array. Then a sync's read of the session (`client.session.messages`, answered on OpenCode's
// thread: the worker asks across the port and gets a copy). Build first (`npm run build`).
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
export const make = async (input) => ({
  dispose: async () => undefined,
  // A sync's read: the session's messages asked of OpenCode's client (across the port, through the worker).
  "experimental.chat.system.transform": async (_input, output) => {
    const answer = await input.client.session.messages({ path: { id: "ses_1" } })
    output.system.push(String(answer.data.length))
  },
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
const stored = session()
const client = { session: { messages: async () => ({ data: stored }) } }
const time = async (hooks) => {
  const ms = []
  const reads = []
  for (let n = 0; n < calls + 3; n++) {
    const output = { messages: session() }
    let t = performance.now()
    await hooks["experimental.chat.messages.transform"]({}, output)
    if (n >= 3) ms.push(performance.now() - t)
    if (output.messages.length !== size + 1) throw new Error("the transform did not apply")
    const system = { system: [] }
    t = performance.now()
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, system)
    if (n >= 3) reads.push(performance.now() - t)
    if (system.system[0] !== String(size)) throw new Error("the read did not apply")
  }
  const stat = (xs) => {
    xs.sort((a, b) => a - b)
    return { median: xs[xs.length >> 1], p90: xs[Math.floor(xs.length * 0.9)] }
  }
  return { transform: stat(ms), read: stat(reads) }
}
const direct = await time(await make({ client }))
const worker = new Worker(new URL("./worker.mjs", import.meta.url))
const remote = connect(worker, { client, directory: "/tmp" }, {}, { ref: () => worker.ref(), unref: () => worker.unref(), close: () => worker.terminate() })
await remote.ready
const threaded = await time(remote.hooks)
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
type Stat = { median: number; p90: number }
console.log(
  "messages | session JSON | transform on OpenCode's thread | through the worker | session read on OpenCode's thread | from the worker (median / p90 ms)",
)
for (const size of values.sizes.split(",").map(Number)) {
  const out = execFileSync(binaryPath(), [path.join(dir, "probe.mjs"), String(size), String(calls), String(chars)], {
    env: { ...process.env, BUN_BE_BUN: "1" },
    encoding: "utf8",
  })
  const r = JSON.parse(out.trim().split("\n").at(-1)!) as {
    bytes: number
    direct: { transform: Stat; read: Stat }
    threaded: { transform: Stat; read: Stat }
  }
  const ms = (x: Stat) => `${x.median.toFixed(2)} / ${x.p90.toFixed(2)}`
  console.log(
    `${String(size).padStart(8)} | ${(r.bytes / 1024).toFixed(0).padStart(8)} KiB | ${ms(r.direct.transform)} | ${ms(r.threaded.transform)} | ${ms(r.direct.read)} | ${ms(r.threaded.read)}`,
  )
}
console.log(`load at the end ${os.loadavg()[0]!.toFixed(1)}`)
fs.rmSync(dir, { recursive: true, force: true })
