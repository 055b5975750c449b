import { ProviderError } from "@pivot/core"
import { describe, expect, it } from "vitest"

const OVERFLOW = "ContextOverflowError"

// One real-world message per pattern, in the order of `OVERFLOW_PATTERNS` (spec §2.5).
const SAMPLES: ReadonlyArray<readonly [provider: string, message: string]> = [
  ["Anthropic", "prompt is too long: 213462 tokens > 200000 maximum"],
  ["Amazon Bedrock", "Input is too long for requested model."],
  ["OpenAI", "Your input exceeds the context window of this model. Please adjust your input and try again."],
  ["Google Gemini", "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."],
  ["a gateway", "Total tokens in request more than max tokens allowed for this model"],
  ["xAI", "This model's maximum prompt length is 131072 but the request contains 537812 tokens."],
  ["Groq", "Please reduce the length of the messages or completion."],
  [
    "OpenRouter",
    "This endpoint's maximum context length is 128000 tokens. However, you requested about 150000 tokens.",
  ],
  ["GitHub Copilot", "prompt token count of 140000 exceeds the limit of 128000"],
  ["llama.cpp", "the request exceeds the available context size, try increasing it"],
  ["LM Studio", "The number of tokens to keep from the initial prompt is greater than the context length"],
  ["MiniMax", "invalid params, context window exceeds limit (2013)"],
  ["Moonshot", "Your request exceeded model token limit: 262144 (requested: 300000)"],
  ["generic", "context_length_exceeded"],
  ["HTTP 413", "413 Request Entity Too Large"],
  ["vLLM", "However, the model's context length is only 8192 tokens, resulting in 9000 tokens."],
  ["vLLM", "Input length 9000 exceeds the model's maximum context length 8192"],
  ["Ollama", "prompt too long; exceeded max context length by 1200 tokens"],
  ["Mistral", "Prompt contains 140000 tokens, too large for model with 131072 maximum context length"],
  ["z.ai", "model_context_window_exceeded"],
]

describe("ProviderError.classify — API call errors (spec §2.5)", () => {
  it("the sample table covers every overflow pattern", () =>
    expect(SAMPLES).toHaveLength(ProviderError.OVERFLOW_PATTERNS.length))

  it.each(SAMPLES.map(([provider, message], index) => ({ provider, message, index })))(
    "pattern $index ($provider): given a 400 with “$message”, then it is a context overflow",
    ({ message, index }) => {
      expect(ProviderError.OVERFLOW_PATTERNS[index]!.test(message)).toBe(true)
      const error = ProviderError.classify({ message, statusCode: 400 })
      expect(error).toEqual({ name: OVERFLOW, message, data: { message } })
    },
  )

  it.each(SAMPLES.map(([, message], index) => ({ message: message.toUpperCase(), index })))(
    "pattern $index matches case-insensitively",
    ({ message }) => expect(ProviderError.classify({ message, statusCode: 400 }).name).toBe(OVERFLOW),
  )

  it.each(["context length exceeded", "context_length exceeded", "prompt too long; exceeded context length"])(
    "given the pattern variant “%s”, then it is a context overflow",
    (message) => expect(ProviderError.classify({ message }).name).toBe(OVERFLOW),
  )

  it.each([
    "400 (no body)",
    "413 (no body)",
    "400 status code (no body)",
    "413 Status Code (No Body)",
    "400  (no body)",
  ])("given the bodiless message “%s”, then it is a context overflow", (message) =>
    expect(ProviderError.classify({ message }).name).toBe(OVERFLOW),
  )

  it("given “(no body)” not at the start, then the bodiless rule does not apply", () =>
    expect(ProviderError.classify({ message: "error: 400 (no body)", statusCode: 400 }).name).toBe("APIError"))

  it("given status 413 with an unrelated message, then it is a context overflow", () =>
    expect(ProviderError.classify({ message: "Payload rejected", statusCode: 413 }).name).toBe(OVERFLOW))

  it("S1's provider error (413, body message “request entity too large”) is a context overflow", () => {
    const responseBody = JSON.stringify({ error: { message: "request entity too large" } })
    expect(ProviderError.classify({ message: "Request failed", statusCode: 413, responseBody })).toEqual({
      name: OVERFLOW,
      message: "Request failed",
      data: { message: "Request failed", responseBody },
    })
  })

  it("given a generic message but an overflow message inside the JSON body, then it is a context overflow", () => {
    const responseBody = JSON.stringify({ error: { message: "prompt is too long: 250000 tokens > 200000 maximum" } })
    expect(ProviderError.classify({ message: "Bad Request", statusCode: 400, responseBody }).name).toBe(OVERFLOW)
  })

  it("E3 given status 422, “Request failed” and body error.code context_length_exceeded, then it is an overflow", () => {
    const body = { error: { code: "context_length_exceeded" } }
    expect(ProviderError.classify({ message: "Request failed", statusCode: 422, body }).name).toBe(OVERFLOW)
  })

  it("E3 given only the response body as JSON text, then it is parsed for error.code", () => {
    const responseBody = JSON.stringify({ error: { code: "context_length_exceeded", message: "too many" } })
    expect(ProviderError.classify({ message: "Request failed", statusCode: 422, responseBody })).toEqual({
      name: OVERFLOW,
      message: "Request failed",
      data: { message: "Request failed", responseBody },
    })
  })

  it("given a response body that is not JSON, then it is ignored without failing", () =>
    expect(ProviderError.classify({ message: "Bad gateway", statusCode: 502, responseBody: "<html>" }).name).toBe(
      "APIError",
    ))

  it("E4 given “429 status code (no body)” with status 429, then it is an APIError, not an overflow", () => {
    const error = ProviderError.classify({ message: "429 status code (no body)", statusCode: 429 })
    expect(error).toEqual({
      name: "APIError",
      message: "429 status code (no body)",
      data: { message: "429 status code (no body)", statusCode: 429, isRetryable: true },
    })
    expect(ProviderError.isOverflowError(error)).toBe(false)
  })

  it("given a plain 400, then it is a non-retryable APIError keeping status and body", () => {
    const responseBody = JSON.stringify({ error: { message: "invalid tool schema" } })
    expect(ProviderError.classify({ message: "Bad Request", statusCode: 400, responseBody })).toEqual({
      name: "APIError",
      message: "Bad Request",
      data: { message: "Bad Request", statusCode: 400, isRetryable: false, responseBody },
    })
  })

  it("given an empty message, then the body's message stands in", () =>
    expect(
      ProviderError.classify({ message: "", statusCode: 500, body: { error: { message: "upstream down" } } }).message,
    ).toBe("upstream down"))

  it("given the SDK's own retry verdict, then it wins over the status", () => {
    const error = ProviderError.classify({ message: "Not found", statusCode: 404, isRetryable: true })
    expect(ProviderError.isRetryable(error)).toBe(true)
  })
})

describe("ProviderError.classify — stream error chunks", () => {
  it("E1 given {type:error, error:{code:context_length_exceeded}}, then an overflow with the fixed message and its JSON", () => {
    const chunk = { type: "error", error: { code: "context_length_exceeded" } } as const
    expect(ProviderError.classify(chunk)).toEqual({
      name: OVERFLOW,
      message: "Input exceeds context window of this model",
      data: { message: "Input exceeds context window of this model", responseBody: JSON.stringify(chunk) },
    })
  })

  it("given a chunk whose message matches an overflow pattern, then it is an overflow keeping that message", () => {
    const chunk = { type: "error", error: { type: "invalid_request_error", message: "prompt is too long" } } as const
    expect(ProviderError.classify(chunk).message).toBe("prompt is too long")
    expect(ProviderError.isOverflowError(chunk)).toBe(true)
  })

  it.each([
    ["server_error", true],
    ["server_is_overloaded", true],
    ["rate_limit_exceeded", true],
    ["insufficient_quota", false],
    ["invalid_prompt", false],
  ])("given stream code %s, then an APIError with retryable %s", (code, retryable) => {
    const error = ProviderError.classify({ type: "error", error: { code, message: `failed: ${code}` } })
    expect(error.name).toBe("APIError")
    expect(error.message).toBe(`failed: ${code}`)
    expect(ProviderError.isRetryable(error)).toBe(retryable)
  })
})

describe("ProviderError.isRetryable", () => {
  it("Y1 given ContextOverflowError “Input exceeds context window of this model”, then it is not retryable", () =>
    expect(ProviderError.isRetryable({ name: OVERFLOW, message: "Input exceeds context window of this model" })).toBe(
      false,
    ))

  it.each([408, 409, 429, 500, 502, 503, 529])("given status %i, then it is retryable", (statusCode) =>
    expect(ProviderError.isRetryable({ message: "failed", statusCode })).toBe(true),
  )

  it.each([400, 401, 403, 404, 422])("given status %i, then it is not retryable", (statusCode) =>
    expect(ProviderError.isRetryable({ message: "failed", statusCode })).toBe(false),
  )

  it("given a 413 (an overflow), then it is never retryable even if the SDK says so", () =>
    expect(ProviderError.isRetryable({ message: "too big", statusCode: 413, isRetryable: true })).toBe(false))

  it("given a 503 whose message is an overflow, then the overflow wins: not retryable", () =>
    expect(ProviderError.isRetryable({ message: "prompt is too long", statusCode: 503 })).toBe(false))

  it("given no status (a network failure), then it is not retryable unless the SDK says so", () => {
    expect(ProviderError.isRetryable({ message: "socket hang up" })).toBe(false)
    expect(ProviderError.isRetryable({ message: "socket hang up", isRetryable: true })).toBe(true)
  })
})

describe("ProviderError.fromUnknown", () => {
  it("given an APICallError-like object, then its status and body are used", () => {
    const thrown = Object.assign(new Error("Request failed"), {
      statusCode: 422,
      responseBody: JSON.stringify({ error: { code: "context_length_exceeded" } }),
    })
    expect(ProviderError.fromUnknown(thrown).name).toBe(OVERFLOW)
  })

  it("given a stream chunk serialised as JSON, then it is classified as the chunk", () =>
    expect(
      ProviderError.fromUnknown(JSON.stringify({ type: "error", error: { code: "context_length_exceeded" } })).message,
    ).toBe("Input exceeds context window of this model"))

  it("given an Error whose message is a stream chunk's JSON, then it is classified as the chunk", () => {
    const thrown = new Error(JSON.stringify({ type: "error", error: { code: "context_length_exceeded" } }))
    expect(ProviderError.fromUnknown(thrown).name).toBe(OVERFLOW)
  })

  it("given a thrown string, then its text is classified", () => {
    expect(ProviderError.fromUnknown("413 (no body)").name).toBe(OVERFLOW)
    expect(ProviderError.fromUnknown("boom").name).toBe("APIError")
  })

  it("given something else, then a non-retryable UnknownError", () => {
    const error = ProviderError.fromUnknown(42)
    expect(error).toEqual({ name: "UnknownError", message: "42" })
    expect(ProviderError.isRetryable(error)).toBe(false)
    expect(ProviderError.isOverflowError(error)).toBe(false)
  })
})
