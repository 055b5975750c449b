// A step's usage that is not a TokenUsage (a field missing, a string, a negative count) is refused where it enters
// recordAssistantStep: one typed line naming the field and what was wrong, and nothing recorded. It used to die with
// effect's SchemaError, printed as its whole issue tree (484 lines for one missing key).
import { Ids, Tokens } from "@pivot/core"
import { EventStore } from "@pivot/store"
import { Cause, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { ContextManager, InvalidUsage, Sessions } from "../src/index.ts"

const layer = () =>
  ContextManager.layer({
    model: { ref: { providerId: "local", modelId: "m" }, limits: { context: 24_000, output: 4_000 } },
  }).pipe(Layer.provide(Ids.Ids.layer), Layer.provideMerge(EventStore.layerMemory()))

const attempt = (usage: unknown) =>
  Effect.gen(function* () {
    const pivot = yield* ContextManager
    yield* pivot.recordUserMessage("ses_usage", { text: "hi" })
    const exit = yield* Effect.exit(
      pivot.recordAssistantStep("ses_usage", {
        parts: [{ type: "text", text: "ok" }],
        usage: usage as Tokens.TokenUsage,
        finish: "stop",
      }),
    )
    const events = yield* (yield* Sessions.Sessions).events("ses_usage")
    return { exit, tags: events.map((e) => e._tag) }
  }).pipe(Effect.provide(layer()), Effect.runPromise)

const failureOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined)

describe("recordAssistantStep: a usage that is not a TokenUsage", () => {
  it.each([
    [{ input: 10, output: 2 }, "usage.reasoning: Missing key"],
    [{ ...Tokens.zero, input: "10" }, "usage.input: Expected number"],
    [{ ...Tokens.zero, cacheRead: -1 }, "usage.cacheRead: Expected a value greater than or equal to 0"],
    [undefined, "usage: Expected TokenUsage"],
  ])("given %j, then a one-line InvalidUsage names the field (%s) and nothing is recorded", async (usage, detail) => {
    const { exit, tags } = await attempt(usage)
    const error = failureOf(exit)
    expect(error).toBeInstanceOf(InvalidUsage)
    const message = (error as Error).message
    expect(message.split("\n")).toHaveLength(1)
    expect(message).toMatch(
      new RegExp(`^invalid usage: ${detail.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(a TokenUsage is`),
    )
    expect(tags).toEqual(["SessionStarted", "UserMessageAdded"])
  })

  it("a complete usage is recorded as given", async () => {
    const { exit, tags } = await attempt({ ...Tokens.zero, input: 10, output: 2 })
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(tags).toEqual(["SessionStarted", "UserMessageAdded", "AssistantStepRecorded"])
  })
})
