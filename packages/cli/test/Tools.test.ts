/** The demo's tools and scripts: outputs come from the example, for the scripted model's calls and a real model's. */
import { describe, expect, it } from "vitest"
import * as Example from "../src/demo/Example.ts"
import { expand } from "../src/demo/Expand.ts"
import * as Script from "../src/demo/Script.ts"
import { Outputs, tools } from "../src/demo/Tools.ts"

const example = Example.decode({
  title: "tools",
  model: { providerId: "demo", modelId: "tiny", limits: { context: 10_000, output: 2_000 } },
  system: ["You are a test agent."],
  config: { prune: true },
  summaries: [["## Objective", "- one"]],
  turns: [
    {
      user: "first",
      steps: [
        {
          reasoning: "look first",
          text: "Reading.",
          tools: [
            { tool: "read", input: { filePath: "src/a.ts" }, output: { lines: 30 } },
            { tool: "bash", input: { command: "npm test" }, error: "exit code 1" },
          ],
        },
        { text: "done" },
      ],
    },
    {
      user: "second",
      steps: [
        { tools: [{ tool: "read", input: { filePath: "src/b.ts" }, output: "b's content" }] },
        { tools: [{ tool: "read", input: { filePath: "src/c.ts" }, output: "c's content" }] },
        { text: "done again" },
      ],
    },
  ],
})

const options = (toolCallId: string) => ({ toolCallId, messages: [], context: {} })

describe("Outputs", () => {
  it("given a call the scripted model announced, then its recorded output, expanded deterministically", () => {
    const outputs = new Outputs(example)
    const call = example.turns[0]!.steps[0]!.tools![0]!
    outputs.expect("call_1", call)
    expect(outputs.resolve("read", { filePath: "anything" }, "call_1")).toEqual({
      output: expand("read", { filePath: "src/a.ts" }, { lines: 30 }),
    })
  })

  it("given a real model's call with a recorded target, then that output, and each output is given once", () => {
    const outputs = new Outputs(example)
    outputs.turn = 1
    expect(outputs.resolve("read", { filePath: "src/c.ts" }, "x1")).toEqual({ output: "c's content" })
    // Not c again: the next unanswered read of this turn.
    expect(outputs.resolve("read", { filePath: "src/c.ts" }, "x2")).toEqual({ output: "b's content" })
  })

  it("given a real model's call with an unknown target, then the next unanswered output of that tool", () => {
    const outputs = new Outputs(example)
    outputs.turn = 1
    expect(outputs.resolve("read", { filePath: "src/zzz.ts" }, "x1")).toEqual({ output: "b's content" })
    expect(outputs.resolve("read", {}, "x2")).toEqual({ output: "c's content" })
    // This turn has none left: an earlier turn's.
    expect(outputs.resolve("read", {}, "x3")).toEqual({
      output: expand("read", { filePath: "src/a.ts" }, { lines: 30 }),
    })
    expect(outputs.resolve("read", {}, "x4")).toEqual({
      output: "(read: the demo's example has no recorded output for this call)",
    })
  })

  it("given a recorded failure, then the AI SDK tool throws it", async () => {
    const outputs = new Outputs(example)
    const set = tools(outputs)
    await expect(set.bash!.execute!({ command: "npm test" }, options("x"))).rejects.toThrow("exit code 1")
    expect(Object.keys(set)).toEqual(["read", "write", "edit", "bash", "grep", "glob"])
  })
})

describe("Script", () => {
  it("given a turn, then the session script answers its steps in order, each tool call announced", () => {
    const outputs = new Outputs(example)
    const script = Script.session(example, outputs)
    script.begin(0)
    const first = script.respond()
    expect(first.finish).toBe("tool-calls")
    expect(first.content.map((c) => c.type)).toEqual(["reasoning", "text", "tool-call", "tool-call"])
    const call = first.content[2]
    if (call?.type !== "tool-call") throw new Error("expected a tool call")
    expect(JSON.parse(call.input)).toEqual({ filePath: "src/a.ts" })
    expect(outputs.resolve("read", {}, call.toolCallId)).toEqual({
      output: expand("read", { filePath: "src/a.ts" }, { lines: 30 }),
    })
    expect(script.respond()).toEqual({ content: [{ type: "text", text: "done" }], finish: "stop" })
    expect(script.respond().content).toEqual([
      { type: "text", text: "(The script has no further step for this turn.)" },
    ])
  })

  it("given a refused call, then the turn starts over from its first step", () => {
    const script = Script.session(example, new Outputs(example))
    script.begin(1)
    script.respond()
    script.refused()
    const again = script.respond().content[0]
    expect(again?.type === "tool-call" && JSON.parse(again.input)).toEqual({ filePath: "src/b.ts" })
  })

  it("given more summary requests than canned summaries, then the compaction script fails", () => {
    const next = Script.summaries(example)
    expect(next().content).toEqual([{ type: "text", text: "## Objective\n- one" }])
    expect(() => next()).toThrow(Script.NO_SUMMARY_LEFT)
  })
})
