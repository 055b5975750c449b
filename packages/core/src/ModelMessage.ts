/**
 * pivot's model-input messages: plain types with the same structure as the AI SDK's `ModelMessage` (ai 7,
 * `@ai-sdk/provider-utils`), so a `ModelMessage[]` built here can be handed to `generateText` / `streamText` as is.
 * core does not depend on `ai`; only the subset pivot emits is declared. Arrays are mutable on purpose: the AI SDK
 * declares `Array<…>`, and a `ReadonlyArray` would not be assignable to it. Every value is plain JSON.
 */

/** A JSON value (the AI SDK's `JSONValue`). */
export type JSONValue =
  | null
  | string
  | number
  | boolean
  | { readonly [key: string]: JSONValue | undefined }
  | ReadonlyArray<JSONValue>

/** A text content part. */
export interface TextPart {
  readonly type: "text"
  readonly text: string
}

/**
 * A file content part. `data` is the stored URL string (`data:` URL or `https:` URL), which the AI SDK parses; a
 * string keeps the message JSON-serialisable.
 */
export interface FilePart {
  readonly type: "file"
  readonly data: string
  readonly mediaType: string
  readonly filename?: string
}

/** A reasoning content part (only for the model that produced it). */
export interface ReasoningPart {
  readonly type: "reasoning"
  readonly text: string
}

/** A tool call made by the assistant. */
export interface ToolCallPart {
  readonly type: "tool-call"
  readonly toolCallId: string
  readonly toolName: string
  readonly input: unknown
  /** Set when the provider ran the tool itself; its result then sits in the same assistant message. */
  readonly providerExecuted?: boolean
}

/** Inline file data of a tool-result content item (base64 without the `data:` prefix). */
export interface FileDataData {
  readonly type: "data"
  readonly data: string
}

/** One item of a `content` tool output. */
export type ToolResultContentItem =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "file"; readonly data: FileDataData; readonly mediaType: string; readonly filename?: string }

/** The output of a tool call as the model sees it. */
export type ToolResultOutput =
  | { readonly type: "text"; readonly value: string }
  | { readonly type: "error-text"; readonly value: string }
  | { readonly type: "json"; readonly value: JSONValue }
  | { readonly type: "content"; readonly value: Array<ToolResultContentItem> }

/** The result of one tool call. */
export interface ToolResultPart {
  readonly type: "tool-result"
  readonly toolCallId: string
  readonly toolName: string
  readonly output: ToolResultOutput
}

/** A system message. */
export interface SystemModelMessage {
  readonly role: "system"
  readonly content: string
}

/** A user message: text and files. */
export interface UserModelMessage {
  readonly role: "user"
  readonly content: Array<TextPart | FilePart>
}

/** An assistant message: text, reasoning, tool calls and provider-executed tool results. */
export interface AssistantModelMessage {
  readonly role: "assistant"
  readonly content: Array<TextPart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart>
}

/** A tool message: results of the tool calls of the assistant message just before it. */
export interface ToolModelMessage {
  readonly role: "tool"
  readonly content: Array<ToolResultPart>
}

/** Any model-input message. */
export type ModelMessage = SystemModelMessage | UserModelMessage | AssistantModelMessage | ToolModelMessage
