/**
 * The demo agent's tools, as AI SDK tools: `read`, `write`, `edit`, `bash`, `grep` and `glob`, described as a coding
 * agent's tools are. Nothing touches the disk or runs a command: every call answers what the example recorded for it
 * (described outputs expanded by `Expand`, recorded failures thrown as the tool's error). The scripted model names
 * the example's call it is making by its tool-call id; a real model's calls are matched by tool and target.
 */
import { jsonSchema, type Tool, tool } from "ai"
import type { Example, ToolCall } from "./Example.ts"
import { toolInput } from "./Example.ts"
import { expand } from "./Expand.ts"

interface Definition {
  readonly description: string
  readonly properties: Readonly<Record<string, { readonly type: string; readonly description: string }>>
  readonly required: ReadonlyArray<string>
}

const text = (description: string) => ({ type: "string", description })

/** What each tool does and takes. */
export const DEFINITIONS: Readonly<Record<string, Definition>> = {
  read: {
    description:
      "Read a file of the project. Returns its lines numbered from 1 inside <file> tags. Read a file before editing it.",
    properties: { filePath: text("Path of the file, relative to the project root") },
    required: ["filePath"],
  },
  write: {
    description: "Create or overwrite a file with the given content.",
    properties: { filePath: text("Path of the file"), content: text("The whole new content") },
    required: ["filePath", "content"],
  },
  edit: {
    description:
      "Replace one exact occurrence of oldString with newString in a file. Fails when oldString is not found.",
    properties: {
      filePath: text("Path of the file"),
      oldString: text("The exact text to replace"),
      newString: text("The text to put in its place"),
    },
    required: ["filePath", "oldString", "newString"],
  },
  bash: {
    description: "Run a shell command in the project directory and return its output (stdout and stderr).",
    properties: { command: text("The command line"), description: text("What the command does, in a few words") },
    required: ["command"],
  },
  grep: {
    description: "Search file contents with a regular expression. Returns the matching lines grouped by file.",
    properties: { pattern: text("The regular expression"), path: text("Directory to search; the project by default") },
    required: ["pattern"],
  },
  glob: {
    description: "List the files whose path matches a glob pattern, newest first.",
    properties: { pattern: text("The glob pattern, e.g. src/**/*.ts") },
    required: ["pattern"],
  },
}

/** The answer recorded for a call: its output, or the error it failed with. */
export type Outcome = { readonly output: string } | { readonly error: string }

/** The outcome of one of the example's calls (a described output expanded deterministically). */
export const outcomeOf = (call: ToolCall): Outcome => {
  if (call.error !== undefined) return { error: call.error }
  const output = call.output ?? ""
  return { output: typeof output === "string" ? output : expand(call.tool, toolInput(call.input), output) }
}

/** What a call is about: its path, pattern or command. */
export const targetOf = (input: Readonly<Record<string, unknown>>): string | undefined => {
  const target = [input.filePath, input.pattern, input.command].find((v) => typeof v === "string")
  return typeof target === "string" ? target : undefined
}

interface Planned {
  readonly turn: number
  readonly call: ToolCall
  used: boolean
}

/** The example's tool calls, and which of them have been answered. */
export class Outputs {
  readonly #planned: Array<Planned> = []
  readonly #byId = new Map<string, Planned>()
  /** The turn being played (0-based), to prefer its calls when matching a real model's call. */
  turn = 0

  constructor(example: Example) {
    for (const [turn, t] of example.turns.entries())
      for (const step of t.steps) for (const call of step.tools ?? []) this.#planned.push({ turn, call, used: false })
  }

  /** The scripted model announces that `toolCallId` is the example's `call`. */
  expect(toolCallId: string, call: ToolCall): void {
    const planned = this.#planned.find((p) => p.call === call)
    if (planned !== undefined) this.#byId.set(toolCallId, planned)
  }

  /**
   * The outcome of a call: the announced one; else (a real model) the first unanswered call of the example with the
   * same tool and target, preferring the current turn, then the next unanswered call of that tool; else a note.
   */
  resolve(name: string, input: Readonly<Record<string, unknown>>, toolCallId: string): Outcome {
    const announced = this.#byId.get(toolCallId)
    const target = targetOf(input)
    const open = this.#planned.filter((p) => p.call.tool === name && !p.used)
    const here = open.filter((p) => p.turn === this.turn)
    const sameTarget = (p: Planned) => target !== undefined && targetOf(toolInput(p.call.input)) === target
    const found =
      announced ??
      here.find(sameTarget) ??
      open.find(sameTarget) ??
      here[0] ??
      open.find((p) => p.turn > this.turn) ??
      open[0]
    if (found === undefined) return { output: `(${name}: the demo's example has no recorded output for this call)` }
    found.used = true
    return outcomeOf(found.call)
  }
}

/** The AI SDK tools, each answering from `outputs`. */
export const tools = (outputs: Outputs): Record<string, Tool<Record<string, unknown>, string>> => {
  const out: Record<string, Tool<Record<string, unknown>, string>> = {}
  for (const [name, definition] of Object.entries(DEFINITIONS))
    out[name] = tool({
      description: definition.description,
      inputSchema: jsonSchema<Record<string, unknown>>({
        type: "object",
        properties: definition.properties,
        required: [...definition.required],
      }),
      execute: async (input, { toolCallId }) => {
        const outcome = outputs.resolve(name, input, toolCallId)
        if ("error" in outcome) throw new Error(outcome.error)
        return outcome.output
      },
    })
  return out
}
