/**
 * The seams between pivot and the AI SDK: pivot's rendered window as AI SDK `ModelMessage[]`, AI SDK usage as pivot
 * token counts, and AI SDK errors as the input of pivot's overflow classifier.
 */
import type { Message, Render } from "@pivot/core"
import { type ModelMessage as CoreModelMessage, ProviderError, Tokens } from "@pivot/core"
import {
  APICallError,
  type LanguageModelUsage,
  type ModelMessage,
  NoOutputGeneratedError,
  type ProviderMetadata,
  RetryError,
  StreamProviderError,
} from "ai"
import { Result, Schema } from "effect"

// Compile-time proof that every message core renders is a valid AI SDK message: this line stops compiling when the
// two drift apart, so the identity below needs no cast.
const toSdk = (message: CoreModelMessage.ModelMessage): ModelMessage => message

/**
 * Core's rendered window as AI SDK messages: a typed identity (core renders exactly the SDK's shape), accepting
 * either `Render.render` output (the `sourceMessageId` is dropped) or plain model messages.
 *
 * **Example**
 * ```ts
 * const messages = Messages.toModelMessages(Render.render(window))
 * await generateText({ model, messages })
 * ```
 */
export const toModelMessages = (
  window: ReadonlyArray<Render.Rendered | CoreModelMessage.ModelMessage>,
): Array<ModelMessage> => window.map((entry) => toSdk("sourceMessageId" in entry ? entry.message : entry))

/**
 * The usage shape this module reads: the AI SDK 7 `LanguageModelUsage` (input/output token details) and, for
 * adapters that still report them, the flat AI SDK 5 fields. Every field is optional.
 */
export interface UsageLike {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly totalTokens?: number | undefined
  readonly inputTokenDetails?:
    | {
        readonly cacheReadTokens?: number | undefined
        readonly cacheWriteTokens?: number | undefined
      }
    | undefined
  readonly outputTokenDetails?: { readonly reasoningTokens?: number | undefined } | undefined
  readonly reasoningTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
}

// Type check only: the SDK's own usage type must be readable as `UsageLike`.
const _usageIsReadable = (usage: LanguageModelUsage): UsageLike => usage
void _usageIsReadable

/** A usage object that is not the AI SDK's `LanguageModelUsage` (fields missing, or counts that are not counts). */
export class InvalidUsage extends Schema.TaggedError<InvalidUsage>()("InvalidUsage", {
  problem: Schema.String,
}) {
  override get message(): string {
    return `invalid usage: ${this.problem}; pass the AI SDK's usage as it comes (step.usage or result.usage, a LanguageModelUsage)`
  }
}

const USAGE_KEYS = ["inputTokens", "outputTokens"] as const
const COUNT_KEYS = ["inputTokens", "outputTokens", "totalTokens", "reasoningTokens", "cachedInputTokens"] as const

const isCount = (value: unknown): boolean =>
  value === undefined || (typeof value === "number" && Number.isInteger(value) && value >= 0)

/**
 * Checks that a value is an AI SDK usage: an object with `inputTokens` and `outputTokens` (a count or `undefined`, as
 * the SDK reports a provider that gave none), and non-negative whole counts wherever a count is given.
 */
export const validateUsage = (usage: unknown): Result.Result<UsageLike, InvalidUsage> => {
  if (typeof usage !== "object" || usage === null || Array.isArray(usage))
    return Result.fail(
      new InvalidUsage({ problem: `expected an object, got ${usage === null ? "null" : typeof usage}` }),
    )
  const given = usage as Record<string, unknown>
  const missing = USAGE_KEYS.filter((key) => !(key in given))
  if (missing.length > 0) {
    const keys = Object.keys(given)
    return Result.fail(
      new InvalidUsage({
        problem: `missing ${missing.join(", ")} (got ${keys.length === 0 ? "no fields" : keys.join(", ")})`,
      }),
    )
  }
  const details = [
    ...COUNT_KEYS.map((key) => [key, given[key]] as const),
    ...(["cacheReadTokens", "cacheWriteTokens"] as const).map(
      (key) =>
        [`inputTokenDetails.${key}`, (given.inputTokenDetails as Record<string, unknown> | undefined)?.[key]] as const,
    ),
    [
      "outputTokenDetails.reasoningTokens",
      (given.outputTokenDetails as Record<string, unknown> | undefined)?.reasoningTokens,
    ] as const,
  ]
  const bad = details.find(([, value]) => !isCount(value))
  if (bad !== undefined)
    return Result.fail(new InvalidUsage({ problem: `${bad[0]} is ${JSON.stringify(bad[1])}, not a token count` }))
  return Result.succeed(given as UsageLike)
}

/** AI SDK usage as the provider usage core normalises (cache writes from the metadata when the usage has none). */
export const toProviderUsage = (usage: UsageLike): Tokens.ProviderUsage => ({
  inputTokens: usage.inputTokens,
  outputTokens: usage.outputTokens,
  totalTokens: usage.totalTokens,
  reasoningTokens: usage.outputTokenDetails?.reasoningTokens ?? usage.reasoningTokens,
  cacheReadInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens,
  cacheWriteInputTokens: usage.inputTokenDetails?.cacheWriteTokens,
})

/**
 * AI SDK usage (a step's, a call's or a total) and provider metadata → pivot's normalised `TokenUsage` (spec §2.1):
 * cached tokens out of `input`, reasoning out of `output`.
 */
export const toTokenUsage = (usage: UsageLike, providerMetadata?: ProviderMetadata | undefined): Tokens.TokenUsage =>
  Tokens.fromProvider(toProviderUsage(usage), providerMetadata)

/** The parts of an AI SDK step result (`StepResult`, `onStepEnd` event, `finish-step` part) that carry usage. */
export interface StepUsage {
  readonly usage: UsageLike
  readonly providerMetadata?: ProviderMetadata | undefined
}

/** A step's usage, normalised with the step's provider metadata. */
export const stepTokenUsage = (step: StepUsage): Tokens.TokenUsage => toTokenUsage(step.usage, step.providerMetadata)

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined

const defined = <A extends Record<string, unknown>>(value: A): A =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as A

/**
 * The innermost provider error inside the wrappers the AI SDK adds: `RetryError` (its last attempt),
 * `NoOutputGeneratedError` and other errors with a `cause`.
 */
export const unwrap = (error: unknown): unknown => {
  let at = error
  for (let depth = 0; depth < 8; depth++) {
    if (RetryError.isInstance(at)) at = at.lastError
    else if (NoOutputGeneratedError.isInstance(at) && at.cause !== undefined) at = at.cause
    else return at
  }
  return at
}

/**
 * Any AI SDK failure → the input of core's classifier (`ProviderError.classify`): an `APICallError` (status, body,
 * the SDK's retry verdict), a stream error (`StreamProviderError`, or a raw `{ error: { code, message } }` chunk), or,
 * for anything else with a message, an API failure carrying only that message. `undefined` when nothing usable is
 * there.
 */
export const toProviderFailure = (error: unknown): ProviderError.ProviderFailure | undefined => {
  const inner = unwrap(error)
  if (APICallError.isInstance(inner))
    return defined({
      message: inner.message,
      statusCode: inner.statusCode,
      responseBody: inner.responseBody,
      isRetryable: inner.isRetryable,
      ...(record(inner.data)?.error !== undefined ? { body: inner.data } : {}),
    })
  if (StreamProviderError.isInstance(inner)) {
    // A coded stream error is classified by its code; one that came with an HTTP status keeps that status.
    if (typeof inner.code === "string" || inner.statusCode === undefined)
      return { type: "error", error: defined({ code: inner.code, message: inner.message, type: inner.type }) }
    return defined({ message: inner.message, statusCode: inner.statusCode, isRetryable: inner.isRetryable })
  }
  if (ProviderError.isStreamErrorChunk(inner)) return inner
  const object = record(inner)
  if (object !== undefined && !(inner instanceof Error)) {
    const nested = record(object.error)
    if (nested !== undefined) return { type: "error", error: nested }
    if (object.code !== undefined || typeof object.message === "string") return { type: "error", error: object }
  }
  if (inner instanceof Error) return { message: inner.message }
  if (typeof inner === "string" && inner.length > 0) return { message: inner }
  return undefined
}

/** Classifies any AI SDK failure into the error pivot stores (`ContextOverflowError`, `APIError` or `UnknownError`). */
export const classifyError = (error: unknown): Message.MessageError => {
  const failure = toProviderFailure(error)
  return failure === undefined ? ProviderError.fromUnknown(unwrap(error)) : ProviderError.classify(failure)
}

/** Whether an AI SDK failure means the request did not fit the model's context window. */
export const isOverflow = (error: unknown): boolean => classifyError(error).name === ProviderError.CONTEXT_OVERFLOW
