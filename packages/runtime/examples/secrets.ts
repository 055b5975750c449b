// Secrets at rest: record-time redaction keeps detected secrets out of the store; crypto-shredding encrypts what is
// left (the message text, tool inputs and outputs, summaries) with the session's key, and `forget` erases it for
// good while the session's history, usage and decisions stay. Writes a SQLite file in a temporary directory.
//
//   node packages/runtime/examples/secrets.ts
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Ids, Tokens } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { type EventStore, ReadModels, SessionLog } from "@pivot/store"
import { Effect, Layer } from "effect"

const model = { ref: { providerId: "local", modelId: "tiny-coder" }, limits: { context: 24_000, output: 4_000 } }
const sessionId = "ses_secrets_example"

/** The context manager with both options on, over a SQLite file with its read models. */
export const layer = (filename: string) =>
  ContextManager.layer({ model, redactOnRecord: true, encryptAtRest: true }).pipe(
    Layer.provide(Ids.Ids.layer),
    Layer.provideMerge(ReadModels.layerSqlite({ filename })),
  )

/** The window's texts, as the read model renders them. */
const windowTexts = Effect.gen(function* () {
  const readModels = yield* ReadModels.ReadModels
  const window = yield* readModels.window(sessionId)
  return window.flatMap((m) => m.parts.flatMap((p) => (p.type === "text" ? [`${m.role}: ${p.text}`] : [])))
})

/** Records a turn holding a key, reads the window, forgets the session, reads it again; answers what it printed. */
export const program: Effect.Effect<
  ReadonlyArray<string>,
  unknown,
  ContextManager | ReadModels.ReadModels | EventStore
> = Effect.gen(function* () {
  const lines: Array<string> = []
  const cm = yield* ContextManager
  const key = ["sk-", "proj-", "Q7fz0xK2mW9bL4tR8vN1cY6hJ3pD5sA0eG2iU7"].join("")
  yield* cm.recordUserMessage(sessionId, { text: `deploy with OPENAI_API_KEY=${key} to staging` })
  yield* cm.recordAssistantStep(sessionId, {
    parts: [{ type: "text", text: "Deploying to staging now." }],
    usage: { ...Tokens.zero, input: 1_200, output: 20 },
    finish: "stop",
  })
  for (const line of yield* windowTexts) lines.push(`before: ${line}`)
  const forgotten = yield* SessionLog.forget(sessionId)
  lines.push(`forgotten: key deleted ${forgotten.keyDeleted}, log cleared ${forgotten.logCleared}`)
  for (const line of yield* windowTexts) lines.push(`after: ${line}`)
  lines.push(`usage after: ${(yield* cm.usage(sessionId)).tokens} tokens`)
  return lines
})

if (import.meta.main) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-secrets-"))
  const filename = path.join(dir, "pivot.db")
  const lines = await Effect.runPromise(program.pipe(Effect.provide(layer(filename))))
  for (const line of lines) console.log(line)
  fs.rmSync(dir, { recursive: true, force: true })
}
