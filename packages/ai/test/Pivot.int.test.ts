// createPivot, the one-call entry: adoption end to end on a real SQLite file, hook composition, the fallback warning,
// and each bad input (a one-line typed error, nothing written).
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { EventStore, ReadModels } from "@pivot/store"
import { generateText, jsonSchema, type ModelMessage, stepCountIs, streamText, ToolLoopAgent, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { createPivot, Pivot } from "../src/index.ts"
import { answer, finish, type GenerateResult, readTool, streamModel, textParts } from "./support/Mock.ts"

const LIMITS = { context: 100_000, output: 8_000 }
const dirs: Array<string> = []
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-create-"))
  dirs.push(dir)
  return dir
}
const opened: Array<Pivot.Pivot> = []
afterEach(async () => {
  for (const pivot of opened.splice(0)) await pivot.close()
  for (const dir of dirs.splice(0)) Fs.rmSync(dir, { recursive: true, force: true })
})
const open = async (options: Pivot.CreateOptions) => {
  const pivot = await createPivot(options)
  opened.push(pivot)
  return pivot
}

/** A session model answering from a script, one entry per call; it records the messages it was sent. */
const scripted = (...steps: ReadonlyArray<GenerateResult>) => {
  let index = 0
  const seen: Array<ReadonlyArray<unknown>> = []
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      seen.push(options.prompt)
      const step = steps[Math.min(index++, steps.length - 1)]
      if (step === undefined) throw new Error("no scripted step")
      return step
    },
  })
  return { model, seen }
}

const toolThenText = () =>
  scripted(
    answer([{ type: "tool-call", toolCallId: "c1", toolName: "read", input: '{"path":"src/a.ts"}' }], "tool-calls"),
    answer([{ type: "text", text: "It is 41." }], "stop"),
  )

/** The events of a session, read back from the SQLite file by a fresh store. */
const eventsIn = async (file: string, sessionId: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      const events = yield* store.read(`session-${sessionId}`)
      return events.map((event) => event.type)
    }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
  )

describe("createPivot: adoption", () => {
  it("a ToolLoopAgent adopts pivot through wrap and run: its steps are recorded in a SQLite file it created", async () => {
    const file = Path.join(tempDir(), "nested", "data", "pivot.db")
    const { model, seen } = toolThenText()
    const pivot = await open({ model, store: file, limits: LIMITS, session: "fix the test" })
    const agent = new ToolLoopAgent(pivot.wrap({ model, tools: { read: readTool }, stopWhen: stepCountIs(5) }))
    const result = await pivot.run("What is the answer?", (turn) => agent.generate(turn))
    expect(result.text).toBe("It is 41.")
    // The second call was sent pivot's window: the user message, the tool call and its result.
    expect(JSON.stringify(seen[1])).toContain("contents of src/a.ts")
    await pivot.close()
    opened.splice(0)
    expect(pivot.sessionId).toMatch(/^ses_fix_the_test-[0-9a-f]{16}$/)
    // The sized preset pins the first message (the task), in the batch that records it.
    expect(await eventsIn(file, pivot.sessionId)).toEqual([
      "SessionStarted",
      "UserMessageAdded",
      "ContextPinned",
      "AssistantStepRecorded",
      "AssistantStepRecorded",
    ])
  })

  it("the same session name finds the same session after a restart; another name, another session", async () => {
    const file = Path.join(tempDir(), "pivot.db")
    const first = scripted(answer([{ type: "text", text: "one" }], "stop"))
    const before = await open({ model: first.model, store: file, limits: LIMITS, session: "chat" })
    await before.run("first question", (turn) => generateText(before.wrap({ model: first.model, ...turn })))
    await before.close()
    opened.splice(0)

    const second = scripted(answer([{ type: "text", text: "two" }], "stop"))
    const after = await open({ model: second.model, store: file, limits: LIMITS, session: "chat" })
    await after.run("second question", (turn) => generateText(after.wrap({ model: second.model, ...turn })))
    // The model saw the first turn too: the session was found again.
    expect(JSON.stringify(second.seen[0])).toContain("first question")
    const other = after.session("another chat")
    expect(other.sessionId).not.toBe(after.sessionId)
    expect(await other.messages()).toEqual([])
  })

  it("looks the limits up in the catalog by model id; given limits override them", async () => {
    const gpt = new MockLanguageModelV4({ provider: "openai.responses", modelId: "gpt-5" })
    const fromCatalog = await open({ model: gpt, store: ":memory:" })
    const given = await open({ model: gpt, store: ":memory:", limits: { context: 50_000, output: 10_000 } })
    // OpenCode's usable window: input limit − reserved (272k − 20k) for gpt-5; context − output otherwise.
    expect((await fromCatalog.usage()).usable).toBe(252_000)
    expect((await given.usage()).usable).toBe(40_000)
  })

  it("messages() and record() drive a hand-written loop with the AI SDK's own objects, no casts", async () => {
    const { model } = scripted(answer([{ type: "text", text: "hello back" }], "stop", 1_234))
    const pivot = await open({ model, store: Path.join(tempDir(), "pivot.db"), limits: LIMITS })
    await pivot.user("hello")
    const messages: Array<ModelMessage> = await pivot.messages()
    messages.push({ role: "user", content: "a note only this call sees" })
    const result = await generateText({ model, messages })
    await pivot.record(result)
    expect((await pivot.usage()).tokens).toBe(1_244)
    expect(await pivot.messages()).toEqual([
      { role: "user", content: [{ type: "text", text: "hello" }] },
      { role: "assistant", content: [{ type: "text", text: "hello back" }] },
    ])
  })
})

describe("createPivot: wrap composes with the caller's hooks", () => {
  it("prepareStep, onStepEnd and onEnd of the caller still run, after pivot's, and see pivot's window", async () => {
    const { model } = toolThenText()
    const pivot = await open({ model, store: ":memory:", limits: LIMITS })
    const calls: Array<string> = []
    const agent = new ToolLoopAgent(
      pivot.wrap({
        model,
        tools: { read: readTool },
        stopWhen: stepCountIs(5),
        prepareStep: ({ stepNumber, messages }) => {
          calls.push(`prepare ${stepNumber}: ${messages.length} messages`)
          return { toolChoice: "auto" as const }
        },
        onStepEnd: (step) => {
          calls.push(`step ${step.finishReason}`)
        },
        onEnd: (event) => {
          calls.push(`end ${event.text}`)
        },
      }),
    )
    await pivot.run("What is the answer?", (turn) => agent.generate(turn))
    expect(calls).toEqual([
      "prepare 0: 1 messages",
      "step tool-calls",
      "prepare 1: 3 messages",
      "step stop",
      "end It is 41.",
    ])
    // pivot recorded before the caller's hook ran: the window the caller saw at step 1 held the recorded step.
    expect(await pivot.messages()).toHaveLength(4)
  })

  it("the deprecated onStepFinish and onFinish are composed too, not silently dropped", async () => {
    const { model } = scripted(answer([{ type: "text", text: "done" }], "stop"))
    const pivot = await open({ model, store: ":memory:", limits: LIMITS })
    const calls: Array<string> = []
    await pivot.run("go", (turn) =>
      generateText(
        pivot.wrap({
          model,
          ...turn,
          onStepFinish: (step) => void calls.push(`step ${step.text}`),
          onFinish: (event) => void calls.push(`finish ${event.text}`),
        }),
      ),
    )
    expect(calls).toEqual(["step done", "finish done"])
    expect(await pivot.messages()).toHaveLength(2)
  })

  it("streamText: the caller's onError hears a stream error that pivot also reports", async () => {
    const model = streamModel([...textParts("partial"), { type: "error", error: new Error("boom") }, finish("error")])
    const pivot = await open({ model, store: ":memory:", limits: LIMITS })
    const errors: Array<string> = []
    await pivot.run("go", async (turn) => {
      const result = streamText(pivot.wrap({ model, ...turn, onError: ({ error }) => void errors.push(String(error)) }))
      await result.consumeStream()
      return result
    })
    expect(errors).toEqual(["Error: boom"])
    expect(pivot.lastError()?.error.message).toBe("boom")
  })
})

describe("createPivot: a summariser that falls back says why", () => {
  it("a summariser that fails: a warning names the cause, and the compaction history records it", async () => {
    const file = Path.join(tempDir(), "pivot.db")
    // The session model fills the window (95k of a 100k context); the summariser fails.
    const { model } = scripted(answer([{ type: "text", text: "long answer" }], "stop", 95_000))
    const summarizer = new MockLanguageModelV4({
      doGenerate: async () => {
        throw new Error("summariser down")
      },
    })
    const warnings: Array<string> = []
    const pivot = await open({
      model,
      store: file,
      limits: LIMITS,
      session: "s",
      summarizer,
      onWarning: (message) => warnings.push(message),
    })
    await pivot.run("first", (turn) => generateText(pivot.wrap({ model, ...turn })))
    await pivot.user("second")
    await pivot.messages() // compacts: the summariser fails, the extractive summary is used
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      /^pivot: session ses_s, compaction msg_\w+: the summariser's summary was replaced by the extractive fallback \(failed: .*summariser down.*\)$/,
    )
    await pivot.close()
    opened.splice(0)
    const history = await Effect.runPromise(
      Effect.gen(function* () {
        return yield* (yield* ReadModels.ReadModels).compactions("ses_s")
      }).pipe(Effect.provide(ReadModels.layerSqlite({ filename: file }))),
    )
    expect(history).toHaveLength(1)
    expect(history[0]?.fallback).toBe("failed")
    expect(history[0]?.fallbackError).toMatch(/summariser down/)
    // `pivot inspect` prints the cause with the pivot (the CLI run as a user would, on the same file).
    const bin = Path.join(import.meta.dirname, "../../cli/src/bin.ts")
    const inspect = spawnSync(
      process.execPath,
      ["--conditions=@pivot/source", bin, "inspect", "--db", file, "--session", "ses_s"],
      {
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1" },
      },
    )
    expect(inspect.stdout).toMatch(/extractive fallback \(failed: .*summariser down.*\)/)
  })
})

describe("createPivot: bad input is a one-line typed error, and nothing is written", () => {
  const nothingIn = (dir: string) => expect(Fs.readdirSync(dir)).toEqual([])

  it("an unknown model without limits names the model and the option to pass", async () => {
    const dir = tempDir()
    const error = await createPivot({ model: new MockLanguageModelV4(), store: Path.join(dir, "db", "p.db") }).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(Pivot.UnknownModelLimits)
    expect(String((error as Error).message)).toBe(
      "unknown model mock-provider/mock-model-id: pivot's catalog has no limits for it; pass them: createPivot({ …, limits: { context, output } })",
    )
    nothingIn(dir)
  })

  it("limits that cannot work are refused with the reason", async () => {
    const dir = tempDir()
    const error = await createPivot({
      model: new MockLanguageModelV4(),
      store: Path.join(dir, "p.db"),
      limits: { context: 1_000, output: 2_000 },
    }).catch((e: unknown) => e)
    expect((error as Error).message).toBe(
      "impossible limits for mock-provider/mock-model-id: output 2000 exceeds context 1000",
    )
    nothingIn(dir)
  })

  it("an unknown preset or summariser mode is refused by name, not read as the default", async () => {
    const dir = tempDir()
    const store = Path.join(dir, "data", "pivot.db")
    const model = new MockLanguageModelV4()
    const preset = await createPivot({ model, store, limits: LIMITS, preset: "OpenCode" as never }).catch(
      (e: unknown) => e,
    )
    expect((preset as { _tag?: string })._tag).toBe("InvalidOption")
    expect((preset as Error).message).toBe('invalid option preset: "OpenCode"; expected "sized" or "opencode"')
    const mode = await createPivot({ model, store, limits: LIMITS, summarizerMode: "streaming" as never }).catch(
      (e: unknown) => e,
    )
    expect((mode as { _tag?: string })._tag).toBe("InvalidOption")
    expect((mode as Error).message).toBe('invalid option summarizerMode: "streaming"; expected "stream" or "generate"')
    nothingIn(dir)
  })

  it("negative limits are refused in one line", async () => {
    const dir = tempDir()
    const error = await createPivot({
      model: new MockLanguageModelV4(),
      store: Path.join(dir, "p.db"),
      limits: { context: -5, output: 1 },
    }).catch((e: unknown) => e)
    expect((error as { _tag?: string })._tag).toBe("ImpossibleLimits")
    expect((error as Error).message).not.toContain("\n")
    expect((error as Error).message).toContain("context")
    nothingIn(dir)
  })

  it("a handle used after close() fails with PivotClosed, not the runtime's bare string", async () => {
    const pivot = await createPivot({ model: new MockLanguageModelV4(), store: ":memory:", limits: LIMITS })
    const other = pivot.session("other")
    await pivot.close()
    await pivot.close() // closing twice is fine
    for (const call of [() => pivot.messages(), () => pivot.user("hi"), () => other.messages()]) {
      const error = await call().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(Pivot.PivotClosed)
      expect((error as Error).message).toBe("this pivot is closed (close() was called): open another with createPivot")
    }
  })

  it("a store path that cannot be created names the path", async () => {
    const dir = tempDir()
    Fs.writeFileSync(Path.join(dir, "a-file"), "")
    const store = Path.join(dir, "a-file", "data", "pivot.db")
    const error = await createPivot({ model: new MockLanguageModelV4(), store, limits: LIMITS }).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(Pivot.StoreNotCreatable)
    expect((error as Error).message).toContain(`cannot create the pivot store at ${store}: `)
    expect((error as Error).message).not.toContain("\n")
    expect(Fs.readdirSync(dir)).toEqual(["a-file"])
  })

  it("a store path that is a folder names the path", async () => {
    const dir = tempDir()
    const error = await createPivot({ model: new MockLanguageModelV4(), store: dir, limits: LIMITS }).catch(
      (e: unknown) => e,
    )
    expect((error as Error).message).toBe(
      `cannot create the pivot store at ${dir}: it is a folder; pass a writable file path (or ":memory:")`,
    )
    nothingIn(dir)
  })

  it("a session name that cannot be mapped is refused, at create and at session()", async () => {
    const dir = tempDir()
    const store = Path.join(dir, "data", "pivot.db")
    const error = await createPivot({ model: new MockLanguageModelV4(), store, limits: LIMITS, session: "  " }).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(Pivot.InvalidSessionName)
    expect((error as Error).message).toBe(
      'invalid session name "  ": a session name is 1 to 256 characters, not blank, without control characters',
    )
    nothingIn(dir)
    const pivot = await open({ model: new MockLanguageModelV4(), store, limits: LIMITS })
    expect(() => pivot.session("a\nb")).toThrow(Pivot.InvalidSessionName)
  })

  it("a usage missing fields (pivot's own shape, say) is refused and records nothing", async () => {
    const file = Path.join(tempDir(), "pivot.db")
    const pivot = await open({ model: new MockLanguageModelV4(), store: file, limits: LIMITS, session: "u" })
    await pivot.user("hello")
    const step = { content: [{ type: "text", text: "hi", providerMetadata: undefined }], finishReason: "stop" }
    const error = await pivot
      .record({ ...step, usage: { input: 10, output: 2 } as unknown as Parameters<typeof pivot.record>[0]["usage"] })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Pivot.InvalidUsage)
    expect((error as Error).message).toBe(
      "invalid usage: missing inputTokens, outputTokens (got input, output); pass the AI SDK's usage as it comes (step.usage or result.usage, a LanguageModelUsage)",
    )
    const negative = await pivot
      .record({ ...step, usage: { inputTokens: -1, outputTokens: 2 } })
      .catch((e: unknown) => e)
    expect((negative as Error).message).toContain("inputTokens is -1, not a token count")
    await pivot.close()
    opened.splice(0)
    expect(await eventsIn(file, "ses_u")).toEqual(["SessionStarted", "UserMessageAdded", "ContextPinned"])
  })
})

describe("Pivot.layer and Pivot.session: the same entry for Effect programs", () => {
  it("a program on the layer records its turns in the SQLite file, through a session handle", async () => {
    const file = Path.join(tempDir(), "effect", "pivot.db")
    const { model } = scripted(answer([{ type: "text", text: "from Effect" }], "stop"))
    const text = await Effect.runPromise(
      Effect.gen(function* () {
        const chat = yield* Pivot.session("effect chat")
        const result = yield* Effect.promise(() =>
          chat.run("hello", (turn) => generateText(chat.wrap({ model, ...turn }))),
        )
        return { text: result.text, sessionId: chat.sessionId }
      }).pipe(Effect.provide(Pivot.layer({ model, store: file, limits: LIMITS }))),
    )
    expect(text.text).toBe("from Effect")
    expect(await eventsIn(file, text.sessionId)).toEqual([
      "SessionStarted",
      "UserMessageAdded",
      "ContextPinned",
      "AssistantStepRecorded",
    ])
  })

  it("bad options fail the layer with the same typed errors, and a bad name fails session()", async () => {
    const dir = tempDir()
    const unknown = await Effect.runPromise(
      Effect.flip(
        Effect.provide(Effect.void, Pivot.layer({ model: new MockLanguageModelV4(), store: Path.join(dir, "p.db") })),
      ),
    )
    expect(unknown).toBeInstanceOf(Pivot.UnknownModelLimits)
    const badName = await Effect.runPromise(
      Effect.flip(
        Pivot.session("").pipe(
          Effect.provide(Pivot.layer({ model: new MockLanguageModelV4(), store: ":memory:", limits: LIMITS })),
        ),
      ),
    )
    expect(badName).toBeInstanceOf(Pivot.InvalidSessionName)
    expect(Fs.readdirSync(dir)).toEqual([])
  })
})

describe("createPivot: the summariser's mode", () => {
  // The session model fills the window on its first answer, so the second turn's prepare compacts.
  const fillThenSummary = () => {
    let calls = 0
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        calls++ === 0
          ? answer([{ type: "text", text: "long answer" }], "stop", 95_000)
          : answer([{ type: "text", text: "## Objective\nthe generated summary" }], "stop"),
    })
    return model
  }

  it("a model that only generates (no doStream) still writes the summary, with no fallback warning", async () => {
    const model = fillThenSummary()
    const warnings: Array<string> = []
    const pivot = await open({ model, store: ":memory:", limits: LIMITS, onWarning: (m) => warnings.push(m) })
    await pivot.run("first", (turn) => generateText(pivot.wrap({ model, ...turn })))
    await pivot.user("second")
    const messages = await pivot.messages()
    expect(warnings).toEqual([])
    expect(JSON.stringify(messages)).toContain("the generated summary")
  })

  it("summarizerMode generate: the summariser never streams", async () => {
    const model = fillThenSummary()
    const streamed = streamModel([...textParts("a streamed summary"), finish()])
    const summarizer = new MockLanguageModelV4({
      doStream: streamed.doStream,
      doGenerate: async () => answer([{ type: "text", text: "a generated summary" }], "stop"),
    })
    const pivot = await open({ model, store: ":memory:", limits: LIMITS, summarizer, summarizerMode: "generate" })
    await pivot.run("first", (turn) => generateText(pivot.wrap({ model, ...turn })))
    await pivot.user("second")
    expect(JSON.stringify(await pivot.messages())).toContain("a generated summary")
    expect(summarizer.doStreamCalls).toHaveLength(0)
    expect(summarizer.doGenerateCalls).toHaveLength(1)
  })
})

describe("createPivot: cache-aware compaction", () => {
  it("the summariser is sent the agent's system prompt, its tools (declarations) and the window as the agent sent it, then the prompt", async () => {
    const system = "You are the agent. Keep changes small."
    let calls = 0
    // The session's first call measures the fixed prompt (ADR 0034): only the usable window (92,000) compacts after it.
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        calls++ === 0
          ? answer([{ type: "text", text: "long answer" }], "stop", 92_000)
          : answer([{ type: "text", text: "## Objective\nthe cache-aware summary" }], "stop"),
    })
    const pivot = await open({
      model,
      store: ":memory:",
      limits: LIMITS,
      preset: "opencode",
      cacheAware: { system, tools: { read: readTool } },
    })
    await pivot.run("first", (turn) => generateText(pivot.wrap({ model, system, tools: { read: readTool }, ...turn })))
    const sent = model.doGenerateCalls[0]!.prompt
    await pivot.user("second")
    const messages = await pivot.messages()
    expect(JSON.stringify(messages)).toContain("the cache-aware summary")
    const summary = model.doGenerateCalls[1]!
    expect(summary.tools?.map((t) => t.name)).toEqual(["read"])
    // The summariser's prompt starts with exactly what the agent's call sent, then the agent's answer and the prompt.
    expect(summary.prompt.slice(0, sent.length)).toEqual(sent)
    expect(JSON.stringify(summary.prompt.at(-1))).toContain("summary")
  })
})

describe("createPivot: a call through wrap without run", () => {
  it("records the call's own prompt as the user message, and the model is sent it", async () => {
    const { model, seen } = scripted(answer([{ type: "text", text: "hi there" }], "stop"))
    const file = Path.join(tempDir(), "pivot.db")
    const pivot = await open({ model, store: file, limits: LIMITS, session: "w" })
    const result = await generateText(pivot.wrap({ model, prompt: "hello without run" }))
    expect(result.text).toBe("hi there")
    expect(JSON.stringify(seen[0])).toContain("hello without run")
    expect(await pivot.messages()).toEqual([
      { role: "user", content: [{ type: "text", text: "hello without run" }] },
      { role: "assistant", content: [{ type: "text", text: "hi there" }] },
    ])
  })

  it("the same call retried after a failure records its prompt once", async () => {
    let calls = 0
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        if (calls++ === 0) throw new Error("connection reset")
        return answer([{ type: "text", text: "answered" }], "stop")
      },
    })
    const file = Path.join(tempDir(), "pivot.db")
    const pivot = await open({ model, store: file, limits: LIMITS, session: "r" })
    const call = () => generateText(pivot.wrap({ model, prompt: "please answer", maxRetries: 0 }))
    await expect(call()).rejects.toThrow("connection reset")
    await call()
    // Once more after the answer: a new turn with the same words is recorded again.
    await call()
    await pivot.close()
    opened.splice(0)
    const users = (await eventsIn(file, pivot.sessionId)).filter((type) => type === "UserMessageAdded")
    expect(users).toHaveLength(2)
  })

  it("a call with no prompt on an empty session fails with NoUserMessage, one line", async () => {
    const { model, seen } = scripted(answer([{ type: "text", text: "never" }], "stop"))
    const pivot = await open({ model, store: ":memory:", limits: LIMITS, session: "empty" })
    const error = await generateText(pivot.wrap({ model, prompt: "   " })).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Pivot.NoUserMessage)
    expect((error as Error).message).toMatch(/^session ses_empty has no user message to answer: .*pivot\.run/)
    expect((error as Error).message).not.toContain("\n")
    expect(seen).toHaveLength(0)
  })
})

describe("createPivot: presets", () => {
  // Four turns, each reading a ~5k-token file, in a 32k window: usage stays low, so only a prune can shed them. The
  // last two turns are never pruned; of the two before, the newer is kept (5k ≤ 20% of 32k), the older cleared.
  const SMALL = { context: 32_000, output: 4_000 }
  const bigRead = tool({
    description: "Read a file",
    inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } } }),
    execute: async ({ path }) => `${path}: ${"x".repeat(20_000)}`,
  })
  const fourTurns = async (options: Partial<Pivot.CreateOptions>) => {
    let call = 0
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        call++ % 2 === 0
          ? answer(
              [{ type: "tool-call", toolCallId: `c${call}`, toolName: "read", input: '{"path":"a.ts"}' }],
              "tool-calls",
            )
          : answer([{ type: "text", text: "read it" }], "stop"),
    })
    const pivot = await open({ model, store: ":memory:", limits: SMALL, ...options })
    for (const question of ["one", "two", "three", "four"])
      await pivot.run(question, (turn) =>
        generateText(pivot.wrap({ model, tools: { read: bigRead }, stopWhen: stepCountIs(3), ...turn })),
      )
    return (await pivot.transcript()).flatMap((message) =>
      message.role === "assistant"
        ? message.parts.flatMap((part) =>
            part.type === "tool" && part.state.status === "completed" ? [part.state.compactedAt !== undefined] : [],
          )
        : [],
    )
  }

  it("sized (the default) prunes the oldest output in a 32k window; opencode's absolute thresholds never do", async () => {
    expect(await fourTurns({})).toEqual([true, false, false, false])
    expect(await fourTurns({ preset: "opencode", config: { prune: true } })).toEqual([false, false, false, false])
  })

  it("the caller's config wins over the preset: prune false keeps every output", async () =>
    expect(await fourTurns({ config: { prune: false } })).toEqual([false, false, false, false]))
})

describe("createPivot: the transcript and the chat's UI messages", () => {
  it("restores what the user saw: text and tool calls with their outputs, even pruned ones", async () => {
    const { model } = toolThenText()
    const pivot = await open({ model, store: ":memory:", limits: LIMITS })
    await pivot.run("What is the answer?", (turn) =>
      generateText(pivot.wrap({ model, tools: { read: readTool }, stopWhen: stepCountIs(5), ...turn })),
    )
    const ui = await pivot.uiMessages()
    expect(ui.map((message) => message.role)).toEqual(["user", "assistant"])
    expect(ui[0]?.parts).toEqual([{ type: "text", text: "What is the answer?" }])
    // The two steps of the answer form one message, split by step-start, as useChat shows them.
    expect(ui[1]?.parts).toEqual([
      { type: "step-start" },
      {
        type: "dynamic-tool",
        toolName: "read",
        toolCallId: "c1",
        state: "output-available",
        input: { path: "src/a.ts" },
        output: "contents of src/a.ts: export const answer = 41",
      },
      { type: "step-start" },
      { type: "text", text: "It is 41." },
    ])
    const transcript = await pivot.transcript()
    expect(transcript.map((message) => message.role)).toEqual(["user", "assistant", "assistant"])
    expect(ui.map((message) => message.id)).toEqual([transcript[0]?.id, transcript[1]?.id])
  })
})

describe("createPivot: a PostgreSQL URL as store", () => {
  it("a server that is not there fails with StoreNotCreatable, the password hidden", async () => {
    const { model } = scripted(answer([{ type: "text", text: "never" }], "stop"))
    const error = await createPivot({
      model,
      limits: LIMITS,
      store: "postgres://pivot:s3cret-pw@127.0.0.1:1/pivot",
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Pivot.StoreNotCreatable)
    expect((error as Error).message).toContain("postgres://pivot:***@127.0.0.1:1/pivot")
    expect((error as Error).message).not.toContain("s3cret-pw")
  })

  it("isPostgresUrl: postgres:// and postgresql://, any case; paths are not URLs", () => {
    expect(Pivot.isPostgresUrl("postgres://h/db")).toBe(true)
    expect(Pivot.isPostgresUrl("POSTGRESQL://h/db")).toBe(true)
    expect(Pivot.isPostgresUrl("./postgres/pivot.db")).toBe(false)
    expect(Pivot.isPostgresUrl(":memory:")).toBe(false)
  })
})
