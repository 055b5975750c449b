// The documented example (examples/agent.ts, docs/ai-sdk.md) runs as shown, offline, with its scripted models.
import { describe, expect, it } from "vitest"
import { runExample, scriptedCompactionModel, scriptedModel } from "../examples/agent.ts"

describe("examples/agent.ts", () => {
  it("runs three turns through a pivot-managed ToolLoopAgent with both kinds of pivot", async () => {
    const model = scriptedModel()
    const compactionModel = scriptedCompactionModel()
    const result = await runExample({ model, compactionModel })
    expect(result.answers).toEqual([
      "src/answer.ts exports answer = 41.",
      "Done: src/answer.ts now exports 42.",
      "Yes: the README says 42, and src/answer.ts now exports 42.",
    ])
    // Turn 1's last step filled the window (rule A); turn 2 hit a 413 (a provider overflow).
    expect(result.log).toContain("  ⤷ the step filled the context: compaction requested")
    expect(result.log).toContain("  ⤷ provider error: ContextOverflowError")
    expect(result.pivots).toBe(2)
    // Summaries come from the compaction model only; the session model made the agent's 7 calls.
    expect(compactionModel.doStreamCalls).toHaveLength(2)
    expect(model.doGenerateCalls).toHaveLength(7)
    expect(model.doStreamCalls).toHaveLength(0)
  })
})
