/**
 * The oracle's scenarios: what the scratch project holds, how OpenCode is configured, the user's turns, and the
 * scripted model that answers them. The model is a pure function of each request (plus the scenario's fault plan),
 * so a scenario replays the same way every time.
 *
 * The agent reads the user's text as a script: `read a.txt b.txt` calls OpenCode's `read` tool on each file, one
 * step at a time, then answers in text. Usage is the request's size (characters / 4, system prompt and tool
 * definitions aside), so it rises with every tool output and falls after a pivot, as a real model's would.
 */
import { join } from "node:path"
import { answer, type ChatMessage, type ChatRequest, contentText, httpError, type Reply } from "./model-server.ts"
import type { CompactionConfig } from "./opencode.ts"

/** A scenario the oracle runs against the real OpenCode. */
export interface Scenario {
  readonly name: string
  readonly description: string
  readonly context: number
  readonly output: number
  readonly compaction?: CompactionConfig
  readonly files: Readonly<Record<string, string | Uint8Array>>
  /**
   * The user's turns: a message, `compact` (the user asks for a compaction, `POST /session/:id/summarize`), or a
   * message with a project file attached.
   */
  readonly turns: ReadonlyArray<string | typeof compact | Attach | Abort>
  /** Summary calls (0-based, counting summary calls only) that answer an HTTP 400 instead of a summary. */
  readonly failSummaries?: ReadonlyArray<number>
  /** The model's input media types besides text. */
  readonly inputs?: ReadonlyArray<"image" | "pdf" | "audio" | "video">
  /** Agent requests whose estimated size is above this are refused with a provider "context too long" error. */
  readonly providerLimit?: number
}

/** A turn where the user attaches a project file to a message. */
export interface Attach {
  readonly _tag: "attach"
  readonly text: string
  readonly file: string
  readonly mime: string
}

/** A turn the user interrupts (`POST /session/:id/abort`) `afterMs` after the agent called a tool, while it runs. */
export interface Abort {
  readonly _tag: "abort"
  readonly text: string
  readonly afterMs: number
}

/** A turn where the user asks for a compaction. */
export const compact = { _tag: "compact" } as const

/** The three kinds of request OpenCode sends. */
export type Kind = "title" | "summary" | "agent"

const TITLE_PROMPT = "Generate a title for this conversation"

/** Which request this is: the title call, the summariser (no tools), or the agent. */
export const kindOf = (request: ChatRequest): Kind => {
  if (request.messages.some((m) => m.role === "user" && contentText(m).startsWith(TITLE_PROMPT))) return "title"
  return (request.tools ?? []).length === 0 ? "summary" : "agent"
}

/** The request's size estimate: characters of every non-system message (text, tool calls, tool results) / 4. */
export const estimate = (messages: ReadonlyArray<ChatMessage>): number => {
  let chars = 0
  for (const m of messages) {
    if (m.role === "system") continue
    chars += contentText(m).length
    for (const call of m.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length
  }
  return Math.round(chars / 4)
}

/** How OpenCode's synthetic continue message after an automatic compaction begins. */
export const CONTINUE_PREFIX = "Continue if you have next steps"

/** The text the scripted agent answers when a turn is done. */
export const doneText = (files: number) => (files === 0 ? "Nothing to read." : `Read ${files} file(s).`)

/** The summary the scripted summariser writes for its n-th call. */
export const summaryText = (n: number) =>
  `## Goal\nRead the files the user named.\n\n## Progress\nSummary ${n + 1} of the scripted session.`

/** The error message a provider gives when the prompt is too long (one of OpenCode's overflow patterns). */
export const tooLongMessage = (tokens: number, limit: number) =>
  `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`

/** The files a `read` script names: every word after `read` up to the end of the line. */
const filesToRead = (text: string): Array<string> => {
  const match = /\bread ((?:[\w.-]+\.(?:txt|png)\s*)+)/.exec(text)
  return match === null ? [] : match[1]!.trim().split(/\s+/)
}

/**
 * The scripted model of a scenario. `repo` is the project folder (the `read` tool wants absolute paths); the
 * returned function keeps a count of summary calls for the fault plan.
 */
export const scriptedModel = (scenario: Scenario, repo: string) => {
  let summaries = 0
  // Files of the current script not read yet, for the continue message after an automatic compaction.
  let left: ReadonlyArray<string> = []
  return (request: ChatRequest): Reply => {
    const kind = kindOf(request)
    const size = estimate(request.messages)
    const usage = { prompt_tokens: size, completion_tokens: 20 }
    if (kind === "title") return answer({ text: scenario.name, usage: { prompt_tokens: 50, completion_tokens: 5 } })
    if (kind === "summary") {
      const n = summaries++
      if (scenario.failSummaries?.includes(n)) return httpError(400, `scripted summariser refuses call ${n + 1}`)
      return answer({ text: summaryText(n), usage })
    }
    if (scenario.providerLimit !== undefined && size > scenario.providerLimit)
      return httpError(400, tooLongMessage(size, scenario.providerLimit), "context_length_exceeded")
    // The turn's script is the last user message; the steps already taken are the assistant messages after it.
    let last = request.messages.length - 1
    while (last >= 0 && request.messages[last]!.role !== "user") last--
    const script = last >= 0 ? contentText(request.messages[last]!) : ""
    const steps = request.messages.slice(last + 1).filter((m) => m.role === "assistant").length
    // `run sleep` asks for a shell command long enough to be interrupted.
    if (script.includes("run sleep") && steps === 0)
      return answer({
        toolCalls: [{ name: "bash", arguments: { command: "sleep 60", description: "Waits a minute" } }],
        usage,
      })
    const files = filesToRead(script)
    // After a pivot OpenCode asks to continue: go on with the files the interrupted script had left.
    const queue = files.length > 0 ? files.slice(steps) : script.startsWith(CONTINUE_PREFIX) ? left : []
    const next = queue[0]
    if (files.length > 0 || script.startsWith(CONTINUE_PREFIX)) left = queue.slice(1)
    if (next !== undefined)
      return answer({ toolCalls: [{ name: "read", arguments: { filePath: join(repo, next) } }], usage })
    return answer({ text: doneText(files.length), usage })
  }
}

/** A deterministic text file of about `bytes` bytes, numbered lines (so every read differs). */
export const bigFile = (name: string, bytes: number): string => {
  const lines: Array<string> = []
  let size = 0
  for (let i = 1; size < bytes; i++) {
    const line = `${name} line ${String(i).padStart(5, "0")}: lorem ipsum dolor sit amet consectetur adipiscing`
    lines.push(line)
    size += line.length + 1
  }
  return `${lines.join("\n")}\n`
}

const files = (names: ReadonlyArray<string>, bytes: number) =>
  Object.fromEntries(names.map((n) => [n, bigFile(n, bytes)]))

/** (a) Large `read` outputs, usage rising to overflow, automatic compactions with continue messages. */
export const autoCompaction: Scenario = {
  name: "auto-compaction",
  description:
    "read on 36 KB files, a 20k context: usage overflows at the end of turns and inside them, OpenCode compacts automatically and continues",
  context: 20_000,
  output: 4_000,
  files: files(["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt", "g.txt", "h.txt"], 36_000),
  turns: ["read a.txt", "read b.txt", "read c.txt d.txt", "read e.txt f.txt g.txt h.txt"],
}

/**
 * (b) `compaction.prune: true`: a large context, one 48 KB read per turn. OpenCode prunes after a turn once the
 * outputs before the last two turns pass 40k tokens by more than 20k: after turns 7 and 9; turns 8–10 show the
 * cleared outputs.
 */
export const prune: Scenario = {
  name: "prune",
  description:
    "compaction.prune: true, a 150k context: old read outputs are cleared once 40k tokens of newer ones protect them",
  context: 150_000,
  output: 4_000,
  compaction: { prune: true },
  files: files(["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt", "g.txt", "h.txt", "i.txt", "j.txt"], 48_000),
  turns: ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"].map((f) => `read ${f}.txt`),
}

/** (c) The first summary call fails with an HTTP error; the next overflow compacts again. */
export const summaryError: Scenario = {
  name: "summary-error",
  description: "the summariser's first call answers HTTP 400: the compaction fails, a later one succeeds",
  context: 20_000,
  output: 4_000,
  files: files(["a.txt", "b.txt", "c.txt", "d.txt"], 24_000),
  turns: ["read a.txt", "read b.txt", "read c.txt", "read d.txt"],
  failSummaries: [0],
}

/** (d) The provider refuses a request as too long: OpenCode compacts and replays the user's message. */
export const overflowReplay: Scenario = {
  name: "overflow-replay",
  description:
    "no usage overflow (100k context) but the provider refuses prompts over 14k tokens: overflow compaction and replay",
  context: 100_000,
  output: 4_000,
  files: files(["a.txt", "b.txt", "c.txt"], 24_000),
  turns: ["read a.txt", "read b.txt", "read c.txt"],
  providerLimit: 14_000,
}

/** (e) The user asks for a compaction between turns (the TUI's /compact, `POST /session/:id/summarize`). */
export const manualCompaction: Scenario = {
  name: "manual-compaction",
  description: "a 100k context (no automatic compaction): the user compacts twice between turns",
  context: 100_000,
  output: 4_000,
  files: files(["a.txt", "b.txt", "c.txt"], 24_000),
  turns: ["read a.txt", "read b.txt", compact, "read c.txt", compact, "what now?"],
}

/** A tool that fails: `read` on a file that does not exist answers an error the model sees as the tool's result. */
export const toolError: Scenario = {
  name: "tool-error",
  description: "read on a missing file: OpenCode's tool error reaches the model as the tool result",
  context: 20_000,
  output: 4_000,
  files: files(["a.txt"], 4_000),
  turns: ["read missing.txt", "read a.txt"],
}

/** A file attached to the user's message: OpenCode reads it itself and adds what it read to the message. */
export const attachment: Scenario = {
  name: "attachment",
  description: "a text file attached to a user message: OpenCode's synthetic read parts reach the model",
  context: 20_000,
  output: 4_000,
  files: files(["a.txt", "b.txt"], 2_000),
  turns: [{ _tag: "attach", text: "look at this", file: "a.txt", mime: "text/plain" }, "read b.txt"],
}

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
)

/** An image attached to a message, then read by the `read` tool. */
export const image: Scenario = {
  name: "image",
  description: "an image attached to a user message, and the same image read by the read tool",
  context: 20_000,
  output: 4_000,
  files: { "dot.png": PNG },
  turns: [{ _tag: "attach", text: "what is in this image?", file: "dot.png", mime: "image/png" }, "read dot.png"],
}

/** The same with a model that takes images: OpenCode sends them (out of the tool result, in a user message). */
export const imageInput: Scenario = {
  ...image,
  name: "image-input",
  description: "the image scenario with a model that declares image input",
  inputs: ["image"],
}

/** The user interrupts a turn while its shell command runs; the next turn shows how the interrupted call is sent. */
export const interrupted: Scenario = {
  name: "interrupted",
  description: "a bash call interrupted by the user (abort) mid-run, then another turn",
  context: 20_000,
  output: 4_000,
  files: files(["a.txt"], 2_000),
  turns: [{ _tag: "abort", text: "run sleep", afterMs: 3_000 }, "read a.txt"],
}

/** Every scenario, in the order the regeneration script runs them. */
export const scenarios: ReadonlyArray<Scenario> = [
  autoCompaction,
  prune,
  summaryError,
  overflowReplay,
  manualCompaction,
  toolError,
  attachment,
  image,
  imageInput,
  interrupted,
]
