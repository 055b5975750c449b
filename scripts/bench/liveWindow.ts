// Probe for issue 32, defect 2: does the live viewer's window at the head go stale under a writer? A writer process
// runs agent turns through `ContextManager` on a SQLite file (a 24k-token model, so it compacts again and again)
// while a server (`Serve.start`, in this process) serves the same file. Over and over, this process asks the server
// for the session's head, then for `/window/<head>/raw`, and compares the bytes with `pivot window --at <head>
// --format json`'s (the CLI's own function, `Replay.windowAt` on a connection of its own). After the writer stops,
// every version is compared once more. Prints one JSON line: requests, mismatches (with the first one's version).
//   node --conditions=@pivot/source scripts/bench/liveWindow.ts [--turns 150]
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Ids, Tokens, ValidWindow, Window } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { Serve } from "@pivot/server"
import { EventStore, ReadModels, Replay } from "@pivot/store"
import { Effect, Layer } from "effect"
import { windowTokens } from "./support/agentLoop.ts"

const { values } = parseArgs({
  options: { turns: { type: "string", default: "150" }, child: { type: "string" } },
})
const SESSION = "ses_live_window"
const MODEL = { ref: { providerId: "probe", modelId: "probe" }, limits: { context: 24_000, output: 4_000 } }

/** The writer: `turns` agent turns (a user message, `prepare`, a step answering it), then "done". */
const writer = (file: string) =>
  Effect.gen(function* () {
    const cm = yield* ContextManager
    const sessions = yield* Sessions.Sessions
    for (let n = 0; n < Number(values.turns); n++) {
      const asked = yield* cm.recordUserMessage(SESSION, { text: `request ${n}: fix module ${n}` })
      yield* cm.prepare(SESSION)
      // A tool step (its output prunable), then the answer.
      const before = (yield* sessions.load(SESSION)).session.window
      yield* cm.recordAssistantStep(SESSION, {
        parentId: asked.messageId,
        parts: [
          {
            type: "tool",
            callId: `call_${n}`,
            tool: "read",
            state: {
              status: "completed",
              input: { filePath: `src/module${n}.ts` },
              output: `export const value${n} = ${n}\n`.repeat(200),
              title: "read",
            },
          },
        ],
        usage: { ...Tokens.zero, input: windowTokens(before) },
        finish: "tool-calls",
      })
      if (n % 7 === 3 && asked.messageId !== undefined) yield* cm.pin(SESSION, { messageId: asked.messageId })
      yield* cm.prepare(SESSION)
      const window = (yield* sessions.load(SESSION)).session.window
      yield* cm.recordAssistantStep(SESSION, {
        parentId: asked.messageId,
        parts: [{ type: "text", text: `fixed module ${n}: ${"export const x = 1\n".repeat(300)}` }],
        usage: { ...Tokens.zero, input: windowTokens(window) },
        finish: "stop",
      })
    }
    process.stdout.write("done\n")
  }).pipe(
    Effect.provide(
      ContextManager.layer({ model: MODEL, config: { prune: true }, prune: { protect: 2_000, minimum: 0 } }).pipe(
        Layer.provide(Ids.Ids.layer),
        Layer.provideMerge(ReadModels.layerSqlite({ filename: file })),
      ),
    ),
  )

if (values.child !== undefined) {
  await Effect.runPromise(writer(values.child))
  process.exit(0)
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-live-window-"))
const file = path.join(dir, "live.db")
// The session exists before the server starts (its first turn), as when a viewer is opened on a running agent.
await Effect.runPromise(
  Effect.gen(function* () {
    const cm = yield* ContextManager
    yield* cm.recordUserMessage(SESSION, { text: "start" })
  }).pipe(
    Effect.provide(
      ContextManager.layer({ model: MODEL }).pipe(
        Layer.provide(Ids.Ids.layer),
        Layer.provideMerge(ReadModels.layerSqlite({ filename: file })),
      ),
    ),
  ),
)
const server = await Serve.start({ source: file, port: 0 })
const base = `http://127.0.0.1:${server.port}/api/sessions/${SESSION}`
const cliWindow = (version: number) =>
  Effect.runPromise(
    Replay.windowAt(SESSION, version).pipe(
      Effect.map((window) => ValidWindow.toJson(Window.messages(window))),
      Effect.provide(EventStore.layerSqlite({ filename: file, readonly: true })),
    ),
  )

const child = spawn(process.execPath, ["--conditions=@pivot/source", fileURLToPath(import.meta.url), "--child", file], {
  stdio: ["ignore", "pipe", "inherit"],
})
let running = true
child.stdout!.on("data", () => {})
const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
void exited.then(() => (running = false))

// What `pivot window --at <head>` prints when <head> is still the head: the window read model (see the CLI's
// `windowAt`), taken only when the stream did not move while it was read.
const readModelWindow = () =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      const readModels = yield* ReadModels.ReadModels
      const before = yield* store.streamVersion(`session-${SESSION}`)
      const messages = yield* readModels.window(SESSION)
      const after = yield* store.streamVersion(`session-${SESSION}`)
      return before === after ? { version: before, json: ValidWindow.toJson(messages) } : undefined
    }).pipe(Effect.provide(ReadModels.layerSqlite({ filename: file }))),
  )
const readModelMismatches: Array<{ readonly version: number; readonly readModel: number; readonly replay: number }> = []
let readModelChecks = 0

let requests = 0
const mismatches: Array<{ readonly version: number; readonly live: number; readonly cli: number }> = []
const compare = async (version: number) => {
  const live = await (await fetch(`${base}/window/${version}/raw`)).text()
  const cli = await cliWindow(version)
  requests++
  if (live !== cli) mismatches.push({ version, live: live.length, cli: cli.length })
}
const t0 = performance.now()
while (running) {
  const head = ((await (await fetch(base)).json()) as { readonly head: number }).head
  await compare(head)
  const stored = await readModelWindow()
  if (stored !== undefined) {
    readModelChecks++
    const replay = await cliWindow(stored.version)
    if (stored.json !== replay)
      readModelMismatches.push({ version: stored.version, readModel: stored.json.length, replay: replay.length })
  }
}
const during = { requests, mismatches: mismatches.length }
const head = ((await (await fetch(base)).json()) as { readonly head: number }).head
for (let v = 1; v <= head; v++) await compare(v)
await server.close()
console.log(
  JSON.stringify({
    head,
    during,
    after: { requests: requests - during.requests, mismatches: mismatches.length - during.mismatches },
    first: mismatches.slice(0, 5),
    readModelAtHead: {
      checks: readModelChecks,
      mismatches: readModelMismatches.length,
      first: readModelMismatches.slice(0, 5),
    },
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
  }),
)
fs.rmSync(dir, { recursive: true, force: true })
