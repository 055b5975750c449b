// A scripted model for examples/input-rules.ts (`MockLanguageModelV4` from `ai/test`, so the example runs offline): it
// writes a file, reads it back, tries an edit whose text is not in the file (the edit fails), then answers; asked
// again, it answers at once. Its tools keep the files in memory. Use a real provider's model in your program.
import { jsonSchema, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"

/** What the model writes: long enough that clearing it pays. */
export const NOTES = "## Release notes\n- the parser keeps its public API\n".repeat(12)

const files = new Map<string, string>()

/** The agent's tools: write, read and edit over an in-memory project. */
export const tools = {
  write: tool({
    description: "Write a file",
    inputSchema: jsonSchema<{ filePath: string; content: string }>({
      type: "object",
      properties: { filePath: { type: "string" }, content: { type: "string" } },
      required: ["filePath", "content"],
    }),
    execute: async ({ filePath, content }) => {
      files.set(filePath, content)
      return "Wrote file successfully."
    },
  }),
  read: tool({
    description: "Read a file",
    inputSchema: jsonSchema<{ filePath: string }>({
      type: "object",
      properties: { filePath: { type: "string" } },
      required: ["filePath"],
    }),
    execute: async ({ filePath }) => files.get(filePath) ?? `no such file: ${filePath}`,
  }),
  edit: tool({
    description: "Replace text in a file",
    inputSchema: jsonSchema<{ filePath: string; oldString: string; newString: string }>({
      type: "object",
      properties: { filePath: { type: "string" }, oldString: { type: "string" }, newString: { type: "string" } },
      required: ["filePath", "oldString", "newString"],
    }),
    execute: async ({ filePath, oldString, newString }) => {
      const text = files.get(filePath) ?? ""
      if (!text.includes(oldString)) throw new Error("oldString not found in the file")
      files.set(filePath, text.replace(oldString, newString))
      return "Edited."
    },
  }),
}

type Prompt = ReadonlyArray<{ readonly role: string; readonly content: unknown }>
type Settings = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>
type Generated = Awaited<ReturnType<Extract<Settings["doGenerate"], (...args: never) => unknown>>>

const reply = (content: Generated["content"], unified: "stop" | "tool-calls"): Generated => ({
  content,
  finishReason: { unified, raw: unified },
  usage: {
    inputTokens: { total: 3_000, noCache: 3_000, cacheRead: 0, cacheWrite: undefined },
    outputTokens: { total: 20, text: 20, reasoning: 0 },
  },
  warnings: [],
})

const call = (toolName: string, input: unknown): Generated =>
  reply([{ type: "tool-call", toolCallId: `call_${toolName}`, toolName, input: JSON.stringify(input) }], "tool-calls")

const lastTool = (prompt: Prompt): string | undefined => {
  const last = prompt.at(-1)
  if (last?.role !== "tool") return undefined
  return (last.content as ReadonlyArray<{ toolName: string }>)[0]?.toolName
}

/** The scripted session model (known to pivot's catalog as openai/gpt-5). */
export const makeInputRulesModel = (): MockLanguageModelV4 =>
  new MockLanguageModelV4({
    provider: "openai.responses",
    modelId: "gpt-5",
    doGenerate: async ({ prompt }) => {
      const after = lastTool(prompt as Prompt)
      const asked = JSON.stringify(prompt.at(-1))
      if (after === undefined && asked.includes("Write the release notes"))
        return call("write", { filePath: "NOTES.md", content: NOTES })
      if (after === "write") return call("read", { filePath: "NOTES.md" })
      if (after === "read")
        return call("edit", { filePath: "NOTES.md", oldString: "## Relase notes (draft)\n".repeat(10), newString: "" })
      if (after === "edit")
        return reply([{ type: "text", text: "Written and read back; the edit did not apply." }], "stop")
      return reply([{ type: "text", text: "Nothing else." }], "stop")
    },
  })
