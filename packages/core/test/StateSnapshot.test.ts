/**
 * A state's snapshot encoding, field by field, and each refusal's one-line reason (issue 18, mutation run): the
 * retention properties check that a round trip behaves as the fold; these pin what is written and what is refused.
 */
import { HashMap, Option } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type MessageId, Retention, Session, StateSnapshot } from "./support/core.ts"
import { generatedArb } from "./support/sessions.ts"

/** A generated session whose live state dropped messages on `retain`, so every field of a state is set. */
const retained = (() => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]) {
    const [generated] = fc.sample(generatedArb(80), { numRuns: 1, seed })
    const state = Retention.retain(generated!.state)
    if (state.retired !== undefined && state.retired.count > 0 && state.window.pivot !== undefined) return state
  }
  throw new Error("no generated session retired messages")
})()

const refusal = (data: unknown): string => {
  try {
    StateSnapshot.decode(data)
  } catch (error) {
    expect(error).toBeInstanceOf(StateSnapshot.SnapshotFormatError)
    expect((error as Error).name).toBe("SnapshotFormatError")
    return (error as Error).message
  }
  throw new Error("decoded")
}

describe("StateSnapshot", () => {
  it("encodes the initial state with every absent field as null and nothing else", () => {
    expect(StateSnapshot.encode(Session.initialState)).toStrictEqual({
      format: StateSnapshot.FORMAT,
      sessionId: null,
      version: 0,
      pending: null,
      lastFinished: null,
      overflowReported: null,
      messages: [],
      visible: [],
      plans: [],
      pivot: null,
      pins: [],
      compactions: [],
      retired: null,
    })
    const decoded = StateSnapshot.decode(StateSnapshot.encode(Session.initialState))
    expect(decoded.sessionId).toBeUndefined()
    expect(decoded.pending).toBeUndefined()
    expect(decoded.lastFinished).toBeUndefined()
    expect(decoded.overflowReported).toBeUndefined()
    expect(decoded.window.pivot).toBeUndefined()
    // A state folded from the events has no `retired` key at all; its snapshot must not grow one.
    expect(Object.hasOwn(decoded, "retired")).toBe(false)
  })

  it("a state with every field set comes back field for field, through JSON", () => {
    const state: Session.State = {
      ...retained,
      pending: "msg_pending" as MessageId,
      lastFinished: "msg_last" as MessageId,
      overflowReported: "msg_over" as MessageId,
    }
    const encoded = StateSnapshot.encode(state)
    expect(encoded.sessionId).toBe(state.sessionId)
    expect(encoded.version).toBe(state.version)
    expect([encoded.pending, encoded.lastFinished, encoded.overflowReported]).toEqual([
      "msg_pending",
      "msg_last",
      "msg_over",
    ])
    expect(encoded.pivot).toEqual(state.window.pivot)
    expect(encoded.compactions.length).toBeGreaterThan(0)
    expect(encoded.compactions).toEqual([...HashMap.values(state.compactions)])
    expect(encoded.retired?.count).toBe(state.retired!.count)
    expect(encoded.retired?.below).toBe(state.retired!.below ?? null)
    const decoded = StateSnapshot.decode(JSON.parse(JSON.stringify(encoded)))
    expect(decoded.sessionId).toBe(state.sessionId)
    expect(decoded.version).toBe(state.version)
    expect([decoded.pending, decoded.lastFinished, decoded.overflowReported]).toEqual([
      "msg_pending",
      "msg_last",
      "msg_over",
    ])
    expect(decoded.window.pivot).toEqual(state.window.pivot)
    expect(HashMap.size(decoded.compactions)).toBe(encoded.compactions.length)
    for (const c of encoded.compactions) expect(HashMap.get(decoded.compactions, c.markerId)).toEqual(Option.some(c))
    expect(decoded.retired?.count).toBe(state.retired!.count)
    expect(decoded.retired?.below).toBe(state.retired!.below)
    expect(StateSnapshot.encode(decoded)).toStrictEqual(JSON.parse(JSON.stringify(encoded)))
  })

  it("a retired record without a greatest ascending id keeps it undefined, and one with it keeps it", () => {
    const base = StateSnapshot.encode(retained)
    const without = StateSnapshot.decode({ ...base, retired: { ...base.retired!, below: null } })
    expect(without.retired?.below).toBeUndefined()
    expect(without.retired?.count).toBe(base.retired!.count)
    const withIt = StateSnapshot.decode({ ...base, retired: { ...base.retired!, below: "msg_00000007" } })
    expect(withIt.retired?.below).toBe("msg_00000007")
  })

  it("refuses each wrong shape with its one-line reason", () => {
    const good = StateSnapshot.encode(retained)
    expect(refusal(null)).toBe("not an object")
    expect(refusal("snapshot")).toBe("not an object")
    expect(refusal({ ...good, format: StateSnapshot.FORMAT + 1 })).toBe(
      `format ${StateSnapshot.FORMAT + 1}, this program reads ${StateSnapshot.FORMAT}`,
    )
    expect(refusal({ ...good, format: undefined })).toBe(`format undefined, this program reads ${StateSnapshot.FORMAT}`)
    expect(refusal({ ...good, version: -1 })).toBe("bad version")
    expect(refusal({ ...good, version: 1.5 })).toBe("bad version")
    expect(refusal({ ...good, version: "3" })).toBe("bad version")
    expect(refusal({ ...good, compactions: {} })).toBe("bad compactions")
    expect(refusal({ ...good, messages: "x" })).toBe("bad messages")
    expect(refusal({ ...good, visible: "x" })).toBe("bad messages")
    expect(refusal({ ...good, plans: {} })).toBe("bad plans")
    expect(refusal({ ...good, messages: [...good.messages, good.messages[0]] })).toBe("duplicate message ids")
    expect(refusal({ ...good, visible: [...good.visible, "msg_x"] })).toBe("visible msg_x is not held")
    // At the edge: version 0 is a state before any event.
    expect(StateSnapshot.decode({ ...StateSnapshot.encode(Session.initialState), version: 0 }).version).toBe(0)
  })

  it("decodeWindow alone refuses the same shapes and keeps the recorded order", () => {
    const window = StateSnapshot.encodeWindow(retained.window)
    expect(() => StateSnapshot.decodeWindow({ ...window, plans: "x" as never })).toThrow("bad plans")
    const decoded = StateSnapshot.decodeWindow(JSON.parse(JSON.stringify(window)))
    expect(StateSnapshot.encodeWindow(decoded)).toStrictEqual(JSON.parse(JSON.stringify(window)))
    expect(window.messages.map((m) => m.id)).toEqual([...new Set(window.messages.map((m) => m.id))])
  })
})
