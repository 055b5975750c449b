// A scripted model for examples/input-rules.ts (`MockLanguageModelV4` from `ai/test`, so the example runs offline): it
// writes a file, reads it back, tries an edit whose text is not in the file (the edit fails), then answers; asked
// again, it answers at once. Its tools keep the files in memory. Use a real provider's model in your program.
import { jsonSchema, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { lastToolResult, type Prompt, text, toolCall } from "./answers.ts"

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

/** Every call reports a prompt of 3,000 tokens. */
const INPUT = 3_000

const call = (toolName: string, args: unknown) => toolCall(`call_${toolName}`, toolName, args, INPUT)

/** The scripted session model (known to pivot's catalog as openai/gpt-5). */
export const makeInputRulesModel = (): MockLanguageModelV4 =>
  new MockLanguageModelV4({
    provider: "openai.responses",
    modelId: "gpt-5",
    doGenerate: async ({ prompt }) => {
      const after = lastToolResult(prompt as Prompt)?.tool
      const asked = JSON.stringify(prompt.at(-1))
      if (after === undefined && asked.includes("Write the release notes"))
        return call("write", { filePath: "NOTES.md", content: NOTES })
      if (after === "write") return call("read", { filePath: "NOTES.md" })
      if (after === "read")
        return call("edit", { filePath: "NOTES.md", oldString: "## Relase notes (draft)\n".repeat(10), newString: "" })
      if (after === "edit") return text("Written and read back; the edit did not apply.", INPUT)
      return text("Nothing else.", INPUT)
    },
  })
