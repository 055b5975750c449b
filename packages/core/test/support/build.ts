/**
 * A tiny builder of stored messages with readable ids for rendering, tail and summariser-input tests:
 * `user("u1", "hello")` is `msg_u1` with part `prt_u1_0`; tool calls get `call_<message>_<index>`.
 */
import * as Ids from "../../src/Ids.ts"
import type {
  AssistantMessage,
  AssistantPart,
  CompactionPart,
  FilePart,
  ReasoningPart,
  StepFinishPart,
  StepStartPart,
  SubtaskPart,
  TextPart,
  ToolPart,
  ToolState,
  UserMessage,
  UserPart,
} from "../../src/Message.ts"
import type { ModelRef } from "../../src/Model.ts"
import * as Tokens from "../../src/Tokens.ts"

/** The model every built assistant claims unless told otherwise. */
export const MODEL: ModelRef = { providerId: "anthropic", modelId: "claude-test" }
/** A different model, for cross-model rendering. */
export const OTHER_MODEL: ModelRef = { providerId: "openai", modelId: "gpt-test" }

/** `u1` → `msg_u1` (ids already prefixed pass through). */
export const id = (name: string): Ids.MessageId => Ids.unsafe.message(name.startsWith("msg_") ? name : `msg_${name}`)

const suffix = (messageId: Ids.MessageId) => messageId.slice(4)

/** A part without its id; the message builder assigns `prt_<message>_<index>` unless one is given. */
export type Draft<P> = P extends unknown ? Omit<P, "id"> & { readonly id?: Ids.PartId } : never

/** A text part; `ignored`, `synthetic` and `metadata` as given. */
export const text = (value: string, extra: Partial<Omit<TextPart, "type" | "id" | "text">> = {}): Draft<TextPart> => ({
  type: "text",
  text: value,
  ...extra,
})

/** A file part. */
export const file = (mime: string, filename: string | undefined, url: string): Draft<FilePart> =>
  filename === undefined ? { type: "file", mime, url } : { type: "file", mime, filename, url }

/** A compaction part. */
export const compaction = (
  options: { readonly auto?: boolean; readonly overflow?: boolean; readonly tailStartId?: string } = {},
): Draft<CompactionPart> => ({
  type: "compaction",
  auto: options.auto ?? false,
  ...(options.overflow !== undefined ? { overflow: options.overflow } : {}),
  ...(options.tailStartId !== undefined ? { tailStartId: id(options.tailStartId) } : {}),
})

/** A subtask part. */
export const subtask = (prompt: string): Draft<SubtaskPart> => ({
  type: "subtask",
  prompt,
  description: "a subtask",
  agent: "general",
})

/** A reasoning part. */
export const reasoning = (value: string): Draft<ReasoningPart> => ({ type: "reasoning", text: value })
/** A step start. */
export const stepStart = (): Draft<StepStartPart> => ({ type: "step-start" })
/** A step finish. */
export const stepFinish = (reason = "stop"): Draft<StepFinishPart> => ({ type: "step-finish", reason })

/** A tool part without its call id, which defaults to `call_<message>_<index>`. */
export type ToolDraft = Omit<Draft<ToolPart>, "callId"> & { readonly callId?: string }

/** A tool part. */
export const tool = (
  name: string,
  state: ToolState,
  options: { readonly callId?: string; readonly providerExecuted?: boolean } = {},
): ToolDraft => ({
  type: "tool",
  tool: name,
  state,
  ...(options.callId !== undefined ? { callId: options.callId } : {}),
  ...(options.providerExecuted !== undefined ? { providerExecuted: options.providerExecuted } : {}),
})

/** A completed tool state. */
export const completed = (
  output: string,
  extra: Partial<Omit<Extract<ToolState, { status: "completed" }>, "status" | "output">> = {},
): ToolState => ({ status: "completed", input: {}, output, ...extra })

/** An errored tool state. */
export const errored = (error: string, metadata?: Record<string, unknown>): ToolState =>
  metadata === undefined ? { status: "error", input: {}, error } : { status: "error", input: {}, error, metadata }

/** A pending tool state. */
export const pending = (input: Record<string, unknown> = {}): ToolState => ({ status: "pending", input })
/** A running tool state. */
export const running = (input: Record<string, unknown> = {}): ToolState => ({ status: "running", input })

// Fills in part ids and tool call ids from the message id and the part's index; strings become text parts.
const assignIds = (messageId: Ids.MessageId, drafts: ReadonlyArray<string | { readonly type: string }>) =>
  drafts.map((draft, index) => {
    const part: Record<string, unknown> = typeof draft === "string" ? { type: "text", text: draft } : { ...draft }
    part.id ??= Ids.unsafe.part(`prt_${suffix(messageId)}_${index}`)
    if (part.type === "tool") part.callId ??= `call_${suffix(messageId)}_${index}`
    return part
  })

/** A user message; strings become text parts. */
export const user = (name: string, ...parts: ReadonlyArray<string | Draft<UserPart>>): UserMessage => {
  const messageId = id(name)
  return { role: "user", id: messageId, createdAt: 0, parts: assignIds(messageId, parts) as unknown as Array<UserPart> }
}

/** A compaction marker: a user message with one compaction part. */
export const marker = (name: string, options: Parameters<typeof compaction>[0] = {}): UserMessage =>
  user(name, compaction(options))

/** Assistant fields to override; `undefined` removes a field (e.g. `{ finish: undefined }` for an unfinished one). */
export type AssistantExtra = {
  readonly [K in Exclude<keyof AssistantMessage, "role" | "id" | "parentId" | "parts">]?:
    | AssistantMessage[K]
    | undefined
}

/** An assistant message answering `parent`, finished with `stop` unless `extra` says otherwise. */
export const assistant = (
  name: string,
  parent: string,
  parts: string | ReadonlyArray<string | Draft<AssistantPart> | ToolDraft>,
  extra: AssistantExtra = {},
): AssistantMessage => {
  const messageId = id(name)
  const message: Record<string, unknown> = {
    role: "assistant",
    id: messageId,
    parentId: id(parent),
    createdAt: 0,
    model: MODEL,
    tokens: Tokens.zero,
    finish: "stop",
    parts: assignIds(messageId, typeof parts === "string" ? [parts] : parts),
    ...extra,
  }
  for (const key of Object.keys(message)) if (message[key] === undefined) delete message[key]
  return message as unknown as AssistantMessage
}

/** A finished summary answering marker `markerName`. */
export const summary = (
  name: string,
  markerName: string,
  value: string | ReadonlyArray<string>,
  extra: AssistantExtra = {},
): AssistantMessage => assistant(name, markerName, value, { summary: true, mode: "compaction", ...extra })
