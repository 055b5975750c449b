/**
 * `prepare` asked again on an unchanged session answers what it answered (reused without the lock), and answers
 * anew as soon as anything is recorded; the arrays it hands out are the caller's, the messages in them are read-only
 * (shared from turn to turn, frozen: ADR 0023).
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

  it("a message handed out cannot be changed in place (ADR 0023): the change throws, the next answer is intact", async () => {
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
        const attempts = [
          () => {
            marked.providerOptions = { anthropic: { cacheControl: { type: "ephemeral" } } }
          },
          () => {
            marked.content[0]!.text = "changed by the caller"
          },
          () => marked.content.push({ text: "pushed by the caller" }),
          () => {
            ;(first.messages[0] as { sourceMessageId: string }).sourceMessageId = "msg_caller"
          },
          () => {
            const tool = first.modelMessages.find((m) => m.role === "tool")!
            ;(tool.content as Array<unknown>).length = 0
          },
          () => {
            const tool = first.modelMessages.find((m) => m.role === "tool")!
            ;(tool.content[0] as { output: { value: string } }).output.value = "output changed by the caller"
          },
        ]
        const thrown = attempts.map((attempt) => {
          try {
            attempt()
            return undefined
          } catch (e) {
            return e
          }
        })
        // What a caller does instead: copies the message it changes (a cache breakpoint on the last one, say).
        const copied = first.modelMessages.map((m, i) =>
          i === first.modelMessages.length - 1
            ? { ...m, providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }
            : m,
        )
        const again = yield* prepare
        yield* user("and src/b.ts")
        return { first, thrown, copied, again, next: yield* prepare }
      }),
    )
    for (const e of out.thrown) expect(e).toBeInstanceOf(TypeError)
    expect(out.copied.at(-1)).toHaveProperty("providerOptions")
    expect(out.again).toEqual(out.first)
    for (const answer of [out.again, out.next]) {
      expect(answer.modelMessages[0]).not.toHaveProperty("providerOptions")
      expect(answer.messages[0]!.sourceMessageId).not.toBe("msg_caller")
      expect(JSON.stringify(answer.modelMessages)).toContain("read src/a.ts")
      expect(JSON.stringify(answer.modelMessages)).toContain("export const a = 1")
      expect(JSON.stringify(answer.modelMessages)).not.toContain("by the caller")
      expect(JSON.stringify(answer.modelMessages)).not.toContain("ephemeral")
    }
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
