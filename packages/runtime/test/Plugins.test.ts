/**
 * Projection plugins: what they contribute is used and recorded; a plugin that throws, hangs or answers something
 * invalid is ignored, recorded as `PluginFailed`, and cannot corrupt the session.
 */
import { type Message, Render, ValidWindow, Window } from "@pivot/core"
import { Plugins, Sessions } from "@pivot/runtime"
import { Effect, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import { generatedArb } from "../../core/test/support/sessions.ts"
import { captured, midTaskOverflow, run, SESSION, services, stub, textOf } from "./support/harness.ts"

const compactHello = Effect.gen(function* () {
  const { cm, sessions } = yield* services
  yield* cm.recordUserMessage(SESSION, { text: "hello, the codename is bluebird" })
  const compacted = yield* cm.compact(SESSION)
  const events = yield* sessions.events(SESSION)
  const state = yield* sessions.load(SESSION)
  return { compacted, events, state }
})

const failures = (events: ReadonlyArray<Sessions.Event>) => events.filter((e) => e._tag === "PluginFailed")
const started = (events: ReadonlyArray<Sessions.Event>) => {
  const e = events.find((x) => x._tag === "CompactionStarted")
  return e?._tag === "CompactionStarted" ? e : undefined
}

describe("Plugins.call", () => {
  const plugin: Plugins.Plugin = { name: "p", timeout: "30 millis" }
  const schema = Plugins.AutoContinueOutput
  const call = (run: () => unknown) => Effect.runPromise(Plugins.call(plugin, "autoContinue", run, schema))

  it("given a value, a promise or an Effect answer, then each is accepted when valid", async () => {
    expect(await call(() => ({ enabled: true }))).toEqual(Result.succeed({ enabled: true }))
    expect(await call(() => Promise.resolve({ enabled: false }))).toEqual(Result.succeed({ enabled: false }))
    expect(await call(() => Effect.succeed({ enabled: true }))).toEqual(Result.succeed({ enabled: true }))
  })

  it("given a hook that throws (synchronously, in a promise, or in an Effect), then threw with its message", async () => {
    for (const run of [
      () => {
        throw new Error("sync boom")
      },
      () => Promise.reject(new Error("async boom")),
      () => Effect.fail("effect boom"),
      () => Effect.die(new Error("defect boom")),
    ]) {
      const result = await call(run)
      expect(Result.isFailure(result) && result.failure.reason).toBe("threw")
      expect(Result.isFailure(result) && result.failure.message).toMatch(/boom/)
    }
  })

  it("given a hook that hangs (a promise that never settles, or Effect.never), then timeout", async () => {
    for (const run of [() => new Promise(() => {}), () => Effect.never]) {
      const result = await call(run)
      expect(Result.isFailure(result) && result.failure.reason).toBe("timeout")
    }
  })

  it("given a bad answer, then invalid-output naming the problem", async () => {
    const result = await call(() => ({ enabled: "yes" }))
    expect(Result.isFailure(result) && result.failure.reason).toBe("invalid-output")
    expect(Result.isFailure(result) && result.failure.message).toContain("enabled")
  })
})

describe("compactionContext", () => {
  it("given context lines, then they end the recorded prompt and the contribution is recorded", async () => {
    const s = stub()
    const out = await run(compactHello, {
      summarizer: s,
      options: {
        plugins: [{ name: "ticket", compactionContext: () => ({ context: ["Ticket PIV-42 is the goal."] }) }],
      },
    })
    const start = started(out.events)
    expect(start?.pluginContext).toEqual(["Ticket PIV-42 is the goal."])
    expect(start?.prompt.endsWith("Ticket PIV-42 is the goal.")).toBe(true)
    expect(captured(s.requests[0])).toContain("Ticket PIV-42")
    expect(out.events.find((e) => e._tag === "PluginContributed")).toMatchObject({
      plugin: "ticket",
      context: ["Ticket PIV-42 is the goal."],
    })
  })

  it("given a replacement prompt, then it is the exact prompt recorded and sent", async () => {
    const s = stub()
    const out = await run(compactHello, {
      summarizer: s,
      options: { plugins: [{ name: "mine", compactionContext: () => ({ prompt: "Summarise as a haiku." }) }] },
    })
    expect(started(out.events)?.prompt).toBe("Summarise as a haiku.")
    expect(JSON.stringify(s.requests[0]?.messages.at(-1))).toContain("Summarise as a haiku.")
    expect(out.events.find((e) => e._tag === "PluginContributed")).toMatchObject({ replacedPrompt: true })
  })

  it("given a context line holding a secret, then the prompt carries it redacted and the redaction is recorded", async () => {
    const out = await run(compactHello, {
      options: {
        plugins: [{ name: "leaky", compactionContext: () => ({ context: ["deploy with AKIAIOSFODNN7EXAMPLE"] }) }],
      },
    })
    expect(started(out.events)?.prompt).toContain("[REDACTED:aws-access-key-id]")
    expect(JSON.stringify(out.events)).not.toContain("AKIAIOSFODNN7EXAMPLE")
    expect(out.events.find((e) => e._tag === "SecretsRedacted" && e.stage === "prompt")).toBeDefined()
  })

  const broken: ReadonlyArray<[string, Plugins.Plugin, string]> = [
    [
      "throws",
      {
        name: "x",
        compactionContext: () => {
          throw new Error("nope")
        },
      },
      "threw",
    ],
    ["hangs", { name: "x", timeout: "30 millis", compactionContext: () => new Promise(() => {}) }, "timeout"],
    [
      "answers the wrong shape",
      { name: "x", compactionContext: () => ({ context: "one line" }) as never },
      "invalid-output",
    ],
    [
      "answers too much",
      { name: "x", compactionContext: () => ({ context: Array.from({ length: 100 }, () => "line") }) },
      "invalid-output",
    ],
    ["answers an empty prompt", { name: "x", compactionContext: () => ({ prompt: "  " }) }, "invalid-output"],
  ]
  for (const [what, plugin, reason] of broken)
    it(`given a plugin that ${what}, then it is ignored, PluginFailed(${reason}) is recorded, and the compaction completes with the built prompt`, async () => {
      const out = await run(compactHello, { options: { plugins: [plugin] } })
      expect(failures(out.events)).toEqual([
        expect.objectContaining({ plugin: "x", hook: "compactionContext", reason }),
      ])
      expect(out.compacted.outcome?.status).toBe("finished")
      expect(started(out.events)?.prompt.startsWith("Summarise the conversation above")).toBe(true)
    })
})

describe("autoContinue", () => {
  it("given a plugin that throws, then it has no say: the continue message is added and the failure recorded", async () => {
    const out = await run(midTaskOverflow, {
      options: { plugins: [{ name: "x", autoContinue: () => Promise.reject(new Error("nope")) }] },
    })
    expect(out.prepared.compaction?.continuation).toBe("continued")
    expect(failures(out.events)).toEqual([expect.objectContaining({ hook: "autoContinue", reason: "threw" })])
  })

  it("given two plugins, when the first allows and the second vetoes, then both verdicts are recorded and no continue message is added", async () => {
    const out = await run(midTaskOverflow, {
      options: {
        plugins: [
          { name: "yes", autoContinue: () => ({ enabled: true }) },
          { name: "no", autoContinue: () => ({ enabled: false }) },
        ],
      },
    })
    expect(out.prepared.compaction?.continuation).toBe("skipped")
    expect(
      out.events
        .filter((e) => e._tag === "PluginContributed")
        .map((e) => e._tag === "PluginContributed" && [e.plugin, e.autoContinue]),
    ).toEqual([
      ["yes", true],
      ["no", false],
    ])
  })
})

describe("transformWindow", () => {
  const session = (plugins: ReadonlyArray<Plugins.Plugin>) =>
    run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* cm.recordUserMessage(SESSION, { text: "hello" })
        const prepared = yield* cm.prepare(SESSION)
        return { prepared, events: yield* sessions.events(SESSION) }
      }),
      { options: { plugins } },
    )

  it("given a valid transform, then the model input is the transformed window and nothing is stored", async () => {
    const out = await session([
      {
        name: "shout",
        transformWindow: ({ messages }) => ({
          messages: messages.map((m) =>
            m.role === "user"
              ? { ...m, parts: m.parts.map((p) => (p.type === "text" ? { ...p, text: p.text.toUpperCase() } : p)) }
              : m,
          ),
        }),
      },
    ])
    expect(JSON.stringify(out.prepared.modelMessages)).toContain("HELLO")
    expect(out.events.map((e) => e._tag)).toEqual(["SessionStarted", "UserMessageAdded"])
  })

  for (const [what, hook] of [
    [
      "throws",
      () => {
        throw new Error("x")
      },
    ],
    ["answers a malformed message", () => ({ messages: [{ role: "robot" }] })],
    ["answers nothing", () => undefined],
  ] as const)
    it(`given a transform that ${what}, then the window is rendered untransformed and the failure recorded`, async () => {
      const out = await session([{ name: "bad", transformWindow: hook as never }])
      expect(JSON.stringify(out.prepared.modelMessages)).toContain("hello")
      expect(failures(out.events)).toEqual([expect.objectContaining({ hook: "transformWindow" })])
    })
})

describe("transformWindow output against the window invariant (issue 12 defect 4)", () => {
  const session = (plugins: ReadonlyArray<Plugins.Plugin>) =>
    run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* cm.recordUserMessage(SESSION, { text: "hello" })
        const prepared = yield* cm.prepare(SESSION)
        return { prepared, events: yield* sessions.events(SESSION) }
      }),
      { options: { plugins } },
    )

  it("given a transform answering { messages: [] }, then it is refused, recorded as PluginFailed, and the untransformed window is sent", async () => {
    const out = await session([{ name: "empty", transformWindow: () => ({ messages: [] }) }])
    expect(out.prepared.modelMessages).toEqual([{ role: "user", content: [{ type: "text", text: "hello" }] }])
    expect(failures(out.events)).toEqual([
      expect.objectContaining({
        plugin: "empty",
        hook: "transformWindow",
        reason: "invalid-output",
        message: "the window would not be a valid model input: window: the model input has no message (empty-input)",
      }),
    ])
  })

  it("given a transform answering the window twice, then it is refused as repeating a message", async () => {
    const out = await session([
      { name: "twice", transformWindow: ({ messages }) => ({ messages: [...messages, ...messages] }) },
    ])
    expect(out.prepared.modelMessages).toHaveLength(1)
    expect(failures(out.events)[0]).toMatchObject({ plugin: "twice", reason: "invalid-output" })
    expect(failures(out.events)[0]?._tag === "PluginFailed" && failures(out.events)[0]).toMatchObject({
      message: expect.stringContaining("shows this message twice"),
    })
  })

  it("given a transform that only adds a user message, then it is accepted", async () => {
    const note = {
      role: "user",
      id: "msg_zzzz_note",
      createdAt: 0,
      parts: [{ type: "text", id: "prt_note", text: "note" }],
    } as unknown as Message.Message
    const out = await session([
      { name: "note", transformWindow: ({ messages }) => ({ messages: [...messages, note] }) },
    ])
    expect(failures(out.events)).toEqual([])
    expect(out.prepared.modelMessages).toHaveLength(2)
  })
})

describe("transformWindow properties", () => {
  // Windows of generated live sessions; a plugin answering an arbitrary selection of their messages, in any order,
  // possibly repeated. The reference: the model-input rules of ValidWindow.inputViolations on what would be sent.
  const windowArb = generatedArb(20).map(({ state }) => Window.messages(state.window))
  const answerArb = (size: number) => fc.array(fc.nat(Math.max(0, size - 1)), { maxLength: size + 2 })

  it("property: whatever selection a plugin answers, what is sent breaks no rule; a refused answer is a recorded failure, an accepted one is sent as answered", () => {
    fc.assert(
      fc.property(
        windowArb.chain((window) => fc.tuple(fc.constant(window), answerArb(window.length))),
        ([window, picks]) => {
          const answer = window.length === 0 ? [] : picks.map((i) => window[i]!)
          const plugin: Plugins.Plugin = { name: "pick", transformWindow: () => ({ messages: answer }) }
          const out = Effect.runSync(Plugins.transformWindow([plugin], { sessionId: SESSION, messages: window }))
          const sent = ValidWindow.render(out.messages)
          expect(ValidWindow.inputViolations(sent).filter((v) => v.rule !== "empty-input")).toEqual([])
          const broken = ValidWindow.replacementViolations(window, answer)
          if (broken.length === 0) {
            expect(out.failures).toEqual([])
            expect(out.messages).toEqual(answer)
          } else {
            expect(out.failures).toEqual([expect.objectContaining({ plugin: "pick", reason: "invalid-output" })])
            expect(out.messages).toEqual(window)
          }
          // An answer that empties a window with something to send is always refused.
          if (answer.length === 0 && Render.render(window).length > 0) expect(out.failures).toHaveLength(1)
        },
      ),
      runs(1000),
    )
  })
})

describe("redact", () => {
  it("given a redaction plugin, then the summariser never sees what it redacts, and its redactions are recorded under its name", async () => {
    const s = stub()
    const out = await run(compactHello, {
      summarizer: s,
      options: {
        plugins: [
          {
            name: "codenames",
            redact: ({ texts }) => ({ texts: texts.map((t) => t.replaceAll("bluebird", "[codename]")) }),
          },
        ],
      },
    })
    expect(captured(s.requests[0])).not.toContain("bluebird")
    expect(captured(s.requests[0])).toContain("[codename]")
    const input = out.events.find((e) => e._tag === "SecretsRedacted" && e.stage === "summarizer-input")
    expect(input?._tag === "SecretsRedacted" && input.findings[0]?.kind).toBe("plugin:codenames")
  })

  it("given a redaction plugin answering the wrong number of texts, then it is ignored and recorded", async () => {
    const s = stub()
    const out = await run(compactHello, {
      summarizer: s,
      options: { plugins: [{ name: "short", redact: () => ({ texts: [] }) }] },
    })
    expect(captured(s.requests[0])).toContain("bluebird")
    expect(failures(out.events)[0]).toMatchObject({ hook: "redact", reason: "invalid-output" })
  })
})

describe("properties", () => {
  it("invariant: whatever a plugin answers (any value, any hook), the compaction completes, the window forms a pivot, and every event decodes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), fc.anything(), fc.anything(), async (a, b, c) => {
        const plugin: Plugins.Plugin = {
          name: "chaos",
          compactionContext: () => a as never,
          autoContinue: () => b as never,
          transformWindow: () => c as never,
          redact: () => a as never,
        }
        const out = await run(
          Effect.gen(function* () {
            const r = yield* midTaskOverflow
            const { sessions } = yield* services
            return { ...r, state: yield* sessions.load(SESSION) }
          }),
          { options: { plugins: [plugin] } },
        )
        expect(out.prepared.compaction?.outcome?.status).toBe("finished")
        expect(out.state.session.window.pivot).toBeDefined()
        expect(Sessions.fold(out.events).session.version).toBe(out.state.session.version)
        const first = out.prepared.messages[0]
        expect(first === undefined || typeof first.sourceMessageId === "string").toBe(true)
        expect(
          textOf(
            out.state.session.window.conversation.messages.get(
              out.state.session.window.pivot!.markerId,
            ) as Message.Message,
          ),
        ).toBe("")
      }),
      runs(1000),
    )
  }, 120_000)
})
