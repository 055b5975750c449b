// The AI SDK summariser over real HTTP: a loopback OpenAI-compatible server (127.0.0.1, ephemeral port) reached
// through @ai-sdk/openai-compatible. Every server closes all its connections when its test ends.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { ProviderError } from "@pivot/core"
import type * as Runtime from "@pivot/runtime"
import { Cause, Effect, Exit } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import * as AiSummarizer from "../src/Summarizer.ts"
import { request } from "./support/Mock.ts"
import {
  completion,
  type Handler,
  json,
  type LoopbackServer,
  sseAnswer,
  startServer,
  streamEvents,
} from "./support/Server.ts"

let server: LoopbackServer | undefined

afterEach(async () => {
  await server?.close()
  server = undefined
})

const serve = async (handler: Handler) => {
  server = await startServer(handler)
  return server
}

const modelAt = (baseURL: string) =>
  createOpenAICompatible({ name: "local", baseURL, apiKey: "test-key", includeUsage: true }).chatModel("compactor")

const summarize = async (handler: Handler, options: Partial<AiSummarizer.Options> = {}) => {
  const { baseURL } = await serve(handler)
  return Effect.runPromiseExit(
    AiSummarizer.make({ model: modelAt(baseURL), maxRetries: 0, timeout: "5 seconds", ...options }).summarize(
      request(),
    ),
  )
}

const success = (exit: Exit.Exit<Runtime.SummaryResponse, Runtime.SummarizerError>): Runtime.SummaryResponse => {
  if (Exit.isSuccess(exit)) return exit.value
  throw new Error(`expected a summary, got ${Cause.pretty(exit.cause)}`)
}

const failure = (exit: Exit.Exit<Runtime.SummaryResponse, Runtime.SummarizerError>): Runtime.SummarizerError => {
  const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
  if (error?._tag === "Some") return error.value
  throw new Error("expected a SummarizerError")
}

describe("AiSummarizer over HTTP (loopback OpenAI-compatible server)", () => {
  it("given a streamed answer, then the summary and its usage are recorded", async () => {
    const exit = await summarize((response) =>
      streamEvents(response, sseAnswer(["## Objective\n", "- fix src/app.ts"])),
    )
    const response = success(exit)
    expect(response.text).toBe("## Objective\n- fix src/app.ts")
    expect(response.finish).toBe("stop")
    // 120 prompt tokens of which 20 cached; 15 completion tokens of which 3 reasoning.
    expect(response.usage).toEqual({ input: 100, output: 12, reasoning: 3, cacheRead: 20, cacheWrite: 0, total: 135 })
    expect(response.model).toEqual({ providerId: "local", modelId: "compactor" })
    const sent = server?.received[0]
    expect(sent?.path).toBe("/v1/chat/completions")
    expect(sent?.closedEarly).toBe(false)
    expect(sent?.body).toMatchObject({ model: "compactor", stream: true, max_tokens: 4_000 })
    expect(sent?.body.tools).toBeUndefined()
    const messages = sent?.body.messages as Array<{ role: string; content: unknown }>
    expect(messages[0]).toEqual({ role: "system", content: request().system })
    expect(JSON.stringify(messages)).toContain("fix the failing test in src/app.ts")
  })

  it("given a JSON answer in generate mode, then the summary and its usage are recorded", async () => {
    const exit = await summarize((response) => json(response, 200, completion("summary")), { mode: "generate" })
    const response = success(exit)
    expect(response.text).toBe("summary")
    expect(response.usage.input).toBe(100)
    expect(server?.received[0]?.body.stream).not.toBe(true)
  })

  it("given HTTP 413, then the error is overflow", async () => {
    const exit = await summarize((response) => json(response, 413, { error: { message: "request entity too large" } }))
    const error = failure(exit)
    expect(error.reason).toBe("overflow")
    expect(error.error?.name).toBe(ProviderError.CONTEXT_OVERFLOW)
    expect(server?.received).toHaveLength(1)
  })

  it("given a 400 with code context_length_exceeded, then the error is overflow and it is not retried", async () => {
    const exit = await summarize(
      (response) =>
        json(response, 400, {
          error: { message: "Request rejected", type: "invalid_request_error", code: "context_length_exceeded" },
        }),
      { maxRetries: 2 },
    )
    expect(failure(exit).reason).toBe("overflow")
    expect(server?.received).toHaveLength(1)
  })

  it("given a context_length_exceeded error chunk inside the stream, then the error is overflow", async () => {
    const exit = await summarize((response) =>
      streamEvents(response, [{ error: { message: "Request rejected", code: "context_length_exceeded" } }]),
    )
    expect(failure(exit).reason).toBe("overflow")
  })

  it("given HTTP 500, then the error is failed with the status and a retryable verdict", async () => {
    const exit = await summarize((response) => json(response, 500, { error: { message: "internal error" } }))
    const error = failure(exit)
    expect(error.reason).toBe("failed")
    expect(error.error?.name).toBe(ProviderError.API_ERROR)
    expect(error.error?.data).toMatchObject({ statusCode: 500, isRetryable: true })
  })

  it("given a 503 then an answer, then the retry (honouring retry-after-ms) gives the summary", async () => {
    const exit = await summarize(
      (response, _, index) =>
        index === 0
          ? json(response, 503, { error: { message: "overloaded" } }, { "retry-after-ms": "10" })
          : streamEvents(response, sseAnswer(["summary after retry"])),
      { maxRetries: 1 },
    )
    expect(success(exit).text).toBe("summary after retry")
    expect(server?.received).toHaveLength(2)
  })

  it("given a slow stream that ends within the time limit, then the summary is complete and the request ran to its end", async () => {
    const pieces = ["## Objective\n", "- a\n", "- b\n", "- c\n", "- d"]
    const exit = await summarize((response) => streamEvents(response, sseAnswer(pieces), 60), { timeout: "1 minute" })
    expect(success(exit).text).toBe("## Objective\n- a\n- b\n- c\n- d")
    expect(server?.received).toHaveLength(1)
    expect(server?.received[0]?.closedEarly).toBe(false)
  })

  it("given a slow stream that outlasts the time limit, then timeout, and the HTTP request is aborted", async () => {
    const pieces = Array.from({ length: 40 }, (_, i) => `line ${i}\n`)
    const exit = await summarize((response) => streamEvents(response, sseAnswer(pieces), 100), {
      timeout: "300 millis",
    })
    expect(failure(exit).reason).toBe("timeout")
    await expect.poll(() => server?.received[0]?.closedEarly, { timeout: 2_000 }).toBe(true)
  })

  it("given a server that never answers, then timeout, and the HTTP request is aborted", async () => {
    const exit = await summarize(() => {}, { timeout: "200 millis" })
    expect(failure(exit).reason).toBe("timeout")
    await expect.poll(() => server?.received[0]?.closedEarly, { timeout: 2_000 }).toBe(true)
  })
})
