/**
 * The probe of issue 18 #1, with real processes: writer A (this process) keeps a ContextManager open on a SQLite file
 * (`encryptAtRest: true, redactSecrets: false`) with a session holding one secret of every detector kind; another
 * process runs `pivot forget --db FILE <session>`. A's next `prepare` and its next compaction must hold no forgotten
 * text, and neither may the events, the read models, `pivot window --format json` or the file's bytes afterwards.
 * Slow lane: it spawns the CLI.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Ids, Tokens } from "@pivot/core"
import { ContextManager, Summarizer } from "@pivot/runtime"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SAMPLES } from "../../core/test/support/secrets.ts"
import { fileBytes, formsOf } from "../../runtime/test/support/bytes.ts"
import { tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const SESSION = "ses_live"
const ALL = SAMPLES.map((s) => s.text).join("\n")
const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const pivotProcess = (...args: Array<string>) =>
  promisify(execFile)(process.execPath, ["--conditions=@pivot/source", bin, ...args], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  })

const kindsIn = (text: string): ReadonlyArray<string> =>
  SAMPLES.filter((s) => formsOf(s.secret).some((form) => text.includes(form))).map((s) => s.kind)

describe("pivot forget from another process, with the writer still running (issue 18 #1)", () => {
  it(`given A open on the session, when another process forgets it, then 0 of ${SAMPLES.length} secret kinds are left anywhere`, async () => {
    const filename = path.join(dir, "live.db")
    // The summariser writes back all it reads: any secret in its input would reach the summary.
    const echo = Summarizer.of({
      summarize: (request) =>
        Effect.succeed({
          text: `summary of ${JSON.stringify(request.messages)}`,
          usage: { ...Tokens.zero, input: 10, output: 2 },
          finish: "stop",
          model: request.model,
        }),
    })
    const a = ManagedRuntime.make(
      ContextManager.layer({
        model: {
          ref: { providerId: "anthropic", modelId: "claude-test" },
          limits: { context: 100_000, output: 32_000 },
        },
        encryptAtRest: true,
        redactSecrets: false,
        fallback: false,
      }).pipe(
        Layer.provide(Layer.succeed(Summarizer, echo)),
        Layer.provide(Ids.Ids.layer),
        Layer.provideMerge(ReadModels.layerSqlite({ filename })),
      ),
    )
    try {
      const before = await a.runPromise(
        Effect.gen(function* () {
          const cm = yield* ContextManager
          yield* cm.recordUserMessage(SESSION, { text: `credentials:\n${ALL}` })
          yield* cm.recordAssistantStep(SESSION, {
            parts: [{ type: "text", text: `using ${ALL}` }],
            usage: { ...Tokens.zero, input: 2_000 },
            finish: "tool-calls",
          })
          yield* cm.compact(SESSION)
          yield* cm.recordUserMessage(SESSION, { text: `again ${ALL}` })
          return yield* cm.prepare(SESSION)
        }),
      )
      expect(kindsIn(JSON.stringify(before.messages))).toHaveLength(SAMPLES.length) // the control

      const forgotten = await pivotProcess("forget", "--db", filename, SESSION)
      expect(forgotten.stdout).toContain(`forgot session ${SESSION}`)

      const after = await a.runPromise(
        Effect.gen(function* () {
          const cm = yield* ContextManager
          const prepared = yield* cm.prepare(SESSION)
          const compacted = yield* cm.compact(SESSION)
          return { prepared, compacted }
        }),
      )
      expect(kindsIn(JSON.stringify(after.prepared.messages))).toEqual([])
      expect(after.compacted.outcome?.status).toBe("finished")

      const window = await pivotProcess("window", "--db", filename, "--session", SESSION, "--format", "json")
      const read = await Effect.runPromise(
        Effect.gen(function* () {
          const rm = yield* ReadModels.ReadModels
          return {
            log: yield* SessionLog.read(SESSION),
            tables: yield* rm.tables(SESSION),
            recall: yield* rm.recall(SESSION, "summary credentials again", 50),
          }
        }).pipe(Effect.provide(ReadModels.layerSqlite({ filename }))),
      )
      expect(read.log.filter((l) => l.event._tag === "SummaryFinished")).toHaveLength(2)
      expect(kindsIn(window.stdout)).toEqual([])
      expect(kindsIn(JSON.stringify(read))).toEqual([])
      expect([...new Set(fileBytes(filename).flatMap((f) => kindsIn(f.bytes)))]).toEqual([])
    } finally {
      await a.dispose()
    }
  })
})
