/**
 * Provider errors sorted into the two kinds pivot acts on (spec §2.5): a context overflow, which asks for a compaction
 * and is never retried, and any other API error, which keeps its status and whether a retry can help.
 */
import type { MessageError } from "./Message.ts"

/** A failed API call, shaped like the AI SDK's `APICallError`. */
export interface ApiCallFailure {
  readonly message: string
  readonly statusCode?: number | undefined
  readonly responseBody?: string | undefined
  /** The response body already parsed; when absent `responseBody` is parsed as JSON. */
  readonly body?: unknown
  /** The SDK's own retry verdict; derived from the status when absent. */
  readonly isRetryable?: boolean | undefined
}

/** An error chunk inside a model stream, e.g. `{ type: "error", error: { code: "context_length_exceeded" } }`. */
export interface StreamErrorChunk {
  readonly type: "error"
  readonly error: { readonly code?: unknown; readonly message?: unknown; readonly [key: string]: unknown }
}

/** Anything a provider call can fail with that this module understands. */
export type ProviderFailure = ApiCallFailure | StreamErrorChunk

/** The error name of a context overflow (OpenCode's `ContextOverflowError`). */
export const CONTEXT_OVERFLOW = "ContextOverflowError"

/** The error name of any other provider failure (OpenCode's `APIError`). */
export const API_ERROR = "APIError"

/** The message a stream chunk with code `context_length_exceeded` is given (protocol string, spec §2.5). */
export const STREAM_OVERFLOW_MESSAGE = "Input exceeds context window of this model"

/** Message patterns that mean the request did not fit the model's window, one or more per provider (spec §2.5). */
export const OVERFLOW_PATTERNS: ReadonlyArray<RegExp> = [
  /prompt is too long/i,
  /input is too long for requested model/i,
  /exceeds the context window/i,
  /input token count.*exceeds the maximum/i,
  /tokens in request more than max tokens allowed/i,
  /maximum prompt length is \d+/i,
  /reduce the length of the messages/i,
  /maximum context length is \d+ tokens/i,
  /exceeds the limit of \d+/i,
  /exceeds the available context size/i,
  /greater than the context length/i,
  /context window exceeds limit/i,
  /exceeded model token limit/i,
  /context[_ ]length[_ ]exceeded/i,
  /request entity too large/i,
  /context length is only \d+ tokens/i,
  /input length.*exceeds.*context length/i,
  /prompt too long; exceeded (?:max )?context length/i,
  /too large for model with \d+ maximum context length/i,
  /model_context_window_exceeded/i,
]

/** A bodiless 400 or 413, which some providers (Cerebras, Mistral) send on overflow. */
export const NO_BODY_PATTERN = /^4(00|13)\s*(status code)?\s*\(no body\)/i

/** The `data` of a `ContextOverflowError`. */
export interface OverflowData {
  readonly message: string
  readonly responseBody?: string
}

/** The `data` of an `APIError`. */
export interface ApiErrorData {
  readonly message: string
  readonly statusCode?: number
  readonly isRetryable: boolean
  readonly responseBody?: string
}

/** Whether an error text alone says the context overflowed (the patterns, then the bodiless 400/413 rule). */
export const isOverflowMessage = (text: string): boolean =>
  OVERFLOW_PATTERNS.some((pattern) => pattern.test(text)) || NO_BODY_PATTERN.test(text)

/** Whether an HTTP status is worth retrying, as the AI SDK decides: 408, 409, 429 and 5xx. */
export const isRetryableStatus = (status: number): boolean =>
  status === 408 || status === 409 || status === 429 || status >= 500

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined

const parseJson = (text: string | undefined): unknown => {
  if (text === undefined) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const nonEmpty = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim().length > 0 ? value : undefined

// The human-readable message a JSON error body carries, under the keys providers use.
const bodyMessage = (body: Record<string, unknown> | undefined): string | undefined => {
  if (body === undefined) return undefined
  const error = body.error
  return nonEmpty(body.message) ?? nonEmpty(error) ?? nonEmpty(record(error)?.message)
}

const overflow = (message: string, responseBody: string | undefined): MessageError => {
  const data: OverflowData = responseBody === undefined ? { message } : { message, responseBody }
  return { name: CONTEXT_OVERFLOW, message, data }
}

const apiError = (
  message: string,
  isRetryable: boolean,
  statusCode: number | undefined,
  responseBody: string | undefined,
): MessageError => {
  const data: ApiErrorData = {
    message,
    isRetryable,
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(responseBody === undefined ? {} : { responseBody }),
  }
  return { name: API_ERROR, message, data }
}

/** Whether a value is a stream error chunk (`type: "error"` with an `error` object). */
export const isStreamErrorChunk = (value: unknown): value is StreamErrorChunk => {
  const chunk = record(value)
  return chunk !== undefined && chunk.type === "error" && record(chunk.error) !== undefined
}

// Stream codes that name a transient server-side condition.
const RETRYABLE_STREAM_CODES: ReadonlyArray<string> = ["server_error", "server_is_overloaded", "rate_limit_exceeded"]

/**
 * Classifies a stream error chunk: code `context_length_exceeded` is an overflow with the fixed message and the
 * chunk's JSON as `responseBody` (spec §2.5, E1). Not in OpenCode: a chunk whose message matches an overflow pattern
 * is an overflow too, keeping its own message.
 */
export const classifyStreamChunk = (chunk: StreamErrorChunk): MessageError => {
  const responseBody = JSON.stringify(chunk)
  const code = typeof chunk.error.code === "string" ? chunk.error.code : undefined
  if (code === "context_length_exceeded") return overflow(STREAM_OVERFLOW_MESSAGE, responseBody)
  const text = nonEmpty(chunk.error.message)
  if (text !== undefined && isOverflowMessage(text)) return overflow(text, responseBody)
  const retryable = code !== undefined && RETRYABLE_STREAM_CODES.includes(code)
  return apiError(text ?? code ?? "Unknown error", retryable, undefined, responseBody)
}

/**
 * Classifies a failed API call (spec §2.5): an overflow when its message (or the message inside its JSON body) matches
 * an overflow pattern, its message is a bodiless 400/413, its status is 413, or its body's `error.code` is
 * `context_length_exceeded`; otherwise an `APIError` keeping the status and retryability.
 */
export const classifyApiCall = (failure: ApiCallFailure): MessageError => {
  const body = record(failure.body ?? parseJson(failure.responseBody))
  const fromBody = bodyMessage(body)
  const message = nonEmpty(failure.message)?.trim() ?? fromBody ?? nonEmpty(failure.responseBody) ?? "Unknown error"
  const code = record(body?.error)?.code
  const isOverflow =
    isOverflowMessage(failure.message) ||
    (fromBody !== undefined && isOverflowMessage(fromBody)) ||
    failure.statusCode === 413 ||
    code === "context_length_exceeded"
  if (isOverflow) return overflow(message, failure.responseBody)
  const retryable =
    failure.isRetryable ?? (failure.statusCode === undefined ? false : isRetryableStatus(failure.statusCode))
  return apiError(message, retryable, failure.statusCode, failure.responseBody)
}

/** Classifies either kind of provider failure into the error stored on an assistant message. */
export const classify = (failure: ProviderFailure): MessageError =>
  isStreamErrorChunk(failure) ? classifyStreamChunk(failure) : classifyApiCall(failure as ApiCallFailure)

/**
 * Classifies whatever a provider call threw or streamed: a stream chunk (also as a JSON string, or JSON inside an
 * error's `message`), an API-call-shaped error, or anything else as a non-retryable `UnknownError`.
 */
export const fromUnknown = (value: unknown): MessageError => {
  const parsed = typeof value === "string" ? parseJson(value) : undefined
  if (isStreamErrorChunk(parsed)) return classifyStreamChunk(parsed)
  if (typeof value === "string") return classifyApiCall({ message: value })
  if (isStreamErrorChunk(value)) return classifyStreamChunk(value)
  const error = record(value)
  if (error !== undefined && typeof error.message === "string") {
    const inner = parseJson(error.message)
    if (isStreamErrorChunk(inner)) return classifyStreamChunk(inner)
    return classifyApiCall({
      message: error.message,
      statusCode: typeof error.statusCode === "number" ? error.statusCode : undefined,
      responseBody: typeof error.responseBody === "string" ? error.responseBody : undefined,
      isRetryable: typeof error.isRetryable === "boolean" ? error.isRetryable : undefined,
      ...(error.data !== undefined && record(error.data)?.error !== undefined ? { body: error.data } : {}),
    })
  }
  return { name: "UnknownError", message: String(value) }
}

/** Whether a value is already a classified error (this module's output), not a raw failure. */
const isClassified = (value: MessageError | ProviderFailure): value is MessageError =>
  "name" in value && (value.name === CONTEXT_OVERFLOW || value.name === API_ERROR || value.name === "UnknownError")

const asError = (value: MessageError | ProviderFailure): MessageError => (isClassified(value) ? value : classify(value))

/** Whether an error (classified or raw) is a context overflow. */
export const isOverflowError = (error: MessageError | ProviderFailure): boolean =>
  asError(error).name === CONTEXT_OVERFLOW

/**
 * Whether retrying the same request can help (spec §2.5, Y1): never for an overflow, which needs a compaction
 * instead; for an `APIError` its recorded verdict (429 and 5xx yes, other statuses no).
 */
export const isRetryable = (error: MessageError | ProviderFailure): boolean => {
  const classified = asError(error)
  if (classified.name !== API_ERROR) return false
  const data = record(classified.data)
  if (typeof data?.isRetryable === "boolean") return data.isRetryable
  return typeof data?.statusCode === "number" && isRetryableStatus(data.statusCode)
}
