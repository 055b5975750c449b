/**
 * The `Summarizer` port: whatever writes a compaction summary. The AI SDK adapter (`@pivot/ai`) implements it over
 * any language model; `Summarizer.layerExtractive` implements it with core's deterministic extractive summariser,
 * which needs no model and never fails.
 */
import { ExtractiveSummary, Message, type Model, type ModelMessage, Tokens } from "@pivot/core"
import { Context, Effect, Layer, Schema } from "effect"

/** One summary to write. */
export interface SummaryRequest {
  readonly sessionId: string
  /** The compaction model. */
  readonly model: Model.ModelRef
  /** The compaction model's limits. */
  readonly limits: Model.ModelLimits
  /** The compaction agent's system prompt. */
  readonly system: string
  /** The head rendered for the summariser, then the prompt as the last user message. */
  readonly messages: ReadonlyArray<ModelMessage.ModelMessage>
  /** The same head as stored messages (for extractive summarisers). */
  readonly head: ReadonlyArray<Message.Message>
  readonly previousSummary?: string
  readonly maxOutputTokens: number
}

/** A written summary, its usage and how the call finished. */
export interface SummaryResponse {
  readonly text: string
  readonly usage: Tokens.TokenUsage
  readonly finish: string
  readonly model: Model.ModelRef
}

/** Why a summary could not be written. */
export class SummarizerError extends Schema.TaggedError<SummarizerError>()("SummarizerError", {
  reason: Schema.Literals(["overflow", "failed", "timeout", "empty", "interrupted"]),
  message: Schema.String,
  error: Schema.optionalKey(Message.MessageError),
}) {}

/** The model ref the extractive summariser answers with. */
export const EXTRACTIVE_MODEL: Model.ModelRef = { providerId: "pivot", modelId: "extractive" }

/** What a summariser does. */
export interface SummarizerShape {
  readonly summarize: (request: SummaryRequest) => Effect.Effect<SummaryResponse, SummarizerError>
}

/** Writes compaction summaries. */
export class Summarizer extends Context.Service<Summarizer, SummarizerShape>()("@pivot/runtime/Summarizer") {
  /** The deterministic extractive summariser (no model): the same request always gives the same summary. */
  static readonly extractive: SummarizerShape = {
    summarize: (request) =>
      Effect.sync(() => ({
        text: ExtractiveSummary.summarize({
          head: request.head,
          ...(request.previousSummary === undefined ? {} : { previousSummary: request.previousSummary }),
        }),
        usage: Tokens.zero,
        finish: "stop",
        model: EXTRACTIVE_MODEL,
      })),
  }

  /** `Summarizer.extractive` as a layer. */
  static readonly layerExtractive: Layer.Layer<Summarizer> = Layer.succeed(Summarizer, Summarizer.extractive)
}
