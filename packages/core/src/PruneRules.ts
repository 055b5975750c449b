/**
 * Zero-cost prune rules: outputs and tool inputs whose content the window carries anyway (or that no longer matter),
 * so clearing them loses nothing the model can still use. Each is a `Strategy.Rule` (pure; composed onto any strategy
 * with `Strategy.withRules`) whose choices are recorded as `PartCompacted` with the rule's name and a one-line reason
 * (`target: "input"` for an input, ADR 0030); the window shows pivot's placeholder (`Render.clearedText`,
 * `Render.clearedInput`) and `context_recall` gives the original back.
 *
 * - `duplicateCalls`: the output of a call repeated later with the same arguments.
 * - `supersededWrites`: the input (the content) of a successful write or edit of a file a later whole read shows.
 * - `erroredInputs(n)`: the input of a call that failed, once `n` user turns have passed.
 */
import type { PruneTarget } from "./Commands.ts"
import { isInterrupted, targetOf } from "./Facts.ts"
import type { ToolPart } from "./Message.ts"
import * as Prune from "./Prune.ts"
import { inputShed } from "./Render.ts"
import { type Call, type Input, outputs, type Rule } from "./Strategy.ts"

/** A value as JSON with its object keys sorted: two calls with the same arguments in another key order are equal. */
export const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** Whether a call's output can be cleared: completed, not cleared yet, and not of a protected tool. */
const clearable = (call: Call, input: Input): boolean =>
  call.part.state.status === "completed" &&
  call.part.state.compactedAt === undefined &&
  !(input.prune.protectedTools ?? Prune.PRUNE_PROTECTED_TOOLS).includes(call.tool)

/**
 * `duplicate-calls`: a completed call of the same tool with the same arguments (whatever their key order) as a newer
 * completed call in the window has its output cleared; the newest output stays. A call that errored, is still
 * running or is protected (`skill`) neither is cleared nor counts as the newer one.
 */
export const duplicateCalls: Rule = {
  name: "duplicate-calls",
  select: (input) => {
    const newest = new Map<string, Call>()
    const out: Array<PruneTarget> = []
    const calls = outputs(input.messages)
    for (let i = calls.length - 1; i >= 0; i--) {
      const call = calls[i]!
      if (
        call.part.state.status !== "completed" ||
        (input.prune.protectedTools ?? Prune.PRUNE_PROTECTED_TOOLS).includes(call.tool)
      )
        continue
      const key = `${call.tool}\u0000${canonical(call.part.state.input)}`
      const kept = newest.get(key)
      if (kept === undefined) {
        newest.set(key, call)
        continue
      }
      if (clearable(call, input))
        out.push({
          messageId: call.messageId,
          partId: call.partId,
          rule: "duplicate-calls",
          reason: `same ${call.tool} call as ${kept.partId}, whose output is newer`,
        })
    }
    return out.reverse()
  },
}

/** What a tool call does to a file, as `supersededWrites` reads it. */
export type FileAccess = "write" | "edit" | "read"

/** Tools that write a whole file: OpenCode's `write`, and `create` / `write_file` of other agents. */
export const WRITE_TOOLS: ReadonlySet<string> = new Set(["write", "create", "write_file"])
/** Tools that change part of a file: OpenCode's `edit` and `multiedit`, and `str_replace` / `edit_file`. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["edit", "multiedit", "str_replace", "edit_file"])
/** Tools that read a file: OpenCode's `read`, and `view` / `read_file`. */
export const READ_TOOLS: ReadonlySet<string> = new Set(["read", "view", "read_file"])
/**
 * Anthropic's text editor as the AI SDK names it (`anthropic.tools.textEditor_*`): one tool whose `command` says what
 * it does — `create` writes, `str_replace` and `insert` edit, `view` reads.
 */
export const TEXT_EDITOR_TOOLS: ReadonlySet<string> = new Set(["str_replace_based_edit_tool", "str_replace_editor"])

/** Input keys that make a read show part of a file only (`offset`/`limit` of OpenCode's read, `view_range`). */
export const PARTIAL_READ_KEYS: ReadonlyArray<string> = ["offset", "limit", "view_range", "start_line", "end_line"]

const TEXT_EDITOR_COMMANDS: { readonly [command: string]: FileAccess } = {
  create: "write",
  str_replace: "edit",
  insert: "edit",
  view: "read",
}

/** What a call does to a file by its tool name (and, for the text editor, its `command`); undefined: nothing known. */
export const accessOf = (part: ToolPart): FileAccess | undefined => {
  if (TEXT_EDITOR_TOOLS.has(part.tool)) {
    const command = part.state.input.command
    return typeof command === "string" ? TEXT_EDITOR_COMMANDS[command] : undefined
  }
  return WRITE_TOOLS.has(part.tool)
    ? "write"
    : EDIT_TOOLS.has(part.tool)
      ? "edit"
      : READ_TOOLS.has(part.tool)
        ? "read"
        : undefined
}

/** Whether a read shows the whole file: none of `PARTIAL_READ_KEYS` is set. */
export const isWholeRead = (part: ToolPart): boolean =>
  PARTIAL_READ_KEYS.every((key) => part.state.input[key] === undefined || part.state.input[key] === null)

/** Whether a call's input can be cleared: not cleared yet, and clearing sheds something (`Render.inputShed`). */
const inputClearable = (part: ToolPart): boolean =>
  (part.state.status === "completed" || part.state.status === "error") &&
  part.state.inputClearedAt === undefined &&
  inputShed(part.state.input) > 0

/**
 * `superseded-writes`: the input of a completed write or edit of file F (its content, its strings: what
 * `Render.clearedInput` clears) when a later completed whole read of F (`isWholeRead`) is in the window with its
 * output not cleared: that read shows F as it stood after the change. Paths are compared exactly as the calls give
 * them (`Facts.targetOf`), so `a.ts` and `./a.ts` are different files (the rule then clears nothing).
 */
export const supersededWrites: Rule = {
  name: "superseded-writes",
  select: (input) => {
    // Walking newest first: the newest whole read of each path seen so far.
    const readLater = new Map<string, Call>()
    const out: Array<PruneTarget> = []
    const calls = outputs(input.messages)
    for (let i = calls.length - 1; i >= 0; i--) {
      const call = calls[i]!
      const access = accessOf(call.part)
      const path = access === undefined ? undefined : targetOf(call.part)
      if (path === undefined || call.part.state.status !== "completed") continue
      if (access === "read") {
        if (call.part.state.compactedAt === undefined && isWholeRead(call.part) && !readLater.has(path))
          readLater.set(path, call)
        continue
      }
      const read = readLater.get(path)
      if (read !== undefined && inputClearable(call.part))
        out.push({
          messageId: call.messageId,
          partId: call.partId,
          rule: "superseded-writes",
          reason: `${call.tool} of ${path} superseded by the later read ${read.partId}`,
          target: "input",
        })
    }
    return out.reverse()
  },
}

/**
 * `errored-inputs`: the input of a call that failed (status `error`; not one an abort interrupted) once `turns` user
 * turns have started after it (0: at once). Its error stays in view. A negative or fractional `turns` is a
 * `RangeError`.
 */
export const erroredInputs = (turns: number): Rule => {
  if (!Number.isInteger(turns) || turns < 0)
    throw new RangeError(`erroredInputs: turns must be a whole number >= 0, got ${turns}`)
  return {
    name: "errored-inputs",
    select: (input) =>
      outputs(input.messages, { before: turns }).flatMap(
        (call): Array<PruneTarget> =>
          call.part.state.status === "error" && !isInterrupted(call.part) && inputClearable(call.part)
            ? [
                {
                  messageId: call.messageId,
                  partId: call.partId,
                  rule: "errored-inputs",
                  reason: `${call.tool} failed ${call.turnsAfter} turn${call.turnsAfter === 1 ? "" : "s"} ago`,
                  target: "input",
                },
              ]
            : [],
      ),
  }
}

/** The turns `erroredInputs` waits by default: 2 (OpenCode's protected turns). */
export const ERRORED_TURNS = 2
