/**
 * The conversation's data: user and assistant messages and their typed parts, shaped after OpenCode's (spec §2.0) so
 * an OpenCode export maps onto them one to one. These are values inside events and states, never mutated.
 */
import * as Schema from "effect/Schema"
import { MessageId, PartId } from "./Ids.ts"
import { ModelRef } from "./Model.ts"
import { TokenUsage } from "./Tokens.ts"

const Millis = Schema.Finite

/** Text the user typed, the assistant wrote, or pivot synthesised (`synthetic`). */
export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  id: PartId,
  text: Schema.String,
  synthetic: Schema.optionalKey(Schema.Boolean),
  /** Ignored text is stored but never sent to the model. */
  ignored: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
})
export type TextPart = typeof TextPart.Type

/** An attached file: an image, a PDF, a text file, a directory listing. */
export const FilePart = Schema.Struct({
  type: Schema.Literal("file"),
  id: PartId,
  mime: Schema.String,
  filename: Schema.optionalKey(Schema.String),
  url: Schema.String,
})
export type FilePart = typeof FilePart.Type

/** The compaction marker's part: it turns a user message into a pivot request. */
export const CompactionPart = Schema.Struct({
  type: Schema.Literal("compaction"),
  id: PartId,
  auto: Schema.Boolean,
  overflow: Schema.optionalKey(Schema.Boolean),
  /** First message kept verbatim after the summary; set when the compaction starts. */
  tailStartId: Schema.optionalKey(MessageId),
})
export type CompactionPart = typeof CompactionPart.Type

/** A subtask the user handed to another agent. */
export const SubtaskPart = Schema.Struct({
  type: Schema.Literal("subtask"),
  id: PartId,
  prompt: Schema.String,
  description: Schema.String,
  agent: Schema.String,
})
export type SubtaskPart = typeof SubtaskPart.Type

/** The model's reasoning text. */
export const ReasoningPart = Schema.Struct({
  type: Schema.Literal("reasoning"),
  id: PartId,
  text: Schema.String,
})
export type ReasoningPart = typeof ReasoningPart.Type

/** A step boundary inside one assistant message (OpenCode writes one per model step). */
export const StepStartPart = Schema.Struct({ type: Schema.Literal("step-start"), id: PartId })
export type StepStartPart = typeof StepStartPart.Type

/** The end of a model step, with its usage. */
export const StepFinishPart = Schema.Struct({
  type: Schema.Literal("step-finish"),
  id: PartId,
  reason: Schema.String,
  tokens: Schema.optionalKey(TokenUsage),
})
export type StepFinishPart = typeof StepFinishPart.Type

const Input = Schema.Record(Schema.String, Schema.Unknown)

/** A tool call not yet started. */
export const ToolPending = Schema.Struct({ status: Schema.Literal("pending"), input: Input })
/** A tool call in progress (left this way when a process died mid-call). */
export const ToolRunning = Schema.Struct({
  status: Schema.Literal("running"),
  input: Input,
  title: Schema.optionalKey(Schema.String),
  startedAt: Schema.optionalKey(Millis),
})
/**
 * A finished tool call and its output. `compactedAt` is set when a prune cleared the output from the model input,
 * `inputClearedAt` when a prune cleared its input (the call's arguments; `Render.clearedInput`).
 */
export const ToolCompleted = Schema.Struct({
  status: Schema.Literal("completed"),
  input: Input,
  output: Schema.String,
  title: Schema.optionalKey(Schema.String),
  metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  attachments: Schema.optionalKey(Schema.Array(FilePart)),
  startedAt: Schema.optionalKey(Millis),
  endedAt: Schema.optionalKey(Millis),
  compactedAt: Schema.optionalKey(Millis),
  inputClearedAt: Schema.optionalKey(Millis),
}).annotate({ identifier: "ToolCompleted" })
/**
 * A tool call that failed (or was interrupted: `metadata.interrupted`, with any partial `metadata.output`).
 * `inputClearedAt` is set when a prune cleared its input from the model input.
 */
export const ToolError = Schema.Struct({
  status: Schema.Literal("error"),
  input: Input,
  error: Schema.String,
  metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  startedAt: Schema.optionalKey(Millis),
  endedAt: Schema.optionalKey(Millis),
  inputClearedAt: Schema.optionalKey(Millis),
}).annotate({ identifier: "ToolError" })
/** Where a tool call stands. */
export const ToolState = Schema.Union([ToolPending, ToolRunning, ToolCompleted, ToolError]).annotate({
  identifier: "ToolState",
})
export type ToolState = typeof ToolState.Type
export type ToolCompleted = typeof ToolCompleted.Type

/** A tool call made by the assistant, with its state and result. */
export const ToolPart = Schema.Struct({
  type: Schema.Literal("tool"),
  id: PartId,
  callId: Schema.String,
  tool: Schema.String,
  state: ToolState,
  /** Executed by the provider itself (e.g. web search): no local result expected. */
  providerExecuted: Schema.optionalKey(Schema.Boolean),
})
export type ToolPart = typeof ToolPart.Type

/** Parts a user message can hold. */
export const UserPart = Schema.Union([TextPart, FilePart, CompactionPart, SubtaskPart])
export type UserPart = typeof UserPart.Type

/** Parts an assistant message can hold. */
export const AssistantPart = Schema.Union([TextPart, ReasoningPart, ToolPart, StepStartPart, StepFinishPart, FilePart])
export type AssistantPart = typeof AssistantPart.Type

/** An error stored on an assistant message (OpenCode's `NamedError`). */
export const MessageError = Schema.Struct({
  name: Schema.String,
  message: Schema.String,
  data: Schema.optionalKey(Schema.Unknown),
}).annotate({ identifier: "MessageError" })
export type MessageError = typeof MessageError.Type

/** A user message: typed text, attachments, a compaction marker, a continue or replayed turn. */
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  id: MessageId,
  createdAt: Millis,
  agent: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(ModelRef),
  system: Schema.optionalKey(Schema.String),
  parts: Schema.Array(UserPart),
}).annotate({ identifier: "UserMessage" })
export type UserMessage = typeof UserMessage.Type

/** An assistant message: one model call's output, its usage and how it finished. */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  id: MessageId,
  parentId: MessageId,
  createdAt: Millis,
  completedAt: Schema.optionalKey(Millis),
  model: ModelRef,
  agent: Schema.optionalKey(Schema.String),
  mode: Schema.optionalKey(Schema.String),
  tokens: TokenUsage,
  cost: Schema.optionalKey(Schema.Finite),
  finish: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(MessageError),
  /** A compaction summary (OpenCode's `summary: true`). */
  summary: Schema.optionalKey(Schema.Boolean),
  parts: Schema.Array(AssistantPart),
}).annotate({ identifier: "AssistantMessage" })
export type AssistantMessage = typeof AssistantMessage.Type

/** Any message. */
export const Message = Schema.Union([UserMessage, AssistantMessage])
export type Message = typeof Message.Type

/** The compaction part of a user message, if it is a marker. */
export const compactionPartOf = (message: Message): CompactionPart | undefined => {
  if (message.role !== "user") return undefined
  for (const part of message.parts) if (part.type === "compaction") return part
  return undefined
}

/** Whether a message is a compaction marker. */
export const isMarker = (message: Message): message is UserMessage => compactionPartOf(message) !== undefined

/** Whether a message is a summary that forms a pivot boundary: finished and error-free (spec §2.11). */
export const isFinishedSummary = (message: Message): message is AssistantMessage =>
  message.role === "assistant" &&
  message.summary === true &&
  message.finish !== undefined &&
  message.error === undefined

/** The summary text: text parts trimmed, empty ones dropped, joined by a blank line (spec §2.8 step 5). */
export const summaryText = (message: AssistantMessage): string | undefined => {
  const text = message.parts
    .flatMap((part) => (part.type === "text" ? [part.text.trim()] : []))
    .filter((t) => t.length > 0)
    .join("\n\n")
    .trim()
  return text.length > 0 ? text : undefined
}

/** Whether a mime type is media that compaction strips (`image/*`, `application/pdf`). */
export const isMedia = (mime: string): boolean => mime.startsWith("image/") || mime === "application/pdf"

/** The placeholder a stripped media attachment becomes: `[Attached <mime>: <name>]`. */
export const attachedPlaceholder = (file: { readonly mime: string; readonly filename?: string | undefined }): string =>
  `[Attached ${file.mime}: ${file.filename ?? "file"}]`
