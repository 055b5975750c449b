/**
 * The JSON that `opencode export <session>` prints: `{ info: Session.Info, messages: [{ info: Message, parts: [Part] }] }`,
 * with OpenCode's message and part shapes (spec §2.0, `message-v2.ts`).
 *
 * Lenient where real exports vary: extra keys are ignored, key order does not matter, fields OpenCode has not always
 * written are optional, and part types pivot does not model pass through as `OtherPart` (the import drops and counts
 * them). Strict where pivot needs a value: ids, roles, times, token counts, tool states and outputs.
 */
import { Ids } from "@pivot/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { formatPath, ImportError } from "./ImportError.ts"
import * as FastMessage from "./internal/fastMessage.ts"

const Millis = Schema.Finite
const Count = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
const Metadata = Schema.Record(Schema.String, Schema.Unknown)

/** Token usage as OpenCode stores it: `input` without cached tokens, `output` without reasoning (spec §2.1). */
export const Tokens = Schema.Struct({
  total: Schema.optionalKey(Count),
  input: Count,
  output: Count,
  reasoning: Count,
  cache: Schema.Struct({ read: Count, write: Count }),
})
export type Tokens = typeof Tokens.Type

/** A stored error (OpenCode's `NamedError`): `{ name, data: { message, … } }`. */
export const NamedError = Schema.Struct({
  name: Schema.String,
  data: Schema.optionalKey(Schema.Unknown),
})
export type NamedError = typeof NamedError.Type

const partBase = {
  id: Ids.PartId,
  sessionID: Schema.optionalKey(Schema.String),
  messageID: Schema.optionalKey(Schema.String),
}

/** Text typed by the user or written by the model; `synthetic` when OpenCode wrote it. */
export const TextPart = Schema.Struct({
  ...partBase,
  type: Schema.Literal("text"),
  text: Schema.String,
  synthetic: Schema.optionalKey(Schema.Boolean),
  ignored: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(Metadata),
})
export type TextPart = typeof TextPart.Type

/** The model's reasoning. */
export const ReasoningPart = Schema.Struct({ ...partBase, type: Schema.Literal("reasoning"), text: Schema.String })
export type ReasoningPart = typeof ReasoningPart.Type

/** An attached file (also the shape of a tool result's attachments). */
export const FilePart = Schema.Struct({
  ...partBase,
  type: Schema.Literal("file"),
  mime: Schema.String,
  filename: Schema.optionalKey(Schema.String),
  url: Schema.String,
})
export type FilePart = typeof FilePart.Type

/** The compaction marker's part. */
export const CompactionPart = Schema.Struct({
  ...partBase,
  type: Schema.Literal("compaction"),
  auto: Schema.Boolean,
  overflow: Schema.optionalKey(Schema.Boolean),
  tail_start_id: Schema.optionalKey(Ids.MessageId),
})
export type CompactionPart = typeof CompactionPart.Type

/** A subtask handed to another agent. */
export const SubtaskPart = Schema.Struct({
  ...partBase,
  type: Schema.Literal("subtask"),
  prompt: Schema.String,
  description: Schema.String,
  agent: Schema.String,
})
export type SubtaskPart = typeof SubtaskPart.Type

/** The start of one model step. */
export const StepStartPart = Schema.Struct({ ...partBase, type: Schema.Literal("step-start") })
export type StepStartPart = typeof StepStartPart.Type

/** The end of one model step, with its usage. */
export const StepFinishPart = Schema.Struct({
  ...partBase,
  type: Schema.Literal("step-finish"),
  reason: Schema.String,
  tokens: Schema.optionalKey(Tokens),
  cost: Schema.optionalKey(Schema.Finite),
})
export type StepFinishPart = typeof StepFinishPart.Type

const Input = Schema.Record(Schema.String, Schema.Unknown)

/** A tool call not started yet. */
export const ToolStatePending = Schema.Struct({ status: Schema.Literal("pending"), input: Input })
/** A tool call in progress; left this way when the process ended mid-call. */
export const ToolStateRunning = Schema.Struct({
  status: Schema.Literal("running"),
  input: Input,
  title: Schema.optionalKey(Schema.String),
  time: Schema.optionalKey(Schema.Struct({ start: Schema.optionalKey(Millis) })),
})
/** A finished tool call; `time.compacted` is set when a prune cleared its output from the model input. */
export const ToolStateCompleted = Schema.Struct({
  status: Schema.Literal("completed"),
  input: Input,
  output: Schema.String,
  title: Schema.optionalKey(Schema.String),
  metadata: Schema.optionalKey(Metadata),
  time: Schema.optionalKey(
    Schema.Struct({
      start: Schema.optionalKey(Millis),
      end: Schema.optionalKey(Millis),
      compacted: Schema.optionalKey(Millis),
    }),
  ),
  attachments: Schema.optionalKey(Schema.Array(FilePart)),
})
/** A failed or interrupted tool call. */
export const ToolStateError = Schema.Struct({
  status: Schema.Literal("error"),
  input: Input,
  error: Schema.String,
  metadata: Schema.optionalKey(Metadata),
  time: Schema.optionalKey(Schema.Struct({ start: Schema.optionalKey(Millis), end: Schema.optionalKey(Millis) })),
})
/** The tool states OpenCode writes. */
export const TOOL_STATUSES = ["pending", "running", "completed", "error"] as const
/** Where a tool call stands. */
export const ToolState = Schema.Union([ToolStatePending, ToolStateRunning, ToolStateCompleted, ToolStateError])
export type ToolState = typeof ToolState.Type

/** A tool call and its state. `metadata.providerExecuted` marks calls the provider ran itself. */
export const ToolPart = Schema.Struct({
  ...partBase,
  type: Schema.Literal("tool"),
  callID: Schema.String,
  tool: Schema.String,
  state: ToolState,
  metadata: Schema.optionalKey(Metadata),
})
export type ToolPart = typeof ToolPart.Type

/** The part types pivot models; any other type is an `OtherPart`. */
export const MODELED_PART_TYPES: ReadonlyArray<string> = [
  "text",
  "reasoning",
  "file",
  "tool",
  "step-start",
  "step-finish",
  "compaction",
  "subtask",
]

/** A part pivot does not model (patch, snapshot, agent, retry, and types newer OpenCode versions add). */
export const OtherPart = Schema.Struct({
  type: Schema.String.check(
    Schema.makeFilter((type: string) => !MODELED_PART_TYPES.includes(type), {
      expected: "a part type pivot does not model",
    }),
  ),
  id: Schema.optionalKey(Schema.String),
})
export type OtherPart = typeof OtherPart.Type

/** Any part of a message. Modelled types come first, so their validation errors are the ones reported. */
export const Part = Schema.Union([
  TextPart,
  ReasoningPart,
  FilePart,
  ToolPart,
  StepStartPart,
  StepFinishPart,
  CompactionPart,
  SubtaskPart,
  OtherPart,
])
export type Part = typeof Part.Type

/** A part of a type pivot models. */
export type ModeledPart =
  | TextPart
  | ReasoningPart
  | FilePart
  | ToolPart
  | StepStartPart
  | StepFinishPart
  | CompactionPart
  | SubtaskPart

/** Whether a decoded part is of a type pivot models (the schema admits other types only as `OtherPart`). */
export const isModeled = (part: Part): part is ModeledPart => MODELED_PART_TYPES.includes(part.type)

/** The model of a user message. */
export const UserModel = Schema.Struct({
  providerID: Schema.String,
  modelID: Schema.String,
  variant: Schema.optionalKey(Schema.String),
})

/** A user message's info. */
export const UserInfo = Schema.Struct({
  id: Ids.MessageId,
  sessionID: Schema.optionalKey(Schema.String),
  role: Schema.Literal("user"),
  time: Schema.Struct({ created: Millis }),
  agent: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(UserModel),
  system: Schema.optionalKey(Schema.String),
})
export type UserInfo = typeof UserInfo.Type

/** An assistant message's info: one model call (or a `!` shell command, or a compaction summary). */
export const AssistantInfo = Schema.Struct({
  id: Ids.MessageId,
  sessionID: Schema.optionalKey(Schema.String),
  role: Schema.Literal("assistant"),
  parentID: Ids.MessageId,
  time: Schema.Struct({ created: Millis, completed: Schema.optionalKey(Millis) }),
  providerID: Schema.String,
  modelID: Schema.String,
  variant: Schema.optionalKey(Schema.String),
  mode: Schema.optionalKey(Schema.String),
  agent: Schema.optionalKey(Schema.String),
  cost: Schema.optionalKey(Schema.Finite),
  tokens: Tokens,
  finish: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(NamedError),
  summary: Schema.optionalKey(Schema.Boolean),
})
export type AssistantInfo = typeof AssistantInfo.Type

/** The message roles. */
export const ROLES = ["user", "assistant"] as const
/** A message's info. */
export const MessageInfo = Schema.Union([UserInfo, AssistantInfo])
export type MessageInfo = typeof MessageInfo.Type

/** One exported message with its parts. */
export const MessageWithParts = Schema.Struct({ info: MessageInfo, parts: Schema.Array(Part) })
export type MessageWithParts = typeof MessageWithParts.Type

/** The session's info. `model` varies between versions (`id` or `modelID`), so it is read leniently. */
export const SessionInfo = Schema.Struct({
  id: Ids.SessionId,
  title: Schema.optionalKey(Schema.String),
  time: Schema.Struct({ created: Millis }),
  model: Schema.optionalKey(Schema.Unknown),
})
export type SessionInfo = typeof SessionInfo.Type

/** A whole export. */
export const Export = Schema.Struct({ info: SessionInfo, messages: Schema.Array(MessageWithParts) })
export type Export = typeof Export.Type

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** The first leaf issue of a failed decode and where it is (decoding stops at the first error). */
const firstLeaf = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
): { readonly issue: SchemaIssue.Issue; readonly path: ReadonlyArray<PropertyKey> } => {
  switch (issue._tag) {
    case "Pointer":
      return firstLeaf(issue.issue, [...path, ...issue.path])
    case "Composite":
      return firstLeaf(issue.issues[0], path)
    case "AnyOf":
      return issue.issues[0] === undefined ? { issue, path } : firstLeaf(issue.issues[0], path)
    case "Encoding":
      return firstLeaf(issue.issue, path)
    default:
      return { issue, path }
  }
}

const valueAt = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let at = root
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined
    at = (at as Record<PropertyKey, unknown>)[key]
  }
  return at
}

/** A short description of a JSON value for error messages (never a whole tool output). */
export const describeValue = (value: unknown): string => {
  if (value === undefined) return "nothing"
  if (value === null) return "null"
  if (Array.isArray(value)) return "an array"
  if (typeof value === "object") return "an object"
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  return String(value)
}

const oneOf = (values: ReadonlyArray<string>) => values.map((v) => JSON.stringify(v)).join(", ")

/** The key that selects a union member at a path: a tool state's `status`, a message's `role`, a part's `type`. */
const discriminator = (
  path: ReadonlyArray<PropertyKey>,
): { readonly key: string; readonly allowed?: ReadonlyArray<string> } | undefined => {
  const last = path[path.length - 1]
  if (last === "state") return { key: "status", allowed: TOOL_STATUSES }
  if (last === "info" && path.length > 1) return { key: "role", allowed: ROLES }
  if (typeof last === "number" && path[path.length - 2] === "parts") return { key: "type" }
  return undefined
}

/** Turns a failed union (no member matched) into the discriminator that is wrong, e.g. `state.status`. */
const unionError = (input: unknown, path: ReadonlyArray<PropertyKey>): ImportError | undefined => {
  const value = valueAt(input, path)
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return new ImportError({ path: formatPath(path), reason: `expected an object, got ${describeValue(value)}` })
  const d = discriminator(path)
  if (d === undefined) return undefined
  const tag = (value as Record<string, unknown>)[d.key]
  const at = formatPath([...path, d.key])
  if (tag === undefined) return new ImportError({ path: at, reason: "required field is missing" })
  if (typeof tag !== "string")
    return new ImportError({ path: at, reason: `expected a string, got ${describeValue(tag)}` })
  if (d.allowed !== undefined && !d.allowed.includes(tag))
    return new ImportError({ path: at, reason: `expected one of ${oneOf(d.allowed)}, got ${describeValue(tag)}` })
  return undefined
}

/** The error for a failed decode of `input`: the first bad field's path and what is wrong with it. */
export const toImportError = (input: unknown, issue: SchemaIssue.Issue): ImportError => {
  const leaf = firstLeaf(issue, [])
  if (leaf.issue._tag === "AnyOf") {
    const refined = unionError(input, leaf.path)
    if (refined) return refined
  }
  if (leaf.issue._tag === "MissingKey")
    return new ImportError({ path: formatPath(leaf.path), reason: "required field is missing" })
  const message = formatter(leaf.issue).issues[0]?.message ?? "invalid value"
  const reason = `${message.charAt(0).toLowerCase()}${message.slice(1)}, got ${describeValue(valueAt(input, leaf.path))}`
  return new ImportError({ path: formatPath(leaf.path), reason })
}

const decodeExport = Schema.decodeUnknownResult(Export)

/** Decodes a parsed export, failing with the path of the first bad field. */
export const decode = (input: unknown): Result.Result<Export, ImportError> => {
  const decoded = decodeExport(input)
  return Result.isSuccess(decoded)
    ? Result.succeed(decoded.success)
    : Result.fail(toImportError(input, decoded.failure.issue))
}

const position = (text: string, offset: number): string => {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)))
  const lines = before.split("\n")
  return `line ${lines.length}, column ${(lines[lines.length - 1]?.length ?? 0) + 1}`
}

/**
 * Parses the text of a saved export. Lines before the JSON (such as `Exporting session: ses_…`, which some saved
 * exports begin with) are skipped. Fails with the line and column of a JSON syntax error.
 */
export const parseExportText = (text: string): Result.Result<unknown, ImportError> => {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text
  // The JSON starts at the first line whose first non-blank character opens an object.
  const start = /^[ \t]*\{/m.exec(source)
  if (start === null)
    return Result.fail(new ImportError({ path: "", reason: "no JSON object found (expected `{ info, messages }`)" }))
  const offset = start.index
  try {
    return Result.succeed(JSON.parse(source.slice(offset)))
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    const at = /at position (\d+)/.exec(detail)
    // V8 reports a position for most syntax errors; the end of input is at the end; a bad token carries none.
    const where =
      at?.[1] !== undefined ? offset + Number(at[1]) : /end of JSON input/.test(detail) ? source.length : undefined
    const cause = detail.replace(/ in JSON at position \d+.*$/s, "").replace(/, ".*" is not valid JSON$/s, "")
    return Result.fail(
      new ImportError({
        path: where === undefined ? "" : position(source, where),
        reason: `not valid JSON (${cause})`,
      }),
    )
  }
}

/** The encoding of an export's bytes, when it is not UTF-8: a UTF-16 or UTF-32 byte-order mark, or NUL-interleaved text. Pure. */
export const foreignEncoding = (bytes: Uint8Array): string | undefined => {
  const [b0, b1, b2, b3] = bytes
  if (b0 === 0xff && b1 === 0xfe && b2 === 0 && b3 === 0) return "UTF-32LE (byte-order mark FF FE 00 00)"
  if (b0 === 0 && b1 === 0 && b2 === 0xfe && b3 === 0xff) return "UTF-32BE (byte-order mark 00 00 FE FF)"
  if (b0 === 0xff && b1 === 0xfe) return "UTF-16LE (byte-order mark FF FE)"
  if (b0 === 0xfe && b1 === 0xff) return "UTF-16BE (byte-order mark FE FF)"
  // Without a mark, UTF-16 JSON shows as ASCII bytes with a NUL after (LE) or before (BE) each.
  if (bytes.length >= 4 && b0 !== 0 && b1 === 0 && b2 !== 0 && b3 === 0) return "UTF-16LE (no byte-order mark)"
  if (bytes.length >= 4 && b0 === 0 && b1 !== 0 && b2 === 0 && b3 !== 0) return "UTF-16BE (no byte-order mark)"
  return undefined
}

/**
 * The text of an export file's bytes, which must be UTF-8 (a UTF-8 byte-order mark is allowed). UTF-16 or UTF-32
 * (what Windows PowerShell's `>` writes) fails naming the encoding found and how to convert it.
 */
export const decodeBytes = (bytes: Uint8Array): Result.Result<string, ImportError> => {
  const foreign = foreignEncoding(bytes)
  if (foreign !== undefined)
    return Result.fail(
      new ImportError({
        path: "",
        reason: `the file is ${foreign}, not UTF-8; convert it first, e.g. iconv -f ${foreign.split(" ")[0]} -t UTF-8`,
      }),
    )
  return Result.succeed(new TextDecoder("utf-8").decode(bytes))
}

/** Where the top-level values of an export sit in its bytes: each key's value, and each element of `messages`. */
interface Layout {
  readonly values: ReadonlyMap<string, readonly [number, number]>
  readonly messages: ReadonlyArray<readonly [number, number]>
  /** Just after the object's closing brace. */
  readonly end: number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09

/**
 * Finds the top-level keys of the JSON object starting at `start` and the element spans of its `messages` array, by
 * one pass over the bytes (strings and nesting tracked, nothing parsed). `undefined` when the bytes are not shaped
 * like that (then the whole-text parser reports exactly what is wrong).
 */
const layout = (bytes: Uint8Array, start: number): Layout | undefined => {
  const n = bytes.length
  let i = start
  const skipSpace = () => {
    while (i < n && isSpace(bytes[i]!)) i++
  }
  // The closing quote is the next quote not escaped, i.e. after an even run of backslashes; found with the native
  // indexOf, as strings are most of an export's bytes.
  const skipString = (): boolean => {
    let from = i + 1
    for (;;) {
      const quote = bytes.indexOf(QUOTE, from)
      if (quote < 0) {
        i = n
        return false
      }
      let backslashes = 0
      while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++
      if (backslashes % 2 === 0) {
        i = quote + 1
        return true
      }
      from = quote + 1
    }
  }
  // Skips one JSON value; answers false when it runs off the end or meets a stray closing bracket.
  const skipValue = (): boolean => {
    skipSpace()
    if (bytes[i] === QUOTE) return skipString()
    let depth = 0
    while (i < n) {
      const b = bytes[i]!
      if (b === QUOTE) {
        if (!skipString()) return false
        continue
      }
      if (b === 0x7b || b === 0x5b) depth++
      else if (b === 0x7d || b === 0x5d) {
        if (depth === 0) return true
        depth--
        if (depth === 0) {
          i++
          return true
        }
      } else if (depth === 0 && (b === 0x2c || isSpace(b))) return true
      i++
    }
    return depth === 0
  }
  const values = new Map<string, readonly [number, number]>()
  const messages: Array<readonly [number, number]> = []
  if (bytes[i] !== 0x7b) return undefined
  i++
  for (;;) {
    skipSpace()
    if (bytes[i] === 0x7d) return { values, messages, end: i + 1 }
    if (bytes[i] !== QUOTE) return undefined
    const keyStart = i
    if (!skipString()) return undefined
    const key = new TextDecoder().decode(bytes.subarray(keyStart + 1, i - 1))
    skipSpace()
    if (bytes[i] !== 0x3a) return undefined
    i++
    skipSpace()
    const valueStart = i
    if (key === "messages" && bytes[i] === 0x5b) {
      i++
      for (;;) {
        skipSpace()
        if (bytes[i] === 0x5d) {
          i++
          break
        }
        const elementStart = i
        if (!skipValue()) return undefined
        messages.push([elementStart, i])
        skipSpace()
        if (bytes[i] === 0x2c) i++
        else if (bytes[i] !== 0x5d) return undefined
      }
    } else if (!skipValue()) return undefined
    values.set(key, [valueStart, i])
    skipSpace()
    if (bytes[i] === 0x2c) i++
    else if (bytes[i] !== 0x7d) return undefined
  }
}

const decodeMessage = Schema.decodeUnknownResult(MessageWithParts)
const decodeInfo = Schema.decodeUnknownResult(SessionInfo)

/**
 * The first bad field of one part of an export (its `info`, or one message), judged as if the whole export had been
 * decoded: the part is placed at `prefix` in a sparse copy of the export, so paths and messages are the same.
 */
const partError = (prefix: readonly [string] | readonly [string, number], input: unknown, issue: SchemaIssue.Issue) => {
  const root: Record<string, unknown> = {}
  if (prefix.length === 1) root[prefix[0]] = input
  else {
    const list: Array<unknown> = []
    list[prefix[1]] = input
    root[prefix[0]] = list
  }
  return toImportError(root, new SchemaIssue.Pointer(prefix, issue))
}

/**
 * Decodes an export straight from its bytes, one message at a time: each message is parsed and decoded on its own,
 * so the whole text and the whole parsed tree never sit in memory next to the decoded export (a 20,000-message export
 * is ~40 MB of JSON). The same answer as `decodeBytes` + `parseExportText` + `decode`, and the same errors (a JSON
 * syntax error falls back to the whole-text parser for its line and column). `onMessage` counts progress.
 */
export const decodeExportBytes = (
  bytes: Uint8Array,
  onMessage: (decoded: number, total: number) => void = () => {},
): Result.Result<Export, ImportError> => {
  const slowPath = () => {
    const text = decodeBytes(bytes)
    if (Result.isFailure(text)) return Result.fail(text.failure)
    const parsed = parseExportText(text.success)
    return Result.isFailure(parsed) ? Result.fail(parsed.failure) : decode(parsed.success)
  }
  if (foreignEncoding(bytes) !== undefined) return slowPath()
  // The JSON starts at the first line whose first non-blank character is `{` (as `parseExportText` reads it).
  let start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  for (;;) {
    let j = start
    while (j < bytes.length && (bytes[j] === 0x20 || bytes[j] === 0x09)) j++
    if (bytes[j] === 0x7b) {
      start = j
      break
    }
    const newline = bytes.indexOf(0x0a, j)
    if (newline < 0) return slowPath()
    start = newline + 1
  }
  const found = layout(bytes, start)
  const infoSpan = found?.values.get("info")
  const messagesSpan = found?.values.get("messages")
  if (found === undefined || infoSpan === undefined || messagesSpan === undefined) return slowPath()
  // Anything but blanks after the object, or `messages` not an array: the whole-text path says what is wrong.
  if (bytes[messagesSpan[0]] !== 0x5b) return slowPath()
  for (let k = found.end; k < bytes.length; k++) if (!isSpace(bytes[k]!)) return slowPath()
  const utf8 = new TextDecoder("utf-8")
  const parse = (span: readonly [number, number]): Result.Result<unknown, undefined> => {
    try {
      return Result.succeed(JSON.parse(utf8.decode(bytes.subarray(span[0], span[1]))))
    } catch {
      return Result.fail(undefined)
    }
  }
  const infoJson = parse(infoSpan)
  if (Result.isFailure(infoJson)) return slowPath()
  const info = decodeInfo(infoJson.success)
  if (Result.isFailure(info)) return Result.fail(partError(["info"], infoJson.success, info.failure.issue))
  const messages: Array<MessageWithParts> = []
  for (const [index, span] of found.messages.entries()) {
    const json = parse(span)
    if (Result.isFailure(json)) return slowPath()
    // The hand-written decoder first (the schema's value, proven by a property test); the schema when it is unsure.
    const fast = FastMessage.decodeMessage(json.success) as MessageWithParts | undefined
    if (fast !== undefined) messages.push(fast)
    else {
      const message = decodeMessage(json.success)
      if (Result.isFailure(message))
        return Result.fail(partError(["messages", index], json.success, message.failure.issue))
      messages.push(message.success)
    }
    onMessage(index + 1, found.messages.length)
  }
  return Result.succeed({ info: info.success, messages })
}
