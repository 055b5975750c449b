// One sync for a burst of requests: which queued sync a later request may join, against a reference of what each
// moment records.
import { describe, expect, it } from "vitest"
import * as Coalesce from "../src/Coalesce.ts"
import type { Moment } from "../src/Recorder.ts"

const MOMENTS: ReadonlyArray<Moment> = ["step", "call", "idle"]
const requests: ReadonlyArray<Coalesce.Request> = MOMENTS.flatMap(
  (moment): Array<Coalesce.Request> => (moment === "idle" ? [0, 1, 2].map((turn) => ({ moment, turn })) : [{ moment }]),
)

/**
 * The reference: whether a sync made for `a` records all `b` asks for, whatever happens before it runs. `step` asks
 * for finished messages, which every sync records; `call` needs the user messages a model call answers, which an `idle`
 * sync leaves out once a turn began since (it records as `step`); `idle` of one turn count is read as `step` under
 * another count.
 */
const covers = (a: Coalesce.Request, b: Coalesce.Request): boolean =>
  b.moment === "step" || (a.moment === b.moment && (a.moment !== "idle" || a.turn === b.turn))

describe("Coalesce.join", () => {
  it("joins a request to a queued sync exactly when one covers the other, keeping the one that covers both", () => {
    for (const pending of requests)
      for (const asked of requests) {
        const joined = Coalesce.join(pending, asked)
        const label = `${JSON.stringify(pending)} ← ${JSON.stringify(asked)}`
        if (covers(pending, asked)) expect(joined, label).toBe(pending)
        else if (covers(asked, pending)) expect(joined, label).toBe(asked)
        else expect(joined, label).toBeUndefined()
      }
  })

  it("keeps idle syncs of neighbouring turn counts apart (turn − 1, turn, turn + 1)", () => {
    const pending = { moment: "idle", turn: 1 } as const
    expect(Coalesce.join(pending, { moment: "idle", turn: 0 })).toBeUndefined()
    expect(Coalesce.join(pending, { moment: "idle", turn: 1 })).toBe(pending)
    expect(Coalesce.join(pending, { moment: "idle", turn: 2 })).toBeUndefined()
  })
})
