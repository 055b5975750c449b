// The viewer's incremental fold against independent references: the window it replays from its tracked origin equals
// the window folded from zero, at every version of sessions played with varied shapes (including the empty one).
import { type Events, Ids, Window } from "@pivot/core"
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

  it("stepsBetween keeps every step that fits, else at most max with the range's lowest and highest context", () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 200_000 }), { maxLength: 300 }),
        fc.integer({ min: 2, max: 50 }),
        fc.nat({ max: 320 }),
        fc.nat({ max: 320 }),
        (totals, max, a, b) => {
          const steps = totals.map((total, i) => ({
            version: i + 1,
            messageId: `m${i}`,
            input: total,
            cache: 0,
            output: 0,
            total,
          }))
          const [from, to] = a <= b ? [a, b] : [b, a]
          const inRange = steps.filter((s) => s.version >= from && s.version <= to)
          const out = SessionView.stepsBetween(steps, from, to, max)
          if (inRange.length <= max) expect(out).toEqual(inRange)
          else {
            expect(out.length).toBeLessThanOrEqual(max)
            const totalsOut = out.map((s) => s.total)
            expect(Math.max(...totalsOut)).toBe(Math.max(...inRange.map((s) => s.total)))
            expect(Math.min(...totalsOut)).toBe(Math.min(...inRange.map((s) => s.total)))
            expect(out.map((s) => s.version)).toEqual([...out.map((s) => s.version)].sort((x, y) => x - y))
          }
        },
      ),
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

  it("names a forked session's lineage, oldest ancestor first; a session never forked has none", () => {
    const events = play({ sessionId: "ses_fig", turns: 2 })
    const forked: ReadonlyArray<Events.Event> = [
      ...events,
      { _tag: "SessionForked", at: 1, parent: Ids.unsafe.session("ses_a"), parentVersion: 3 },
      { _tag: "SessionForked", at: 2, parent: Ids.unsafe.session("ses_b"), parentVersion: events.length + 1 },
    ]
    const view = SessionView.make("ses_c")
    for (const { event, meta } of SessionLog.fromEvents("ses_c", forked)) SessionView.evolve(view, event, meta)
    expect(SessionView.summary(view).lineage).toEqual([
      { session: "ses_a", version: 3 },
      { session: "ses_b", version: events.length + 1 },
    ])
    const plain = SessionView.make("ses_fig")
    for (const { event, meta } of SessionLog.fromEvents("ses_fig", events)) SessionView.evolve(plain, event, meta)
    expect(SessionView.summary(plain).lineage).toEqual([])
  })
})
