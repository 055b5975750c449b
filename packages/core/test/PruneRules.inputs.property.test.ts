/**
 * Properties of the input rules against a reference model written from their statements, not from the code:
 * `superseded-writes` clears exactly the completed writes and edits with something to clear that a later whole,
 * completed, uncleared read of the same path follows; `errored-inputs(n)` exactly the failed, uninterrupted calls with
 * something to clear at least `n` turns old. Executed by the Decider, the window shows each cleared input as its
 * placeholder and every other input as stored, recall gives each original back byte for byte, the incremental
 * renderer agrees with a fresh rendering, and deciding again adds nothing.
 */
import {
  Conversation,
  Ids,
  IncrementalWindow,
  type Message,
  PruneRules,
  Recall,
  Render,
  Session,
  Strategy,
  ValidWindow,
  Window,
} from "@pivot/core"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RUNS } from "./support/runs.ts"

const BIG = "a line of file content\n".repeat(20)

const callArb = fc.record({
  tool: fc.constantFrom("write", "edit", "read", "bash", "str_replace_based_edit_tool"),
  path: fc.constantFrom("a.ts", "b.ts"),
  big: fc.boolean(),
  partial: fc.boolean(),
  status: fc.constantFrom("completed", "completed", "error", "interrupted", "compacted", "cleared"),
})
type Call = typeof callArb extends fc.Arbitrary<infer C> ? C : never
// Turns of steps of calls.
const turnsArb = fc.array(fc.array(fc.array(callArb, { maxLength: 3 }), { maxLength: 3 }), {
  minLength: 1,
  maxLength: 5,
})
type Turns = ReadonlyArray<ReadonlyArray<ReadonlyArray<Call>>>

const isRead = (c: Call) => c.tool === "read" || (c.tool === "str_replace_based_edit_tool" && c.partial === false)
const inputOf = (c: Call): Record<string, unknown> => {
  const body = c.big ? BIG : "x"
  switch (c.tool) {
    case "write":
      return { filePath: c.path, content: body }
    case "edit":
      return { filePath: c.path, oldString: body, newString: `${body}!` }
    case "read":
      return c.partial ? { filePath: c.path, offset: 3, note: body } : { filePath: c.path, note: body }
    case "bash":
      return { command: `cat ${c.path}`, description: body }
    default:
      // The text editor: a view when `partial` is false, else a create.
      return c.partial ? { command: "create", path: c.path, file_text: body } : { command: "view", path: c.path }
  }
}
const stateOf = (c: Call): Message.ToolState => {
  const input = inputOf(c)
  switch (c.status) {
    case "error":
      return { status: "error", input, error: "failed" }
    case "interrupted":
      return { status: "error", input, error: "aborted", metadata: { interrupted: true } }
    case "compacted":
      return { status: "completed", input, output: "out", compactedAt: 1 }
    case "cleared":
      return { status: "completed", input, output: "out", inputClearedAt: 1 }
    default:
      return { status: "completed", input, output: "out" }
  }
}

const partId = (t: number, s: number, i: number) => Ids.unsafe.part(`prt_${t}_${s}_${i}`)
const messagesOf = (turns: Turns): Array<Message.Message> =>
  turns.flatMap((steps, t) => [
    {
      role: "user",
      id: Ids.unsafe.message(`msg_u${t}`),
      createdAt: t,
      parts: [{ type: "text", id: Ids.unsafe.part(`prt_u${t}`), text: `request ${t}` }],
    } satisfies Message.Message,
    ...steps.map(
      (calls, s): Message.Message => ({
        role: "assistant",
        id: Ids.unsafe.message(`msg_a${t}_${s}`),
        parentId: Ids.unsafe.message(`msg_u${t}`),
        createdAt: t,
        model: { providerId: "p", modelId: "m" },
        tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
        finish: "tool-calls",
        parts: calls.map((c, i) => ({
          type: "tool",
          id: partId(t, s, i),
          callId: `call_${t}_${s}_${i}`,
          tool: c.tool,
          state: stateOf(c),
        })),
      }),
    ),
  ])

interface Flat extends Call {
  readonly id: string
  readonly turn: number
}
const flatOf = (turns: Turns): Array<Flat> =>
  turns.flatMap((steps, turn) =>
    steps.flatMap((calls, s) => calls.map((c, i) => ({ ...c, id: partId(turn, s, i), turn }))),
  )

// The reference, from the rules' statements.
const writes = (c: Call) =>
  c.tool === "write" || c.tool === "edit" || (c.tool === "str_replace_based_edit_tool" && c.partial)
// Something to clear: a long value (the text editor's view has none), not cleared already.
const clearable = (c: Call) =>
  c.big && !(c.tool === "str_replace_based_edit_tool" && !c.partial) && c.status !== "cleared"
const referenceSuperseded = (turns: Turns): Array<string> => {
  const flat = flatOf(turns)
  return flat
    .filter(
      (c, i) =>
        writes(c) &&
        (c.status === "completed" || c.status === "compacted") &&
        clearable(c) &&
        flat
          .slice(i + 1)
          .some(
            (r) =>
              isRead(r) &&
              r.path === c.path &&
              r.status !== "error" &&
              r.status !== "interrupted" &&
              r.status !== "compacted" &&
              !(r.tool === "read" && r.partial),
          ),
    )
    .map((c) => c.id)
}
const referenceErrored = (turns: Turns, n: number): Array<string> =>
  flatOf(turns)
    .filter((c) => c.status === "error" && clearable(c) && turns.length - 1 - c.turn >= n)
    .map((c) => c.id)

const input = (messages: ReadonlyArray<Message.Message>): Strategy.Input => ({
  messages,
  now: 0,
  cache: { lastCallAt: 0, ttl: 1, cold: false, atPivot: false },
  config: {},
  limits: { context: 100_000, output: 10_000 },
  compactionLimits: { context: 100_000, output: 10_000 },
  prune: {},
  rates: undefined,
  mayCompact: true,
})

describe("the input rules, property", () => {
  it("superseded-writes and errored-inputs(n) choose exactly what the reference model chooses", () => {
    fc.assert(
      fc.property(turnsArb, fc.nat(4), (turns, n) => {
        const messages = messagesOf(turns)
        const superseded = PruneRules.supersededWrites.select(input(messages))
        expect(superseded.map((p) => p.partId)).toEqual(referenceSuperseded(turns))
        const errored = PruneRules.erroredInputs(n).select(input(messages))
        expect(errored.map((p) => p.partId)).toEqual(referenceErrored(turns, n))
        for (const p of [...superseded, ...errored]) expect(p.target).toBe("input")
      }),
      RUNS,
    )
  })

  it("executed by the Decider: placeholders in the window, originals recalled, replay equal, again a no-op", () => {
    fc.assert(
      fc.property(turnsArb, fc.nat(3), (turns, n) => {
        const messages = messagesOf(turns)
        const events = [
          {
            _tag: "SessionStarted",
            sessionId: Ids.unsafe.session("ses_p"),
            at: 0,
            model: { providerId: "p", modelId: "m" },
          },
          ...messages.map((message) =>
            message.role === "user"
              ? ({ _tag: "UserMessageAdded", at: 0, message } as const)
              : ({ _tag: "AssistantStepRecorded", at: 0, message } as const),
          ),
        ] as const
        const before = Session.fold(events)
        const strategy = Strategy.withRules({ name: "x" }, PruneRules.supersededWrites, PruneRules.erroredInputs(n))
        const decision = strategy.afterStep!(input(Window.messages(before.window)))
        const commands = Strategy.pruneCommands(decision, 7)
        let after = before
        const emitted = []
        for (const command of commands) {
          const decided = Session.decide(command, after)
          expect(Result.isSuccess(decided)).toBe(true)
          if (Result.isSuccess(decided)) {
            emitted.push(...decided.success)
            after = Session.fold(decided.success, after)
          }
        }
        const cleared = new Set([...referenceSuperseded(turns), ...referenceErrored(turns, n)])
        expect(
          new Set(emitted.map((e) => (e._tag === "PartCompacted" && e.target === "input" ? e.partId : "?"))),
        ).toEqual(cleared)
        // The window: each call's input is the placeholder form when cleared now (or before), else as stored.
        const originals = new Map(flatOf(turns).map((c) => [c.id, c]))
        const rendered = Render.toModelMessages(Window.messages(after.window), { recallIds: true })
        for (const m of rendered)
          if (m.role === "assistant" && typeof m.content !== "string")
            for (const part of m.content)
              if (part.type === "tool-call") {
                const id = `prt_${part.toolCallId.slice(5)}`
                const c = originals.get(id)!
                const shown = cleared.has(id) || c.status === "cleared"
                expect(part.input).toEqual(shown ? Render.clearedInput(inputOf(c), `${id}-input`) : inputOf(c))
              }
        // Recall: every cleared input's original as JSON, byte for byte.
        const docs = Recall.documents(Conversation.messages(after.window.conversation)).filter(
          (d) => d.kind === "input",
        )
        for (const id of cleared)
          expect(docs.find((d) => d.id === `${id}-input`)?.text).toBe(JSON.stringify(inputOf(originals.get(id)!)))
        // Replay: folding every event from zero gives the same window; the incremental renderer agrees with a fresh one.
        const replayed = Session.fold([...events, ...emitted])
        expect(Render.toModelMessages(Window.messages(replayed.window))).toEqual(
          Render.toModelMessages(Window.messages(after.window)),
        )
        const renderer = IncrementalWindow.make()
        renderer.render(Window.messages(before.window))
        expect(renderer.render(Window.messages(after.window))).toEqual(
          ValidWindow.render(Window.messages(after.window)),
        )
        // Deciding again adds nothing.
        for (const command of commands) {
          const again = Session.decide(command, after)
          expect(Result.isSuccess(again) && again.success).toEqual([])
        }
      }),
      RUNS,
    )
  })

  it("the generator reaches superseded writes, old failures, partial reads and cleared inputs", () => {
    const samples = fc.sample(turnsArb, 300)
    expect(samples.some((t) => referenceSuperseded(t).length >= 2)).toBe(true)
    expect(samples.some((t) => referenceErrored(t, 2).length >= 1)).toBe(true)
    const calls = samples.flat(3)
    for (const status of ["completed", "error", "interrupted", "compacted", "cleared"])
      expect(calls.some((c) => c.status === status)).toBe(true)
    expect(calls.some((c) => c.tool === "read" && c.partial)).toBe(true)
  })
})
