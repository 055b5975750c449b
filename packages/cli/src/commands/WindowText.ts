/**
 * The window as text for people: one line per model message (its number, role, the stored message it came from and
 * a one-line excerpt), a rule where a pivot starts the window, and pruned tool outputs marked with what they freed.
 */
import { Message, type ModelMessage as MM, Render } from "@pivot/core"
import { excerpt, num } from "./Text.ts"

/** Tokens freed per pruned part id (from the prune index). */
export type PrunedTokens = ReadonlyMap<string, number>

const json = (value: unknown) => {
  try {
    return JSON.stringify(value) ?? ""
  } catch {
    return String(value)
  }
}

const toolCalls = (message: Message.Message) => {
  const byCall = new Map<string, Message.ToolPart>()
  if (message.role === "assistant")
    for (const part of message.parts) if (part.type === "tool") byCall.set(part.callId, part)
  return byCall
}

const resultText = (
  result: MM.ToolResultPart,
  calls: ReadonlyMap<string, Message.ToolPart>,
  pruned: PrunedTokens,
): string => {
  const output = result.output
  if (output.type === "text" && Render.isClearedText(output.value)) {
    const part = calls.get(result.toolCallId)
    const tokens = part === undefined ? undefined : pruned.get(part.id)
    const what = part === undefined ? "" : ` ${part.id}`
    return `⇠ ${result.toolName}: ✂ pruned${what}${tokens === undefined ? "" : ` (~${num(tokens)} tokens cleared)`}`
  }
  switch (output.type) {
    case "text":
      return `⇠ ${result.toolName}: ${output.value}`
    case "error-text":
      return `⇠ ${result.toolName} ✗ ${output.value}`
    case "json":
      return `⇠ ${result.toolName}: ${json(output.value)}`
    case "content":
      return `⇠ ${result.toolName}: ${output.value.map((item) => (item.type === "text" ? item.text : `[${item.mediaType}]`)).join(" ")}`
  }
}

type ContentPart = Exclude<MM.ModelMessage["content"], string>[number]

const partText = (part: ContentPart, calls: ReadonlyMap<string, Message.ToolPart>, pruned: PrunedTokens): string => {
  switch (part.type) {
    case "text":
      return part.text
    case "file":
      return `[file ${part.mediaType}${part.filename === undefined ? "" : ` ${part.filename}`}]`
    case "reasoning":
      return `(thinking) ${part.text}`
    case "tool-call":
      return `⇢ ${part.toolName} ${json(part.input)}`
    case "tool-result":
      return resultText(part, calls, pruned)
  }
}

/** A one-line summary of one model message's content. */
export const contentOf = (
  message: MM.ModelMessage,
  calls: ReadonlyMap<string, Message.ToolPart>,
  pruned: PrunedTokens,
): string => {
  if (typeof message.content === "string") return message.content
  return message.content.map((part) => partText(part, calls, pruned)).join(" · ")
}

/** The window's lines: a header, then one line per model message, with pivot rules and prune marks. */
export const format = (
  messages: ReadonlyArray<Message.Message>,
  header: string,
  options: {
    readonly width: number
    readonly pruned: PrunedTokens
    /** The ids of the events each message came from (the audit view), to print under it. */
    readonly sources?: ReadonlyMap<string, ReadonlyArray<string>> | undefined
    /** Print only the model messages numbered `first` to `last` (and the rules and sources among them). */
    readonly range?: { readonly first: number; readonly last: number } | undefined
  },
): Array<string> => {
  const lines = [header]
  const first = options.range?.first ?? 1
  const last = options.range?.last ?? Number.POSITIVE_INFINITY
  let n = 0
  for (const message of messages) {
    const count = Render.renderMessage(message).length
    // Messages wholly outside the range are skipped without formatting (a window can hold thousands).
    if (n + count < first || n >= last) {
      n += count
      continue
    }
    const calls = toolCalls(message)
    if (Message.isMarker(message))
      lines.push(
        `──── pivot ${"─".repeat(20)} compaction ${message.id}: the summary below stands for everything before it`,
      )
    for (const model of Render.renderMessage(message)) {
      n++
      if (n < first || n > last) continue
      const role =
        message.role === "assistant" && message.summary === true && model.role === "assistant" ? "summary" : model.role
      const prefix = `${String(n).padStart(4)}  ${role.padEnd(9)}  ${message.id}  `
      lines.push(prefix + excerpt(contentOf(model, calls, options.pruned), Math.max(20, options.width - prefix.length)))
    }
    const sources = options.sources?.get(message.id)
    if (sources !== undefined) lines.push(`${" ".repeat(17)}↳ from ${sources.join(", ")}`)
  }
  if (n === 0) lines.push("  (the window is empty)")
  return lines
}
