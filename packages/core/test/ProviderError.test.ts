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

// Near misses: texts that share words with an overflow pattern but say something else. Each must stay an APIError,
// so a pattern loosened by a fault (a lost digit class, a dropped anchor, an optional part made free) is caught.
const NEAR_MISSES: ReadonlyArray<readonly [pattern: string, message: string]> = [
  ["maximum prompt length is \\d+", "maximum prompt length is unknown"],
  ["maximum context length is \\d+ tokens", "maximum context length is 8192 characters"],
  ["maximum context length is \\d+ tokens", "maximum context length is large tokens"],
  ["exceeds the limit of \\d+", "exceeds the limit of requests"],
  ["context length is only \\d+ tokens", "context length is only a few tokens"],
  ["too large for model with \\d+ maximum context length", "too large for model with no maximum context length"],
  ["input token count.*exceeds the maximum", "the maximum input token count is 10"],
  ["input length.*exceeds.*context length", "context length exceeds input length"],
  ["context[_ ]length[_ ]exceeded", "context-length-exceeded"],
  ["context[_ ]length[_ ]exceeded", "contextlengthexceeded"],
  ["prompt too long; exceeded (?:max )?context length", "prompt too long; exceeded maximum context length"],
  ["prompt is too long", "prompt is long"],
  ["request entity too large", "request entity large"],
  ["^4(00|13)…(no body)", "401 (no body)"],
  ["^4(00|13)…(no body)", "414 (no body)"],
  ["^4(00|13)…(no body)", "500 (no body)"],
  ["^4(00|13)…(no body)", "400 (body)"],
  ["^4(00|13)…(no body)", "400 status (no body)"],
  ["^4(00|13)…(no body)", "400 status codes (no body)"],
  ["^4(00|13)…(no body)", " 400 (no body)"],
  ["^4(00|13)…(no body)", "x413 (no body)"],
]

describe("ProviderError.classify — near misses stay APIErrors", () => {
  it.each(NEAR_MISSES.map(([pattern, message]) => ({ pattern, message })))(
    "given “$message” (near $pattern) with status 400, then it is an APIError",
    ({ message }) => {
      expect(ProviderError.isOverflowMessage(message)).toBe(false)
      // The stored message is trimmed; the overflow rules read the text as the provider sent it.
      const stored = message.trim()
      expect(ProviderError.classify({ message, statusCode: 400 })).toEqual({
        name: "APIError",
        message: stored,
        data: { message: stored, statusCode: 400, isRetryable: false },
      })
    },
  )

  it.each([
    ["maximum prompt length is 1", "a one-digit length"],
    ["maximum context length is 7 tokens", "a one-digit length"],
    ["exceeds the limit of 9", "a one-digit limit"],
    ["input token count exceeds the maximum", "nothing between the two halves"],
    ["input length exceeds context length", "nothing between the three parts"],
    ["413(no body)", "no space before the parenthesis"],
    ["400status code(no body)", "no spaces around “status code”"],
    ["400 \t status code \t (no body)", "runs of mixed whitespace"],
  ])("given “%s” (%s), then it is still a context overflow", (message) =>
    expect(ProviderError.isOverflowMessage(message)).toBe(true),
  )
})

describe("ProviderError.isRetryableStatus — the AI SDK's retry statuses at their edges", () => {
  it.each([
    [407, false],
    [408, true],
    [409, true],
    [410, false],
    [428, false],
    [429, true],
    [430, false],
    [499, false],
    [500, true],
    [501, true],
    [599, true],
  ])("given status %i, then retryable is %s", (status, expected) =>
    expect(ProviderError.isRetryableStatus(status)).toBe(expected),
  )
})

describe("ProviderError.classify — where the message comes from", () => {
  it("given a message with surrounding spaces, then it is trimmed", () =>
    expect(ProviderError.classify({ message: "  Bad Request \n", statusCode: 400 }).message).toBe("Bad Request"))

  it("given a blank message, then the body's top-level message stands in", () =>
    expect(ProviderError.classify({ message: "   ", statusCode: 500, body: { message: "top level" } }).message).toBe(
      "top level",
    ))

  it("given a blank message and a body whose error is a string, then that string stands in", () =>
    expect(ProviderError.classify({ message: "", statusCode: 500, body: { error: "plain error" } }).message).toBe(
      "plain error",
    ))

  it("given a body with both a top-level and a nested message, then the top-level one wins", () =>
    expect(
      ProviderError.classify({
        message: "",
        statusCode: 500,
        body: { message: "outer", error: { message: "inner" } },
      }).message,
    ).toBe("outer"))

  it("given a body whose top-level message is blank, then the nested message stands in", () =>
    expect(
      ProviderError.classify({ message: "", statusCode: 500, body: { message: " ", error: { message: "inner" } } })
        .message,
    ).toBe("inner"))

  it("given a blank message and a non-JSON body, then the raw body text stands in", () =>
    expect(ProviderError.classify({ message: "", statusCode: 502, responseBody: "<html>gateway</html>" })).toEqual({
      name: "APIError",
      message: "<html>gateway</html>",
      data: {
        message: "<html>gateway</html>",
        statusCode: 502,
        isRetryable: true,
        responseBody: "<html>gateway</html>",
      },
    }))

  it("given nothing to say at all, then the message is “Unknown error”", () =>
    expect(ProviderError.classify({ message: "" })).toEqual({
      name: "APIError",
      message: "Unknown error",
      data: { message: "Unknown error", isRetryable: false },
    }))

  it("given a blank body text, then it is not used as the message", () =>
    expect(ProviderError.classify({ message: "", responseBody: "  " }).message).toBe("Unknown error"))

  it("given a parsed body, then it is used instead of the response text", () => {
    const error = ProviderError.classify({
      message: "",
      statusCode: 500,
      body: { error: { message: "from body" } },
      responseBody: JSON.stringify({ error: { message: "from text" } }),
    })
    expect(error.message).toBe("from body")
  })

  it("given a JSON array as the body, then it is not read as an error object", () =>
    expect(ProviderError.classify({ message: "", statusCode: 500, body: [{ message: "x" }] }).message).toBe(
      "Unknown error",
    ))

  it("given a body error.code other than context_length_exceeded, then it is not an overflow", () =>
    expect(
      ProviderError.classify({ message: "Request failed", statusCode: 422, body: { error: { code: "invalid" } } }).name,
    ).toBe("APIError"))

  it("given a body whose nested overflow message is blank at the top, then the overflow is still found", () =>
    expect(
      ProviderError.classify({
        message: "Request failed",
        body: { message: "", error: { message: "prompt is too long" } },
      }).name,
    ).toBe(OVERFLOW))

  it("given statuses 412 and 414 with unrelated messages, then only 413 is an overflow", () => {
    expect(ProviderError.classify({ message: "rejected", statusCode: 412 }).name).toBe("APIError")
    expect(ProviderError.classify({ message: "rejected", statusCode: 414 }).name).toBe("APIError")
  })

  it("given the SDK says not retryable for a 503, then its verdict is kept", () =>
    expect(ProviderError.isRetryable({ message: "down", statusCode: 503, isRetryable: false })).toBe(false))
})

describe("ProviderError.classify — stream chunks at their edges", () => {
  it("given a chunk with neither a code nor a message, then an APIError “Unknown error” keeping the chunk", () => {
    const chunk = { type: "error", error: {} } as const
    expect(ProviderError.classify(chunk)).toEqual({
      name: "APIError",
      message: "Unknown error",
      data: { message: "Unknown error", isRetryable: false, responseBody: JSON.stringify(chunk) },
    })
  })

  it("given a chunk with only a code, then the code is the message", () =>
    expect(ProviderError.classify({ type: "error", error: { code: "server_error" } }).message).toBe("server_error"))

  it("given a chunk with a blank message, then the code is the message", () =>
    expect(ProviderError.classify({ type: "error", error: { code: "server_error", message: "  " } }).message).toBe(
      "server_error",
    ))

  it("given a numeric code, then it is neither an overflow code nor a message", () => {
    const error = ProviderError.classify({ type: "error", error: { code: 500 } })
    expect(error.message).toBe("Unknown error")
    expect(ProviderError.isRetryable(error)).toBe(false)
  })

  it("given a chunk with an overflow message and an unrelated code, then it is an overflow with its message", () =>
    expect(
      ProviderError.classify({ type: "error", error: { code: "invalid_request", message: "400 (no body)" } }),
    ).toEqual({
      name: OVERFLOW,
      message: "400 (no body)",
      data: {
        message: "400 (no body)",
        responseBody: JSON.stringify({ type: "error", error: { code: "invalid_request", message: "400 (no body)" } }),
      },
    }))

  it.each([
    ["a null", null],
    ["an array", []],
    ["a string", "oops"],
    ["a missing", undefined],
  ])("given a chunk-like value with %s error, then it is not a stream chunk", (_, error) =>
    expect(ProviderError.isStreamErrorChunk({ type: "error", error })).toBe(false),
  )

  it("given an error object under another type, then it is not a stream chunk", () =>
    expect(ProviderError.isStreamErrorChunk({ type: "warning", error: {} })).toBe(false))

  it("given null or an array, then it is not a stream chunk", () => {
    expect(ProviderError.isStreamErrorChunk(null)).toBe(false)
    expect(ProviderError.isStreamErrorChunk([{ type: "error", error: {} }])).toBe(false)
  })
})

describe("ProviderError.fromUnknown — what a thrown value carries", () => {
  it("given an Error with status, body and retry verdict, then all three are kept", () => {
    const responseBody = JSON.stringify({ error: { message: "slow down" } })
    const thrown = Object.assign(new Error("Too many requests"), { statusCode: 429, responseBody, isRetryable: false })
    expect(ProviderError.fromUnknown(thrown)).toEqual({
      name: "APIError",
      message: "Too many requests",
      data: { message: "Too many requests", statusCode: 429, isRetryable: false, responseBody },
    })
  })

  it("given fields of the wrong types, then they are ignored", () => {
    const thrown = { message: "failed", statusCode: "500", responseBody: 7, isRetryable: "yes" }
    expect(ProviderError.fromUnknown(thrown)).toEqual({
      name: "APIError",
      message: "failed",
      data: { message: "failed", isRetryable: false },
    })
  })

  it("given an error whose data holds a provider body with error.code, then that body is read", () => {
    const thrown = { message: "Request failed", data: { error: { code: "context_length_exceeded" } } }
    expect(ProviderError.fromUnknown(thrown).name).toBe(OVERFLOW)
  })

  it("given an error whose data has no error field, then it is not taken as the body", () => {
    const thrown = {
      message: "",
      responseBody: JSON.stringify({ message: "from text" }),
      data: { message: "from data" },
    }
    expect(ProviderError.fromUnknown(thrown).message).toBe("from text")
  })

  it("given a stream chunk object thrown as is, then it is classified as the chunk", () =>
    expect(ProviderError.fromUnknown({ type: "error", error: { code: "context_length_exceeded" } }).message).toBe(
      "Input exceeds context window of this model",
    ))

  it("given an object without a string message, then an UnknownError", () =>
    expect(ProviderError.fromUnknown({ message: 5 })).toEqual({ name: "UnknownError", message: "[object Object]" }))

  it("given a JSON string that is not a chunk, then its text is classified as a message", () =>
    expect(ProviderError.fromUnknown('{"a":1}')).toEqual({
      name: "APIError",
      message: '{"a":1}',
      data: { message: '{"a":1}', isRetryable: false },
    }))
})

describe("ProviderError.isOverflowError and isRetryable over classified errors", () => {
  it("given an already classified APIError, then it is taken as it is, not classified again", () => {
    const error = { name: "APIError", message: "prompt is too long", data: { isRetryable: true } }
    expect(ProviderError.isOverflowError(error)).toBe(false)
    expect(ProviderError.isRetryable(error)).toBe(true)
  })

  it("given a classified APIError with a status but no verdict, then the status decides", () => {
    expect(ProviderError.isRetryable({ name: "APIError", message: "x", data: { statusCode: 503 } })).toBe(true)
    expect(ProviderError.isRetryable({ name: "APIError", message: "x", data: { statusCode: 400 } })).toBe(false)
    expect(ProviderError.isRetryable({ name: "APIError", message: "x", data: { statusCode: "503" } })).toBe(false)
    expect(ProviderError.isRetryable({ name: "APIError", message: "x" })).toBe(false)
  })

  it("given a classified UnknownError, then it is neither an overflow nor retryable", () => {
    const error = { name: "UnknownError", message: "prompt is too long" }
    expect(ProviderError.isOverflowError(error)).toBe(false)
    expect(ProviderError.isRetryable(error)).toBe(false)
  })

  it("given a classified ContextOverflowError, then it is an overflow", () =>
    expect(ProviderError.isOverflowError({ name: OVERFLOW, message: "anything" })).toBe(true))

  it("given an error of another name, then it is classified from its message", () =>
    expect(ProviderError.isOverflowError({ name: "TypeError", message: "prompt is too long" } as never)).toBe(true))
})

describe("ProviderError — the shape of what is stored", () => {
  it("given no status and no body, then neither key is present on the stored data (not even as undefined)", () => {
    expect(ProviderError.classify({ message: "boom" })).toStrictEqual({
      name: "APIError",
      message: "boom",
      data: { message: "boom", isRetryable: false },
    })
    expect(ProviderError.classify({ message: "prompt is too long" })).toStrictEqual({
      name: OVERFLOW,
      message: "prompt is too long",
      data: { message: "prompt is too long" },
    })
  })

  it("given a body object with no message anywhere, then the message falls back without failing", () =>
    expect(ProviderError.classify({ message: "", statusCode: 500, body: { error: 5 } }).message).toBe("Unknown error"))

  it("given an Error whose message is a non-overflow stream chunk's JSON, then the chunk's code and verdict are used", () => {
    const thrown = new Error(JSON.stringify({ type: "error", error: { code: "server_error" } }))
    expect(ProviderError.fromUnknown(thrown)).toStrictEqual({
      name: "APIError",
      message: "server_error",
      data: { message: "server_error", isRetryable: true, responseBody: thrown.message },
    })
  })

  it("given an error whose data is not an object, then it is ignored without failing", () =>
    expect(ProviderError.fromUnknown({ message: "failed", data: "details" }).name).toBe("APIError"))

  it("given a classified overflow whose data claims it is retryable, then it is still never retried", () =>
    expect(
      ProviderError.isRetryable({ name: OVERFLOW, message: "prompt is too long", data: { isRetryable: true } }),
    ).toBe(false))
})
