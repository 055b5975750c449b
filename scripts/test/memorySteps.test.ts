/** bench:opencode --startup's split of a round's peaks onto OpenCode's two memory steps, at its boundaries. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { memorySteps, STEP_GAP_MB } from "../bench/support/memorySteps.ts"

describe("memorySteps", () => {
  it("given no peaks or one, then every peak is on the lower step", () => {
    expect(memorySteps([])).toEqual({ lower: [], upper: [] })
    expect(memorySteps([512])).toEqual({ lower: [512], upper: [] })
  })

  it("given a gap one below, at and one above the least, then only the gap above it splits the peaks", () => {
    expect(memorySteps([500, 500 + STEP_GAP_MB - 1])).toEqual({ lower: [500, 529], upper: [] })
    expect(memorySteps([500, 500 + STEP_GAP_MB])).toEqual({ lower: [500, 530], upper: [] })
    expect(memorySteps([500, 500 + STEP_GAP_MB + 1])).toEqual({ lower: [500], upper: [531] })
  })

  it("given two gaps over the least, then the peaks split at the widest, whatever order they came in", () => {
    expect(memorySteps([640, 505, 560, 512, 648])).toEqual({ lower: [505, 512, 560], upper: [640, 648] })
  })

  it("given any peaks, then the two steps hold them all, every lower below every upper, split at the widest gap", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 400, max: 700 }), { maxLength: 30 }), (peaks) => {
        const { lower, upper } = memorySteps(peaks)
        expect([...lower, ...upper].sort((a, b) => a - b)).toEqual([...peaks].sort((a, b) => a - b))
        // Reference: the widest gap between neighbours in sorted order, found independently.
        const sorted = [...peaks].sort((a, b) => a - b)
        const widest = Math.max(0, ...sorted.slice(1).map((x, i) => x - sorted[i]!))
        if (widest <= STEP_GAP_MB) expect(upper).toEqual([])
        else expect(upper[0]! - lower.at(-1)!).toBe(widest)
      }),
    )
  })
})
