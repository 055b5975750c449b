/** bench:opencode's session shapes: the pauses taken out, and the summariser's answer sized as a real summary. */
import { describe, expect, it } from "vitest"
import { ARTIFACTS, SHAPES, SUMMARY_TOKENS, summaryText, withoutPauses } from "../bench/support/opencodeSession.ts"

const GAP = 60_000
const TTL = 5 * 60_000

describe("withoutPauses", () => {
  it("shortens every pause longer than a turn's gap to the gap, and leaves the turns otherwise alone", () => {
    const turns = [
      { prompt: "a", steps: [], pauseBefore: 0 },
      { prompt: "b", steps: [], pauseBefore: GAP - 1 },
      { prompt: "c", steps: [], pauseBefore: GAP },
      { prompt: "d", steps: [], pauseBefore: GAP + 1 },
      { prompt: "e", steps: [], pauseBefore: 8 * GAP },
    ]
    expect(withoutPauses(turns).map((t) => t.pauseBefore)).toEqual([0, GAP - 1, GAP, GAP, GAP])
    expect(withoutPauses(turns).map((t) => t.prompt)).toEqual(["a", "b", "c", "d", "e"])
  })

  it("leaves the bench's sessions no pause longer than the cache's TTL, where they had two", () => {
    for (const shape of Object.values(SHAPES)) {
      expect(shape.turns.filter((t) => t.pauseBefore > TTL)).toHaveLength(2)
      expect(withoutPauses(shape.turns).filter((t) => t.pauseBefore > TTL)).toHaveLength(0)
    }
  })
})

describe("summaryText", () => {
  const call = (name: string, args: Record<string, unknown>, id: string) => ({
    id,
    type: "function" as const,
    function: { name, arguments: JSON.stringify(args) },
  })
  const body: Parameters<typeof summaryText>[0] = {
    model: "scripted",
    messages: [
      { role: "user", content: "Look at the parser." },
      { role: "assistant", content: "", tool_calls: [call("read", { filePath: "/repo/src/parser.ts" }, "c1")] },
      { role: "tool", content: "// PARSER-TAIL-32000", tool_call_id: "c1" },
      { role: "assistant", content: "", tool_calls: [call("bash", { command: "git status --short" }, "c2")] },
    ],
  }

  it("is as long as a real summary, within one line of SUMMARY_TOKENS × 4 characters", () => {
    const text = summaryText(body)
    expect(text.length).toBeGreaterThan(SUMMARY_TOKENS * 4 - 300)
    expect(text.length).toBeLessThan(SUMMARY_TOKENS * 4 + 300)
  })

  it("names what the history touched, and quotes no artifact's marker", () => {
    const text = summaryText(body)
    expect(text).toContain("- read parser.ts")
    expect(text).toContain("- bash git status --short")
    for (const a of ARTIFACTS) expect(text).not.toContain(a.marker)
  })
})
