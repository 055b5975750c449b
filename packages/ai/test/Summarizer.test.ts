import { it as effect } from "@effect/vitest"
import { ProviderError } from "@pivot/core"
import * as Runtime from "@pivot/runtime"
import { APICallError } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Cause, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import * as AiSummarizer from "../src/Summarizer.ts"
import {
  failingModel,
  finish,
  type GenerateResult,
  hangingModel,
  request,
  streamModel,
  textParts,
  USAGE,
} from "./support/Mock.ts"

const summarize = (options: AiSummarizer.Options, req = request()) =>
  Effect.runPromiseExit(AiSummarizer.make(options).summarize(req))

const success = (exit: Exit.Exit<Runtime.SummaryResponse, Runtime.SummarizerError>): Runtime.SummaryResponse => {
  if (Exit.isSuccess(exit)) return exit.value
  throw new Error(`expected a summary, got ${Cause.pretty(exit.cause)}`)
}

const failure = (exit: Exit.Exit<Runtime.SummaryResponse, Runtime.SummarizerError>): Runtime.SummarizerError => {
  if (Exit.isFailure(exit)) {
    const error = Cause.findErrorOption(exit.cause)
    if (error._tag === "Some") return error.value
  }
  throw new Error("expected a SummarizerError")
}

const apiError = (statusCode: number, body: unknown, message = "Request failed") =>
  new APICallError({
    message,
    url: "http://127.0.0.1/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
    responseBody: JSON.stringify(body),
    isRetryable: ProviderError.isRetryableStatus(statusCode),
  })

describe("AiSummarizer over MockLanguageModelV4", () => {
  it("given a model that answers, then the summary is its text with normalised usage and the served model", async () => {
    const model = streamModel([...textParts("  ## Objective\n- fix src/app.ts  "), finish("stop")])
    const response = success(await summarize({ model }))
    expect(response.text).toBe("## Objective\n- fix src/app.ts")
    expect(response.finish).toBe("stop")
    // 100 input of which 20 cache reads; 10 output of which 3 reasoning (spec §2.1).
    expect(response.usage).toEqual({ input: 80, output: 7, reasoning: 3, cacheRead: 20, cacheWrite: 0, total: 110 })
    expect(response.model).toEqual({ providerId: "mock-provider", modelId: "mock-model-id" })
  })

  it("sends the system prompt and the messages, the output cap, and no tools", async () => {
    const model = streamModel([...textParts("summary"), finish()])
    const req = request({ maxOutputTokens: 1234 })
    success(await summarize({ model }, req))
    expect(model.doStreamCalls).toHaveLength(1)
    const call = model.doStreamCalls[0]
    expect(call?.maxOutputTokens).toBe(1234)
    expect(call?.tools ?? []).toEqual([])
    expect(call?.prompt[0]).toEqual({ role: "system", content: req.system })
    const texts = JSON.stringify(call?.prompt.slice(1))
    expect(texts).toContain("fix the failing test in src/app.ts")
    expect(texts).toContain("Summarise the conversation so far.")
  })

  it("records the configured model ref when one is given", async () => {
    const model = streamModel([...textParts("summary"), finish()])
    const modelRef = { providerId: "openai", modelId: "gpt-mini", variant: "low" }
    expect(success(await summarize({ model, modelRef })).model).toEqual(modelRef)
  })

  it("given a resolver, then the compaction model is chosen from the request, not the session model", async () => {
    const session = streamModel([...textParts("from the session model"), finish()])
    const compaction = streamModel([...textParts("from the compaction model"), finish()])
    const seen: Array<string> = []
    const response = success(
      await summarize({
        model: (ref) => {
          seen.push(ref.modelId)
          return ref.modelId === "compactor" ? compaction : session
        },
      }),
    )
    expect(seen).toEqual(["compactor"])
    expect(response.text).toBe("from the compaction model")
    expect(session.doStreamCalls).toHaveLength(0)
  })

  it("C15 a reasoning delta without a reasoning start, then text: the summary is the text, without reasoning", async () => {
    const model = streamModel([
      { type: "reasoning-delta", id: "r1", delta: "let me think about the files" },
      ...textParts("summary"),
      finish("stop"),
    ])
    const response = success(await summarize({ model }))
    expect(response.text).toBe("summary")
    expect(response.text).not.toContain("think")
  })

  it("reasoning with a proper start and end never reaches the summary either", async () => {
    const model = streamModel([
      { type: "reasoning-start", id: "r1" },
      { type: "reasoning-delta", id: "r1", delta: "private chain of thought" },
      { type: "reasoning-end", id: "r1" },
      ...textParts("summary"),
      finish(),
    ])
    expect(success(await summarize({ model })).text).toBe("summary")
  })

  it("C16 a tool call `_noop` with finish tool-calls: nothing is executed and the result is empty, not a tool part", async () => {
    const model = streamModel([
      { type: "tool-call", toolCallId: "call_1", toolName: "_noop", input: "{}" },
      finish("tool-calls"),
    ])
    const error = failure(await summarize({ model }))
    expect(error.reason).toBe("empty")
    expect(error.message).toContain("tool-calls")
    expect(model.doStreamCalls).toHaveLength(1)
  })

  it("C16 a tool call next to text: the summary is the text alone", async () => {
    const model = streamModel([
      ...textParts("summary"),
      { type: "tool-call", toolCallId: "call_1", toolName: "bash", input: '{"command":"rm -rf /"}' },
      finish("tool-calls"),
    ])
    const response = success(await summarize({ model }))
    expect(response.text).toBe("summary")
    expect(response.finish).toBe("tool-calls")
  })

  it("given blank text, then the error is empty", async () => {
    const model = streamModel([...textParts("  \n "), finish()])
    expect(failure(await summarize({ model })).reason).toBe("empty")
  })

  it("given an HTTP 413, then the error is overflow with the classified ContextOverflowError", async () => {
    const model = failingModel(apiError(413, { error: { message: "request entity too large" } }))
    const error = failure(await summarize({ model, maxRetries: 0 }))
    expect(error.reason).toBe("overflow")
    expect(error.error?.name).toBe(ProviderError.CONTEXT_OVERFLOW)
  })

  it("given a 400 with code context_length_exceeded, then the error is overflow", async () => {
    const model = failingModel(
      apiError(400, { error: { message: "too many tokens", code: "context_length_exceeded" } }),
    )
    expect(failure(await summarize({ model, maxRetries: 0 })).reason).toBe("overflow")
  })

  it("given a 503, then the error is failed and keeps the status and the retry verdict", async () => {
    const model = failingModel(apiError(503, { error: { message: "overloaded" } }, "Service Unavailable"))
    const error = failure(await summarize({ model, maxRetries: 0 }))
    expect(error.reason).toBe("failed")
    expect(error.error?.name).toBe(ProviderError.API_ERROR)
    expect(error.error?.data).toMatchObject({ statusCode: 503, isRetryable: true })
  })

  it("given a stream error chunk context_length_exceeded, then the error is overflow (E1)", async () => {
    const model = streamModel([
      { type: "error", error: { code: "context_length_exceeded", message: "too long" } },
      finish("error"),
    ])
    const error = failure(await summarize({ model }))
    expect(error.reason).toBe("overflow")
    expect(error.error?.name).toBe(ProviderError.CONTEXT_OVERFLOW)
  })

  it("given a stream error after partial text and finish error, then the error is failed", async () => {
    const model = streamModel([
      ...textParts("## Objective"),
      { type: "error", error: { code: "server_error", message: "upstream closed" } },
      finish("error"),
    ])
    const error = failure(await summarize({ model }))
    expect(error.reason).toBe("failed")
    expect(error.message).toBe("upstream closed")
  })

  effect.effect("given a model that never answers, then the call times out at its time limit and aborts the call", () =>
    Effect.gen(function* () {
      const { model, aborted } = hangingModel()
      const fiber = yield* Effect.forkChild(
        Effect.exit(AiSummarizer.make({ model, timeout: "1 minute" }).summarize(request())),
      )
      // The AI SDK reaches the provider through promises: let it get there (real scheduling, nothing timed).
      while (model.doStreamCalls.length === 0) yield* TestClock.withLive(Effect.sleep("1 millis"))
      yield* TestClock.adjust("59 seconds")
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect(aborted()).toBe(false)
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.join(fiber)
      expect(failure(exit).reason).toBe("timeout")
      expect(aborted()).toBe(true)
    }),
  )

  it("given an interrupted fiber, then the provider call is aborted and the result is an interruption", async () => {
    const { model, aborted } = hangingModel()
    const exit = await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(AiSummarizer.make({ model }).summarize(request()))
        yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(fiber)
        return yield* Fiber.await(fiber)
      }),
    )
    expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
    expect(aborted()).toBe(true)
  })

  it("given an abort not caused by pivot, then the error is interrupted", async () => {
    const abort = new DOMException("The operation was aborted", "AbortError")
    expect(failure(await summarize({ model: failingModel(abort) })).reason).toBe("interrupted")
  })

  it("is provided as the runtime's Summarizer service by the layer", async () => {
    const model = streamModel([...textParts("summary"), finish()])
    const response = await Effect.runPromise(
      Effect.gen(function* () {
        const summarizer = yield* Runtime.Summarizer
        return yield* summarizer.summarize(request())
      }).pipe(Effect.provide(AiSummarizer.layer({ model }))),
    )
    expect(response.text).toBe("summary")
  })
})

describe("AiSummarizer in generate mode", () => {
  const generated = (content: GenerateResult["content"], unified: "stop" | "tool-calls" = "stop"): GenerateResult => ({
    content,
    finishReason: { unified, raw: unified },
    usage: USAGE,
    warnings: [],
  })

  it("given a model that answers, then the summary is the text without reasoning, with usage", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        generated([
          { type: "reasoning", text: "thinking" },
          { type: "text", text: "summary" },
        ]),
    })
    const response = success(await summarize({ model, mode: "generate" }))
    expect(response.text).toBe("summary")
    expect(response.usage.output).toBe(7)
    expect(model.doGenerateCalls[0]?.tools ?? []).toEqual([])
  })

  it("C16 a tool call alone gives empty", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        generated([{ type: "tool-call", toolCallId: "c1", toolName: "_noop", input: "{}" }], "tool-calls"),
    })
    expect(failure(await summarize({ model, mode: "generate" })).reason).toBe("empty")
  })

  it("given an HTTP 413, then overflow; given a hang, then timeout", async () => {
    const overflow = failingModel(apiError(413, {}))
    expect(failure(await summarize({ model: overflow, mode: "generate", maxRetries: 0 })).reason).toBe("overflow")
    const { model, aborted } = hangingModel()
    expect(failure(await summarize({ model, mode: "generate", timeout: "30 millis" })).reason).toBe("timeout")
    expect(aborted()).toBe(true)
  })
})

describe("AiSummarizer in stream mode, over a model that cannot stream", () => {
  const generateOnly = (text: string) =>
    new MockLanguageModelV4({
      doGenerate: async () => ({
        content: [{ type: "text", text }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: USAGE,
        warnings: [],
      }),
    })

  it("given a model without doStream, then the summary comes from one generate call", async () => {
    const model = generateOnly("summary from generate")
    const response = success(await summarize({ model }))
    expect(response.text).toBe("summary from generate")
    expect(model.doGenerateCalls).toHaveLength(1)
  })

  it("given a stream that fails for another reason, then it fails and nothing else is called", async () => {
    const model = failingModel(apiError(500, {}, "upstream broke"))
    expect(failure(await summarize({ model, maxRetries: 0 })).message).toMatch(/upstream broke/)
    expect(model.doGenerateCalls).toHaveLength(0)
  })

  it("isStreamingUnsupported: only 'not implemented' and unsupported-functionality errors", () => {
    expect(AiSummarizer.isStreamingUnsupported(new Error("Not implemented"))).toBe(true)
    const unsupported = new Error("streaming is not supported")
    unsupported.name = "AI_UnsupportedFunctionalityError"
    expect(AiSummarizer.isStreamingUnsupported(unsupported)).toBe(true)
    expect(AiSummarizer.isStreamingUnsupported(new Error("the feature is not implemented yet here"))).toBe(false)
    expect(AiSummarizer.isStreamingUnsupported("Not implemented")).toBe(false)
  })
})

describe("AiSummarizer.judge", () => {
  const ref = { providerId: "p", modelId: "m" }
  const collected = (over: Partial<AiSummarizer.Collected>): AiSummarizer.Collected => ({
    text: "summary",
    finish: "stop",
    usage: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    errors: [],
    aborted: false,
    ...over,
  })

  it("an overflow error part wins even when text came before it", () => {
    const judged = AiSummarizer.judge(
      collected({ errors: [{ error: { code: "context_length_exceeded" } }], finish: "stop" }),
      ref,
    )
    expect(judged instanceof Runtime.SummarizerError && judged.reason).toBe("overflow")
  })

  it("a harmless error part next to complete text is ignored", () => {
    const judged = AiSummarizer.judge(collected({ errors: ["reasoning part r1 not found"] }), ref)
    expect(judged).toMatchObject({ text: "summary", finish: "stop" })
  })

  it("an abort part gives interrupted", () => {
    const judged = AiSummarizer.judge(collected({ aborted: true }), ref)
    expect(judged instanceof Runtime.SummarizerError && judged.reason).toBe("interrupted")
  })
})

describe("AiSummarizer.modelRefOf", () => {
  it("takes the provider before the first dot and the model id", () => {
    expect(AiSummarizer.modelRefOf(streamModel([]))).toEqual({ providerId: "mock-provider", modelId: "mock-model-id" })
    expect(AiSummarizer.modelRefOf("openai/gpt-5")).toEqual({ providerId: "gateway", modelId: "openai/gpt-5" })
  })

  it("keeps only the provider name of a `name.api` provider id", () => {
    const model = new MockLanguageModelV4({ provider: "local.chat", modelId: "small" })
    expect(AiSummarizer.modelRefOf(model)).toEqual({ providerId: "local", modelId: "small" })
  })
})
