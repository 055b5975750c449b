// The hooks on a worker thread (option `worker`, ADR 0073) in OpenCode's own runtime: the binary run as Bun
// (`BUN_BE_BUN=1`, as OpenCode runs its plugins) imports the built entry and calls a hook about a session. Where the
// hooks ran is read from the bench's phase records (Phases.ts): the entry records the worker's start, and the worker's
// own records (its bundle, the hooks made) reach OpenCode's thread through the port. Every other real-binary test runs
// the plugin with its defaults, so on the worker.
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { binaryPath } from "../../opencode/test/oracle/opencode.ts"
import * as OpenCode from "./support/OpenCode.ts"

const PLUGIN = Path.resolve(import.meta.dirname, "../dist/index.js")
let dir: string
let probe: string

beforeAll(() => {
  OpenCode.build()
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-worker-"))
  probe = Path.join(dir, "probe.mjs")
  Fs.writeFileSync(
    probe,
    `const phases = []
globalThis[Symbol.for("pivot.phases")] = phases
const { isMainThread } = await import("node:worker_threads")
const plugin = await import(${JSON.stringify(PLUGIN)})
const options = JSON.parse(process.argv[2])
const logged = []
const client = {
  session: { get: async () => ({ data: { id: "ses_probe" } }), messages: async () => ({ data: [] }) },
  app: { log: async ({ body }) => void logged.push(body.message) },
}
const hooks = await plugin.default({ client, directory: process.argv[3] }, { ...options, db: process.argv[3] + "/probe.db" })
const answer = await hooks.tool.context_compact.execute({}, { sessionID: "ses_probe", messageID: "msg_probe" })
await hooks.dispose()
// The worker's exit after dispose reaches OpenCode's thread a moment later: nothing is to be logged of it.
await new Promise((resolve) => setTimeout(resolve, 300))
console.log(JSON.stringify({ isMainThread, answer, logged, phases: [...new Set(phases.map((p) => p.name))].sort() }))
`,
  )
}, 300_000)

afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

const probeWith = (options: Record<string, unknown>) => {
  const folder = Fs.mkdtempSync(Path.join(dir, "run-"))
  const out = execFileSync(binaryPath(), [probe, JSON.stringify(options), folder], {
    env: { ...process.env, BUN_BE_BUN: "1" },
    encoding: "utf8",
    timeout: 120_000,
  })
  return JSON.parse(out.trim().split("\n").at(-1)!) as {
    isMainThread: boolean
    answer: string
    logged: Array<string>
    phases: Array<string>
  }
}

const ANSWER = "No model is known for this session yet; compaction was not requested."

it("runs the hooks on a worker by default in OpenCode's Bun: the worker's start on OpenCode's thread, the bundle loaded on the worker, the tool answered by the hooks, its end after dispose not logged", () => {
  const ran = probeWith({})
  expect(ran.isMainThread).toBe(true)
  expect(ran.answer).toBe(ANSWER)
  expect(ran.phases).toEqual(expect.arrayContaining(["bundle", "make", "worker"]))
  // Ended by dispose: not reported as a worker that stopped.
  expect(ran.logged).toEqual([])
}, 180_000)

it("runs them on OpenCode's thread with worker: false", () => {
  const ran = probeWith({ worker: false })
  expect(ran.answer).toBe(ANSWER)
  expect(ran.phases).toEqual(expect.arrayContaining(["bundle", "make"]))
  expect(ran.phases).not.toContain("worker")
}, 180_000)
