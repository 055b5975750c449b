/**
 * Stored messages → model-input messages (spec §2.13). A pure function of the messages, linear in their size: each
 * stored message renders on its own, and every tool call it emits is closed by a tool result, whatever state the call
 * was left in.
 */
import type { MessageId } from "./Ids.ts"
import {
  type AssistantMessage,
  attachedPlaceholder,
  type FilePart,
  isMedia,
  type Message,
  type ToolPart,
  type UserMessage,
} from "./Message.ts"
import type { ModelRef } from "./Model.ts"
import type * as MM from "./ModelMessage.ts"
import { estimateLength } from "./Tokens.ts"

/** How to render. Without options the messages render as the session model sees them: no stripping, no truncation. */
export interface Options {
  /** Replace user media with `[Attached <mime>: <name>]` and drop every tool attachment (the summariser input). */
  readonly stripMedia?: boolean | undefined
  /** Cut completed tool outputs longer than this many characters (0 or unset: no cut). */
  readonly toolOutputMaxChars?: number | undefined
  /** The model the messages go to; assistants from another provider/model get their reasoning as plain text. */
  readonly model?: ModelRef | undefined
  /**
   * Whether the provider accepts media inside tool results (default true). When false, media attachments of tool
   * results move into a user message that follows the assistant's messages.
   */
  readonly mediaInToolResults?: boolean | undefined
  /**
   * Name each pruned output's recall id in its placeholder (`clearedText`), and each cleared input's in its own
   * (`clearedInputText`), for a model given the `context_recall` tool. Off by default: the output's placeholder is
   * then OpenCode's exact text.
   */
  readonly recallIds?: boolean | undefined
}

/** One model message and the stored message it was rendered from. */
export interface Rendered {
  readonly sourceMessageId: MessageId
  readonly message: MM.ModelMessage
}

/**
 * Makes a rendering read-only where the renderer made it: the wrapper, the model message, its content array, each
 * part, and a tool result's output (with its list of content items). A tool call's `input` and a `json` output's value
 * are the stored message's own values, as the caller gave them, and are left as they are. A rendering is kept and
 * handed out again from turn to turn (`IncrementalWindow`), so a caller must not be able to change it in place
 * (ADR 0023): frozen, a change throws in strict code instead of reaching the next turn.
 */
export const freeze = (rendered: Rendered): Rendered => {
  if (Object.isFrozen(rendered)) return rendered
  const { message } = rendered
  if (typeof message.content !== "string") {
    for (const part of message.content) {
      if (part.type === "tool-result") {
        if (part.output.type === "content") {
          for (const item of part.output.value) Object.freeze(item)
          Object.freeze(part.output.value)
        }
        Object.freeze(part.output)
      }
      Object.freeze(part)
    }
    Object.freeze(message.content)
  }
  Object.freeze(message)
  return Object.freeze(rendered)
}

/** The text a compaction marker shows the model. */
export const MARKER_TEXT = "What did we do so far?"
/** The text a subtask part shows the model. */
export const SUBTASK_TEXT = "The following tool was executed by the user"
/** The output of a tool call whose result was pruned (OpenCode's exact text). */
export const CLEARED_TEXT = "[Old tool result content cleared]"
// With recall on, the placeholder keeps OpenCode's words and names the id before the closing bracket.
const RECALL_PREFIX = `${CLEARED_TEXT.slice(0, -1)} — recall id: `

/**
 * The placeholder of a pruned output: `CLEARED_TEXT`, or with recall on, the same words naming the id the model passes
 * to `context_recall`: `[Old tool result content cleared — recall id: prt_…]`.
 */
export const clearedText = (recallId?: string | undefined): string =>
  recallId === undefined ? CLEARED_TEXT : `${RECALL_PREFIX}${recallId}]`

/** Whether a tool output is a pruned output's placeholder (with or without a recall id). */
export const isClearedText = (text: string): boolean => text === CLEARED_TEXT || recallIdOf(text) !== undefined

/** The recall id a placeholder names, if it names one. */
export const recallIdOf = (text: string): string | undefined =>
  text.startsWith(RECALL_PREFIX) && text.endsWith("]") && text.length > RECALL_PREFIX.length + 1
    ? text.slice(RECALL_PREFIX.length, -1)
    : undefined

/** The text that stands for a cleared tool input's long values (ADR 0030). */
export const INPUT_CLEARED_TEXT = "[Old tool input cleared]"
const INPUT_RECALL_PREFIX = `${INPUT_CLEARED_TEXT.slice(0, -1)} — recall id: `
/** What a part id gets to name its input's recall document: `prt_…-input` (its output's is the part id itself). */
export const INPUT_RECALL_SUFFIX = "-input"
/**
 * The longest value (as JSON) a cleared input keeps: paths, commands and short options stay, so the call still says
 * what it did; longer values (a written file's content, an edit's strings, a patch) become the placeholder.
 */
export const INPUT_KEEP_CHARS = 200

/** The recall id of a tool call's cleared input. */
export const inputRecallId = (partId: string): string => `${partId}${INPUT_RECALL_SUFFIX}`

/** The part id an input's recall id names, if it is one. */
export const partOfInputRecallId = (id: string): string | undefined =>
  id.endsWith(INPUT_RECALL_SUFFIX) && id.length > INPUT_RECALL_SUFFIX.length
    ? id.slice(0, -INPUT_RECALL_SUFFIX.length)
    : undefined

/**
 * The placeholder of a cleared input's value: `INPUT_CLEARED_TEXT`, or with recall on, the same words naming the id
 * `context_recall` takes: `[Old tool input cleared — recall id: prt_…-input]`.
 */
export const clearedInputText = (recallId?: string | undefined): string =>
  recallId === undefined ? INPUT_CLEARED_TEXT : `${INPUT_RECALL_PREFIX}${recallId}]`

/** The recall id a cleared input's placeholder names, if it names one. */
export const inputRecallIdOf = (text: string): string | undefined =>
  text.startsWith(INPUT_RECALL_PREFIX) && text.endsWith("]") && text.length > INPUT_RECALL_PREFIX.length + 1
    ? text.slice(INPUT_RECALL_PREFIX.length, -1)
    : undefined

const keeps = (value: unknown): boolean => (JSON.stringify(value)?.length ?? 0) <= INPUT_KEEP_CHARS

/**
 * A tool call's input as the model sees it once cleared: the same keys in the same order, each value whose JSON is
 * longer than `INPUT_KEEP_CHARS` replaced by `clearedInputText(recallId)`, the others as they are.
 *
 * **Example**
 * ```ts
 * Render.clearedInput({ filePath: "a.ts", content: "x".repeat(500) }, "prt_1-input")
 * // { filePath: "a.ts", content: "[Old tool input cleared — recall id: prt_1-input]" }
 * ```
 */
export const clearedInput = (
  input: Readonly<Record<string, unknown>>,
  recallId?: string | undefined,
): Record<string, unknown> => {
  const text = clearedInputText(recallId)
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) out[key] = keeps(value) ? value : text
  return out
}

/**
 * The tokens clearing an input sheds (the estimate of its JSON less that of `clearedInput` without a recall id, as
 * `Tail.sizeOf` measures); 0 when no value is long enough to clear, so nothing would change.
 */
export const inputShed = (input: Readonly<Record<string, unknown>>): number =>
  Object.values(input).every(keeps)
    ? 0
    : Math.max(
        0,
        estimateLength(JSON.stringify(input).length) - estimateLength(JSON.stringify(clearedInput(input)).length),
      )

/** The input a tool call shows the model: its own, or `clearedInput` once a prune cleared it. */
const inputOf = (part: ToolPart, options: Options): Record<string, unknown> =>
  (part.state.status === "completed" || part.state.status === "error") && part.state.inputClearedAt !== undefined
    ? clearedInput(part.state.input, options.recallIds === true ? inputRecallId(part.id) : undefined)
    : part.state.input

/** The error result of a tool call left pending or running. */
export const INTERRUPTED_TEXT = "[Tool execution was interrupted]"
/** The first line of the user message that carries tool-result media for providers that cannot take it inline. */
export const TOOL_MEDIA_TEXT = "Attached media from tool result:"
/** The error name of an aborted assistant message; such a message is still sent when it produced content. */
export const ABORTED_ERROR = "MessageAbortedError"

/** A tool output cut to `max` characters with the truncation note (spec §2.13); unchanged when short enough. */
export const truncateOutput = (output: string, max: number | undefined): string => {
  if (!max || output.length <= max) return output
  return `${output.slice(0, max)}\n[Tool output truncated for compaction: omitted ${output.length - max} chars]`
}

/** Tool-result content as plain text: text items as they are, files as `[Attached <mime>: <name>]`, never base64. */
export const serializeToolContent = (content: ReadonlyArray<MM.ToolResultContentItem>): string =>
  content
    .map((item) =>
      item.type === "text" ? item.text : attachedPlaceholder({ mime: item.mediaType, filename: item.filename }),
    )
    .join("\n")

const textPart = (text: string): MM.TextPart => ({ type: "text", text })

const filePart = (file: FilePart): MM.FilePart =>
  file.filename === undefined
    ? { type: "file", data: file.url, mediaType: file.mime }
    : { type: "file", data: file.url, mediaType: file.mime, filename: file.filename }

// Text files and directory listings reach the model as text parts written next to them, so the file itself is skipped.
const isInlinedAsText = (mime: string) => mime === "text/plain" || mime === "application/x-directory"

const renderUser = (message: UserMessage, options: Options): Array<MM.ModelMessage> => {
  const content: Array<MM.TextPart | MM.FilePart> = []
  for (const part of message.parts) {
    switch (part.type) {
      case "text":
        if (!part.ignored && part.text !== "") content.push(textPart(part.text))
        break
      case "file":
        if (isInlinedAsText(part.mime)) break
        content.push(options.stripMedia && isMedia(part.mime) ? textPart(attachedPlaceholder(part)) : filePart(part))
        break
      case "compaction":
        content.push(textPart(MARKER_TEXT))
        break
      case "subtask":
        content.push(textPart(SUBTASK_TEXT))
        break
    }
  }
  return content.length > 0 ? [{ role: "user", content }] : []
}

// Only `data:` URLs can travel inside a tool result (as base64); other attachments are left out, as in OpenCode.
const toolResultFile = (file: FilePart): MM.ToolResultContentItem | undefined => {
  if (!file.url.startsWith("data:")) return undefined
  const comma = file.url.indexOf(",")
  if (comma === -1) return undefined
  const data: MM.FileDataData = { type: "data", data: file.url.slice(comma + 1) }
  return file.filename === undefined
    ? { type: "file", data, mediaType: file.mime }
    : { type: "file", data, mediaType: file.mime, filename: file.filename }
}

/** The model-visible output of a tool part, plus media that must travel in a separate user message. */
const toolOutput = (
  part: ToolPart,
  options: Options,
): { readonly output: MM.ToolResultOutput; readonly media: ReadonlyArray<FilePart> } => {
  const state = part.state
  switch (state.status) {
    case "completed": {
      const compacted = state.compactedAt !== undefined
      const text = compacted
        ? clearedText(options.recallIds === true ? part.id : undefined)
        : truncateOutput(state.output, options.toolOutputMaxChars)
      const attachments = compacted || options.stripMedia ? [] : (state.attachments ?? [])
      const inline = options.mediaInToolResults === false
      const media = inline ? attachments.filter((a) => isMedia(a.mime)) : []
      const kept = inline ? attachments.filter((a) => !isMedia(a.mime)) : attachments
      if (kept.length === 0) return { output: { type: "text", value: text }, media }
      const files = kept.flatMap((a) => {
        const item = toolResultFile(a)
        return item ? [item] : []
      })
      return { output: { type: "content", value: [{ type: "text", text }, ...files] }, media }
    }
    case "error": {
      // An interrupted call with partial output shows that output instead of the error.
      const partial = state.metadata?.interrupted === true ? state.metadata.output : undefined
      if (typeof partial === "string") return { output: { type: "text", value: partial }, media: [] }
      return { output: { type: "error-text", value: state.error }, media: [] }
    }
    case "pending":
    case "running":
      // Closes the dangling call: providers reject a tool call without a result.
      return { output: { type: "error-text", value: INTERRUPTED_TEXT }, media: [] }
  }
}

// An errored assistant is dropped unless it was aborted after producing something besides step starts and reasoning.
const isSkipped = (message: AssistantMessage): boolean =>
  message.error !== undefined &&
  !(
    message.error.name === ABORTED_ERROR &&
    message.parts.some((part) => part.type !== "step-start" && part.type !== "reasoning")
  )

const renderAssistant = (message: AssistantMessage, options: Options): Array<MM.ModelMessage> => {
  if (isSkipped(message)) return []
  const crossModel =
    options.model !== undefined &&
    (options.model.providerId !== message.model.providerId || options.model.modelId !== message.model.modelId)
  const out: Array<MM.ModelMessage> = []
  const media: Array<FilePart> = []
  let content: Array<MM.AssistantModelMessage["content"][number]> = []
  let results: Array<MM.ToolResultPart> = []
  // Each step becomes an assistant message followed by a tool message with that step's results.
  const flush = () => {
    if (content.length > 0) out.push({ role: "assistant", content })
    if (results.length > 0) out.push({ role: "tool", content: results })
    content = []
    results = []
  }
  for (const part of message.parts) {
    switch (part.type) {
      case "step-start":
        flush()
        break
      case "text":
        if (part.text !== "") content.push(textPart(part.text))
        break
      case "reasoning":
        // Another model cannot verify this model's reasoning blocks, so it reads them as text.
        if (!crossModel) content.push({ type: "reasoning", text: part.text })
        else if (part.text.trim() !== "") content.push(textPart(part.text))
        break
      case "tool": {
        const { output, media: moved } = toolOutput(part, options)
        media.push(...moved)
        const result: MM.ToolResultPart = { type: "tool-result", toolCallId: part.callId, toolName: part.tool, output }
        if (part.providerExecuted) {
          content.push({
            type: "tool-call",
            toolCallId: part.callId,
            toolName: part.tool,
            input: inputOf(part, options),
            providerExecuted: true,
          })
          content.push(result)
        } else {
          content.push({
            type: "tool-call",
            toolCallId: part.callId,
            toolName: part.tool,
            input: inputOf(part, options),
          })
          results.push(result)
        }
        break
      }
      // Step finishes carry usage only; assistant files are not sent back (as in OpenCode).
      case "step-finish":
      case "file":
        break
    }
  }
  flush()
  if (out.length > 0 && media.length > 0)
    out.push({ role: "user", content: [textPart(TOOL_MEDIA_TEXT), ...media.map(filePart)] })
  return out
}

/** The model messages of one stored message (possibly none). */
export const renderMessage = (message: Message, options: Options = {}): Array<MM.ModelMessage> => {
  if (message.parts.length === 0) return []
  return message.role === "user" ? renderUser(message, options) : renderAssistant(message, options)
}

/**
 * Renders stored messages, in the given order, to model messages that each remember their source message.
 *
 * **Example**
 * ```ts
 * const input = Render.render(window, { stripMedia: true, toolOutputMaxChars: 2_000 })
 * ```
 */
export const render = (messages: ReadonlyArray<Message>, options: Options = {}): ReadonlyArray<Rendered> => {
  const out: Array<Rendered> = []
  for (const message of messages)
    for (const rendered of renderMessage(message, options)) out.push({ sourceMessageId: message.id, message: rendered })
  return out
}

/** The model messages of `render`, ready for the AI SDK. */
export const toModelMessages = (messages: ReadonlyArray<Message>, options: Options = {}): Array<MM.ModelMessage> => {
  const out: Array<MM.ModelMessage> = []
  for (const message of messages) out.push(...renderMessage(message, options))
  return out
}
