/**
 * The `Summarizer` port over any AI SDK 7 `LanguageModel`: one call with the compaction system prompt and the
 * rendered head, no tools (unless given, for cache-aware compaction), the requested output cap, a time limit, and cancellation wired to Effect interruption.
 * Only text becomes the summary: reasoning is dropped (spec C15) and tool calls are never executed (C16).
 */
import { type Model, ProviderError, type Tokens } from "@pivot/core"
import {
  Summarizer,
  SummarizerError,
  type SummarizerShape,
  type SummaryRequest,
  type SummaryResponse,
} from "@pivot/runtime"
import { generateText, type LanguageModel, streamText, type ToolSet } from "ai"
import { Duration, Effect, Layer } from "effect"
import * as Messages from "./Messages.ts"

/**
 * How the summary is requested: one streamed call (default; a model that cannot stream is asked once more through
 * `generateText`) or one `generateText` call.
 */
export type Mode = "stream" | "generate"

/** AI SDK call settings passed through unchanged (sampling, provider options, headers). */
export type CallSettings = Pick<
  Parameters<typeof generateText>[0],
  "temperature" | "topP" | "topK" | "seed" | "providerOptions" | "headers"
>

/** The options of the AI SDK summariser. */
export interface Options {
  /**
   * The compaction model: a fixed `LanguageModel`, or a function choosing one from the request's model ref (the
   * compaction model the runtime picked). Independent of the model the session itself runs on.
   */
  readonly model: LanguageModel | ((ref: Model.ModelRef) => LanguageModel)
  /** The model ref recorded on the summary; by default derived from the `LanguageModel` that served the call. */
  readonly modelRef?: Model.ModelRef | undefined
  /** Time limit of one summary, retries included (default 2 minutes); reaching it fails with `timeout`. */
  readonly timeout?: Duration.Input | undefined
  /** AI SDK retries of retryable failures (429, 5xx); overflows are never retried (default 2, as the SDK). */
  readonly maxRetries?: number | undefined
  /** `"stream"` (default) or `"generate"`. */
  readonly mode?: Mode | undefined
  /** Extra AI SDK call settings. */
  readonly settings?: CallSettings | undefined
  /**
   * Tool definitions sent with every summary request, never executed: with cache-aware compaction (ADR 0017), the
   * conversation's own tools, so that the request starts with the same bytes as the conversation's calls (Anthropic
   * caches the tools before the system prompt). Default none. Only their declarations are sent: `execute` is
   * dropped, so a tool call the model makes instead of answering is never run (only text becomes the summary).
   */
  readonly tools?: ToolSet | undefined
}

/** Tools as declarations only: the same definitions without `execute`, so the SDK hands calls back unrun. */
export const declarationsOf = (tools: ToolSet): ToolSet =>
  Object.fromEntries(
    Object.entries(tools).map(([name, definition]) => {
      const { execute: _execute, ...declared } = definition as { execute?: unknown }
      return [name, declared]
    }),
  ) as ToolSet

/** The default time limit of one summary. */
export const DEFAULT_TIMEOUT: Duration.Input = "2 minutes"

/** A model ref for an AI SDK model: its provider (before the first `.`, e.g. `openai` of `openai.chat`) and id. */
export const modelRefOf = (model: LanguageModel): Model.ModelRef =>
  typeof model === "string"
    ? { providerId: "gateway", modelId: model }
    : { providerId: model.provider.split(".")[0] ?? model.provider, modelId: model.modelId }

/** What one call produced, before it is judged. */
export interface Collected {
  readonly text: string
  readonly finish: string
  readonly usage: Tokens.TokenUsage
  /** Error parts seen in the stream (some are harmless protocol noise, see `judge`). */
  readonly errors: ReadonlyArray<unknown>
  /** The stream ended with an abort part. */
  readonly aborted: boolean
}

const EMPTY_USAGE: Messages.UsageLike = {}

// What the streamed and the generated call send alike: the user's settings, then the summary request itself.
const callOptions = (model: LanguageModel, request: SummaryRequest, options: Options, signal: AbortSignal) => ({
  ...options.settings,
  model,
  system: request.system,
  messages: Messages.toModelMessages(request.messages),
  maxOutputTokens: request.maxOutputTokens,
  ...(options.tools === undefined ? {} : { tools: declarationsOf(options.tools) }),
  abortSignal: signal,
  ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
})

// Streams the call and keeps only text deltas; reasoning, tool calls and tool errors are ignored.
const collectStream = async (
  model: LanguageModel,
  request: SummaryRequest,
  options: Options,
  signal: AbortSignal,
): Promise<Collected> => {
  const result = streamText({
    ...callOptions(model, request, options, signal),
    // Errors are read from the stream's error parts; this silences the SDK's default console logging.
    onError: () => {},
  })
  let text = ""
  let finish = "unknown"
  let usage: Messages.UsageLike = EMPTY_USAGE
  let metadata: Messages.StepUsage["providerMetadata"]
  let aborted = false
  const errors: Array<unknown> = []
  for await (const part of result.fullStream) {
    switch (part.type) {
      case "text-delta":
        text += part.text
        break
      case "error":
        errors.push(part.error)
        break
      case "abort":
        aborted = true
        break
      case "finish-step":
        metadata = part.providerMetadata ?? metadata
        usage = part.usage
        finish = part.finishReason
        break
      case "finish":
        usage = part.totalUsage
        finish = part.finishReason
        break
    }
  }
  return { text, finish, usage: Messages.toTokenUsage(usage, metadata), errors, aborted }
}

const collectGenerate = async (
  model: LanguageModel,
  request: SummaryRequest,
  options: Options,
  signal: AbortSignal,
): Promise<Collected> => {
  const result = await generateText(callOptions(model, request, options, signal))
  return {
    text: result.text,
    finish: result.finishReason,
    usage: Messages.toTokenUsage(result.totalUsage, result.providerMetadata),
    errors: [],
    aborted: false,
  }
}

/**
 * Whether a failure says the model cannot stream (a provider without `doStream`, e.g. a generate-only wrapper): the
 * AI SDK's `UnsupportedFunctionalityError`, or the "Not implemented" its mocks and some providers throw.
 */
export const isStreamingUnsupported = (error: unknown): boolean => {
  const cause = Messages.unwrap(error)
  if (!(cause instanceof Error)) return false
  return cause.name === "AI_UnsupportedFunctionalityError" || /^not implemented\b/i.test(cause.message.trim())
}

// Stream mode: a model that cannot stream answers through one `generateText` call instead of failing the summary.
const collectStreamOrGenerate = async (
  model: LanguageModel,
  request: SummaryRequest,
  options: Options,
  signal: AbortSignal,
): Promise<Collected> => {
  const streamed = await collectStream(model, request, options, signal).catch((error: unknown) => {
    if (isStreamingUnsupported(error)) return undefined
    throw error
  })
  if (streamed === undefined) return collectGenerate(model, request, options, signal)
  const cannotStream = streamed.text === "" && streamed.errors.some(isStreamingUnsupported)
  return cannotStream ? collectGenerate(model, request, options, signal) : streamed
}

const isAbort = (error: unknown): boolean =>
  error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")

/** A thrown AI SDK failure as a `SummarizerError`: overflow, interrupted (an abort not caused by pivot) or failed. */
export const fromFailure = (error: unknown): SummarizerError => {
  if (isAbort(Messages.unwrap(error)))
    return new SummarizerError({ reason: "interrupted", message: "The summary call was aborted" })
  const classified = Messages.classifyError(error)
  const reason = classified.name === ProviderError.CONTEXT_OVERFLOW ? "overflow" : "failed"
  return new SummarizerError({ reason, message: classified.message, error: classified })
}

/**
 * Judges a finished call. Any overflow error part fails with `overflow`; an abort (an abort part, or an abort error
 * part) with `interrupted`. Other error parts fail the summary only
 * when the call finished with `error` or produced no text: providers also stream harmless errors (e.g. a reasoning
 * delta with no start, C15) next to a complete answer. Blank text fails with `empty`.
 */
export const judge = (collected: Collected, model: Model.ModelRef): SummaryResponse | SummarizerError => {
  const text = collected.text.trim()
  const classified = collected.errors.map(Messages.classifyError)
  const overflow = classified.find((error) => error.name === ProviderError.CONTEXT_OVERFLOW)
  if (overflow !== undefined)
    return new SummarizerError({ reason: "overflow", message: overflow.message, error: overflow })
  if (collected.aborted || collected.errors.some((error) => isAbort(Messages.unwrap(error))))
    return new SummarizerError({ reason: "interrupted", message: "The summary stream was aborted" })
  const first = classified[0]
  if (first !== undefined && (collected.finish === "error" || text === ""))
    return new SummarizerError({ reason: "failed", message: first.message, error: first })
  if (text === "")
    return new SummarizerError({
      reason: "empty",
      message: `The model returned no summary text (finish: ${collected.finish})`,
    })
  return { text, usage: collected.usage, finish: collected.finish, model }
}

/**
 * The summarise function of the port: one model call per request, bounded by the time limit, cancelled (the HTTP
 * request aborted) when the calling fiber is interrupted.
 */
export const make = (options: Options): SummarizerShape => {
  const timeout = Duration.fromInputUnsafe(options.timeout ?? DEFAULT_TIMEOUT)
  const collect = options.mode === "generate" ? collectGenerate : collectStreamOrGenerate
  const summarize = Effect.fn("AiSummarizer.summarize")(function* (request: SummaryRequest) {
    const model = typeof options.model === "function" ? options.model(request.model) : options.model
    const ref = options.modelRef ?? modelRefOf(model)
    const collected = yield* Effect.tryPromise({
      try: (signal) => collect(model, request, options, signal),
      catch: fromFailure,
    }).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(
            new SummarizerError({
              reason: "timeout",
              message: `The summary took longer than ${Duration.format(timeout)}`,
            }),
          ),
      }),
    )
    const judged = judge(collected, ref)
    return judged instanceof SummarizerError ? yield* judged : judged
  })
  return { summarize }
}

/**
 * A `Summarizer` over an AI SDK model.
 *
 * **Example**
 * ```ts
 * const compaction = createOpenAICompatible({ name: "local", baseURL }).chatModel("small-model")
 * const SummarizerLive = AiSummarizer.layer({ model: compaction, timeout: "30 seconds" })
 * ```
 */
export const layer = (options: Options): Layer.Layer<Summarizer> => Layer.succeed(Summarizer, make(options))
