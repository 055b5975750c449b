/**
 * A pivot message in OpenCode's shape (`{ info, parts }`, as `opencode export` and the plugin hooks carry it): the
 * inverse of the importer's message mapping (`Import`), so that importing what this builds gives the message back.
 * The OpenCode plugin's drive mode uses it to put a message pivot's window shows, and OpenCode did not pass, into the
 * request (a pinned message from before OpenCode's compaction).
 *
 * What OpenCode stores and pivot does not (a part's own timings, an assistant message's `path`, a user message's
 * `summary` diffs) is not made up: OpenCode's model-input conversion does not read it.
 */
import type { Message } from "@pivot/core"

const opt = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** An exported message with its parts: the plugin hooks' `MessageWithParts`, with the fields this module writes. */
export interface OpenCodeMessage {
  readonly info: { readonly id: string; readonly role: string; readonly [key: string]: unknown }
  readonly parts: ReadonlyArray<{ readonly type: string; readonly [key: string]: unknown }>
}

const filePart = (part: Message.FilePart) => ({
  type: "file",
  id: part.id as string,
  mime: part.mime,
  ...opt("filename", part.filename),
  url: part.url,
})

const toolTime = (state: {
  readonly startedAt?: number
  readonly endedAt?: number
  readonly compactedAt?: number
}) => ({
  // OpenCode reads `time.compacted` of a completed call, so a completed call always has a `time`.
  start: state.startedAt ?? 0,
  ...opt("end", state.endedAt),
  ...opt("compacted", state.compactedAt),
})

const toolState = (state: Message.ToolState): Record<string, unknown> => {
  switch (state.status) {
    case "pending":
      return { status: "pending", input: state.input }
    case "running":
      return {
        status: "running",
        input: state.input,
        ...opt("title", state.title),
        ...(state.startedAt === undefined ? {} : { time: { start: state.startedAt } }),
      }
    case "completed":
      return {
        status: "completed",
        input: state.input,
        output: state.output,
        title: state.title ?? "",
        metadata: state.metadata ?? {},
        ...opt("attachments", state.attachments?.map(filePart)),
        time: toolTime(state),
      }
    case "error":
      return {
        status: "error",
        input: state.input,
        error: state.error,
        ...opt("metadata", state.metadata),
        time: toolTime(state),
      }
  }
}

const part = (p: Message.UserPart | Message.AssistantPart): Record<string, unknown> & { readonly type: string } => {
  switch (p.type) {
    case "text":
      return {
        type: "text",
        id: p.id,
        text: p.text,
        ...opt("synthetic", p.synthetic),
        ...opt("ignored", p.ignored),
        ...opt("metadata", p.metadata),
      }
    case "file":
      return filePart(p)
    case "compaction":
      return {
        type: "compaction",
        id: p.id,
        auto: p.auto,
        ...opt("overflow", p.overflow),
        ...opt("tail_start_id", p.tailStartId),
      }
    case "subtask":
      return { type: "subtask", id: p.id, prompt: p.prompt, description: p.description, agent: p.agent }
    case "reasoning":
      return { type: "reasoning", id: p.id, text: p.text }
    case "step-start":
      return { type: "step-start", id: p.id }
    case "step-finish":
      return {
        type: "step-finish",
        id: p.id,
        reason: p.reason,
        ...opt("tokens", p.tokens === undefined ? undefined : tokens(p.tokens)),
      }
    case "tool":
      return {
        type: "tool",
        id: p.id,
        callID: p.callId,
        tool: p.tool,
        state: toolState(p.state),
        ...(p.providerExecuted === true ? { metadata: { providerExecuted: true } } : {}),
      }
  }
}

const tokens = (usage: Message.AssistantMessage["tokens"]) => ({
  ...opt("total", usage.total),
  input: usage.input,
  output: usage.output,
  reasoning: usage.reasoning,
  cache: { read: usage.cacheRead, write: usage.cacheWrite },
})

const modelOf = (ref: { readonly providerId: string; readonly modelId: string; readonly variant?: string }) => ({
  providerID: ref.providerId,
  modelID: ref.modelId,
  ...opt("variant", ref.variant),
})

/** `message` of session `sessionId` as OpenCode stores it (info and parts carry the session and message ids). */
export const message = (message: Message.Message, sessionId: string): OpenCodeMessage => {
  const ids = { sessionID: sessionId, messageID: message.id as string }
  const parts = (message.parts as ReadonlyArray<Message.UserPart | Message.AssistantPart>).map((p) => ({
    ...part(p),
    ...ids,
  }))
  if (message.role === "user")
    return {
      info: {
        id: message.id,
        sessionID: sessionId,
        role: "user",
        time: { created: message.createdAt },
        ...opt("agent", message.agent),
        ...opt("model", message.model === undefined ? undefined : modelOf(message.model)),
        ...opt("system", message.system),
      },
      parts,
    }
  return {
    info: {
      id: message.id,
      sessionID: sessionId,
      role: "assistant",
      parentID: message.parentId,
      time: { created: message.createdAt, ...opt("completed", message.completedAt) },
      ...modelOf(message.model),
      ...opt("mode", message.mode),
      ...opt("agent", message.agent),
      ...opt("cost", message.cost),
      tokens: tokens(message.tokens),
      ...opt("finish", message.finish),
      ...opt("error", message.error === undefined ? undefined : namedError(message.error)),
      ...opt("summary", message.summary),
    },
    parts,
  }
}

/** pivot's `MessageError` as OpenCode's `NamedError` (`data.message` carries the text, as the importer reads it). */
const namedError = (error: Message.MessageError) => ({
  name: error.name,
  ...(error.data !== undefined
    ? { data: error.data }
    : error.message === error.name
      ? {}
      : { data: { message: error.message } }),
})
