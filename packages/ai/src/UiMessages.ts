/**
 * pivot's messages as the AI SDK's UI messages (what `useChat` displays), and the user input of a call made without
 * `run`. pivot owns the history: a chat route records only the newest user message of each request and restores the
 * display from the store, so what the browser sends back is never trusted as the history.
 */
import type { Message } from "@pivot/core"
import type { DynamicToolUIPart, ModelMessage, UIMessage } from "ai"

type UiPart = UIMessage["parts"][number]

/** The text of the newest user message in a call's messages (text parts joined), or `undefined` if there is none. */
export const newestUserInput = (messages: ReadonlyArray<ModelMessage>): string | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== "user") continue
    if (typeof message.content === "string") return message.content
    return message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
  }
  return undefined
}

const toolPart = (part: Message.ToolPart): DynamicToolUIPart => {
  const common = {
    type: "dynamic-tool" as const,
    toolName: part.tool,
    toolCallId: part.callId,
    ...(part.providerExecuted === true ? { providerExecuted: true } : {}),
  }
  const state = part.state
  switch (state.status) {
    case "pending":
    case "running":
      return { ...common, state: "input-available", input: state.input }
    case "completed":
      // The display keeps the original: a prune clears outputs from the model input only.
      return { ...common, state: "output-available", input: state.input, output: state.output }
    case "error":
      return { ...common, state: "output-error", input: state.input, errorText: state.error }
  }
}

const uiParts = (message: Message.Message): Array<UiPart> => {
  const parts: Array<UiPart> = []
  for (const part of message.parts) {
    switch (part.type) {
      case "text":
        if (part.synthetic !== true && part.ignored !== true) parts.push({ type: "text", text: part.text })
        break
      case "reasoning":
        parts.push({ type: "reasoning", text: part.text })
        break
      case "file":
        parts.push({
          type: "file",
          mediaType: part.mime,
          url: part.url,
          ...(part.filename === undefined ? {} : { filename: part.filename }),
        })
        break
      case "tool":
        parts.push(toolPart(part))
        break
      case "step-start":
        parts.push({ type: "step-start" })
        break
    }
  }
  return parts
}

const isMarker = (message: Message.Message): boolean =>
  message.role === "user" && message.parts.some((part) => part.type === "compaction")

/**
 * The conversation as the user saw it, for a chat UI: user and assistant messages with their text, reasoning, files
 * and tool calls (as `dynamic-tool` parts, outputs in full even when pruned); the steps of one response form one
 * message, as `useChat` shows them. Compaction markers, summaries and pivot's synthetic messages are left out: they
 * are the model's bookkeeping, not the chat.
 */
export const toUIMessages = (messages: ReadonlyArray<Message.Message>): Array<UIMessage> => {
  const shown: Array<UIMessage> = []
  for (const message of messages) {
    if (isMarker(message) || (message.role === "assistant" && message.summary === true)) continue
    const parts = uiParts(message)
    if (parts.length === 0 || parts.every((part) => part.type === "step-start")) continue
    const previous = shown.at(-1)
    // pivot stores each step as a message; useChat shows a response's steps as one message, split by step-start.
    if (message.role === "assistant" && previous?.role === "assistant") previous.parts.push(...parts)
    else shown.push({ id: message.id, role: message.role, parts })
  }
  return shown
}
