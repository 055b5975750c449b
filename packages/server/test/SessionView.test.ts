// The viewer's incremental fold against independent references: the window it replays from its tracked origin equals
// the window folded from zero, at every version of sessions played with varied shapes (including the empty one).
import { Conversation, type Events, Ids, Window } from "@pivot/core"
import { Replay, SessionLog } from "@pivot/store"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
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

  it("counts the stored messages as the conversation fold does (markers, summaries, continues: what inspect counts)", () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        const events = play({ sessionId: "ses_msgs", ...shape })
        const view = SessionView.make("ses_msgs")
        let conversation = Conversation.initial
        for (const { event, meta } of SessionLog.fromEvents("ses_msgs", events)) {
          SessionView.evolve(view, event, meta)
          conversation = Conversation.evolve(conversation, event)
          expect(SessionView.summary(view).messages).toBe(Conversation.messages(conversation).length)
        }
      }),
      { numRuns: 25 },
    )
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

  // Issue 18, the demo session in the viewer: the x axis ended at the last model step (v81) so the pivot at v85 had no
  // mark, the overflow line started at the first step after the first recorded trigger, and the legend counted prune
  // marks (1 run) where the header counted pruned outputs (6).
  const step = (version: number, total: number): SessionView.Step => ({
    version,
    messageId: `msg_${version}`,
    input: total - 100,
    cache: 0,
    output: 100,
    total,
  })

  it("chart: x spans from..to, each step is at its version, the edges have no usage, the overflow line is the trigger in effect (the first one before it)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 120 }), { maxLength: 40 }),
        fc.uniqueArray(fc.record({ version: fc.integer({ min: 0, max: 120 }), tokens: fc.nat(100_000) }), {
          maxLength: 4,
          selector: (t) => t.version,
        }),
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 0, max: 120 }),
        (versions, unsorted, a, b) => {
          const [from, to] = a <= b ? [a, b] : [b, a]
          const steps = versions
            .filter((v) => v >= from && v <= to)
            .sort((x, y) => x - y)
            .map((v) => step(v, 1_000 + v))
          const triggers = [...unsorted].sort((x, y) => x.version - y.version)
          const c = SessionView.chart(steps, triggers, from, to)
          expect(c.version[0]).toBe(from)
          expect(c.version[c.version.length - 1]).toBe(to)
          for (let i = 1; i < c.version.length; i++) expect(c.version[i]!).toBeGreaterThan(c.version[i - 1]!)
          for (const column of [c.total, c.input, c.cache, c.output, c.overflow])
            expect(column).toHaveLength(c.version.length)
          for (const [i, v] of c.version.entries()) {
            const at = steps.find((s) => s.version === v)
            expect([c.total[i], c.input[i], c.cache[i], c.output[i]]).toEqual(
              at === undefined ? [null, null, null, null] : [at.total, at.input, at.cache, at.output],
            )
            const inEffect = triggers.filter((t) => t.version <= v).at(-1) ?? triggers[0]
            expect(c.overflow[i]).toBe(inEffect?.tokens ?? null)
          }
          // Only the edges are added.
          expect(
            c.version.filter((v) => !steps.some((s) => s.version === v)).every((v) => v === from || v === to),
          ).toBe(true)
        },
      ),
      runs(300),
    )
  })

  it("chart: the demo session's shape (steps to v81, a trigger at v22, pivot at v85, head 87)", () => {
    const steps = [3, 4, 21, 27, 81].map((v) => step(v, v * 700))
    const c = SessionView.chart(steps, [{ version: 22, tokens: 56_000 }], 0, 87)
    expect(c.version).toEqual([0, 3, 4, 21, 27, 81, 87])
    expect(c.overflow).toEqual([56_000, 56_000, 56_000, 56_000, 56_000, 56_000, 56_000])
    expect(c.total).toEqual([null, ...steps.map((s) => s.total), null])
    // A session whose overflow was never detected has no line.
    expect(SessionView.chart(steps, [], 0, 87).overflow.every((t) => t === null)).toBe(true)
    // An empty range is one x.
    expect(SessionView.chart([], [], 0, 0).version).toEqual([0])
  })

  it("marks a cleared tool input as a prune of the input, a cleared output as a prune of the output", () => {
    const cleared = (partId: string, target?: "input"): Events.Event => ({
      _tag: "PartCompacted",
      at: 1,
      messageId: Ids.unsafe.message("msg_a1"),
      partId: Ids.unsafe.part(partId),
      tokens: 5,
      ...(target === undefined ? {} : { target }),
    })
    const labels = (event: Events.Event) => {
      const view = SessionView.make("ses_mark")
      SessionView.evolve(view, event, { id: "e1", version: 1, position: 1 } as never)
      return view.marks.map((m) => [m.kind, m.label])
    }
    expect(labels(cleared("prt_w1", "input"))).toEqual([["prune", "prune: tool input prt_w1 of msg_a1 cleared"]])
    expect(labels(cleared("prt_r1"))).toEqual([["prune", "prune: tool output prt_r1 of msg_a1 cleared"]])
  })

  it("legend: counts events per kind, so a prune run counts each output, as the header's prunes; pivots as the header's", () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        const events = play({ sessionId: "ses_legend", ...shape })
        const view = SessionView.make("ses_legend")
        for (const { event, meta } of SessionLog.fromEvents("ses_legend", events)) SessionView.evolve(view, event, meta)
        const legend = SessionView.legend(view.marks)
        const summary = SessionView.summary(view)
        expect(legend.prune).toBe(summary.prunes)
        expect(legend.prune).toBe(events.filter((e) => e._tag === "PartCompacted").length)
        expect(legend.pivot).toBe(summary.pivots)
        expect(legend.fallback).toBe(events.filter((e) => e._tag === "SummaryFallbackUsed").length)
      }),
      { numRuns: 40 },
    )
  })
})
