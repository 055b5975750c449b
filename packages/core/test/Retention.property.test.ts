/**
 * Bounded live state: a state that dropped unreachable messages (`Retention.retain`), and its snapshot, behave as
 * the fold of the whole log — same window, same decisions once `mayNeedHistory` sends the doubtful ones to the whole
 * log, same state after more events. The reference is the plain fold from the first event.
 */
import { HashMap, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as BloomFilter from "../src/internal/BloomFilter.ts"
import {
  type Commands,
  Conversation,
  type MessageId,
  Retention,
  Session,
  StateSnapshot,
  Window,
} from "./support/core.ts"
import { RUNS } from "./support/runs.ts"
import { type Generated, generatedArb } from "./support/sessions.ts"

/**
 * The same session with its message ids renamed in a random order (`salt` picks the order), so that they no longer
 * ascend in recorded order: the case where retired ids go into the Bloom filter.
 */
const unordered = (generated: Generated, salt: number): Generated => {
  const rename = (value: unknown) =>
    JSON.parse(
      JSON.stringify(value).replace(/msg_(\d{8})/g, (_, n: string) => {
        const scrambled = (Number(n) * 2654435761 + salt) % 99_999_989
        return `msg_${String(scrambled).padStart(8, "0")}`
      }),
    )
  const steps: Array<Generated["steps"][number]> = []
  let before = Session.initialState
  for (const step of generated.steps) {
    // Decided again: the Decider compares ids, so the renamed session's events may differ from a renaming of them.
    const command = rename(step.command)
    const decided = Session.decide(command, before)
    const events = Result.isSuccess(decided) ? decided.success : []
    steps.push({ command, before, events })
    before = Session.fold(events, before)
  }
  return { steps, events: steps.flatMap((s) => s.events), state: before }
}

/** Generated sessions, half of them with ids that do not ascend. */
const sessionsArb = fc
  .tuple(generatedArb(60), fc.boolean(), fc.nat())
  .map(([generated, shuffle, salt]) => (shuffle ? unordered(generated, salt) : generated))

/** What anyone can observe of a state, apart from which old messages it holds. */
const observe = (state: Session.State) => ({
  sessionId: state.sessionId,
  version: state.version,
  pending: state.pending,
  lastFinished: state.lastFinished,
  overflowReported: state.overflowReported,
  pivot: state.window.pivot,
  window: Window.messages(state.window),
  rendered: Window.render(state.window),
})

const outcome = (decision: ReturnType<typeof Session.decide>) =>
  Result.isSuccess(decision) ? { events: decision.success } : { refused: decision.failure._tag }

/** Decides as the runtime does on a live state: on the whole log when the live decision is in doubt. */
const decideLive = (command: Commands.Command, live: Session.State, whole: Session.State) => {
  const decided = Session.decide(command, live)
  const doubt = Retention.mayNeedHistory(live, {
    refused: Result.isFailure(decided),
    events: Result.isSuccess(decided) ? decided.success : [],
  })
  return doubt ? Session.decide(command, whole) : decided
}

const roundTrip = (state: Session.State) =>
  StateSnapshot.decode(JSON.parse(JSON.stringify(StateSnapshot.encode(state))))

describe("Retention and snapshots", () => {
  it("a live state retained at any points decides, renders and folds as the whole log", () => {
    let dropped = 0
    let doubted = 0
    let filtered = 0
    fc.assert(
      fc.property(
        sessionsArb,
        fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
        fc.array(fc.nat(), { minLength: 60, maxLength: 60 }),
        ({ steps, state }, retainAt, retries) => {
          let live = Session.initialState
          for (const [i, step] of steps.entries()) {
            expect(outcome(decideLive(step.command, live, step.before))).toEqual({ events: step.events })
            // A retry of an earlier command (an old message sent again): decided as on the whole log.
            const earlier = steps[retries[i % retries.length]! % (i + 1)]!
            expect(outcome(decideLive(earlier.command, live, step.before))).toEqual(
              outcome(Session.decide(earlier.command, step.before)),
            )
            if (live.retired !== undefined && Result.isFailure(Session.decide(earlier.command, live))) doubted++
            live = Session.fold(step.events, live)
            if (retainAt[i % retainAt.length]) live = Retention.retain(live)
            expect(observe(live)).toEqual(observe(Session.fold(step.events, step.before)))
          }
          expect(observe(live)).toEqual(observe(state))
          if (Retention.retiredCount(live) > 0) dropped++
          if ((live.retired?.ids.count ?? 0) > 0) filtered++
          // Retaining is canonical: however often it ran, the result is what one retain of the whole log gives (once
          // nothing is pending, as retain waits for a pending compaction to settle).
          if (state.pending === undefined)
            expect(StateSnapshot.encode(Retention.retain(live))).toEqual(StateSnapshot.encode(Retention.retain(state)))
        },
      ),
      RUNS,
    )
    // The generator reaches the interesting cases: states that dropped messages, and commands decided again.
    expect(dropped).toBeGreaterThan(0)
    expect(doubted).toBeGreaterThan(0)
    expect(filtered).toBeGreaterThan(0)
  })

  it("snapshot of a retained state at any version + the events after it ≡ the fold from zero", () => {
    fc.assert(
      fc.property(sessionsArb, fc.nat(), ({ events, state }, cut) => {
        const at = cut % (events.length + 1)
        const snapshot = roundTrip(Retention.retain(Session.fold(events.slice(0, at))))
        expect(snapshot.version).toBe(at)
        const resumed = Session.fold(events.slice(at), snapshot)
        expect(observe(resumed)).toEqual(observe(state))
        if (state.pending === undefined)
          expect(StateSnapshot.encode(Retention.retain(resumed))).toEqual(StateSnapshot.encode(Retention.retain(state)))
      }),
      RUNS,
    )
  })

  it("retain drops nothing before the first pivot nor while a compaction is pending", () => {
    fc.assert(
      fc.property(generatedArb(60), ({ steps }) => {
        for (const { before } of steps) {
          if (before.window.pivot === undefined || before.pending !== undefined)
            expect(Retention.retain(before)).toBe(before)
        }
      }),
      RUNS,
    )
  })

  it("a snapshot of another format or of the wrong shape is refused", () => {
    const encoded = StateSnapshot.encode(Session.initialState)
    expect(() => StateSnapshot.decode({ ...encoded, format: StateSnapshot.FORMAT + 1 })).toThrow(/format/)
    expect(() => StateSnapshot.decode({ ...encoded, messages: "x" })).toThrow(/messages/)
    expect(() => StateSnapshot.decode({ ...encoded, visible: ["msg_x"] })).toThrow(/not held/)
    expect(() => StateSnapshot.decode(null)).toThrow(/object/)
    expect(observe(roundTrip(Session.initialState))).toEqual(observe(Session.initialState))
  })
})

// Issue 18 (mutation run): what retain keeps and remembers, exactly. The reference restates the module's rule — the
// messages a rule can still reach — and trims by the recorded order itself.
describe("Retention: exactly what is kept and remembered", () => {
  /** The ids the module comment names as reachable, from the state's public fields. */
  const reachableOf = (state: Session.State, keep: ReadonlyArray<MessageId>): Set<string> => {
    const ids = new Set<string>(Window.messages(state.window).map((m) => m.id))
    for (const id of [state.lastFinished, state.overflowReported, ...keep]) if (id !== undefined) ids.add(id)
    const pivot = state.window.pivot
    const latest = pivot === undefined ? undefined : Session.compaction(state, pivot.markerId)
    if (latest !== undefined && latest.status !== "continued" && latest.plan?.replayOf !== undefined)
      ids.add(latest.plan.replayOf)
    return ids
  }
  const orderOf = (state: Session.State) => Conversation.messages(state.window.conversation).map((m) => m.id)

  it("property: retain keeps every message from the oldest reachable one, drops the rest, and remembers each dropped id", () => {
    let trimmed = 0
    fc.assert(
      fc.property(sessionsArb, fc.array(fc.nat()), ({ steps }, picks) => {
        for (const { before } of steps) {
          if (before.window.pivot === undefined || before.pending !== undefined) continue
          const order = orderOf(before)
          // Ids the caller names: some of the session's, and one it never held (which keeps nothing).
          const keep = [
            ...picks.slice(0, 2).map((p) => order[p % order.length]!),
            "msg_not_in_this_session",
          ] as Array<MessageId>
          const retained = Retention.retain(before, keep)
          const reachable = reachableOf(before, keep)
          const oldest = order.findIndex((id) => reachable.has(id))
          if (oldest <= 0) {
            expect(retained).toBe(before)
            continue
          }
          trimmed++
          const kept = order.slice(oldest)
          const dropped = order.slice(0, oldest)
          expect(orderOf(retained)).toEqual(kept)
          expect(Retention.retiredCount(retained)).toBe(oldest)
          expect([...HashMap.keys(retained.compactions)].every((id) => kept.includes(id))).toBe(true)
          expect([...HashMap.keys(retained.window.plans)].every((id) => kept.includes(id))).toBe(true)
          expect(HashMap.size(retained.compactions)).toBe(
            [...HashMap.keys(before.compactions)].filter((id) => kept.includes(id)).length,
          )
          for (const id of dropped) expect(Retention.mayBeRetired(retained, id as MessageId)).toBe(true)
          // The ascending run of dropped ids is remembered by its greatest id, the rest go into the filter.
          let run = 0
          while (run < dropped.length && (run === 0 || dropped[run]! > dropped[run - 1]!)) run++
          expect(retained.retired?.below).toBe(dropped[run - 1])
          expect(retained.retired?.ids.count).toBe(dropped.length - run)
          // With no id in the filter, a kept id is in doubt exactly when it is at most the run's greatest.
          if (run === dropped.length)
            for (const id of kept)
              expect(Retention.mayBeRetired(retained, id as MessageId)).toBe(id <= dropped[run - 1]!)
        }
      }),
      RUNS,
    )
    expect(trimmed).toBeGreaterThan(0)
  })

  it("mayBeRetired and mayNeedHistory: nothing is in doubt on a state that dropped nothing", () => {
    const state = Session.initialState
    const id = "msg_00000001" as MessageId
    expect(Retention.mayBeRetired(state, id)).toBe(false)
    expect(Retention.mayNeedHistory(state, { refused: true, events: [] })).toBe(false)
    const retired = {
      ...state,
      retired: {
        count: 2,
        below: "msg_00000005" as MessageId,
        ids: BloomFilter.add(BloomFilter.empty, ["msg_00000009"]),
      },
    }
    expect(
      ["msg_00000004", "msg_00000005", "msg_00000006", "msg_00000009"].map((m) =>
        Retention.mayBeRetired(retired, m as MessageId),
      ),
    ).toEqual([true, true, false, true])
    const added = (mid: string) => ({
      _tag: "UserMessageAdded" as const,
      at: 1,
      message: { role: "user" as const, id: mid as MessageId, createdAt: 1, parts: [] },
    })
    expect(Retention.mayNeedHistory(retired, { refused: true, events: [] })).toBe(true)
    expect(Retention.mayNeedHistory(retired, { refused: false, events: [] })).toBe(false)
    expect(Retention.mayNeedHistory(retired, { refused: false, events: [added("msg_00000006")] })).toBe(false)
    expect(
      Retention.mayNeedHistory(retired, { refused: false, events: [added("msg_00000006"), added("msg_00000003")] }),
    ).toBe(true)
  })

  it("property: retainWindow keeps the window's messages from its oldest visible one, and the plans of the markers it holds", () => {
    fc.assert(
      fc.property(sessionsArb, ({ state }) => {
        const window = state.window
        const order = orderOf(state)
        const visible = new Set(Window.messages(window).map((m) => m.id))
        const oldest = order.findIndex((id) => visible.has(id))
        const retained = Retention.retainWindow(window)
        if (oldest <= 0) expect(retained).toBe(window)
        else {
          expect(Conversation.messages(retained.conversation).map((m) => m.id)).toEqual(order.slice(oldest))
          expect([...HashMap.keys(retained.plans)].sort()).toEqual(
            [...HashMap.keys(window.plans)].filter((id) => order.slice(oldest).includes(id)).sort(),
          )
        }
        expect(Window.render(retained)).toEqual(Window.render(window))
      }),
      RUNS,
    )
  })
})
