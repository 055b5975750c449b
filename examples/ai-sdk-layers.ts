// The layers under createPivot, assembled by hand: the ContextManager over a store, summaries written by a second
// model through AiSummarizer, and AiAgent's hooks run by a ManagedRuntime. For when you need a layer createPivot does
// not build (Postgres, your own Summarizer, plugins provided per environment, …).
import { AiAgent, AiSummarizer } from "@pivot/ai"
import { Ids } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { stepCountIs, ToolLoopAgent } from "ai"
import { Layer, ManagedRuntime } from "effect"
import { makeModel, model, tools } from "./support/models.ts"

const compactionModel = makeModel()
const limits = { context: 400_000, input: 272_000, output: 128_000 }

// #region summarizer
const summarizer = AiSummarizer.layer({
  model: compactionModel, // a LanguageModel, or (ref) => LanguageModel to pick one from the request
  modelRef: { providerId: "openai", modelId: "gpt-5-mini" }, // recorded on the summary; default: from the model
  timeout: "2 minutes", // for the whole summary, retries included
  maxRetries: 2, // AI SDK retries of 429 and 5xx; an overflow is never retried
  mode: "stream", // or "generate"
  settings: { temperature: 0 }, // other AI SDK call settings
})
// #endregion

// #region layers
const layer = ContextManager.layer({
  model: { ref: { providerId: "openai", modelId: "gpt-5" }, limits },
  compactionModel: { ref: { providerId: "openai", modelId: "gpt-5-mini" }, limits },
}).pipe(
  Layer.provide(summarizer),
  Layer.provide(Ids.Ids.layer),
  Layer.provideMerge(EventStore.layerMemory()), // or EventStore.layerSqlite({ filename }), layerPostgres({ url })
)
const runtime = ManagedRuntime.make(layer)

const pivot = AiAgent.fromRuntime(runtime, { sessionId: "ses_layers" })
const agent = new ToolLoopAgent({ model, tools, stopWhen: stepCountIs(20), ...pivot.settings })
const turn = await pivot.user("What does src/answer.ts export?") // once: `run` may call again after a compaction
const result = await pivot.run(() => agent.generate(turn))
// #endregion

console.log(result.text)
await runtime.dispose()
