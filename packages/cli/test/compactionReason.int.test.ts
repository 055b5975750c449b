/**
 * `pivot inspect` says why each compaction was asked for, when the log recorded it (`CompactionRequested.reason`):
 * in the pivot's heading and in JSON. An imported OpenCode session records none, and shows none — unless pivot's
 * strategy asked OpenCode for it under drive mode (`CompactionRequestedByStrategy`, ADR 0044).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Ids, Tokens } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { EventStore, ReadModels, SessionLog } from "@pivot/store"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, importedEvents, pivot, tempDir } from "./support/audit.ts"

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

  it("given an imported session whose compaction pivot's strategy asked for, then the heading and JSON say so", async () => {
    const db = path.join(dir, "asked.db")
    const events = importedEvents(fixture("compaction-tail.json"))
    const marker = events.find((e) => e._tag === "CompactionRequested")
    if (marker?._tag !== "CompactionRequested") throw new Error("the fixture has no compaction")
    const sessionId = "ses_compaction"
    const asked = {
      _tag: "CompactionRequestedByStrategy" as const,
      at: marker.at - 100,
      markerId: marker.marker.id,
      reason: "threshold" as const,
      strategy: "cache-aware",
      tokens: 150_400,
      trigger: 147_300,
      request: 151_900,
      usable: 196_000,
    }
    const entries = SessionLog.fromEvents(sessionId, [...events, asked]).map(({ event, meta }) => ({
      id: meta.id,
      event,
    }))
    await Effect.runPromise(
      SessionLog.append(sessionId, "no-stream", entries).pipe(Effect.provide(ReadModels.layerSqlite({ filename: db }))),
    )
    const text = await pivot("inspect", "--db", db)
    expect(text.code).toBe(0)
    expect(text.out.find((line) => line.startsWith("  #1 "))?.split(" · ")[0]).toBe(
      "  #1 auto, asked of the host by pivot's strategy (threshold: 150,400 tokens measured, trigger 147,300, host's limit 196,000)",
    )
    const json = JSON.parse((await pivot("inspect", "--db", db, "--format", "json")).stdout)
    expect(json.pivots[0]).toMatchObject({
      reason: "threshold",
      requestedByStrategy: { tokens: 150_400, usable: 196_000 },
    })
    // The window is the one the import alone gives.
    const alone = path.join(dir, "alone.db")
    const plain = SessionLog.fromEvents(sessionId, events).map(({ event, meta }) => ({ id: meta.id, event }))
    await Effect.runPromise(
      SessionLog.append(sessionId, "no-stream", plain).pipe(
        Effect.provide(ReadModels.layerSqlite({ filename: alone })),
      ),
    )
    const window = async (file: string) => JSON.parse((await pivot("window", "--db", file, "--format", "json")).stdout)
    expect(await window(db)).toEqual(await window(alone))
  })
})
