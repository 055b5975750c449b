/**
 * The `Judge` port over any AI SDK 7 `LanguageModel`: one `generateText` call with the probes' system prompt and the
 * prompt pivot built (the summary and the numbered questions), no tools, an output cap, cancellation wired to Effect
 * interruption (the runtime bounds it in time). The model only answers; pivot grades the answers (`Probe.grade`).
 */
import type { Model } from "@pivot/core"
import { Judge, JudgeError, type JudgeRequest, type JudgeShape } from "@pivot/runtime"
import { generateText, type LanguageModel } from "ai"
import { Effect, Layer } from "effect"
import * as Messages from "./Messages.ts"
import { type CallSettings, modelRefOf } from "./Summarizer.ts"

/** The options of the AI SDK judge. */
export interface Options {
  /** The judge model: any `LanguageModel`, typically a small, cheap one. */
  readonly model: LanguageModel
  /** The model ref recorded with the answers; by default derived from the `LanguageModel`. */
  readonly modelRef?: Model.ModelRef | undefined
  /** AI SDK retries of retryable failures (default 2, as the SDK). */
  readonly maxRetries?: number | undefined
  /** Extra AI SDK call settings (temperature 0 is a good choice). */
  readonly settings?: CallSettings | undefined
}

/** The judge's answer function. */
export const make = (options: Options): JudgeShape => ({
  answer: Effect.fn("AiJudge.answer")(function* (request: JudgeRequest) {
    const result = yield* Effect.tryPromise({
      try: (signal) =>
        generateText({
          ...options.settings,
          model: options.model,
          system: request.system,
          prompt: request.prompt,
          maxOutputTokens: request.maxOutputTokens,
          abortSignal: signal,
          ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
        }),
      catch: (error) => new JudgeError({ message: Messages.classifyError(error).message }),
    })
    if (result.text.trim() === "")
      return yield* new JudgeError({ message: `the judge returned no text (finish: ${result.finishReason})` })
    return {
      text: result.text,
      usage: Messages.toTokenUsage(result.totalUsage, result.providerMetadata),
      model: options.modelRef ?? modelRefOf(options.model),
    }
  }),
})

/**
 * A `Judge` over an AI SDK model, for `ContextManager.layer({ …, probes: true })`.
 *
 * **Example**
 * ```ts
 * const JudgeLive = AiJudge.layer({ model: openai("gpt-5-mini"), settings: { temperature: 0 } })
 * ```
 */
export const layer = (options: Options): Layer.Layer<Judge> => Layer.succeed(Judge, make(options))
