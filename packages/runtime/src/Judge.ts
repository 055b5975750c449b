/**
 * The `Judge` port: the model that answers a compaction's probes (optional, off by default; `ContextManager` option
 * `probes`). It gets the probes' system prompt and a prompt holding the summary and the numbered questions
 * (`Probe.prompt`), and answers with text; pivot parses and grades the answers itself (`Probe.parseAnswers`,
 * `Probe.grade`), so the judge never decides a verdict. `@pivot/ai`'s `AiJudge` implements it over any AI SDK model.
 */
import type { Model, Tokens } from "@pivot/core"
import { Context, type Effect, Schema } from "effect"

/** One set of probes to answer. */
export interface JudgeRequest {
  readonly sessionId: string
  /** The compaction whose summary is probed. */
  readonly markerId: string
  readonly system: string
  /** The summary and the numbered questions. */
  readonly prompt: string
  readonly maxOutputTokens: number
}

/** The judge's reply, its usage and the model that answered. */
export interface JudgeResponse {
  readonly text: string
  readonly usage: Tokens.TokenUsage
  readonly model: Model.ModelRef
}

/** Why the judge gave no answer. */
export class JudgeError extends Schema.TaggedError<JudgeError>()("JudgeError", {
  message: Schema.String,
}) {}

/** What a judge does. */
export interface JudgeShape {
  readonly answer: (request: JudgeRequest) => Effect.Effect<JudgeResponse, JudgeError>
}

/** Answers a compaction's probes. */
export class Judge extends Context.Service<Judge, JudgeShape>()("@pivot/runtime/Judge") {}
