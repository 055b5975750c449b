// Mock AI SDK models and summary requests for the tests.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Message, Render } from "@pivot/core"
import type * as Runtime from "@pivot/runtime"
import { jsonSchema, tool } from "ai"
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test"
import { Schema } from "effect"
import { afterEach } from "vitest"

type Settings = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>
type DoStream = Extract<Settings["doStream"], (...args: never) => unknown>
type DoGenerate = Extract<Settings["doGenerate"], (...args: never) => unknown>
/** The result of a mocked `doStream`. */
export type StreamResult = Awaited<ReturnType<DoStream>>
/** The result of a mocked `doGenerate`. */
export type GenerateResult = Awaited<ReturnType<DoGenerate>>
/** One part of a provider (V4) stream. */
export type StreamPart = StreamResult["stream"] extends ReadableStream<infer P> ? P : never
/** The options a mocked model was called with. */
export type CallOptions = Parameters<DoStream>[0]
/** Provider (V4) usage. */
export type ProviderUsage = Extract<StreamPart, { type: "finish" }>["usage"]

/** Provider usage: 100 input (20 cache reads), 10 output (3 reasoning). */
export const USAGE: ProviderUsage = {
  inputTokens: { total: 100, noCache: 80, cacheRead: 20, cacheWrite: undefined },
  outputTokens: { total: 10, text: 7, reasoning: 3 },
}

/** A finish part with `USAGE`. */
export const finish = (unified: "stop" | "tool-calls" | "error" | "length" = "stop"): StreamPart => ({
  type: "finish",
  finishReason: { unified, raw: unified },
  usage: USAGE,
})

/** The parts of a text answer. */
export const textParts = (text: string): Array<StreamPart> => [
  { type: "text-start", id: "t1" },
  { type: "text-delta", id: "t1", delta: text },
  { type: "text-end", id: "t1" },
]

/** A model that streams the given parts. */
export const streamModel = (parts: ReadonlyArray<StreamPart>): MockLanguageModelV4 =>
  new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream([{ type: "stream-start", warnings: [] }, ...parts]),
    }),
  })

/** A model whose call fails with the given error. */
export const failingModel = (error: unknown): MockLanguageModelV4 =>
  new MockLanguageModelV4({
    doStream: async () => {
      throw error
    },
    doGenerate: async () => {
      throw error
    },
  })

/** A model that never answers; it records whether the call's abort signal fired. */
export const hangingModel = (): { readonly model: MockLanguageModelV4; readonly aborted: () => boolean } => {
  let signal: AbortSignal | undefined
  const hang = (options: CallOptions) =>
    new Promise<never>((_, reject) => {
      signal = options.abortSignal
      options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason))
    })
  return {
    model: new MockLanguageModelV4({ doStream: hang, doGenerate: hang }),
    aborted: () => signal?.aborted === true,
  }
}

/** A user message of the head. */
export const userMessage = (id: string, text: string): Message.UserMessage =>
  Schema.decodeUnknownSync(Message.UserMessage)({
    role: "user",
    id: `msg_${id}`,
    createdAt: 0,
    parts: [{ type: "text", id: `prt_${id}`, text }],
  })

/** A summary request over a small head, with the given system prompt. */
export const request = (overrides: Partial<Runtime.SummaryRequest> = {}): Runtime.SummaryRequest => {
  const head = [userMessage("1", "fix the failing test in src/app.ts")]
  return {
    sessionId: "ses_1",
    model: { providerId: "local", modelId: "compactor" },
    limits: { context: 100_000, output: 8_000 },
    system: "You write the working memory of a coding session.",
    messages: [
      ...Render.toModelMessages(head),
      { role: "user", content: [{ type: "text", text: "Summarise the conversation so far." }] },
    ],
    head,
    maxOutputTokens: 4_000,
    ...overrides,
  }
}

/** A generated step: `content`, finished as `unified`, reporting `input` context tokens and 10 output tokens. */
export const answer = (
  content: GenerateResult["content"],
  unified: "stop" | "tool-calls",
  input = 1_000,
): GenerateResult => ({
  content,
  finishReason: { unified, raw: unified },
  usage: {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
    outputTokens: { total: 10, text: 10, reasoning: 0 },
  },
  warnings: [],
})

/** A generated step calling one tool: `toolName` with `input`, as call `id`. */
export const toolCall = (id: string, toolName: string, input: unknown, tokens = 1_000): GenerateResult =>
  answer([{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }], "tool-calls", tokens)

/** The agents' file reader: answers `contents of PATH: export const answer = 41`. */
export const readTool = tool({
  description: "Read a file",
  inputSchema: jsonSchema<{ path: string }>({
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
  }),
  execute: async ({ path }) => `contents of ${path}: export const answer = 41`,
})

/**
 * Temporary folders for a test file's stores, each removed after the test that made it: call once at the file's top
 * level (it registers the `afterEach`), then `() => folder` in each test.
 */
export const tempDirs = (prefix: string): (() => string) => {
  const dirs: Array<string> = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) Fs.rmSync(dir, { recursive: true, force: true })
  })
  return () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
    dirs.push(dir)
    return dir
  }
}

/**
 * A scripted agent model (`test/scripted`): `script` answers each call from its prompt and its number (1 for the
 * first); every prompt it was called with is kept, in order.
 */
export const scriptedAgent = (script: (prompt: CallOptions["prompt"], call: number) => GenerateResult) => {
  const prompts: Array<CallOptions["prompt"]> = []
  const model = new MockLanguageModelV4({
    provider: "test",
    modelId: "scripted",
    doGenerate: async (options) => {
      prompts.push(options.prompt)
      return script(options.prompt, prompts.length)
    },
  })
  return { model, prompts }
}
