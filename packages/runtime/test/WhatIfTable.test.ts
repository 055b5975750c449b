/**
 * `WhatIfTable`: the one home of the what-if comparison's labels and formats (the CLI prints its rows, the viewer
 * shows them). Rows in order, one cell per strategy, the change against the first strategy at its rounding edges.
 */
import { type WhatIf, WhatIfTable } from "@pivot/runtime"
import { describe, expect, it } from "vitest"

type Run = WhatIf.Comparison["runs"][number]

const run = (strategy: string, billed: number, dollars?: number): Run =>
  ({
    strategy,
    calls: 1_234,
    sent: 56_789,
    overWindow: 0,
    workingSet: { calls: 4, intact: 3 },
    compactions: 2,
    summaries: { recorded: 1, extractive: 1 },
    prunes: 3,
    prunedParts: 7,
    billing: { input: 10, cacheRead: 20, cacheWrite: 30, output: 40, billed, cost: billed + 200, dollars },
    artifacts: { total: 8, inView: 6, inViewWithoutFacts: 5, inViewOrRecallable: 7 },
  }) as Run

const comparison = (runs: ReadonlyArray<Run>, priced: boolean) => ({ runs, priced }) as unknown as WhatIf.Comparison

describe("WhatIfTable", () => {
  it("given two strategies, then one row per figure in order, a cell per strategy, detail rows marked", () => {
    const rows = WhatIfTable.rows(comparison([run("opencode-1.17", 1_000), run("cache-aware", 880)], false))
    expect(rows.map((r) => r.label)).toEqual([
      "model calls",
      "tokens sent",
      "uncached input",
      "cache reads",
      "cache writes",
      "billed input (eq)",
      "vs opencode-1.17",
      "output tokens",
      "total (eq)",
      "compactions",
      "recorded summary",
      "pivot's summary",
      "prunes (outputs)",
      "calls over window",
      "working set kept",
      "artifacts in view",
      "without facts",
      "or recallable",
    ])
    expect(rows.filter((r) => r.detail).map((r) => r.label)).toEqual([
      "vs opencode-1.17",
      "recorded summary",
      "pivot's summary",
      "without facts",
      "or recallable",
    ])
    const cells = Object.fromEntries(rows.map((r) => [r.label, r.cells]))
    expect(cells["model calls"]).toEqual(["1,234", "1,234"])
    expect(cells["vs opencode-1.17"]).toEqual(["±0%", "−12%"])
    expect(cells["prunes (outputs)"]).toEqual(["3 (7)", "3 (7)"])
    expect(cells["working set kept"]).toEqual(["3/4 (75%)", "3/4 (75%)"])
    expect(cells["artifacts in view"]).toEqual(["6/8 (75%)", "6/8 (75%)"])
    expect(cells["or recallable"]).toEqual(["7/8 (88%)", "7/8 (88%)"])
  })

  it("given a priced comparison, then a USD row, with – for a strategy without dollars; unpriced, none", () => {
    const priced = WhatIfTable.rows(comparison([run("a", 1, 0.12345), run("b", 1)], true))
    expect(priced.find((r) => r.label === "USD")?.cells).toEqual(["$0.1235", "–"])
    expect(WhatIfTable.rows(comparison([run("a", 1)], false)).some((r) => r.label === "USD")).toBe(false)
  })

  it("given a change either side of half a percent, then it rounds to ±0% or ±1%; no base, then –", () => {
    expect(WhatIfTable.change(1_004, 1_000)).toBe("±0%")
    expect(WhatIfTable.change(996, 1_000)).toBe("±0%")
    expect(WhatIfTable.change(1_006, 1_000)).toBe("+1%")
    expect(WhatIfTable.change(994, 1_000)).toBe("−1%")
    expect(WhatIfTable.change(5, 0)).toBe("–")
    expect(WhatIfTable.share(0, 0)).toBe("0/0")
  })
})
