// The viewer's incremental fold against independent references: the window it replays from its tracked origin equals
// the window folded from zero, at every version of sessions played with varied shapes (including the empty one).
import { Window } from "@pivot/core"
import { Replay, SessionLog } from "@pivot/store"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as SessionView from "../src/SessionView.ts"
import * as WindowView from "../src/WindowView.ts"
import { play } from "./support/play.ts"

const shapes = fc.record({
  turns: fc.integer({ min: 0, max: 30 }),
  compactEvery: fc.integer({ min: 1, max: 9 }),
  pruneEvery: fc.integer({ min: 1, max: 9 }),
  overflowTurn: fc.integer({ min: 0, max: 30 }),
})

describe("SessionView", () => {
  it("the origin it tracks equals Replay.originOf, and the window from it equals the fold from zero, at every version", () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        const events = play({ sessionId: "ses_prop", ...shape })
        const log = SessionLog.fromEvents("ses_prop", events)
        const view = SessionView.make("ses_prop")
        for (const { event, meta } of log) SessionView.evolve(view, event, meta)
        for (let version = 0; version <= log.length; version++) {
          const origin = SessionView.originAt(view, version)
          expect(origin).toBe(Replay.originOf(log, version))
          const replayed = WindowView.at(log, version, origin).messages
          expect(replayed).toEqual(Window.messages(Window.fold(events.slice(0, version))))
        }
      }),
      { numRuns: 25 },
    )
  })

  it("counts a session's figures as its events say", () => {
    const events = play({ sessionId: "ses_fig", turns: 12 })
    const view = SessionView.make("ses_fig")
    for (const { event, meta } of SessionLog.fromEvents("ses_fig", events)) SessionView.evolve(view, event, meta)
    const summary = SessionView.summary(view)
    expect(summary.events).toBe(events.length)
    expect(summary.pivots).toBe(events.filter((e) => e._tag === "SummaryFinished").length)
    expect(summary.prunes).toBe(events.filter((e) => e._tag === "PartCompacted").length)
    expect(SessionView.summary(SessionView.make("ses_empty"))).toMatchObject({ events: 0, messages: 0, pivots: 0 })
  })
})
