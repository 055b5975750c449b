/**
 * @pivot/ai — pivot on the AI SDK: `createPivot` (one call, no Effect needed), a Summarizer over any LanguageModel,
 * message and usage adapters, agent hooks.
 */

/** Zero-glue hooks for AI SDK agents (`generateText`, `streamText`, `ToolLoopAgent`). */
export * as AiAgent from "./Agent.ts"
/** Tools for the model to steer its own context. */
export * as ContextTools from "./ContextTools.ts"
/** The `Judge` port (a compaction's probes) over any AI SDK `LanguageModel`. */
export * as AiJudge from "./Judge.ts"
/** Window → AI SDK messages, AI SDK usage → token counts, AI SDK errors → the overflow classifier. */
export * as Messages from "./Messages.ts"
/** The `context_pin` tool: the model pins what must survive every compaction verbatim. */
export * as PinTool from "./PinTool.ts"
/** pivot in one call for AI SDK users: `createPivot({ model, store })`, session handles, `wrap`, `run`, `close`. */
export * as Pivot from "./Pivot.ts"
/** Opens pivot for an AI SDK agent in one call (see `Pivot.createPivot`). */
export { createPivot } from "./Pivot.ts"
/** The `context_recall` tool: the model re-reads pruned outputs and summaries, by id or by search. */
export * as RecallTool from "./RecallTool.ts"
/** The `Summarizer` port over any AI SDK `LanguageModel`. */
export * as AiSummarizer from "./Summarizer.ts"
/** pivot's messages as the AI SDK's UI messages (`useChat`), and the user input of a call made without `run`. */
export * as UiMessages from "./UiMessages.ts"

// The copy of effect this package loaded, so a second copy is named when it breaks a decode (core's EffectCopies).
import { EffectCopies } from "@pivot/core"
import * as Schema from "effect/Schema"

EffectCopies.register("@pivot/ai", Schema.String)
