/** The example-session file the demo plays: its shape, the rules the schema cannot say, and the bundled file. */
import { describe, expect, it } from "vitest"
import * as Example from "../src/demo/Example.ts"

const small = (overrides: Record<string, unknown> = {}): Example.Example =>
  Example.decode({
    title: "small",
    model: { providerId: "demo", modelId: "tiny", limits: { context: 10_000, output: 2_000 } },
    system: ["You are a test agent."],
    config: { prune: true },
    summaries: [["## Objective", "- the small task"]],
    turns: [
      {
        user: "read it",
        steps: [{ tools: [{ tool: "read", input: { filePath: "a" }, output: "x" }] }, { text: "ok" }],
      },
    ],
    ...overrides,
  })

describe("the example file", () => {
  it("given the bundled example, then it decodes, and every tool it uses is one the demo defines", async () => {
    const example = Example.load(Example.bundledPath)
    const { DEFINITIONS } = await import("../src/demo/Tools.ts")
    const used = new Set(example.turns.flatMap((t) => t.steps.flatMap((s) => (s.tools ?? []).map((c) => c.tool))))
    for (const name of used) expect(Object.keys(DEFINITIONS)).toContain(name)
    expect(example.summaries.length).toBeGreaterThan(0)
  })

  it("given a tool call with both output and error, then decoding names the call", () => {
    expect(() =>
      small({
        turns: [
          { user: "u", steps: [{ tools: [{ tool: "bash", input: {}, output: "x", error: "y" }] }, { text: "t" }] },
        ],
      }),
    ).toThrow(/turn 1, step 1, tool call 1 \(bash\)/)
  })

  it("given a turn whose last step calls tools, then decoding refuses it", () => {
    expect(() =>
      small({ turns: [{ user: "u", steps: [{ tools: [{ tool: "bash", input: {}, output: "x" }] }] }] }),
    ).toThrow(/the last step of a turn/)
  })

  it("given a step before the last without tool calls, then decoding refuses it", () => {
    expect(() => small({ turns: [{ user: "u", steps: [{ text: "a" }, { text: "b" }] }] })).toThrow(
      /only the last step of a turn may end without tool calls/,
    )
  })

  it("given no system prompt, then decoding refuses the example", () => {
    const { system: _, ...rest } = small()
    expect(() => Example.decode(rest)).toThrow(/system/)
  })

  it("given a missing or broken file, then load names the file", () => {
    expect(() => Example.load("/nonexistent/session.json")).toThrow(/cannot read example \/nonexistent\/session\.json/)
  })

  it("given input values written as lists of lines, then the tool receives them joined", () => {
    expect(Example.toolInput({ filePath: "a", content: ["x", "y"], n: [1, 2] })).toEqual({
      filePath: "a",
      content: "x\ny",
      n: [1, 2],
    })
  })
})
