// A scripted model for examples/recall.ts (`MockLanguageModelV4` from `ai/test`, so the example runs offline): it
// reads a build log, chats, and when asked about the log again after pivot pruned it, calls `context_recall` with
// the id the placeholder names, then answers from what came back. Use a real provider's model in your program.
import { jsonSchema, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"

/** The build log the `read` tool returns: long enough that pivot prunes it a few turns later. */
export const BUILD_LOG = [
  ...Array.from({ length: 300 }, (_, i) => `[build] compiled module ${i + 1} of 300`),
  "FAIL src/answer.test.ts: expected 42, received 41 (timeout after 5000 ms)",
  ...Array.from({ length: 100 }, (_, i) => `[test] passed case ${i + 1}`),
].join("\n")

/** The agent's tools besides pivot's: `read` returns the build log. */
export const tools = {
  read: tool({
    description: "Read a file",
    inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } } }),
    execute: async () => BUILD_LOG,
  }),
}

type Prompt = ReadonlyArray<{ readonly role: string; readonly content: unknown }>
type Settings = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>
type Generated = Awaited<ReturnType<Extract<Settings["doGenerate"], (...args: never) => unknown>>>

const reply = (content: Generated["content"], unified: "stop" | "tool-calls"): Generated => ({
  content,
  finishReason: { unified, raw: unified },
  usage: {
    inputTokens: { total: 6_000, noCache: 6_000, cacheRead: 0, cacheWrite: undefined },
    outputTokens: { total: 20, text: 20, reasoning: 0 },
  },
  warnings: [],
})

const lastToolResult = (prompt: Prompt) => {
  const last = prompt.at(-1)
  if (last?.role !== "tool") return undefined
  const part = (last.content as ReadonlyArray<{ toolName: string; output: { value: unknown } }>)[0]
  return part === undefined ? undefined : { tool: part.toolName, text: String(part.output.value) }
}

/** The scripted session model (known to pivot's catalog as openai/gpt-5). */
export const makeRecallModel = (): MockLanguageModelV4 =>
  new MockLanguageModelV4({
    provider: "openai.responses",
    modelId: "gpt-5",
    doGenerate: async ({ prompt }) => {
      const result = lastToolResult(prompt as Prompt)
      if (result?.tool === "read") return reply([{ type: "text", text: "The build ran; one test failed." }], "stop")
      if (result?.tool === "context_recall") {
        const failing = result.text.split("\n").find((line) => line.startsWith("FAIL")) ?? "(not found)"
        return reply([{ type: "text", text: `The failing test printed: ${failing}` }], "stop")
      }
      const asked = JSON.stringify(prompt.at(-1))
      if (asked.includes("Read the build log"))
        return reply(
          [{ type: "tool-call", toolCallId: "call_read", toolName: "read", input: '{"path":"build.log"}' }],
          "tool-calls",
        )
      const id = /recall id: (prt_[0-9A-Za-z_-]+)\]/.exec(JSON.stringify(prompt))?.[1]
      if (asked.includes("exactly") && id !== undefined)
        return reply(
          [{ type: "tool-call", toolCallId: "call_recall", toolName: "context_recall", input: JSON.stringify({ id }) }],
          "tool-calls",
        )
      return reply([{ type: "text", text: "Noted." }], "stop")
    },
  })
