/**
 * Time boxes hold whatever the boxed code does (issue 12, defect 3): a summariser or plugin hook that hangs and
 * ignores interruption is abandoned at its time limit, the failure is recorded, and `prepare` carries on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Plugins } from "@pivot/runtime"
import { Effect, Fiber, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import { timeBox } from "../src/internal/timeBox.ts"
import { layer, midTaskOverflow, stub } from "./support/harness.ts"

/** Hangs forever and cannot be interrupted. */
const stuck = Effect.uninterruptible(Effect.never)
/** Hangs, and when interrupted runs a finaliser that never returns. */
const stuckFinaliser = Effect.never.pipe(Effect.onInterrupt(() => Effect.never))

describe("timeBox", () => {
  it.effect("given an answer before the limit, then Some of it", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(timeBox(Effect.as(Effect.sleep("999 millis"), "done"), "1 second"))
      yield* TestClock.adjust("999 millis")
      expect(yield* Fiber.join(fiber)).toEqual(Option.some("done"))
    }),
  )

  it.effect("given an uninterruptible hang, then None exactly at the limit, not before", () =>
    Effect.gen(function* () {
      for (const hang of [stuck, stuckFinaliser, Effect.never]) {
        const fiber = yield* Effect.forkChild(timeBox(hang, "1 second"))
        yield* TestClock.adjust("999 millis")
        expect(fiber.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust("1 millis")
        expect(yield* Fiber.join(fiber)).toEqual(Option.none())
      }
    }),
  )

  it.effect("given a failure inside the limit, then the failure", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(timeBox(Effect.fail("boom"), "1 second"))
      expect(error).toBe("boom")
    }),
  )

  it.effect(
    "given the caller is interrupted, then it returns at once even if the boxed code ignores interruption",
    () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(timeBox(stuck, "1 hour"))
        yield* TestClock.adjust("1 millis")
        yield* Fiber.interrupt(fiber) // would hang forever if the box waited for the boxed fiber
        expect(fiber.pollUnsafe()?._tag).toBe("Failure")
      }),
  )
})

describe("Plugins.call under an uninterruptible hang", () => {
  it.effect("given a hook that hangs uninterruptibly, then timeout at the plugin's limit", () =>
    Effect.gen(function* () {
      for (const hang of [() => stuck, () => stuckFinaliser, () => new Promise(() => {})]) {
        const plugin: Plugins.Plugin = { name: "stuck", timeout: "1 second" }
        const fiber = yield* Effect.forkChild(Plugins.call(plugin, "autoContinue", hang, Plugins.AutoContinueOutput))
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        expect(Result.isFailure(result) && result.failure).toMatchObject({ plugin: "stuck", reason: "timeout" })
      }
    }),
  )
})

describe("prepare under an uninterruptible hang", () => {
  it.effect(
    "given a summariser that hangs uninterruptibly, then after summaryTimeout the fallback summary is used and the pivot forms",
    () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(midTaskOverflow)
        yield* TestClock.adjust("2 seconds")
        const { events } = yield* Fiber.join(fiber)
        expect(events.find((e) => e._tag === "SummaryFallbackUsed")).toMatchObject({ reason: "timeout" })
        expect(events.some((e) => e._tag === "SummaryFinished")).toBe(true)
      }).pipe(Effect.provide(layer({ summarizer: stub(() => stuck), options: { summaryTimeout: "2 seconds" } }))),
  )

  it.effect(
    "given a compaction-context plugin that hangs uninterruptibly, then PluginFailed timeout and the compaction goes on",
    () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(midTaskOverflow)
        yield* TestClock.adjust("1 second")
        const { events } = yield* Fiber.join(fiber)
        expect(events.find((e) => e._tag === "PluginFailed")).toMatchObject({ plugin: "stuck", reason: "timeout" })
        expect(events.some((e) => e._tag === "SummaryFinished")).toBe(true)
      }).pipe(
        Effect.provide(
          layer({
            options: { plugins: [{ name: "stuck", timeout: "1 second", compactionContext: () => stuckFinaliser }] },
          }),
        ),
      ),
  )
})
