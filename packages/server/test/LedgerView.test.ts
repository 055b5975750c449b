// The cost chart's downsampling (Sample.sample through LedgerView.chart) against a direct restatement: at most `max`
// points, each run's lowest and highest billed input kept, in version order.
import type { Ledger } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { LedgerView } from "../src/index.ts"

const call = (version: number, billed: number): Ledger.Call =>
  ({ version, kind: "step", billed, stablePrefix: billed / 2 }) as unknown as Ledger.Call

const viewOf = (calls: Array<Ledger.Call>): LedgerView.View => ({
  totals: {} as Ledger.Totals,
  entries: [],
  calls,
})

describe("LedgerView.chart", () => {
  it("draws every step at max points and fewer, and samples one more (max + 1) down to max", () => {
    const calls = Array.from({ length: 9 }, (_, i) => call(i + 1, (i * 37) % 11))
    for (const max of [9, 10]) expect(LedgerView.chart(viewOf(calls), 0, 100, max).calls.version).toHaveLength(9)
    const sampled = LedgerView.chart(viewOf(calls), 0, 100, 8)
    expect(sampled.steps).toBe(9)
    expect(sampled.calls.version.length).toBeLessThanOrEqual(8)
  })

  it("keeps each run's lowest and highest billed input, in version order", () => {
    const billed = [5, 1, 9, 4, 4, 4, 8, 0, 2, 7, 3, 6]
    const calls = billed.map((b, i) => call(i + 1, b))
    // 4 points: 2 runs of 6 steps; run 1 (5,1,9,4,4,4): low 1 at v2, high 9 at v3; run 2 (8,0,2,7,3,6): high 8 at v7, low 0 at v8.
    const chart = LedgerView.chart(viewOf(calls), 0, 100, 4)
    expect(chart.calls.version).toEqual([2, 3, 7, 8])
    expect(chart.calls.billed).toEqual([1, 9, 8, 0])
    expect(chart.calls.stablePrefix).toEqual([0.5, 4.5, 4, 0])
  })

  it("leaves out summary and probe calls and whatever is outside the range", () => {
    const calls = [
      call(1, 1),
      { ...call(2, 2), kind: "summary" },
      call(3, 3),
      { ...call(4, 4), kind: "probe" },
      call(5, 5),
    ]
    const chart = LedgerView.chart(viewOf(calls as Array<Ledger.Call>), 2, 4)
    expect(chart.steps).toBe(1)
    expect(chart.calls.version).toEqual([3])
  })
})
