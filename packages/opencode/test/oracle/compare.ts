/**
 * The oracle's comparison: what OpenCode actually sent the model (chat-completions messages, captured by the
 * scripted model) against pivot's window of the imported export at each version. Both sides are brought to one
 * neutral form — role, text, tool calls with parsed arguments, tool results as the text the provider receives —
 * and compared exactly; the system prompt and the tool definitions are left aside.
 */
import { isDeepStrictEqual } from "node:util"
import {
  type Config,
  type Model,
  type ModelMessage,
  Render,
  Session,
  SummaryInput,
  ValidWindow,
  Window,
} from "@pivot/core"
import { Result } from "effect"
import { importText } from "../../src/Import.ts"
import type { ChatMessage } from "./model-server.ts"

/** One model-input message in the neutral form. */
export type Neutral =
  | { readonly role: "user"; readonly texts: ReadonlyArray<string> }
  | {
      readonly role: "assistant"
      readonly text: string
      readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: unknown }>
    }
  | { readonly role: "tool"; readonly id: string; readonly output: string }

const parseArgs = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** A user's media part in the neutral form (the wire encodings of the two sides differ; that one is there counts). */
export const MEDIA = "[media]"

/**
 * The text OpenCode puts where its model has no input modality for a medium; `fromChat` can read it back as the
 * media part pivot sends (deviation 18).
 */
export const UNSUPPORTED_MEDIA =
  /^ERROR: Cannot read (?:"[^"]*"|\w+) \(this model does not support \w+ input\)\. Inform the user\.$/

/** OpenCode's request messages (chat-completions), system messages dropped. */
export const fromChat = (
  messages: ReadonlyArray<ChatMessage>,
  options: { readonly unsupportedAsMedia?: boolean } = {},
): Array<Neutral> => {
  const asMedia = (text: string) => (options.unsupportedAsMedia === true && UNSUPPORTED_MEDIA.test(text) ? MEDIA : text)
  const out: Array<Neutral> = []
  for (const m of messages) {
    if (m.role === "system") continue
    if (m.role === "tool") {
      out.push({ role: "tool", id: m.tool_call_id ?? "", output: typeof m.content === "string" ? m.content : "" })
      continue
    }
    const parts = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? [])
    const texts = parts.filter((p) => p.type === "text").map((p) => p.text ?? "")
    // A user's media part (image_url, file, input_audio) counts as a part, whatever its encoding.
    if (m.role === "user")
      out.push({ role: "user", texts: parts.map((p) => (p.type === "text" ? asMedia(p.text ?? "") : MEDIA)) })
    else
      out.push({
        role: "assistant",
        text: texts.join(""),
        calls: (m.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.function.name,
          args: parseArgs(c.function.arguments),
        })),
      })
  }
  return out
}

/** A tool output as the OpenAI-compatible provider sends it: text as is, JSON encoded. */
const outputText = (output: ModelMessage.ToolResultOutput): string =>
  output.type === "text" || output.type === "error-text" ? output.value : JSON.stringify(output.value)

/** pivot's rendered window (AI SDK model messages), system messages dropped, tool results one per message. */
export const fromModel = (messages: ReadonlyArray<ModelMessage.ModelMessage>): Array<Neutral> => {
  const out: Array<Neutral> = []
  for (const m of messages) {
    if (m.role === "system") continue
    if (m.role === "tool") {
      for (const r of m.content) out.push({ role: "tool", id: r.toolCallId, output: outputText(r.output) })
      continue
    }
    if (m.role === "user") {
      out.push({ role: "user", texts: m.content.map((p) => (p.type === "text" ? p.text : MEDIA)) })
      continue
    }
    out.push({
      role: "assistant",
      text: m.content
        .filter((p) => p.type === "text")
        .map((p) => p.text)
        .join(""),
      calls: m.content
        .filter((p) => p.type === "tool-call")
        .map((p) => ({ id: p.toolCallId, name: p.toolName, args: p.input })),
    })
  }
  return out
}

/** pivot's window after each event of the imported export: `windows[v]` is the window right after event v. */
export const windowsOf = (
  exportText: string,
  options?: Render.Options,
): { readonly sessionId: string; readonly windows: Array<Array<Neutral>> } => {
  const imported = importText(exportText)
  if (Result.isFailure(imported)) throw new Error(`pivot refused the export: ${imported.failure.message}`)
  const { events, sessionId } = imported.success
  const windows: Array<Array<Neutral>> = [[]]
  let state = Session.initialState
  for (const event of events) {
    state = Session.evolve(state, event)
    windows.push(fromModel(ValidWindow.render(Window.messages(state.window), options).map((r) => r.message)))
  }
  return { sessionId, windows }
}

/** Where one request matched: the first version at or after the previous match whose window equals it. */
export interface Match {
  readonly request: number
  readonly version: number | undefined
  /** When unmatched: the first message that differs from the closest window (the longest common prefix). */
  readonly difference?: {
    readonly version: number
    readonly index: number
    readonly opencode: Neutral | undefined
    readonly pivot: Neutral | undefined
  }
}

const commonPrefix = (a: ReadonlyArray<Neutral>, b: ReadonlyArray<Neutral>): number => {
  let i = 0
  while (i < a.length && i < b.length && isDeepStrictEqual(a[i], b[i])) i++
  return i
}

/**
 * Matches each request, in order, to a version of pivot's window: versions never go back (a later request cannot
 * equal an earlier window), and a request that equals no window reports its closest one.
 */
export const matchRequests = (
  requests: ReadonlyArray<{ readonly index: number; readonly messages: ReadonlyArray<Neutral> }>,
  windows: ReadonlyArray<ReadonlyArray<Neutral>>,
): Array<Match> => {
  let from = 0
  return requests.map(({ index, messages }) => {
    for (let v = from; v < windows.length; v++)
      if (isDeepStrictEqual(windows[v], messages)) {
        from = v
        return { request: index, version: v }
      }
    let best = { version: 0, index: -1 }
    for (let v = 0; v < windows.length; v++) {
      const common = commonPrefix(windows[v]!, messages)
      if (common > best.index) best = { version: v, index: common }
    }
    return {
      request: index,
      version: undefined,
      difference: {
        version: best.version,
        index: best.index,
        opencode: messages[best.index],
        pivot: windows[best.version]![best.index],
      },
    }
  })
}

/** One entry of the history OpenCode serialises for its summariser (`[User]: …`, `[Tool result]: …`). */
export interface Entry {
  readonly kind: "user" | "assistant" | "call" | "result"
  readonly text: string
}

const ENTRY_HEADS: ReadonlyArray<readonly [string, Entry["kind"]]> = [
  ["[User]: ", "user"],
  ["[Assistant]: ", "assistant"],
  ["[Assistant tool call]: ", "call"],
  ["[Tool result]: ", "result"],
]

/**
 * Reads OpenCode 1.18's summariser input (one user message): the `<conversation>` entries in order and the
 * `<prior-summary>` text, if any. Entries are separated by the line that starts the next one.
 */
export const parseSummariserInput = (
  text: string,
): { readonly entries: ReadonlyArray<Entry>; readonly priorSummary: string | undefined } => {
  const open = text.indexOf("<conversation>\n")
  const close = text.lastIndexOf("\n</conversation>")
  if (open < 0 || close < open) throw new Error("no <conversation> in the summariser input")
  const entries: Array<{ kind: Entry["kind"]; lines: Array<string> }> = []
  for (const line of text.slice(open + "<conversation>\n".length, close).split("\n")) {
    const head = ENTRY_HEADS.find(([prefix]) => line.startsWith(prefix))
    if (head !== undefined) entries.push({ kind: head[1], lines: [line.slice(head[0].length)] })
    else if (entries.length > 0) entries[entries.length - 1]!.lines.push(line)
  }
  const prior = /<prior-summary>\n([\s\S]*?)\n<\/prior-summary>/.exec(text.slice(close))
  return {
    entries: entries.map((e) => ({ kind: e.kind, text: e.lines.join("\n").replace(/\n+$/, "") })),
    priorSummary: prior?.[1],
  }
}

/** pivot's summarised head in the same entry form (tool results whole: OpenCode's are cut and end in `[truncated]`). */
export const headEntries = (head: ReadonlyArray<Neutral>): Array<Entry> =>
  head.flatMap((m): Array<Entry> => {
    // OpenCode joins a user message's text parts into one entry, one line each.
    if (m.role === "user") return [{ kind: "user", text: m.texts.join("\n") }]
    if (m.role === "tool") return [{ kind: "result", text: m.output }]
    return [
      ...(m.text === "" ? [] : [{ kind: "assistant" as const, text: m.text }]),
      ...m.calls.map((c) => ({ kind: "call" as const, text: `${c.name}(${JSON.stringify(c.args)})` })),
    ]
  })

/** A result entry OpenCode cut: its kept beginning, when it was cut. */
export const TRUNCATED = "\n[truncated]"

/**
 * Whether OpenCode's serialised entries say the same as pivot's head: same kinds in the same order, equal texts, and
 * each tool result either equal or, when OpenCode cut it, starting with what OpenCode kept.
 */
export const sameEntries = (opencode: ReadonlyArray<Entry>, pivot: ReadonlyArray<Entry>): number | undefined => {
  const n = Math.max(opencode.length, pivot.length)
  for (let i = 0; i < n; i++) {
    const a = opencode[i]
    const b = pivot[i]
    if (a === undefined || b === undefined || a.kind !== b.kind) return i
    if (a.text === b.text) continue
    if (a.kind === "result" && a.text.endsWith(TRUNCATED) && b.text.startsWith(a.text.slice(0, -TRUNCATED.length)))
      continue
    return i
  }
  return undefined
}

/** One compaction of the imported session, seen from pivot. */
export interface Compaction {
  readonly markerId: string
  /** The version of its `CompactionStarted`. */
  readonly version: number
  /** The summarised head, rendered (whole tool outputs). */
  readonly head: ReadonlyArray<Neutral>
  readonly previousSummary: string | undefined
  /** The kept tail as OpenCode chose it (the import reads it from the marker's `tail_start_id`). */
  readonly openCodeTail: ReadonlyArray<string>
  /** The tail pivot's own rules choose over the same window (`SummaryInput.plan`). */
  readonly pivotTail: ReadonlyArray<string> | undefined
}

/** Every compaction of the export, in order, with pivot's own plan for it under OpenCode's config and limits. */
export const compactionsOf = (
  exportText: string,
  config: Config.CompactionConfig,
  limits: Model.ModelLimits,
): Array<Compaction> => {
  const imported = importText(exportText)
  if (Result.isFailure(imported)) throw new Error(`pivot refused the export: ${imported.failure.message}`)
  const out: Array<Compaction> = []
  let state = Session.initialState
  for (const [i, event] of imported.success.events.entries()) {
    if (event._tag === "CompactionStarted") {
      const window = Window.messages(state.window)
      const byId = new Map(window.map((m) => [m.id as string, m]))
      const head = event.plan.head.flatMap((id) => {
        const m = byId.get(id)
        return m === undefined ? [] : [m]
      })
      const own = SummaryInput.plan(window, {
        parentId: event.markerId,
        overflow: event.plan.replayOf !== undefined,
        config,
        compactionLimits: limits,
      })
      out.push({
        markerId: event.markerId,
        version: i + 1,
        head: fromModel(Render.toModelMessages(head, { stripMedia: true })),
        previousSummary: event.plan.previousSummary,
        openCodeTail: event.plan.tail,
        pivotTail: Result.isSuccess(own) ? own.success.tail : undefined,
      })
    }
    state = Session.evolve(state, event)
  }
  return out
}
