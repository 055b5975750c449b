// A scripted model for examples/recall.ts (`MockLanguageModelV4` from `ai/test`, so the example runs offline): it
// reads a build log, chats, and when asked about the log again after pivot pruned it, calls `context_recall` with
// the id the placeholder names, then answers from what came back. Use a real provider's model in your program.
import { jsonSchema, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { lastToolResult, type Prompt, text, toolCall } from "./answers.ts"

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

/** Every call reports a prompt of 6,000 tokens. */
const INPUT = 6_000

/** The scripted session model (known to pivot's catalog as openai/gpt-5). */
export const makeRecallModel = (): MockLanguageModelV4 =>
  new MockLanguageModelV4({
    provider: "openai.responses",
    modelId: "gpt-5",
    doGenerate: async ({ prompt }) => {
      const result = lastToolResult(prompt as Prompt)
      if (result?.tool === "read") return text("The build ran; one test failed.", INPUT)
      if (result?.tool === "context_recall") {
        const failing = result.text.split("\n").find((line) => line.startsWith("FAIL")) ?? "(not found)"
        return text(`The failing test printed: ${failing}`, INPUT)
      }
      const asked = JSON.stringify(prompt.at(-1))
      if (asked.includes("Read the build log")) return toolCall("call_read", "read", { path: "build.log" }, INPUT)
      const id = /recall id: (prt_[0-9A-Za-z_-]+)\]/.exec(JSON.stringify(prompt))?.[1]
      if (asked.includes("exactly") && id !== undefined) return toolCall("call_recall", "context_recall", { id }, INPUT)
      return text("Noted.", INPUT)
    },
  })
