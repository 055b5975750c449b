import { Prune } from "@pivot/core"
import fc from "fast-check"
import { it } from "vitest"
import { sessionArb } from "./support/arbitraries.ts"
it("stats", () => {
  for (const [name, arb] of [["default", sessionArb()], ["nocomp", sessionArb({ compactions: false })]] as const) {
    const sample = fc.sample(arb, { numRuns: 500, seed: 1 })
    const lens = sample.map((s) => s.length)
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
    const hist = new Map<number, number>()
    for (const s of sample) { const u = s.filter((m) => m.role === "user").length; hist.set(u, (hist.get(u) ?? 0) + 1) }
    console.log(name, "msgs", avg(lens), "prune", sample.filter((m) => Prune.select(m).parts.length > 0).length, [...hist].sort((a,b)=>a[0]-b[0]).join(" "))
  }
})
