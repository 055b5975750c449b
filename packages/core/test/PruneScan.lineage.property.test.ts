/**
 * PruneScan against the walk when the conversations it is given come from other lineages than one growing state:
 * a sibling folded again from an older state (a fork, a retried write), a retained state (`Retention.retain`
 * rebuilds the map), a state decoded from a snapshot, and these interleaved on one scanner.
 */
import { Conversation, Prune, PruneScan, Retention, Session, StateSnapshot } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { TOOL_NAMES } from "./support/arbitraries.ts"
import { runs } from "./support/runs.ts"
import { generatedArb } from "./support/sessions.ts"

const optionsArb = fc.record(
  {
    protect: fc.oneof(fc.constant(0), fc.nat({ max: 200 }), fc.nat({ max: 60_000 })),
    minimum: fc.oneof(fc.constant(0), fc.nat({ max: 200 }), fc.nat({ max: 30_000 })),
    protectedTools: fc.subarray([...TOOL_NAMES, "bash", "read", "edit", "grep"]),
    turns: fc.nat(3),
  },
  { requiredKeys: [] },
)

const walk = (conversation: Conversation.State, options: Prune.Options) =>
  Prune.selectNewestFirst(Conversation.newestFirst(conversation), options)

describe("PruneScan across lineages", () => {
  it("property: forks, retained and decoded states, interleaved on one scanner, choose what the walk chooses", () => {
    fc.assert(
      fc.property(
        generatedArb(60),
        fc.array(
          fc.record({
            kind: fc.constantFrom("main", "sibling", "retained", "decoded", "older"),
            from: fc.nat(60),
            options: optionsArb,
          }),
          { minLength: 1, maxLength: 60 },
        ),
        (generated, asks) => {
          const scanner = PruneScan.make()
          const history: Array<Session.State> = [Session.initialState]
          for (const event of generated.events) history.push(Session.evolve(history.at(-1)!, event))
          // A sibling of each growing state: the same events folded again from an older one.
          let sibling: Session.State | undefined
          let step = 0
          for (const ask of asks) {
            step = Math.min(history.length - 1, step + 1 + (ask.from % 3))
            const main = history[step]!
            let state: Session.State
            switch (ask.kind) {
              case "main":
                state = main
                break
              case "older":
                state = history[Math.max(0, step - 1 - (ask.from % 5))]!
                break
              case "sibling": {
                const k = Math.max(0, step - 1 - (ask.from % 4))
                sibling = Session.fold(generated.events.slice(k, step), sibling ?? history[k]!)
                // Keep it a real sibling of `main` only while it stays consistent; otherwise restart it.
                if (sibling.window.conversation.order.length !== main.window.conversation.order.length)
                  sibling = Session.fold(generated.events.slice(k, step), history[k]!)
                state = sibling
                break
              }
              case "retained":
                state = Retention.retain(main)
                break
              case "decoded":
                state = StateSnapshot.decode(JSON.parse(JSON.stringify(StateSnapshot.encode(main))))
                break
            }
            const conversation = state.window.conversation
            expect(scanner.select(conversation, ask.options)).toEqual(walk(conversation, ask.options))
            // And the growing state right after, as a prune's next turn would ask.
            expect(scanner.select(main.window.conversation, ask.options)).toEqual(
              walk(main.window.conversation, ask.options),
            )
          }
        },
      ),
      runs(300),
    )
  })
})
