// Run by `plugin-open.ts` in OpenCode's own Bun (the binary with BUN_BE_BUN=1): imports the plugin's entry (argv[2]),
// makes its hooks (drive mode, the bench's options) over a stub client with the store in argv[3], and then, as
// OpenCode does before its first agent request: on a new store (argv[4] `new`) `session.created`, on the file a first
// run made (`existing`, what `--continue` opens) `chat.message` — either loads the hooks' bundle, and the store opens a
// macrotask later (ADR 0051) — then the agent call's messages transform and system transform on a stub session (the
// fixture in argv[5]: its first user message, or all of it on `existing`). Prints as one JSON line the CPU ms of the
// entry's import, of the plugin's own phases (Phases.ts) and of the request's two hooks, and after each step the
// process's RSS and JavaScriptCore's heap (`bun:jsc` heapStats: the GC heap and the memory it reports besides, after a
// full collection): what the plugin holds, not its garbage. The hooks run where the plugin's defaults put them: on a
// worker since ADR 0073, so the heap is OpenCode's thread's (the worker's is not in it) and the RSS the whole process's;
// PIVOT_BENCH_WORKER=0 runs them on OpenCode's thread, as before.
import { heapStats } from "bun:jsc"
import * as Fs from "node:fs"

const [entryFile, dir, store, fixtureFile] = process.argv.slice(2)
const phases = []
globalThis[Symbol.for("pivot.phases")] = phases
const cpu = () => {
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}
const memory = () => {
  const rss = process.memoryUsage().rss
  Bun.gc(true)
  const heap = heapStats()
  return { rss, heap: heap.heapSize + heap.extraMemorySize }
}
const fixture = JSON.parse(Fs.readFileSync(fixtureFile, "utf8"))
const messages = store === "new" ? fixture.messages.slice(0, 1) : fixture.messages
const sessionID = fixture.info.id
const client = {
  session: {
    get: async () => ({ data: fixture.info }),
    messages: async () => ({ data: structuredClone(messages) }),
    list: async () => ({ data: [] }),
  },
  app: { log: async () => ({}) },
}
const atStart = memory()
const before = cpu()
const plugin = await import(entryFile)
const entry = cpu() - before
const options = {
  db: `${dir}/probe.db`,
  drive: true,
  strategy: "cache-aware",
  rules: ["duplicate-calls", "superseded-writes", "errored-inputs"],
  ...(process.env.PIVOT_BENCH_WORKER === "0" ? { worker: false } : {}),
}
const hooks = await plugin.default({ client, directory: dir }, options)
const atEntry = memory()
const user = fixture.messages[0]
if (store === "new") await hooks.event({ event: { type: "session.created", properties: { info: fixture.info } } })
else
  await hooks["chat.message"](
    { sessionID, model: { providerID: user.info.model.providerID, modelID: user.info.model.modelID } },
    { message: messages.at(-1).info, parts: messages.at(-1).parts },
  )
for (let i = 0; i < 4000 && !phases.some((p) => p.name === "store.open"); i++)
  await new Promise((r) => setTimeout(r, 5))
const atOpen = memory()
const requestBefore = cpu()
const output = { messages: structuredClone(messages) }
await hooks["experimental.chat.messages.transform"]({}, output)
const model = {
  id: user.info.model.modelID,
  providerID: user.info.model.providerID,
  limit: { context: 200_000, output: 32_000 },
}
await hooks["experimental.chat.system.transform"]({ sessionID, model }, { system: ["You are OpenCode."] })
const request = cpu() - requestBefore
const atRequest = memory()
await hooks.dispose()
const of = (name) => phases.find((p) => p.name === name)?.cpuMs ?? Number.NaN
const mb = (bytes) => bytes / 2 ** 20
console.log(
  JSON.stringify({
    entry,
    bundle: of("bundle"),
    make: of("make"),
    storeOpen: of("store.open"),
    request,
    sent: output.messages.length,
    rss: process.memoryUsage().rss,
    // MB held after each step, less what the process held before the entry's import.
    rssEntry: mb(atEntry.rss - atStart.rss),
    rssOpen: mb(atOpen.rss - atStart.rss),
    rssRequest: mb(atRequest.rss - atStart.rss),
    heapEntry: mb(atEntry.heap - atStart.heap),
    heapOpen: mb(atOpen.heap - atStart.heap),
    heapRequest: mb(atRequest.heap - atStart.heap),
  }),
)
