/**
 * `WhatIf.breakpointsOf`: OpenCode's Anthropic cache breakpoints (after the system prompt and tools, after each of the
 * last two messages), and what they change in the bill: after a compaction the system prompt is read from the cache,
 * not written again.
 */
import { PromptCache } from "@pivot/core"
import { WhatIf } from "@pivot/runtime"
import { describe, expect, it } from "vitest"

const system = WhatIf.standInSystem(2_000)
const message = (text: string) => ({ role: "user", content: text })

describe("WhatIf.breakpointsOf", () => {
  it("given 0, 1, 2 and 3 messages, then the system prompt's end and the ends of the last two messages", () => {
    const head = JSON.stringify(system).length + 1
    const ends = (messages: ReadonlyArray<unknown>) => WhatIf.breakpointsOf(system, messages)
    const [a, b, c] = [message("a"), message("bb"), message("ccc")]
    const len = (m: unknown) => JSON.stringify(m).length + 1
    expect(ends([])).toEqual([head])
    expect(ends([a])).toEqual([head, head + len(a)])
    expect(ends([a, b])).toEqual([head, head + len(a), head + len(a) + len(b)])
    expect(ends([a, b, c])).toEqual([head, head + len(a) + len(b), head + len(a) + len(b) + len(c)])
    // Each offset ends a line of the serialised request.
    const text = WhatIf.serialise(system, [a, b, c])
    for (const offset of ends([a, b, c])) expect(text[offset - 1]).toBe("\n")
  })

  it("given a compaction (the messages replaced), then Anthropic reads the system prompt instead of writing it", () => {
    const before = [message("x".repeat(8_000)), message("y".repeat(8_000))]
    const after = [message("a summary")]
    const requests = [
      { kind: "step" as const, text: WhatIf.serialise(system, before), at: 0, output: 0 },
      { kind: "step" as const, text: WhatIf.serialise(system, after), at: 1_000, output: 0 },
    ]
    const rates = { read: 0.1, write: 1.25, output: 5, input: 1 } as never
    const billing = (withBreakpoints: boolean) =>
      WhatIf.bill(
        requests.map((r, i) => ({
          ...r,
          ...(withBreakpoints ? { breakpoints: WhatIf.breakpointsOf(system, i === 0 ? before : after) } : {}),
        })),
        { rules: "anthropic", rates, price: undefined },
      )
    // Without them only whole earlier requests are cached: the second call writes its system prompt again.
    expect(billing(false).cacheRead).toBe(0)
    expect(billing(true).cacheRead).toBeGreaterThanOrEqual(2_000)
    expect(billing(true).cacheWrite).toBeLessThan(billing(false).cacheWrite)
    expect(PromptCache.ANTHROPIC_MIN).toBeLessThan(2_000)
  })
})
