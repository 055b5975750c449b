// A pivot runtime over a memory store with sequential ids, for the agent tests and the example.
import { Ids } from "@pivot/core"
import {
  type Config,
  ContextManager,
  type InvalidOption,
  type InvalidToolKind,
  type Options,
  type Sessions,
  type Summarizer,
} from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Layer, ManagedRuntime } from "effect"

/** The session of the tests. */
export const SESSION = "ses_agent"

/** The session model as the AI SDK mock reports it. */
export const SESSION_MODEL = { providerId: "mock-provider", modelId: "mock-model-id" }

/** The compaction model: a different, smaller model. */
export const COMPACTION_MODEL = { providerId: "mock-provider", modelId: "compactor" }

/** Window 100k, output 32k: compaction triggers at 68k tokens. */
export const LIMITS = { context: 100_000, output: 32_000 }

/** What the runtime layer provides. */
export type Services = ContextManager | Sessions.Sessions | EventStore

/** The runtime layer: a context manager over a memory store, with the given summariser (extractive when absent). */
export const layer = (
  summarizer?: Layer.Layer<Summarizer>,
  options: Partial<Options> = {},
): Layer.Layer<Services, Config.ImpossibleLimits | InvalidToolKind | InvalidOption> => {
  const manager = ContextManager.layer({
    model: { ref: SESSION_MODEL, limits: LIMITS },
    compactionModel: { ref: COMPACTION_MODEL, limits: { context: 200_000, output: 8_000 } },
    ...options,
  })
  return (summarizer === undefined ? manager : manager.pipe(Layer.provide(summarizer))).pipe(
    Layer.provide(Ids.Ids.layerSequential),
    Layer.provideMerge(EventStore.layerMemory()),
  )
}

/** A managed runtime over `layer`. */
export const runtime = (
  summarizer?: Layer.Layer<Summarizer>,
  options: Partial<Options> = {},
): ManagedRuntime.ManagedRuntime<Services, Config.ImpossibleLimits | InvalidToolKind | InvalidOption> =>
  ManagedRuntime.make(layer(summarizer, options))
