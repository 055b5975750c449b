// The model sees and steers its own context: the usage HUD in its system prompt, and the `context_compact` tool.
// Runs offline: the scripted model reads a file, then asks for a compaction with a focus note, then goes on.
import { createPivot } from "@pivot/ai"
import { generateText, jsonSchema, stepCountIs, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"

type Settings = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>
type Generated = Awaited<ReturnType<Extract<Settings["doGenerate"], (...args: never) => unknown>>>
const usage = (input: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
})
const call = (id: string, toolName: string, input: object, tokens: number): Generated => ({
  content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: "tool-calls" },
  usage: usage(tokens),
  warnings: [],
})
const say = (text: string, tokens: number): Generated => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: "stop" },
  usage: usage(tokens),
  warnings: [],
})
const script = [
  call("call_1", "read", { path: "src/parser.ts" }, 190_000),
  call("call_2", "context_compact", { focus: "the parser rewrite plan" }, 195_000),
  say("Continuing with the parser rewrite.", 3_000),
]
const systems: Array<string> = []
const model = new MockLanguageModelV4({
  provider: "openai.responses",
  modelId: "gpt-5",
  doGenerate: async ({ prompt }) => {
    systems.push(prompt.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n"))
    return script[systems.length - 1] ?? say("done", 3_000)
  },
})
const read = tool({
  description: "Read a file of the project",
  inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } } }),
  execute: async ({ path }) => `// ${path}\nexport const parse = (text: string) => text.split(" ")\n`,
})

// #region tools
const pivot = await createPivot({ model, store: ":memory:", summarizer: false, hud: true })
const result = await pivot.run("Rewrite the parser", (turn) =>
  generateText({
    ...pivot.wrap({
      model,
      instructions: "You are a careful engineer.",
      tools: { read, ...pivot.tools }, // context_compact, context_recall
      stopWhen: stepCountIs(5),
    }),
    ...turn,
  }),
)
// #endregion
console.log("system prompt of step 2:")
console.log(systems[1])
console.log("context_compact answered:")
console.log(result.steps[1]?.toolResults[0]?.output)
console.log(`step 3 starts from the pivot: ${(await pivot.usage()).pivots} pivot(s), then "${result.text}"`)
// Step 2's usage was measured before its own compaction: step 3's HUD estimates the new window instead.
console.log("status in the system prompt of step 3:")
console.log(systems[2]?.split("\n").find((line) => line.startsWith("context:")))
await pivot.close()
