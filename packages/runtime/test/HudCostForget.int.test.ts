/**
 * The HUD's cost line after `forget` (issue 20 with issue 18 #1): the live ledger a running writer keeps holds the
 * session's text (its window's estimates), so when another process forgets the session the writer folds the ledger
 * again from the log as it now reads: its next cost line equals the ledger of the erased log, not of the text it had.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Ids, Ledger } from "@pivot/core"
import { ContextManager, Hud, Sessions, Summarizer } from "@pivot/runtime"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SESSION, SPEC, stub, tool, used } from "./support/harness.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-hud-forget-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const costLineOf = (hud: string | undefined) => hud?.split("\n").find((line) => line.startsWith("cost: "))

describe("the cost line after forget", () => {
  it("given a writer with a warm ledger, when another process forgets the session, then its next cost line is the erased log's ledger", async () => {
    const filename = path.join(dir, "hud.db")
    const a = ManagedRuntime.make(
      ContextManager.layer({ model: SPEC, encryptAtRest: true, hud: { cost: true } }).pipe(
        Layer.provide(Layer.succeed(Summarizer, stub("a short summary").summarizer)),
        Layer.provide(Ids.Ids.layer),
        Layer.provideMerge(ReadModels.layerSqlite({ filename })),
      ),
    )
    try {
      const before = await a.runPromise(
        Effect.gen(function* () {
          const cm = yield* ContextManager
          yield* cm.recordUserMessage(SESSION, { text: `read the logs ${"and more words ".repeat(200)}` })
          yield* cm.recordAssistantStep(SESSION, {
            parts: [tool("bash", { command: "cat app.log" }, "line of the log\n".repeat(2_000))],
            usage: used(20_000),
            finish: "tool-calls",
          })
          yield* cm.compact(SESSION)
          yield* cm.recordAssistantStep(SESSION, { parts: [{ type: "text", text: "go on" }], usage: used(3_000) })
          return (yield* cm.prepare(SESSION)).hud
        }),
      )
      await Effect.runPromise(SessionLog.forget(SESSION).pipe(Effect.provide(ReadModels.layerSqlite({ filename }))))
      const after = await a.runPromise(
        Effect.gen(function* () {
          const cm = yield* ContextManager
          yield* cm.recordAssistantStep(SESSION, { parts: [{ type: "text", text: "more" }], usage: used(3_500) })
          const hud = (yield* cm.prepare(SESSION)).hud
          return { hud, log: yield* (yield* Sessions.Sessions).events(SESSION) }
        }),
      )
      // The reference: the ledger of the log as it reads now, up to the HUD's own event.
      const at = after.log.findLastIndex((e) => e._tag === "HudShown" && e.text === after.hud)
      const want = Hud.costOf(Ledger.fold(after.log.slice(0, at)))
      const line = costLineOf(
        Hud.render({ tokens: 0, usable: 1, pivots: 0, prunedParts: 0, prunedTokens: 0, cost: want }),
      )
      expect(costLineOf(after.hud)).toBe(line)
      // The erasure moved the figure: the text-derived saving is not the one the writer had before.
      expect(costLineOf(before)).toMatch(/net saving/)
      expect(costLineOf(after.hud)).not.toBe(costLineOf(before))
    } finally {
      await a.dispose()
    }
  })
})
