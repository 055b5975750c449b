/**
 * Facts taken from the log, not from a model (spec §5, "beyond OpenCode"): the paths the agent read and edited, the
 * commands it ran and how they ended, the errors it hit. Every summary ends with a facts block so that exact paths
 * and commands survive even when a model drops them, and the block of the previous summary is merged into the next.
 *
 * Tools are read as OpenCode names them by default: `read`, `list`, `grep`, `glob` look at paths; `edit`, `multiedit`,
 * `write`, `patch`, `apply_patch` change them; `bash` runs commands. Other names are mapped with `tools` (the
 * `toolKinds` option): `{ read_file: "read", run_cmd: "command" }`. Only finished calls count: a completed read or
 * edit, a completed or failed command. Calls left pending or running did not happen (yet).
 */
import type { Message, ToolPart } from "./Message.ts"
import * as Text from "./Text.ts"

/** A command the agent ran, with the outcome of its latest run. */
export interface Command {
  readonly command: string
  readonly failed: boolean
  readonly exitCode?: number
}

/** What the log says was done. Lists hold unique entries in first-seen order. */
export interface Facts {
  /** Paths read, listed or searched. */
  readonly filesRead: ReadonlyArray<string>
  /** Paths written, edited or patched. */
  readonly filesEdited: ReadonlyArray<string>
  /** Commands run; a command run several times appears once, with its latest outcome. */
  readonly commands: ReadonlyArray<Command>
  /** Short error lines from failed tools and failed model calls. */
  readonly errors: ReadonlyArray<string>
}

/** Facts of an empty log. */
export const empty: Facts = { filesRead: [], filesEdited: [], commands: [], errors: [] }

/** The most entries each list keeps; the most recently seen are kept. */
export const MAX_ENTRIES = 50

/** The longest path, command or error kept, in characters. */
export const MAX_ENTRY_CHARS = 2_000

/** Tools that read or look at paths. */
export const READ_TOOLS: ReadonlySet<string> = new Set(["read", "list", "ls", "grep", "glob", "view"])
/** Tools that change files. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set([
  "edit",
  "multiedit",
  "write",
  "patch",
  "apply_patch",
  "str_replace",
  "create",
])
/** Tools that run shell commands. */
export const COMMAND_TOOLS: ReadonlySet<string> = new Set(["bash", "shell", "sh", "exec", "run", "terminal"])

/** What a tool does, as far as the facts are concerned. */
export type ToolKind = "read" | "edit" | "command"

/** A mapping of tool names to what they do; `"none"` makes a default name count as nothing. */
export type ToolKinds = { readonly [tool: string]: ToolKind | "none" }

/** How tool names are read: the kind of each name. */
export interface Tools {
  readonly kindOf: (tool: string) => ToolKind | undefined
}

const defaultKind = (tool: string): ToolKind | undefined =>
  COMMAND_TOOLS.has(tool) ? "command" : READ_TOOLS.has(tool) ? "read" : EDIT_TOOLS.has(tool) ? "edit" : undefined

/** OpenCode's names (`READ_TOOLS`, `EDIT_TOOLS`, `COMMAND_TOOLS`): the default. */
export const OPENCODE_TOOLS: Tools = { kindOf: defaultKind }

/** OpenCode's names with `kinds` laid over them (a name given here wins; `"none"` removes a default). */
export const toolsOf = (kinds: ToolKinds | undefined): Tools => {
  if (kinds === undefined || Object.keys(kinds).length === 0) return OPENCODE_TOOLS
  const own = new Map(Object.entries(kinds))
  return {
    kindOf: (tool) => {
      const kind = own.get(tool)
      return kind === undefined ? defaultKind(tool) : kind === "none" ? undefined : kind
    },
  }
}

const PATH_KEYS = ["filePath", "file_path", "path", "file", "filename", "target"] as const
const COMMAND_KEYS = ["command", "cmd", "script"] as const
const EXIT_KEYS = ["exit", "exitCode", "exit_code", "code"] as const

const cap = (value: string): string => Text.clip(value, MAX_ENTRY_CHARS)

const stringAt = (input: unknown, keys: ReadonlyArray<string>): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  for (const key of keys) {
    const value = (input as Record<string, unknown>)[key]
    if (typeof value === "string" && value.trim() !== "") return value.trim()
  }
  return undefined
}

// `*** Update File: a.ts` (OpenCode's patch format) and `+++ b/a.ts` (unified diffs).
const PATCH_PATH = /^(?:\*\*\* (?:Add|Update|Delete) File: |\*\*\* Move to: |\+\+\+ (?:b\/)?)(.+)$/gm

/** The paths a patch text touches, in order. */
export const patchPaths = (patch: string): Array<string> => {
  const out: Array<string> = []
  PATCH_PATH.lastIndex = 0
  for (let m = PATCH_PATH.exec(patch); m !== null; m = PATCH_PATH.exec(patch)) {
    const path = (m[1] ?? "").trim()
    if (path !== "" && path !== "/dev/null") out.push(path)
  }
  return out
}

const editedPaths = (input: unknown): Array<string> => {
  const direct = stringAt(input, PATH_KEYS)
  if (direct !== undefined) return [direct]
  const patch = stringAt(input, ["patchText", "patch", "diff"])
  return patch === undefined ? [] : patchPaths(patch)
}

/** The exit code a tool reported, from its metadata (OpenCode's bash writes `metadata.exit`). */
const exitCodeOf = (part: ToolPart): number | undefined => {
  const state = part.state
  const metadata = state.status === "completed" || state.status === "error" ? state.metadata : undefined
  if (metadata === undefined) return undefined
  for (const key of EXIT_KEYS) {
    const value = metadata[key]
    if (typeof value === "number" && Number.isInteger(value)) return value
  }
  return undefined
}

/** The first non-empty line of a text, whitespace collapsed, cut to `max` characters. */
export const firstLine = (text: string, max = 200): string => {
  const head = Text.clip(text, 4 * max)
  const line =
    head
      .split("\n")
      .map((l) => l.replace(/\s+/g, " ").trim())
      .find((l) => l !== "") ?? ""
  return Text.ellipsis(line, max)
}

/** The path or command a tool call is about, if it names one. */
export const targetOf = (part: ToolPart, tools: Tools = OPENCODE_TOOLS): string | undefined =>
  tools.kindOf(part.tool) === "command"
    ? stringAt(part.state.input, COMMAND_KEYS)
    : (stringAt(part.state.input, PATH_KEYS) ?? editedPaths(part.state.input)[0])

/** Whether a tool call was cut short by an abort rather than failing on its own. */
export const isInterrupted = (part: ToolPart): boolean =>
  part.state.status === "error" && part.state.metadata?.interrupted === true

/** How a finished command call ended: failed when it errored or exited non-zero. */
export const commandOutcome = (part: ToolPart): Command | undefined => {
  const command = stringAt(part.state.input, COMMAND_KEYS)
  if (command === undefined) return undefined
  const status = part.state.status
  if (status !== "completed" && status !== "error") return undefined
  const exitCode = exitCodeOf(part)
  const failed = status === "error" || (exitCode !== undefined && exitCode !== 0)
  return exitCode === undefined ? { command: cap(command), failed } : { command: cap(command), failed, exitCode }
}

/** An ordered set that remembers when each key was first and last seen. */
class Seen<V> {
  readonly entries = new Map<string, { first: number; last: number; value: V }>()
  private clock = 0
  add(key: string, value: V): void {
    const tick = this.clock++
    const found = this.entries.get(key)
    if (found === undefined) this.entries.set(key, { first: tick, last: tick, value })
    else {
      found.last = tick
      found.value = value
    }
  }
  /** The values in first-seen order, keeping the `max` most recently seen. */
  values(max: number): Array<V> {
    const all = [...this.entries.values()]
    const kept = all.length <= max ? all : [...all].sort((a, b) => b.last - a.last).slice(0, max)
    return kept.sort((a, b) => a.first - b.first).map((e) => e.value)
  }
}

/**
 * The facts of a message log, in order. Paths and commands are exact as they appear in tool inputs (trimmed),
 * de-duplicated, at most `MAX_ENTRIES` each (the most recently seen kept).
 */
export const facts = (messages: ReadonlyArray<Message>, tools: Tools = OPENCODE_TOOLS): Facts => {
  const read = new Seen<string>()
  const edited = new Seen<string>()
  const commands = new Seen<Command>()
  const errors = new Seen<string>()
  for (const message of messages) {
    if (message.role !== "assistant") continue
    for (const part of message.parts) {
      if (part.type !== "tool") continue
      const state = part.state
      const kind = tools.kindOf(part.tool)
      if (kind === "command") {
        const outcome = commandOutcome(part)
        if (outcome !== undefined) commands.add(outcome.command, outcome)
      } else if (state.status === "completed") {
        if (kind === "read") {
          const path = stringAt(state.input, PATH_KEYS)
          if (path !== undefined) read.add(cap(path), cap(path))
        } else if (kind === "edit") for (const path of editedPaths(state.input)) edited.add(cap(path), cap(path))
      }
      if (state.status === "error" && !isInterrupted(part)) {
        const line = `${part.tool}: ${firstLine(state.error)}`
        errors.add(line, line)
      }
    }
    if (message.error !== undefined && !/abort/i.test(message.error.name)) {
      const line = `${message.error.name}: ${firstLine(message.error.message)}`
      errors.add(line, line)
    }
  }
  return {
    filesRead: read.values(MAX_ENTRIES),
    filesEdited: edited.values(MAX_ENTRIES),
    commands: commands.values(MAX_ENTRIES),
    errors: errors.values(MAX_ENTRIES),
  }
}

/** Older facts followed by newer ones: unique entries in first-seen order, a command with its newest outcome. */
export const merge = (older: Facts, newer: Facts): Facts => {
  const list = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
    const seen = new Seen<string>()
    for (const x of [...a, ...b]) seen.add(x, x)
    return seen.values(MAX_ENTRIES)
  }
  const commands = new Seen<Command>()
  for (const c of [...older.commands, ...newer.commands]) commands.add(c.command, c)
  return {
    filesRead: list(older.filesRead, newer.filesRead),
    filesEdited: list(older.filesEdited, newer.filesEdited),
    commands: commands.values(MAX_ENTRIES),
    errors: list(older.errors, newer.errors),
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// The Markdown block
// ---------------------------------------------------------------------------------------------------------------------

/** The facts block's heading. */
export const HEADING = "## Facts (from the log)"
/** Its sub-headings, in order. */
export const SUBHEADINGS = ["### Files read", "### Files edited", "### Commands"] as const

/** The default size bound of a facts block, in characters. */
export const BLOCK_MAX_CHARS = 3_000

/** The line a facts-block list shows when entries were left out. */
export const moreLine = (n: number): string => `- … and ${n} more`

/** Text on one line: each line break (and the spaces around it) shown as ` ⏎ `. */
export const inline = (text: string): string =>
  text.replace(/[^\S\r\n\u2028\u2029]*(?:\r\n|[\r\n\u2028\u2029])\s*/g, " ⏎ ")

/** Text as one Markdown code span on one line (see `inline`), whatever backticks it holds, cut to `max` characters. */
export const code = (text: string, max = 300): string => {
  let one = inline(text)
  one = Text.ellipsis(one, max)
  let longest = 0
  for (const run of one.match(/`+/g) ?? []) longest = Math.max(longest, run.length)
  const fence = "`".repeat(longest + 1)
  const pad = one.startsWith("`") || one.endsWith("`") ? " " : ""
  return `${fence}${pad}${one}${pad}${fence}`
}

const commandLine = (c: Command): string =>
  `- ${code(c.command)} — ${c.failed ? "failed" : "ok"}${c.exitCode === undefined ? "" : ` (exit ${c.exitCode})`}`

/**
 * Lines of a list within `budget` characters (newlines counted), keeping the newest (last) entries; the dropped ones
 * are counted in a `… and N more` line at the top.
 */
export const newestWithin = (lines: ReadonlyArray<string>, budget: number): Array<string> => {
  const kept: Array<string> = []
  let used = 0
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!
    const dropped = i
    const reserve = dropped > 0 ? moreLine(dropped).length + 1 : 0
    if (used + line.length + 1 + reserve > budget) break
    kept.unshift(line)
    used += line.length + 1
  }
  const dropped = lines.length - kept.length
  return dropped > 0 ? [moreLine(dropped), ...kept] : kept
}

/**
 * The facts as a Markdown block: `## Facts (from the log)` with `### Files read`, `### Files edited` and
 * `### Commands`, `(none)` under an empty one; at most `maxChars` characters, long lists keep their newest entries.
 *
 * **Example**
 * ```md
 * ## Facts (from the log)
 * ### Files read
 * - `src/app.ts`
 * ### Files edited
 * - `src/app.ts`
 * ### Commands
 * - `npm test` — failed (exit 1)
 * ```
 */
export const factsBlock = (value: Facts, maxChars = BLOCK_MAX_CHARS): string => {
  const sections: ReadonlyArray<ReadonlyArray<string>> = [
    value.filesRead.map((p) => `- ${code(p)}`),
    value.filesEdited.map((p) => `- ${code(p)}`),
    value.commands.map(commandLine),
  ]
  const fixed = HEADING.length + SUBHEADINGS.reduce((n, h) => n + h.length + 1, 0)
  // Commands get the larger share: they are the hardest facts for a model to recover.
  const shares = [0.3, 0.3, 0.4]
  const room = Math.max(0, maxChars - fixed - 3 * ("(none)".length + 1))
  const lines = [HEADING]
  sections.forEach((items, i) => {
    lines.push(SUBHEADINGS[i]!)
    const kept = newestWithin(items, Math.floor(room * shares[i]!))
    lines.push(...(kept.length > 0 ? kept : ["(none)"]))
  })
  return lines.join("\n")
}

const CODE_LINE = /^- (`+) ?(.*?) ?\1(?!`)(.*)$/
const OUTCOME = /^ — (ok|failed)(?: \(exit (-?\d+)\))?$/

/**
 * The facts in a summary's facts block (the last one), as `factsBlock` writes it; `empty` when there is none.
 * Errors are not part of the block; multi-line or cut commands come back as they were shown.
 */
export const parse = (summary: string): Facts => {
  const start = summary.lastIndexOf(HEADING)
  if (start === -1) return empty
  const read: Array<string> = []
  const edited: Array<string> = []
  const commands: Array<Command> = []
  let section = -1
  for (const raw of summary.slice(start + HEADING.length).split("\n")) {
    const line = raw.trimEnd()
    if (line.startsWith("## ")) break
    const sub = SUBHEADINGS.indexOf(line as (typeof SUBHEADINGS)[number])
    if (sub !== -1) {
      section = sub
      continue
    }
    const m = CODE_LINE.exec(line)
    if (m === null || section === -1) continue
    const value = m[2] ?? ""
    if (section === 0) read.push(value)
    else if (section === 1) edited.push(value)
    else {
      const outcome = OUTCOME.exec(m[3] ?? "")
      const exit = outcome?.[2]
      const failed = outcome?.[1] === "failed"
      commands.push(
        exit === undefined ? { command: value, failed } : { command: value, failed, exitCode: Number(exit) },
      )
    }
  }
  return merge(empty, { filesRead: read, filesEdited: edited, commands, errors: [] })
}

/** A summary without its facts block (from the block's heading to the next `## ` heading or the end). */
export const strip = (summary: string): string => {
  const start = summary.lastIndexOf(HEADING)
  if (start === -1) return summary
  const rest = summary.slice(start + HEADING.length)
  const next = rest.search(/\n## /)
  const after = next === -1 ? "" : rest.slice(next + 1)
  return `${summary.slice(0, start).trimEnd()}${after === "" ? "" : `\n\n${after}`}`.trimEnd()
}

/** A summary with its facts block replaced by (or extended with) the block of `value`. */
export const withBlock = (summary: string, value: Facts, maxChars = BLOCK_MAX_CHARS): string => {
  const body = strip(summary)
  return body === "" ? factsBlock(value, maxChars) : `${body}\n\n${factsBlock(value, maxChars)}`
}
