/**
 * `pivot inspect` says why each compaction was asked for, when the log recorded it (`CompactionRequested.reason`):
 * in the pivot's heading and in JSON. An imported OpenCode session records none, and shows none.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Ids, Tokens } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, pivot, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A session of the runtime: a call filling the usable window (68,000 of 100,000), then the app's `compact`. */
const recorded = async () => {
  const db = path.join(dir, "reasons.db")
  const layer = ContextManager.layer({
    model: { ref: { providerId: "anthropic", modelId: "claude-test" }, limits: { context: 100_000, output: 32_000 } },
  }).pipe(Layer.provide(Ids.Ids.layerSequential), Layer.provideMerge(EventStore.layerSqlite({ filename: db })))
  const step = (input: number) => ({
    parts: [{ type: "text" as const, text: "working" }],
    usage: { ...Tokens.zero, input },
    finish: "stop",
  })
  await Effect.runPromise(
    Effect.gen(function* () {
      const cm = yield* ContextManager
      yield* cm.recordUserMessage("ses_reasons", { text: "first" })
      yield* cm.recordAssistantStep("ses_reasons", step(70_000))
      yield* cm.prepare("ses_reasons")
      yield* cm.recordUserMessage("ses_reasons", { text: "second" })
      yield* cm.recordAssistantStep("ses_reasons", step(3_000))
      yield* cm.compact("ses_reasons")
      yield* cm.recordUserMessage("ses_reasons", { text: "third" })
      yield* cm.recordAssistantStep("ses_reasons", step(4_000))
      yield* cm.compact("ses_reasons", { requestedBy: "model" })
    }).pipe(Effect.provide(layer)),
  )
  return db
}

describe("pivot inspect: why each compaction was asked for", () => {
  it("given a runtime's session, then each pivot's heading and JSON carry its reason", async () => {
    const db = await recorded()
    const text = await pivot("inspect", "--db", db)
    expect(text.code).toBe(0)
    expect(text.out.filter((line) => /^ {2}#\d /.test(line)).map((line) => line.split(" · ")[0])).toEqual([
      "  #1 auto (threshold)",
      "  #2 manual (user)",
      // The model's request says so once, not "manual (model), asked by the model".
      "  #3 manual, asked by the model",
    ])
    const json = JSON.parse((await pivot("inspect", "--db", db, "--format", "json")).stdout)
    expect(json.pivots.map((p: { reason?: string }) => p.reason)).toEqual(["threshold", "user", "model"])
  })

  it("given an imported OpenCode session, then no reason is shown", async () => {
    const text = await pivot("inspect", fixture("compaction-tail.json"))
    expect(text.out).toContain("  #1 auto · finished, then continued · replay with --at 11 (before it: --at 8)")
    const json = JSON.parse((await pivot("inspect", fixture("compaction-tail.json"), "--format", "json")).stdout)
    expect(json.pivots[0]).not.toHaveProperty("reason")
  })
})
