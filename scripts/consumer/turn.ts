// The consumer check's typed program, copied into a temporary app outside the repository: it is type-checked there
// against the installed packages' .d.ts (strict NodeNext, skipLibCheck false), compiled, and run on Node 22 and 24.
// One real turn through the public API on a SQLite file; then a fresh runtime reopens the file and sees the same window.
import * as assert from "node:assert/strict"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AiAgent, AiSummarizer, Messages } from "@pivot/ai"
import { run } from "@pivot/cli"
import { Ids, Session, Tokens, Window } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-consumer-turn-"))
const filename = path.join(dir, "pivot.db")
const sessionId = "ses_consumercheck"
const model = { ref: { providerId: "local", modelId: "tiny-coder" }, limits: { context: 24_000, output: 4_000 } }

const layer = () =>
  ContextManager.layer({ model }).pipe(
    Layer.provide(Ids.Ids.layer),
    Layer.provideMerge(EventStore.layerSqlite({ filename })),
  )

const turn = Effect.gen(function* () {
  const pivot = yield* ContextManager
  yield* pivot.start(sessionId)
  yield* pivot.recordUserMessage(sessionId, { text: "Fix the failing parser test" })
  const before = yield* pivot.prepare(sessionId)
  yield* pivot.recordAssistantStep(sessionId, {
    parts: [{ type: "text", text: "The parser test passes now." }],
    usage: { ...Tokens.zero, input: 1_200, output: 40 },
    finish: "stop",
  })
  const after = yield* pivot.prepare(sessionId)
  const usage = yield* pivot.usage(sessionId)
  return { before, after, usage }
})

const reopened = Effect.gen(function* () {
  const pivot = yield* ContextManager
  const sessions = yield* Sessions.Sessions
  const prepared = yield* pivot.prepare(sessionId)
  const events = yield* sessions.events(sessionId)
  return { prepared, events }
})

try {
  const { before, after, usage } = await Effect.runPromise(turn.pipe(Effect.provide(layer())))
  assert.deepEqual(
    before.modelMessages.map((m) => m.role),
    ["user"],
  )
  assert.equal(before.next, "call")
  assert.deepEqual(
    after.modelMessages.map((m) => m.role),
    ["user", "assistant"],
  )
  assert.equal(after.next, "wait")
  assert.equal(usage.source, "reported")
  assert.equal(usage.tokens, 1_240)
  assert.equal(usage.pivots, 0)
  assert.ok(fs.statSync(filename).size > 0, "the SQLite file holds the session")

  // A fresh runtime over the same file: the window is read back, not remembered.
  const again = await Effect.runPromise(reopened.pipe(Effect.provide(layer())))
  assert.deepEqual(again.prepared.modelMessages, after.modelMessages)
  const windowIds = Window.messages(Session.fold(again.events).window).map((m) => m.id)
  assert.equal(windowIds.length, 2)
  assert.deepEqual(
    again.events.map((e) => e._tag),
    ["SessionStarted", "UserMessageAdded", "AssistantStepRecorded"],
  )
  // Every package's entry is reachable from typed code.
  for (const value of [AiAgent, AiSummarizer, Messages, run, Import.importText])
    assert.ok(value !== undefined && value !== null)
  console.log(`turn ok: ${again.events.length} events in ${filename}, ${usage.tokens} tokens reported`)
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
