// pivot in an AI SDK agent, end to end: a ToolLoopAgent whose every step goes through pivot's ContextManager, with a
// separate (smaller) compaction model writing the summaries. By default the models are scripted, so the example runs
// offline and always shows both kinds of pivot: a step whose usage fills the context, then a provider that rejects
// a request as too large (HTTP 413). Set PIVOT_BASE_URL and PIVOT_MODEL (and PIVOT_API_KEY, PIVOT_COMPACTION_MODEL)
// to run the same code against an OpenAI-compatible endpoint.
//
//   node packages/ai/examples/agent.ts
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { Ids } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { APICallError, jsonSchema, type LanguageModel, stepCountIs, ToolLoopAgent, tool } from "ai"
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test"
import { Layer, ManagedRuntime } from "effect"
import { AiAgent, AiSummarizer } from "../src/index.ts"

/** What the example needs: the session model, the compaction model, and where to print. */
export interface ExampleOptions {
  readonly model: LanguageModel
  readonly compactionModel: LanguageModel
  readonly limits?: { readonly context: number; readonly output: number } | undefined
  readonly log?: ((line: string) => void) | undefined
}

/** What the example did, for its test. */
export interface ExampleResult {
  readonly answers: ReadonlyArray<string>
  readonly pivots: number
  readonly log: ReadonlyArray<string>
}

const SESSION = "ses_example"

// The agent's tools over a fake file system: enough to show tool calls and their results being recorded.
const makeTools = () => {
  const files: Record<string, string> = {
    "src/answer.ts": "export const answer = 41\n",
    "README.md": "# answer\nThe answer should be 42.\n",
  }
  return {
    read: tool({
      description: "Read a file of the project",
      inputSchema: jsonSchema<{ path: string }>({
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
      }),
      execute: async ({ path }) => files[path] ?? `no such file: ${path}`,
    }),
    write: tool({
      description: "Write a file of the project",
      inputSchema: jsonSchema<{ path: string; content: string }>({
        type: "object",
        properties: { path: { type: "string" }, content: { type: "string" } },
        required: ["path", "content"],
      }),
      execute: async ({ path, content }) => {
        files[path] = content
        return `wrote ${path}`
      },
    }),
  }
}

const bar = (percent: number): string => {
  const filled = Math.max(0, Math.min(20, Math.round(percent / 5)))
  return `[${"#".repeat(filled)}${".".repeat(20 - filled)}] ${percent.toFixed(1)}%`
}

/** Runs three user turns through a pivot-managed ToolLoopAgent and reports what happened. */
export const runExample = async (options: ExampleOptions): Promise<ExampleResult> => {
  const lines: Array<string> = []
  const log = (line: string) => {
    lines.push(line)
    options.log?.(line)
  }
  const modelRef = AiSummarizer.modelRefOf(options.model)
  const compactionRef = AiSummarizer.modelRefOf(options.compactionModel)
  const limits = options.limits ?? { context: 128_000, output: 16_000 }

  // 1. pivot's layers: the context manager over an event store, with the AI SDK summariser on its own model.
  const layer = ContextManager.layer({
    model: { ref: modelRef, limits },
    compactionModel: { ref: compactionRef, limits },
  }).pipe(
    Layer.provide(AiSummarizer.layer({ model: options.compactionModel, timeout: "60 seconds" })),
    Layer.provide(Ids.Ids.layer),
    Layer.provideMerge(EventStore.layerMemory()),
  )
  const runtime = ManagedRuntime.make(layer)

  // 2. The hooks of one session, and an agent that takes them as settings.
  let pivots = 0
  const pivot = AiAgent.fromRuntime(runtime, {
    sessionId: SESSION,
    onPrepared: (prepared) => {
      if (prepared.compaction?.outcome?.status === "finished") {
        pivots++
        log(`  ⤷ pivot: summary written, then ${prepared.compaction.continuation ?? "no continue"}`)
      }
      log(`  context ${bar(prepared.usage.percent)} (${prepared.usage.tokens} tokens, ${prepared.usage.source})`)
    },
    onRecorded: (recorded) => {
      if (recorded.overflow) log(`  ⤷ the step filled the context: compaction ${recorded.compaction ?? "not possible"}`)
    },
  })
  const agent = new ToolLoopAgent({
    model: options.model,
    instructions: "You are a careful coding agent. Use the tools to read and change files.",
    tools: makeTools(),
    stopWhen: stepCountIs(8),
    maxRetries: 0,
    ...pivot.settings,
  })

  // 3. Each turn: record the user's message, let the agent run; `run` compacts and retries after an overflow.
  const answers: Array<string> = []
  try {
    for (const request of ["What is the answer in src/answer.ts?", "Make it 42.", "Is the README still right?"]) {
      log(`user: ${request}`)
      // Record the message once: `run` may call the agent again after an overflow compaction (the turn is replayed).
      const turn = await pivot.user(request)
      const result = await pivot.run(() => agent.generate(turn))
      if (pivot.lastError() !== undefined) log(`  ⤷ provider error: ${pivot.lastError()?.error.name}`)
      answers.push(result.text)
      log(`assistant: ${result.text}`)
    }
  } finally {
    await runtime.dispose()
  }
  return { answers, pivots, log: lines }
}

// -----------------------------------------------------------------------------------------------------------------
// The scripted models of the offline run.

type Settings = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>
type Generated = Awaited<ReturnType<Extract<Settings["doGenerate"], (...args: never) => unknown>>>
type StreamPart =
  Awaited<ReturnType<Extract<Settings["doStream"], (...args: never) => unknown>>>["stream"] extends ReadableStream<
    infer P
  >
    ? P
    : never

const step = (content: Generated["content"], finish: "stop" | "tool-calls", inputTokens: number): Generated => ({
  content,
  finishReason: { unified: finish, raw: finish },
  usage: {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: undefined },
    outputTokens: { total: 40, text: 40, reasoning: 0 },
  },
  warnings: [],
})

const call = (id: string, name: string, input: unknown) =>
  ({ type: "tool-call", toolCallId: id, toolName: name, input: JSON.stringify(input) }) as const

/** A scripted session model: its second step fills the window (118k of 128k), its fourth call is rejected (413). */
export const scriptedModel = (): MockLanguageModelV4 => {
  const script: ReadonlyArray<Generated | "413"> = [
    step([call("c1", "read", { path: "src/answer.ts" })], "tool-calls", 2_000),
    step([{ type: "text", text: "src/answer.ts exports answer = 41." }], "stop", 118_000),
    step([call("c2", "write", { path: "src/answer.ts", content: "export const answer = 42\n" })], "tool-calls", 3_000),
    "413",
    step([{ type: "text", text: "Done: src/answer.ts now exports 42." }], "stop", 3_000),
    step([call("c3", "read", { path: "README.md" })], "tool-calls", 3_000),
    step([{ type: "text", text: "Yes: the README says 42, and src/answer.ts now exports 42." }], "stop", 3_500),
  ]
  let index = 0
  return new MockLanguageModelV4({
    provider: "scripted.chat",
    modelId: "coder",
    doGenerate: async () => {
      const next = script[Math.min(index++, script.length - 1)]
      if (next === "413" || next === undefined)
        throw new APICallError({
          message: "request entity too large",
          url: "http://127.0.0.1/v1/chat/completions",
          requestBodyValues: {},
          statusCode: 413,
          isRetryable: false,
        })
      return next
    },
  })
}

/** A scripted compaction model: it answers every summary request with the same short summary. */
export const scriptedCompactionModel = (): MockLanguageModelV4 =>
  new MockLanguageModelV4({
    provider: "scripted.chat",
    modelId: "compactor",
    doStream: async () => ({
      stream: convertArrayToReadableStream<StreamPart>([
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t" },
        {
          type: "text-delta",
          id: "t",
          delta:
            "## Objective\n- Set the answer in src/answer.ts to 42\n\n## Relevant Files\n- src/answer.ts: the answer",
        },
        { type: "text-end", id: "t" },
        {
          type: "finish",
          finishReason: { unified: "stop", raw: "stop" },
          usage: {
            inputTokens: { total: 900, noCache: 900, cacheRead: 0, cacheWrite: undefined },
            outputTokens: { total: 60, text: 60, reasoning: 0 },
          },
        },
      ]),
    }),
  })

const fromEnvironment = (): ExampleOptions | undefined => {
  const baseURL = process.env.PIVOT_BASE_URL
  const modelId = process.env.PIVOT_MODEL
  if (baseURL === undefined || modelId === undefined) return undefined
  const provider = createOpenAICompatible({
    name: "endpoint",
    baseURL,
    includeUsage: true,
    ...(process.env.PIVOT_API_KEY === undefined ? {} : { apiKey: process.env.PIVOT_API_KEY }),
  })
  return {
    model: provider.chatModel(modelId),
    compactionModel: provider.chatModel(process.env.PIVOT_COMPACTION_MODEL ?? modelId),
  }
}

if (import.meta.main) {
  const options = fromEnvironment() ?? { model: scriptedModel(), compactionModel: scriptedCompactionModel() }
  const result = await runExample({ ...options, log: (line) => console.log(line) })
  console.log(`\n${result.pivots} pivot(s) in ${result.answers.length} turns`)
}
