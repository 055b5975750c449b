// The models the examples run against: scripted AI SDK models (`MockLanguageModelV4` from `ai/test`), so every example
// runs offline, in CI, with no key. In your program, use a real provider's model instead, e.g. `openai("gpt-5")`.
import { jsonSchema, tool } from "ai"
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test"
import { text, toolCall } from "./answers.ts"

type Settings = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>
type Streamed = Awaited<ReturnType<Extract<Settings["doStream"], (...args: never) => unknown>>>
type StreamPart = Streamed["stream"] extends ReadableStream<infer P> ? P : never

/**
 * A coding model known to pivot's catalog (`openai/gpt-5`, 400k context): it reads a file, then answers. Its calls
 * report usage as the provider would. Each call takes the next step of the script, in a loop.
 */
export const makeModel = (options: { readonly callIds?: "same" | "numbered" } = {}): MockLanguageModelV4 => {
  const script = [
    toolCall("call_1", "read", { path: "src/answer.ts" }, 1_200),
    text("src/answer.ts exports answer = 41.", 1_400),
  ]
  let index = 0
  // `numbered`: each read has an id of its own (call_1, call_3, …), as a provider gives them, for sessions of turns.
  const next = () => {
    const at = index++
    const step = script[at % script.length]!
    const call = step.content[0]
    return options.callIds === "numbered" && call?.type === "tool-call"
      ? { ...step, content: [{ ...call, toolCallId: `call_${at + 1}` }] }
      : step
  }
  return new MockLanguageModelV4({
    provider: "openai.responses",
    modelId: "gpt-5",
    doGenerate: async () => next(),
    doStream: async () => {
      const step = next()
      const parts = step.content.flatMap(
        (part): Array<StreamPart> =>
          part.type === "text"
            ? [
                { type: "text-start", id: "t" },
                { type: "text-delta", id: "t", delta: part.text },
                { type: "text-end", id: "t" },
              ]
            : part.type === "tool-call"
              ? [part]
              : [],
      )
      return {
        stream: convertArrayToReadableStream<StreamPart>([
          { type: "stream-start", warnings: [] },
          ...parts,
          { type: "finish", finishReason: step.finishReason, usage: step.usage },
        ]),
      }
    },
  })
}

/** The session model of the examples. */
export const model = makeModel()

/** The agent's tools: one file reader over a fixed project. */
export const tools = {
  read: tool({
    description: "Read a file of the project",
    inputSchema: jsonSchema<{ path: string }>({
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
    }),
    execute: async ({ path }) => (path === "src/answer.ts" ? "export const answer = 41\n" : `no such file: ${path}`),
  }),
}
