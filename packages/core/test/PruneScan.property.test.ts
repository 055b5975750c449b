/**
 * PruneScan (issue 23): for random sessions, cadences and options, the scanner's choice equals the walk over every
 * message (`Prune.selectNewestFirst` of `Conversation.newestFirst`, itself checked against the spec's restatement in
 * Prune.property.test.ts), whether the conversation it is given grew, was pruned, or is an older one.
 */
import { Conversation, type Events, Prune, PruneScan, Session } from "@pivot/core"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { TOOL_NAMES } from "./support/arbitraries.ts"
import { assistant, id, part, started, toolPart, user } from "./support/events.ts"
import { runs } from "./support/runs.ts"
import { generatedArb } from "./support/sessions.ts"

/** Options that reach every branch: tiny thresholds, 0 to 3 guarded turns, any protected tools. */
const optionsArb: fc.Arbitrary<{
  readonly protect?: number
  readonly minimum?: number
  readonly protectedTools?: ReadonlyArray<string>
  readonly turns?: number
}> = fc.record(
  {
    protect: fc.oneof(fc.constant(0), fc.nat({ max: 200 }), fc.nat({ max: 60_000 })),
    minimum: fc.oneof(fc.constant(0), fc.nat({ max: 200 }), fc.nat({ max: 30_000 })),
    protectedTools: fc.subarray([...TOOL_NAMES, "bash", "read", "edit", "grep"]),
    turns: fc.nat(3),
  },
  { requiredKeys: [] },
)

/** What the scanner is asked at a point of the session. */
interface Ask {
  readonly options: typeof optionsArb extends fc.Arbitrary<infer O> ? O : never
  /** Record the choice (its `PartCompacted` events) before going on, as a prune does. */
  readonly apply: boolean
  /** Ask about an older state of the session instead (another conversation than the one it holds). */
  readonly back: number | undefined
}

const askArb: fc.Arbitrary<Ask> = fc.record({
  options: optionsArb,
  apply: fc.boolean(),
  back: fc.option(fc.nat(30), { nil: undefined, freq: 6 }),
})

const walk = (conversation: Conversation.State, options: Prune.Options) =>
  Prune.selectNewestFirst(Conversation.newestFirst(conversation), options)

describe("PruneScan", () => {
  it("property: the scanner chooses what the walk over every message chooses, after any events and options", () => {
    fc.assert(
      fc.property(
        generatedArb(80),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }),
        fc.array(askArb, { minLength: 1, maxLength: 40 }),
        (generated, cadence, asks) => {
          const scanner = PruneScan.make()
          let state = Session.initialState
          const history: Array<Session.State> = [state]
          let asked = 0
          const ask = (at: Session.State, a: Ask) => {
            const conversation = at.window.conversation
            expect(scanner.select(conversation, a.options)).toEqual(walk(conversation, a.options))
          }
          for (const [i, event] of generated.events.entries()) {
            state = Session.evolve(state, event)
            history.push(state)
            if (!cadence[i % cadence.length] && i !== generated.events.length - 1) continue
            const a = asks[asked++ % asks.length]!
            if (a.back !== undefined) {
              ask(history[Math.max(0, history.length - 1 - a.back)]!, a)
              continue
            }
            ask(state, a)
            if (!a.apply || state.sessionId === undefined) continue
            const decided = Session.decide({ _tag: "Prune", at: i, ...a.options }, state)
            if (Result.isFailure(decided) || decided.success.length === 0) continue
            state = Session.fold(decided.success as ReadonlyArray<Events.Event>, state)
            history.push(state)
            // Asked again right after its own prune (the stop it drops older steps at is now newer), by walks that skip
            // every number of turns and protect each tool in turn: some must read past that stop.
            ask(state, a)
            for (const turns of [0, 1, 2, 3]) ask(state, { ...a, options: { ...a.options, turns } })
            for (const tool of TOOL_NAMES) ask(state, { ...a, options: { ...a.options, protectedTools: [tool] } })
          }
        },
      ),
      runs(400),
    )
  })

  /** Every output counts, in every turn: the smallest change shows. */
  const all: Prune.Options = { protect: 0, minimum: 0, turns: 0, protectedTools: [] }
  const evolve = (state: Session.State, ...events: ReadonlyArray<Events.Event>) => Session.fold(events, state)

  it("a late tool result for a message it holds, arriving with new messages, is read (not only the new messages)", () => {
    const before = evolve(
      Session.initialState,
      started(),
      user("u1", "go"),
      assistant("a1", "u1", [
        { type: "tool", id: part("prt_t1"), callId: "call_t1", tool: "bash", state: { status: "running", input: {} } },
      ]),
    )
    const scanner = PruneScan.make()
    expect(scanner.select(before.window.conversation, all)).toEqual(Prune.empty)
    const after = evolve(
      before,
      {
        _tag: "ToolResultRecorded",
        at: 9,
        messageId: id("msg_a1"),
        partId: part("prt_t1"),
        state: { status: "completed", input: {}, output: "x".repeat(400), title: "bash" },
      },
      user("u2", "next"),
    )
    const chosen = scanner.select(after.window.conversation, all)
    expect(chosen.parts.map((t) => t.partId)).toEqual(["prt_t1"])
    expect(chosen).toEqual(walk(after.window.conversation, all))
  })

  it("after a walk stopped at a pruned output, a walk that skips more turns or protects its tool reads past it", () => {
    // Older output t1 (not pruned), then t2 pruned in the newest turn: a walk skipping no turn stops at t2.
    const state = evolve(
      Session.initialState,
      started(),
      user("u1", "one"),
      assistant("a1", "u1", [toolPart("t1", "bash", "y".repeat(400))]),
      user("u2", "two"),
      assistant("a2", "u2", [toolPart("t2", "read", "z".repeat(400), 5)]),
    )
    const scanner = PruneScan.make()
    const conversation = state.window.conversation
    // Two guarded turns first: the walk skips both outputs, and the scanner reads every message.
    expect(scanner.select(conversation, { ...all, turns: 2 })).toEqual(Prune.empty)
    // Then a walk stopping at t2: the steps older than it are dropped.
    expect(scanner.select(conversation, all)).toEqual(Prune.empty)
    // One guarded turn: t2 is skipped, t1 is counted.
    const oneTurn = { ...all, turns: 1 }
    expect(scanner.select(conversation, oneTurn).parts.map((t) => t.partId)).toEqual(["prt_t1"])
    expect(scanner.select(conversation, all)).toEqual(Prune.empty)
    // `read` protected: t2 does not stop the walk, t1 is counted.
    const readProtected = { ...all, protectedTools: ["read"] }
    expect(scanner.select(conversation, readProtected).parts.map((t) => t.partId)).toEqual(["prt_t1"])
  })
})
