/**
 * `prepare` asked again on an unchanged session answers what it answered (reused without the lock), and answers
 * anew as soon as anything is recorded; what it hands out is the caller's to change.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { prepare, run, SESSION, services, tool, used, user } from "./support/harness.ts"

describe("prepare on an unchanged session", () => {
  it("answers equal results, each with arrays of its own, and a new answer once an event is recorded", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("read src/a.ts")
        yield* cm.recordAssistantStep(SESSION, {
          parts: [tool("read", { filePath: "src/a.ts" }, "export const a = 1")],
          usage: used(1_000),
          finish: "tool-calls",
        })
        const first = yield* prepare
        const second = yield* prepare
        // The caller may change what it got: the next answer is not affected.
        ;(second.modelMessages as Array<unknown>).push("changed")
        const third = yield* prepare
        yield* user("and src/b.ts")
        const fourth = yield* prepare
        return { first, second, third, fourth }
      }),
    )
    expect(out.third).toEqual(out.first)
    expect(out.second.modelMessages).toHaveLength(out.first.modelMessages.length + 1)
    expect(out.third.modelMessages).not.toBe(out.first.modelMessages)
    expect(out.fourth.modelMessages).toHaveLength(out.first.modelMessages.length + 1)
    expect(JSON.stringify(out.fourth.modelMessages.at(-1))).toContain("src/b.ts")
  })

  it("a message the caller changed in place (a cache breakpoint, say) is not in the next turn's answer", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("read src/a.ts")
        yield* cm.recordAssistantStep(SESSION, {
          parts: [tool("read", { filePath: "src/a.ts" }, "export const a = 1")],
          usage: used(1_000),
          finish: "tool-calls",
        })
        const first = yield* prepare
        const marked = first.modelMessages[0] as { providerOptions?: unknown; content: Array<{ text?: string }> }
        marked.providerOptions = { anthropic: { cacheControl: { type: "ephemeral" } } }
        marked.content[0]!.text = "changed by the caller"
        yield* user("and src/b.ts")
        return { next: yield* prepare }
      }),
    )
    expect(out.next.modelMessages[0]).not.toHaveProperty("providerOptions")
    expect(JSON.stringify(out.next.modelMessages[0])).toContain("read src/a.ts")
    expect(JSON.stringify(out.next.modelMessages)).not.toContain("changed by the caller")
  })

  it("with the HUD on, the answer after the HUD is recorded equals the one that recorded it", async () => {
    const out = await run(
      Effect.gen(function* () {
        yield* user("hello")
        const first = yield* prepare
        const second = yield* prepare
        const third = yield* prepare
        return { first, second, third }
      }),
      { options: { hud: true } },
    )
    expect(out.first.hud).toBeDefined()
    expect(out.second).toEqual(out.first)
    expect(out.third).toEqual(out.first)
  })
})
