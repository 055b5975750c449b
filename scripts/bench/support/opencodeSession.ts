// The coding session bench:opencode drives the real OpenCode through, and the scripted model that plays the agent.
//
// The project holds four source files of ≈ 32 KB (≈ 8k tokens) each. The user's turns ask for reads, re-reads, an
// edit read back, a failing edit (a block of lines whose `oldString` is not in the file: OpenCode's tool errors),
// shell commands, a new file written and read back, and two pauses longer than the cache's 5-minute lifetime
// (simulated time: the bill stamps each request, nothing sleeps). Every answer is a pure function of the turn and the request, so each
// contender sees the same script; DCP's reminders are the one thing the model reacts to (it calls `compress`, as DCP
// asks, once per turn at most).
import * as Path from "node:path"

// The oracle's scripted model server (packages/opencode's tests), by type only: the bench loads it by path.
type ChatMessage = import("../../../packages/opencode/test/oracle/model-server.ts").ChatMessage
type ChatRequest = import("../../../packages/opencode/test/oracle/model-server.ts").ChatRequest
type Reply = import("../../../packages/opencode/test/oracle/model-server.ts").Reply
type ToolCall = import("../../../packages/opencode/test/oracle/model-server.ts").ToolCall

/** What a request is: OpenCode's title call, its summariser (no tools), or an agent step. */
export type Kind = "title" | "summary" | "agent"

/** A request the scripted model received, and the size of its answer (the model's output, in characters). */
export interface Captured {
  readonly body: ChatRequest
  readonly kind: Kind
  /** Characters the model answered: its text and its tool calls' arguments. */
  readonly output: number
}

/** A message's text (its string content, or its text parts joined). */
const textOf = (message: ChatMessage): string =>
  typeof message.content === "string"
    ? message.content
    : Array.isArray(message.content)
      ? message.content.map((p) => p.text ?? "").join("")
      : ""

/** A step of a turn: one tool call, run by OpenCode, or the closing text. */
export type Step =
  | { readonly tool: "read"; readonly file: string }
  | { readonly tool: "edit"; readonly file: string; readonly oldString: string; readonly newString: string }
  | { readonly tool: "write"; readonly file: string; readonly content: string }
  | { readonly tool: "bash"; readonly command: string }

/** A user turn: its message, the agent's steps, and the simulated pause before it (ms). */
export interface Turn {
  readonly prompt: string
  readonly steps: ReadonlyArray<Step>
  readonly pauseBefore: number
}

/** Something the session produced that the model should still see or be able to recall: a unique string in it. */
export interface Artifact {
  readonly kind: "file" | "edit" | "command" | "error"
  readonly name: string
  readonly marker: string
}

const MODULES = ["parser", "router", "limiter", "scheduler"] as const

/** A file of ≈ `bytes` characters whose every line is unique, with a marker line at its end. */
const source = (name: string, bytes: number): string => {
  const lines = [`// ${name}.ts: the ${name} module`]
  for (let n = 0; lines.join("\n").length < bytes; n++)
    lines.push(`export const ${name}Step${n} = (input${n}: number): number => input${n} * ${n + 3} + ${(n * 7) % 11}`)
  lines.push(`// FIXME(${name}): end-of-file marker ${name.toUpperCase()}-TAIL-${bytes}`)
  return `${lines.join("\n")}\n`
}

/** The scratch project's files. */
export const FILES: Readonly<Record<string, string>> = Object.fromEntries(
  MODULES.map((m) => [`src/${m}.ts`, source(m, 32_000)]),
)

/** Lines 5 to 9 of src/router.ts as a model misremembers them (every factor 99), `note` at the end of the middle one. */
const staleRouterBlock = (note: string): string =>
  [5, 6, 7, 8, 9]
    .map(
      (n) => `export const routerStep${n} = (input${n}: number): number => input${n} * 99${n === 7 ? ` ${note}` : ""}`,
    )
    .join("\n")

const NEW_FILE = "src/metrics.ts"
const NEW_CONTENT = `${source("metrics", 24_000)}// written by the agent: METRICS-WRITTEN-MARKER\n`
const PAUSE = 8 * 60_000
const GAP = 60_000

/** The session's turns. */
export const TURNS: ReadonlyArray<Turn> = [
  {
    prompt: "Look at the parser and the router: read src/parser.ts and src/router.ts.",
    steps: [
      { tool: "read", file: "src/parser.ts" },
      { tool: "read", file: "src/router.ts" },
    ],
    pauseBefore: 0,
  },
  {
    prompt: "Fix parserStep5 in src/parser.ts: it must add 1. Read the file back after the edit.",
    steps: [
      {
        tool: "edit",
        file: "src/parser.ts",
        oldString: "export const parserStep5 = (input5: number): number => input5 * 8 + 2",
        newString: "export const parserStep5 = (input5: number): number => input5 * 8 + 2 + 1 // PARSER-EDIT-MARKER",
      },
      { tool: "read", file: "src/parser.ts" },
    ],
    pauseBefore: GAP,
  },
  {
    prompt: "Count the FIXMEs under src and rename routerStep7 to routeSeven in src/router.ts.",
    steps: [
      { tool: "bash", command: "grep -c FIXME src/*.ts; echo COMMAND-GREP-MARKER" },
      // A block of five lines, as a model quotes the code around its change, as it remembers them wrongly: no line of
      // it is in the file (the file has `input7 * 10 + 5` and its neighbours' own factors). OpenCode's edit tool
      // also matches a block by its first and last lines alone, so those must be wrong too for the edit to fail. Its
      // values are longer than what a cleared input keeps (`Render.INPUT_KEEP_CHARS`), so `errored-inputs` has
      // something to clear: a one-line edit keeps its strings whole, and the rule then clears nothing (which is what
      // happened while the bench used one).
      {
        tool: "edit",
        file: "src/router.ts",
        oldString: staleRouterBlock("// ERROR-OLDSTRING-MARKER"),
        newString: staleRouterBlock("// renamed to routeSeven"),
      },
    ],
    pauseBefore: GAP,
  },
  {
    prompt: "After the break: look at src/limiter.ts and read src/parser.ts again.",
    steps: [
      { tool: "read", file: "src/limiter.ts" },
      { tool: "read", file: "src/parser.ts" },
    ],
    pauseBefore: PAUSE,
  },
  {
    prompt: "Read src/router.ts again and make routerStep7 return input7 * 10, then read it back.",
    steps: [
      { tool: "read", file: "src/router.ts" },
      {
        tool: "edit",
        file: "src/router.ts",
        oldString: "export const routerStep7 = (input7: number): number => input7 * 10 + 5",
        newString: "export const routerStep7 = (input7: number): number => input7 * 10 // ROUTER-EDIT-MARKER",
      },
      { tool: "read", file: "src/router.ts" },
    ],
    pauseBefore: GAP,
  },
  {
    prompt: "Add a metrics module in src/metrics.ts and read it back.",
    steps: [
      { tool: "write", file: NEW_FILE, content: NEW_CONTENT },
      { tool: "read", file: NEW_FILE },
    ],
    pauseBefore: GAP,
  },
  {
    prompt: "After lunch: read src/scheduler.ts and list what changed in git.",
    steps: [
      { tool: "read", file: "src/scheduler.ts" },
      { tool: "bash", command: "git status --short; echo COMMAND-STATUS-MARKER" },
    ],
    pauseBefore: PAUSE,
  },
  {
    prompt: "Read src/limiter.ts once more and sum up what we changed today.",
    steps: [{ tool: "read", file: "src/limiter.ts" }],
    pauseBefore: GAP,
  },
]

/**
 * A session shape: its turns and the model's limits in the scratch project's opencode.json. `base` never reaches
 * OpenCode's compaction (160k context); `compacting` runs the same turns against a 48k context (8k output: OpenCode
 * overflows from 40,000 tokens on), so OpenCode compacts in every contender and the bill holds its summariser calls
 * and what follows them.
 */
export interface Shape {
  readonly turns: ReadonlyArray<Turn>
  readonly context: number
  readonly output: number
}

/** The session shapes, by name. */
export const SHAPES: Readonly<Record<string, Shape>> = {
  base: { turns: TURNS, context: 160_000, output: 8_000 },
  compacting: { turns: TURNS, context: 48_000, output: 8_000 },
}

/** `turns` with every pause longer than a turn's gap shortened to the gap: the same session, never a cold cache. */
export const withoutPauses = (turns: ReadonlyArray<Turn>): ReadonlyArray<Turn> =>
  turns.map((turn) => (turn.pauseBefore > GAP ? { ...turn, pauseBefore: GAP } : turn))

/** What the session produced, each with a string only it contains (a JSON-safe marker). */
export const ARTIFACTS: ReadonlyArray<Artifact> = [
  ...MODULES.map((m) => ({ kind: "file" as const, name: `src/${m}.ts`, marker: `${m.toUpperCase()}-TAIL-32000` })),
  { kind: "file", name: NEW_FILE, marker: "METRICS-WRITTEN-MARKER" },
  { kind: "edit", name: "parserStep5", marker: "PARSER-EDIT-MARKER" },
  { kind: "edit", name: "routerStep7", marker: "ROUTER-EDIT-MARKER" },
  { kind: "command", name: "grep -c FIXME", marker: "COMMAND-GREP-MARKER" },
  { kind: "command", name: "git status", marker: "COMMAND-STATUS-MARKER" },
  { kind: "error", name: "failed edit of src/router.ts", marker: "ERROR-OLDSTRING-MARKER" },
]

/** The closing text of a turn. */
export const doneText = (turn: number): string => `Done with step ${turn + 1}: ${TURNS[turn]!.prompt}`

/** A summary's size in output tokens, as bench:cost bills one (`--summary-tokens`' default): a model's real summary. */
export const SUMMARY_TOKENS = 2_000

/**
 * The summariser's answer: OpenCode's sections (goal, instructions, discoveries, accomplished, relevant files), naming
 * the files and commands the history it was given touched, and as long as a real summary (`SUMMARY_TOKENS`, at 4
 * characters a token). It quotes no file's contents, so no artifact's marker is in it: what the summary keeps of a
 * file is that it was read.
 */
export const summaryText = (body: ChatRequest): string => {
  const touched = new Set<string>()
  for (const m of body.messages)
    for (const call of m.tool_calls ?? []) {
      const args = JSON.parse(call.function.arguments) as { filePath?: string; command?: string }
      touched.add(`${call.function.name} ${args.filePath === undefined ? args.command : Path.basename(args.filePath)}`)
    }
  const head = [
    "## Goal",
    "The user is working on the parser, router, limiter and scheduler modules under src/ and a new metrics module.",
    "## Instructions",
    "Read files before editing them, read them back after an edit, keep each export's signature.",
    "## Accomplished",
    ...[...touched].map((t) => `- ${t}`),
    "## Discoveries",
  ].join("\n")
  const lines = [head]
  for (let n = 0; lines.join("\n").length < SUMMARY_TOKENS * 4 - 200; n++)
    lines.push(
      `- ${MODULES[n % MODULES.length]}Step${n}: takes a number and returns it scaled by ${n + 3} plus ${(n * 7) % 11}; no caller changed it.`,
    )
  lines.push("## Relevant files", ...MODULES.map((m) => `- src/${m}.ts`))
  return lines.join("\n")
}

/** The kind of a request: the title call starts with OpenCode's title prompt; the summariser is sent without tools. */
export const kindOf = (body: ChatRequest): Kind => {
  if (body.messages.some((m) => m.role === "user" && textOf(m).startsWith("Generate a title for this conversation")))
    return "title"
  return (body.tools ?? []).length === 0 ? "summary" : "agent"
}

const ID = /<dcp-message-id>(m\d+)<\/dcp-message-id>/g

const idsOf = (message: ChatMessage): ReadonlyArray<string> => {
  const text = `${textOf(message)}${(message.tool_calls ?? []).map((c) => c.function.arguments).join("")}`
  return [...text.matchAll(ID)].map((m) => m[1]!)
}

/**
 * The `compress` call DCP's reminder asks for: the closed turns (every message before the current user message that
 * carries a DCP id) summarised as a model would, naming what was read, run and changed. Undefined when there is
 * nothing closed to compress.
 */
export const compressCall = (request: Pick<Captured, "body">): ReadonlyArray<ToolCall> | undefined => {
  const messages = request.body.messages
  const current = messages.findLastIndex((m) => m.role === "user")
  const ids = messages.slice(0, Math.max(0, current)).flatMap(idsOf)
  if (ids.length < 2) return undefined
  const touched = new Set<string>()
  for (const m of messages.slice(0, current))
    for (const call of m.tool_calls ?? []) {
      const args = JSON.parse(call.function.arguments) as { filePath?: string; command?: string }
      touched.add(`${call.function.name} ${args.filePath === undefined ? args.command : Path.basename(args.filePath)}`)
    }
  return [
    {
      name: "compress",
      arguments: {
        topic: "Earlier work",
        content: [
          {
            startId: ids[0],
            endId: ids.at(-1),
            summary: `The user asked for work on the parser, router, limiter and scheduler modules under src/. Done so far: ${[...touched].join("; ")}. The edits asked for are made; nothing is pending from these turns.`,
          },
        ],
      },
    },
  ]
}

/** The scripted model's state: the turn the driver is in, and what this turn has answered. */
export class Agent {
  turn = 0
  private step = 0
  private compressed = false
  /** The agent requests of each turn, in order (for the simulated clock). */
  readonly log: Array<{ readonly turn: number; readonly request: Captured }> = []
  repo: string
  constructor(repo: string) {
    this.repo = repo
  }

  /** Moves to turn `n` (before its message is posted). */
  begin(n: number): void {
    this.turn = n
    this.step = 0
    this.compressed = false
  }

  /** Answers a request: a title, a summary, or the turn's next step (or DCP's `compress` first, when it asks). */
  answer(body: ChatRequest): Reply {
    const kind = kindOf(body)
    const tokens = Math.round(JSON.stringify(body).length / 4)
    const reply = (fields: { text?: string; toolCalls?: ReadonlyArray<ToolCall> }): Reply => {
      const output =
        (fields.text ?? "").length +
        (fields.toolCalls ?? []).reduce((n, c) => n + JSON.stringify(c.arguments).length, 0)
      this.log.push({ turn: this.turn, request: { body, kind, output } })
      return {
        _tag: "answer",
        ...fields,
        usage: { prompt_tokens: tokens, completion_tokens: Math.max(1, Math.round(output / 4)) },
      }
    }
    const request = { body, kind }
    if (request.kind === "summary") return reply({ text: summaryText(body) })
    if (request.kind === "title") return reply({ text: "Scripted coding session" })
    const tools = (body.tools ?? []).map((t) => t.function.name)
    const asked = body.messages.some((m) => m.role !== "system" && textOf(m).includes("<dcp-system-reminder>"))
    if (asked && tools.includes("compress") && !this.compressed) {
      this.compressed = true
      const call = compressCall(request)
      if (call !== undefined) return reply({ toolCalls: call })
    }
    const turn = TURNS[this.turn]!
    const step = turn.steps[this.step]
    this.step++
    if (step === undefined) return reply({ text: doneText(this.turn) })
    const path = (file: string) => Path.join(this.repo, file)
    const call = (name: string, args: Record<string, unknown>) => reply({ toolCalls: [{ name, arguments: args }] })
    switch (step.tool) {
      case "read":
        return call("read", { filePath: path(step.file) })
      case "edit":
        return call("edit", { filePath: path(step.file), oldString: step.oldString, newString: step.newString })
      case "write":
        return call("write", { filePath: path(step.file), content: step.content })
      case "bash":
        return call("bash", { command: step.command, description: "Runs a command" })
    }
  }
}
