/**
 * IncrementalWindow (issue 23): for random sessions and cadences, the window rendered incrementally equals the window
 * rendered and checked from zero (`ValidWindow.render`, the reference), and its JSON length equals `JSON.stringify`'s.
 */
import { IncrementalWindow, type Message, Session, ValidWindow, Window } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "./support/runs.ts"
import { generatedArb } from "./support/sessions.ts"

/**
 * A window as a caller may also pass it: as the session has it, or corrupted (a message dropped, two swapped, or one
 * replaced by a changed copy with the same id: its texts emptied, or its tool calls left without their results).
 */
type Corruption =
  | { readonly kind: "none" }
  | { readonly kind: "drop" | "swap" | "empty-texts" | "open-calls"; readonly at: number }

const corruptionArb: fc.Arbitrary<Corruption> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "none" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom("drop" as const, "swap" as const, "empty-texts" as const, "open-calls" as const),
      at: fc.nat(200),
    }),
  },
)

/** The message with its texts emptied, or its completed tool calls made pending (a new value, the same id). */
const altered = (message: Message.Message, kind: "empty-texts" | "open-calls"): Message.Message =>
  ({
    ...message,
    parts: message.parts.map((part) =>
      kind === "empty-texts" && part.type === "text"
        ? { ...part, text: "" }
        : kind === "open-calls" && part.type === "tool"
          ? { ...part, state: { status: "pending", input: part.state.input } }
          : part,
    ),
  }) as Message.Message

const corrupt = (messages: Array<Message.Message>, c: Corruption): Array<Message.Message> => {
  if (c.kind === "none" || messages.length < 2) return messages
  const at = c.at % (messages.length - 1)
  if (c.kind === "empty-texts" || c.kind === "open-calls")
    return messages.map((m, i) => (i === at ? altered(m, c.kind as "empty-texts" | "open-calls") : m))
  if (c.kind === "drop") return [...messages.slice(0, at), ...messages.slice(at + 1)]
  const out = [...messages]
  ;[out[at], out[at + 1]] = [out[at + 1]!, out[at]!]
  return out
}

describe("IncrementalWindow", () => {
  it("property: after any events, at any cadence, the incremental window equals the full render and check from zero", () => {
    fc.assert(
      fc.property(
        generatedArb(60),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 200 }),
        fc.array(corruptionArb, { minLength: 1, maxLength: 50 }),
        fc.boolean(),
        (generated, cadence, corruptions, recallIds) => {
          const options = recallIds ? { recallIds: true } : {}
          const renderer = IncrementalWindow.make(options)
          let state = Session.initialState
          let asked = 0
          generated.events.forEach((event, i) => {
            state = Session.evolve(state, event)
            if (!cadence[i % cadence.length] && i !== generated.events.length - 1) return
            const messages = corrupt(Window.messages(state.window), corruptions[asked++ % corruptions.length]!)
            const incremental = renderer.render(messages)
            expect(incremental).toEqual(ValidWindow.render(messages, options))
            expect(renderer.jsonLength(incremental)).toBe(JSON.stringify(incremental.map((r) => r.message)).length)
            const models = renderer.modelMessages(incremental)
            expect(models).toHaveLength(incremental.length)
            for (const [k, m] of models.entries()) expect(m).toBe(incremental[k]!.message)
            // Frozen: a caller cannot change a rendering the renderer hands out again (ADR 0023).
            for (const r of incremental) expect(Object.isFrozen(r) && Object.isFrozen(r.message)).toBe(true)
          })
        },
      ),
      runs(300),
    )
  })

  it("property: Window.messagesAfter answers Window.messages (the same message values), whatever happened between", () => {
    fc.assert(
      fc.property(generatedArb(60), fc.array(fc.boolean(), { minLength: 1, maxLength: 200 }), (generated, cadence) => {
        let state = Session.initialState
        let previous = state.window
        let previousMessages = Window.messages(previous)
        generated.events.forEach((event, i) => {
          state = Session.evolve(state, event)
          if (!cadence[i % cadence.length] && i !== generated.events.length - 1) return
          const after = Window.messagesAfter(previous, previousMessages, state.window)
          const reference = Window.messages(state.window)
          expect(after).toHaveLength(reference.length)
          for (const [k, m] of after.entries()) expect(m).toBe(reference[k])
          previous = state.window
          previousMessages = after
        })
      }),
      runs(300),
    )
  })

  it("a step appended reuses the rendering of every message before it; a changed message alone is rendered again", () => {
    const user = (id: string, text: string): Message.Message => ({
      role: "user",
      id: id as Message.Message["id"],
      createdAt: 1,
      parts: [{ type: "text", id: `prt_${id}` as never, text }],
    })
    const renderer = IncrementalWindow.make()
    const a = user("msg_a", "first")
    const b = user("msg_b", "second")
    const first = renderer.render([a, b])
    const c = user("msg_c", "third")
    const appended = renderer.render([a, b, c])
    expect(appended[0]).toBe(first[0])
    expect(appended[1]).toBe(first[1])
    // `b` replaced by a changed copy (what a prune does to a message): `a` keeps its rendering, `b` is new.
    const changed = renderer.render([a, user("msg_b", "second, changed"), c])
    expect(changed[0]).toBe(first[0])
    expect(changed[1]).not.toBe(first[1])
    expect(changed[2]).toBe(appended[2])
    expect(changed).toEqual(ValidWindow.render([a, user("msg_b", "second, changed"), c]))
  })
})
