/**
 * The demo: a long coding-agent session run by an AI SDK `ToolLoopAgent` whose every step goes through pivot's
 * runtime (`ContextManager` over SQLite, `@pivot/ai`'s hooks and summariser). The models are scripted by default —
 * the session model plays the example's steps, the compaction model its canned summaries — or, with an endpoint, an
 * OpenAI-compatible server answers the example's user turns (the tools still answer from the example). After every
 * hook the new events are read back from the store and narrated as they happen; the session stays in the database,
 * so the replay commands printed at the end work right away.
 */
import { mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { AiAgent, AiSummarizer } from "@pivot/ai"
import { Events, Ids, type Model, Tokens } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { type LanguageModel, stepCountIs, ToolLoopAgent } from "ai"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Result from "effect/Result"
import { type Example, summaryText } from "./Example.ts"
import * as Narrator from "./Narrator.ts"
import * as Script from "./Script.ts"
import { ScriptedModel } from "./ScriptedModel.ts"
import type { Style } from "./Style.ts"
import { DEFINITIONS, Outputs, tools } from "./Tools.ts"

/** Where the demo keeps its session by default (relative to the working directory). */
export const DEFAULT_DB = ".pivot/demo.db"

/** The steps one user turn may take with a real model before the demo stops it. */
export const MAX_STEPS = 25

/** An OpenAI-compatible endpoint to run the demo against instead of the scripted models. */
export interface Endpoint {
  readonly baseURL: string
  readonly model: string
  readonly apiKey?: string | undefined
  /** The model that writes summaries; the session model when absent. */
  readonly compactionModel?: string | undefined
}

/** The endpoint named by `PIVOT_BASE_URL` and `PIVOT_MODEL` (plus `PIVOT_API_KEY`, `PIVOT_COMPACTION_MODEL`). */
export const endpointFrom = (env: Readonly<Record<string, string | undefined>>): Endpoint | undefined => {
  const baseURL = env.PIVOT_BASE_URL
  const model = env.PIVOT_MODEL
  if (baseURL === undefined || baseURL === "" || model === undefined || model === "") return undefined
  return {
    baseURL,
    model,
    ...(env.PIVOT_API_KEY ? { apiKey: env.PIVOT_API_KEY } : {}),
    ...(env.PIVOT_COMPACTION_MODEL ? { compactionModel: env.PIVOT_COMPACTION_MODEL } : {}),
  }
}

/** How to run the demo. */
export interface Options {
  readonly example: Example
  /** The SQLite file; its directory is created. */
  readonly db: string
  /** Receives every line of the commentary as it happens. */
  readonly out: (line: string) => void
  readonly style: Style
  readonly width: number
  /** Run against this endpoint instead of the scripted models. */
  readonly endpoint?: Endpoint | undefined
  /** Receives each of pivot's warnings (a summary that fell back, …) as one line; default: standard error. */
  readonly warn?: ((line: string) => void) | undefined
}

/** A logger that hands each warning or error to `warn` as one line: the message's parts joined by spaces. */
const warnings = (warn: (line: string) => void) =>
  Logger.make((entry) => {
    if (entry.logLevel !== "Warn" && entry.logLevel !== "Error" && entry.logLevel !== "Fatal") return
    const parts = Array.isArray(entry.message) ? entry.message : [entry.message]
    warn(parts.map((part) => (typeof part === "string" ? part : String(part))).join(" "))
  })

/** What a run did. */
export interface Outcome {
  readonly sessionId: string
  readonly db: string
  /** Every event of the session, with its stream version, as read back from the store. */
  readonly events: ReadonlyArray<Narrator.Logged>
  readonly pivots: ReadonlyArray<Narrator.Pivot>
  /** The scripted models (absent with an endpoint): their calls hold the prompts they received. */
  readonly model?: ScriptedModel | undefined
  readonly compactionModel?: ScriptedModel | undefined
  /** Set when a turn failed and the demo stopped early. */
  readonly error?: string | undefined
}

/** Estimated tokens of what every call carries besides the window: the system prompt and the tool definitions. */
export const overheadTokens = (system: string): number =>
  Tokens.estimate(JSON.stringify({ role: "system", content: system })) +
  Tokens.estimate(
    JSON.stringify(
      Object.entries(DEFINITIONS).map(([name, d]) => ({
        type: "function",
        name,
        description: d.description,
        inputSchema: { type: "object", properties: d.properties, required: d.required },
      })),
    ),
  )

interface Models {
  readonly model: LanguageModel
  readonly ref: Model.ModelRef
  readonly compactionModel: LanguageModel
  readonly compactionRef: Model.ModelRef
  readonly summarizer: string
  readonly scripted?: { readonly model: ScriptedModel; readonly compaction: ScriptedModel } | undefined
}

const modelsFor = (example: Example, script: Script.SessionScript, endpoint?: Endpoint): Models => {
  if (endpoint !== undefined) {
    const provider = createOpenAICompatible({
      name: "endpoint",
      baseURL: endpoint.baseURL,
      includeUsage: true,
      ...(endpoint.apiKey === undefined ? {} : { apiKey: endpoint.apiKey }),
    })
    const model = provider.chatModel(endpoint.model)
    const compactionModel = provider.chatModel(endpoint.compactionModel ?? endpoint.model)
    return {
      model,
      ref: AiSummarizer.modelRefOf(model),
      compactionModel,
      compactionRef: AiSummarizer.modelRefOf(compactionModel),
      summarizer: `${endpoint.compactionModel ?? endpoint.model}, pivot's extractive fallback if it fails`,
    }
  }
  const { providerId, modelId, limits } = example.model
  const contextLimit = limits.input || limits.context
  const model = new ScriptedModel({
    provider: `${providerId}.chat`,
    modelId,
    contextLimit,
    respond: script.respond,
    refused: script.refused,
  })
  const compaction = new ScriptedModel({
    provider: `${providerId}.chat`,
    modelId: "scripted-summarizer",
    contextLimit,
    respond: Script.summaries(example),
  })
  const canned = example.summaries.length
  return {
    model,
    ref: { providerId, modelId },
    compactionModel: compaction,
    compactionRef: { providerId, modelId: compaction.modelId },
    summarizer: `${providerId}/${compaction.modelId} (${canned} canned), then pivot's extractive fallback`,
    scripted: { model, compaction },
  }
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Runs the demo session and narrates it through `options.out`. */
export const run = async (options: Options): Promise<Outcome> => {
  const { example, out } = options
  mkdirSync(dirname(resolve(options.db)), { recursive: true })
  const outputs = new Outputs(example)
  const script = Script.session(example, outputs)
  const models = modelsFor(example, script, options.endpoint)
  const system = summaryText(example.system)
  const overhead = overheadTokens(system)
  const limits = example.model.limits
  const config = example.config

  const layer = ContextManager.layer({
    model: { ref: models.ref, limits },
    compactionModel: { ref: models.compactionRef, limits },
    config,
    ...(example.pruneThresholds === undefined ? {} : { prune: example.pruneThresholds }),
    overheadTokens: overhead,
    summaryTimeout: options.endpoint === undefined ? "30 seconds" : "3 minutes",
  }).pipe(
    Layer.provide(
      AiSummarizer.layer({
        model: models.compactionModel,
        modelRef: models.compactionRef,
        mode: "generate",
        maxRetries: options.endpoint === undefined ? 0 : 2,
      }),
    ),
    Layer.provideMerge(Ids.Ids.layer),
    Layer.provideMerge(EventStore.layerSqlite({ filename: options.db })),
    // pivot's warnings (a summary that fell back, …) go to stderr: stdout is the commentary, or JSON with --json. Each
    // is its message alone (it names pivot, the session and the compaction), not the logger's timestamp, level and fiber.
    Layer.provideMerge(Logger.layer([warnings(options.warn ?? ((line) => process.stderr.write(`${line}\n`)))])),
  )
  const runtime = ManagedRuntime.make(layer)
  try {
    const sessionId: string = await runtime.runPromise(
      Effect.gen(function* () {
        return yield* (yield* Ids.Ids).session
      }),
    )
    const narrator = Narrator.make({
      sessionId,
      db: options.db,
      model: models.ref,
      limits,
      config,
      pruneThresholds: example.pruneThresholds,
      overheadTokens: overhead,
      summarizer: models.summarizer,
      style: options.style,
      width: options.width,
    })
    for (const line of narrator.header()) out(line)

    const events: Array<Narrator.Logged> = []
    /** Reads the events appended since the last read, and narrates them. */
    const flush = async () => {
      const from = (events.at(-1)?.version ?? 0) + 1
      const recorded = await runtime.runPromise(
        Effect.gen(function* () {
          return yield* (yield* EventStore).read(Events.streamName(sessionId), { from })
        }),
      )
      const batch: Array<Narrator.Logged> = []
      for (const r of recorded) {
        const decoded = Sessions.decodeEvent(sessionId, r)
        if (Result.isFailure(decoded)) throw decoded.failure
        batch.push({ event: decoded.success, version: r.streamVersion })
      }
      events.push(...batch)
      for (const line of narrator.feed(batch)) out(line)
    }

    /** Prunes after a turn, as OpenCode does after its loop (with the example's thresholds when it scales them). */
    const prune = () =>
      runtime.runPromise(
        Effect.gen(function* () {
          yield* (yield* ContextManager).prune(sessionId)
        }),
      )

    await runtime.runPromise(
      Effect.gen(function* () {
        yield* (yield* ContextManager).start(sessionId, { title: example.title, model: models.ref })
      }),
    )
    await flush()

    const pivot = AiAgent.fromRuntime(runtime, { sessionId, agent: "build", prune: false })
    const hooks = pivot.settings
    // pivot's hooks, each followed by reading what it recorded.
    const settings: AiAgent.Settings = {
      prepareStep: async () => {
        const prepared = await hooks.prepareStep()
        await flush()
        return prepared
      },
      onStepEnd: async (step) => {
        await hooks.onStepEnd(step)
        await flush()
      },
      onStepError: async (event) => {
        await hooks.onStepError(event)
        await flush()
      },
      onError: hooks.onError,
      onEnd: async () => {
        await hooks.onEnd()
        await flush()
      },
    }
    const agent = new ToolLoopAgent({
      model: models.model,
      instructions: system,
      tools: tools(outputs),
      stopWhen: stepCountIs(MAX_STEPS),
      maxRetries: options.endpoint === undefined ? 0 : 2,
      ...settings,
    })

    let error: string | undefined
    for (const [index, turn] of example.turns.entries()) {
      script.begin(index)
      // Recorded once, outside `run`: a retry after a refused call must not record the request again.
      const prompt = await pivot.user(turn.user)
      await flush()
      try {
        // `run` calls again when a refused call asked for a compaction: the next attempt starts from the summary.
        await pivot.run(() => agent.generate(prompt))
      } catch (cause) {
        await flush()
        error = errorText(cause)
        out(options.style.red(`  ✗ the turn failed: ${error}`))
        break
      }
      // A compaction asked for by the turn's last step runs now, before the agent waits for the user (as in OpenCode).
      await runtime.runPromise(
        Effect.gen(function* () {
          const cm = yield* ContextManager
          if ((yield* cm.usage(sessionId)).status === "compacting") yield* cm.prepare(sessionId)
        }),
      )
      await flush()
      await prune()
      await flush()
    }
    for (const line of narrator.summary()) out(line)
    return {
      sessionId,
      db: options.db,
      events,
      pivots: narrator.pivots(),
      ...(models.scripted === undefined
        ? {}
        : { model: models.scripted.model, compactionModel: models.scripted.compaction }),
      ...(error === undefined ? {} : { error }),
    }
  } finally {
    await runtime.dispose()
  }
}
