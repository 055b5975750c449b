/**
 * The behaviours pivot adds to OpenCode's (spec §5, issue §2): bounded compaction, no unwanted auto-continue, never
 * "too large to compact", the extractive summariser as default and fallback, the facts block, and secret redaction.
 */
import { Ids, Prompt, Tokens } from "@pivot/core"
import {
  Compaction,
  ContextManager,
  EXTRACTIVE_MODEL,
  InvalidToolKind,
  Summarizer,
  SummarizerError,
  type SummaryRequest,
} from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Cause, Effect, Layer } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RUNS } from "../../core/test/support/runs.ts"
import {
  captured,
  lastOf,
  layer,
  prepare,
  run,
  SESSION,
  SPEC,
  type Stub,
  services,
  step,
  stub,
  textOf,
  tool,
  used,
  user,
  windowOf,
} from "./support/harness.ts"

const tagsOf = Effect.gen(function* () {
  const { sessions } = yield* services
  return (yield* sessions.events(SESSION)).map((e) => e._tag)
})

const count = (tags: ReadonlyArray<string>, tag: string) => tags.filter((t) => t === tag).length

describe("bounded compaction", () => {
  it("given every step overflows again after its pivot, when the loop goes on, then at most 2 compactions run and CompactionAbandoned is recorded once", async () => {
    const s = stub()
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("do the thing")
        const results = []
        const next = []
        for (let i = 0; i < 5; i++) {
          results.push((yield* step(90_000)).compaction)
          next.push((yield* prepare).next)
        }
        return { results, next, tags: yield* tagsOf, usage: yield* cm.usage(SESSION) }
      }),
      { summarizer: s },
    )
    expect(out.results).toEqual(["requested", "requested", "abandoned", undefined, undefined])
    expect(out.next).toEqual(["call", "call", "stop", "stop", "stop"])
    expect(count(out.tags, "CompactionRequested")).toBe(2)
    expect(count(out.tags, "CompactionAbandoned")).toBe(1)
    expect(s.requests).toHaveLength(2)
    expect(out.usage.suspended).toBe(true)
    expect(out.usage.status).toBe("over")
  })

  it("given a step under the trigger after each pivot, then compaction is never abandoned (progress resets the bound)", async () => {
    const tags = await run(
      Effect.gen(function* () {
        yield* user("long task")
        for (let i = 0; i < 4; i++) {
          yield* step(90_000)
          yield* prepare
          yield* step(1_000)
          yield* prepare
        }
        return yield* tagsOf
      }),
    )
    expect(count(tags, "SummaryFinished")).toBe(4)
    expect(count(tags, "CompactionAbandoned")).toBe(0)
  })

  it("given compaction was abandoned, when the user sends a new message, then automatic compaction works again", async () => {
    const out = await run(
      Effect.gen(function* () {
        yield* user("first")
        for (let i = 0; i < 3; i++) {
          yield* step(90_000)
          yield* prepare
        }
        yield* user("second")
        const again = yield* step(90_000)
        return { again: again.compaction, tags: yield* tagsOf }
      }),
    )
    expect(count(out.tags, "CompactionAbandoned")).toBe(1)
    expect(out.again).toBe("requested")
  })

  it("given a model whose usable window is 0 (context 16_384, no output limit), then the layer refuses it with ImpossibleLimits instead of compacting on every step (#45368)", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.gen(function* () {
        yield* ContextManager
      }).pipe(Effect.provide(layer({ options: { model: { ref: SPEC.ref, limits: { context: 16_384, output: 0 } } } }))),
    )
    expect(exit._tag).toBe("Failure")
    expect(JSON.stringify(exit)).toContain("ImpossibleLimits")
  })

  it("given threshold 0.5, when a step uses 40k of a 68k usable window, then it counts as overflow", async () => {
    const recorded = await run(
      Effect.gen(function* () {
        yield* user("go")
        return yield* step(40_000)
      }),
      { options: { config: { threshold: 0.5 } } },
    )
    expect(recorded.overflow).toBe(true)
  })

  it("invariant: for any sequence of steps and user messages, automatic compactions in a row without progress never exceed the bound, and each ends settled", async () => {
    type Op = "over" | "under" | "user"
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Op>("over", "over", "under", "user"), { maxLength: 10 }),
        fc.integer({ min: 1, max: 3 }),
        async (ops, limit) => {
          const out = await run(
            Effect.gen(function* () {
              const { cm, sessions } = yield* services
              yield* user("start")
              for (const op of ops) {
                if (op === "user") yield* user("more")
                else yield* step(op === "over" ? 90_000 : 1_000)
                yield* cm.prepare(SESSION)
              }
              return { events: yield* sessions.events(SESSION), state: yield* sessions.load(SESSION) }
            }),
            { summarizer: null, options: { maxConsecutiveCompactions: limit } },
          )
          let streak = 0
          for (const e of out.events) {
            if (e._tag === "UserMessageAdded" && !e.message.parts.some((p) => p.type === "compaction")) streak = 0
            else if (e._tag === "AssistantStepRecorded" && Tokens.contextCount(e.message.tokens) < 68_000) streak = 0
            else if (e._tag === "CompactionRequested") streak++
            expect(streak).toBeLessThanOrEqual(limit)
          }
          expect(out.state.session.pending).toBeUndefined()
          expect(out.state.runtime.awaitingContinue).toBeUndefined()
        },
      ),
      RUNS,
    )
  }, 120_000)
})

describe("no unwanted auto-continue", () => {
  it("given the agent had finished (finish stop) when the context filled, when prepared, then no continue message is added and the agent waits", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { sessions } = yield* services
        yield* user("answer me")
        yield* step(80_000, "stop")
        const prepared = yield* prepare
        return { prepared, tags: yield* tagsOf, last: lastOf(yield* sessions.load(SESSION)) }
      }),
    )
    expect(out.prepared.compaction?.continuation).toBe("skipped")
    expect(out.prepared.next).toBe("wait")
    expect(out.tags).not.toContain("ContinueRequested")
    expect(out.tags).toContain("AutoContinueSkipped")
    expect(out.last?.role === "assistant" && out.last.summary).toBe(true)
  })

  it("given the agent had finished and the user then writes, when prepared, then no continue message is added and the model answers the user", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { sessions } = yield* services
        yield* user("answer me")
        yield* step(80_000, "stop")
        yield* user("next question")
        const prepared = yield* prepare
        return { prepared, tags: yield* tagsOf, last: lastOf(yield* sessions.load(SESSION)) }
      }),
    )
    expect(out.tags).not.toContain("ContinueRequested")
    expect(out.prepared.next).toBe("call")
    expect(textOf(out.last)).toBe("next question")
  })

  it("given a manual compaction mid-task, then no continue message is added", async () => {
    const tags = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("work")
        yield* step(1_000)
        yield* cm.compact(SESSION)
        yield* prepare
        return yield* tagsOf
      }),
    )
    expect(tags).toContain("SummaryFinished")
    expect(tags).not.toContain("ContinueRequested")
  })
})

describe("never too large to compact", () => {
  const bigHead = Effect.gen(function* () {
    for (let i = 0; i < 40; i++) {
      yield* user(`request ${i}: ${"lorem ipsum dolor sit amet ".repeat(40)}`)
      yield* step(1_000, "stop")
    }
  })
  const small = { ref: { providerId: "small", modelId: "s" }, limits: { context: 8_000, output: 2_000 } }
  /** Compacts the session on the small compaction model: its outcome and the summariser input's budget record. */
  const compactedOnSmall = (summarizer: Stub, record: typeof bigHead) =>
    run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* record
        const compacted = yield* cm.compact(SESSION)
        const events = yield* sessions.events(SESSION)
        return { compacted, budgeted: events.find((e) => e._tag === "SummaryInputBudgeted") }
      }),
      { summarizer, options: { compactionModel: small, config: { tail_turns: 0 } } },
    )
  /** The summariser request's estimated size against the small model's input room. */
  const fitsSmall = (request: SummaryRequest) =>
    Tokens.estimate(JSON.stringify(Prompt.SYSTEM_PROMPT)) + Tokens.estimate(JSON.stringify(request.messages)) <=
    Compaction.inputRoom(small.limits)

  it("given a head far larger than the compaction model's window, when compacted, then the oldest messages are budgeted out into a digest, the call fits, and the pivot forms", async () => {
    const s = stub()
    const out = await compactedOnSmall(s, bigHead)
    expect(out.compacted.outcome?.status).toBe("finished")
    expect(out.budgeted?._tag === "SummaryInputBudgeted" && out.budgeted.dropped.length).toBeGreaterThan(0)
    expect(out.budgeted?._tag === "SummaryInputBudgeted" && out.budgeted.digest).toBe(true)
    const request = s.requests[0]!
    expect(fitsSmall(request)).toBe(true)
    expect(captured(request)).toContain("<previous-summary>")
    expect(captured(request)).toContain("request 39")
  })

  it("given a budgeted-out head with hundreds of distinct failed commands, then its digest keeps within the room the budget reserves and the call fits (ADR 0070)", async () => {
    const s = stub()
    const failures = Effect.gen(function* () {
      const { cm } = yield* services
      for (let i = 0; i < 40; i++) {
        yield* user(`request ${i}: ${"lorem ipsum dolor sit amet ".repeat(20)}`)
        yield* cm.recordAssistantStep(SESSION, {
          parts: Array.from({ length: 8 }, (_, k) => ({
            type: "tool" as const,
            callId: `call_fail_${i}_${k}`,
            tool: "bash",
            state: {
              status: "error" as const,
              input: { command: `npm test -- packages/some/long/path/to/suite-${i}-${k}.test.ts --reporter verbose` },
              error: "FAIL",
            },
          })),
          usage: used(1_000),
          finish: "stop",
        })
      }
    })
    const out = await compactedOnSmall(s, failures)
    expect(out.compacted.outcome?.status).toBe("finished")
    expect(out.budgeted?._tag === "SummaryInputBudgeted" && out.budgeted.digest).toBe(true)
    const request = s.requests[0]!
    expect(fitsSmall(request)).toBe(true)
    expect(captured(request)).toContain("Also failed")
  })

  it("given a compaction model too small for even the prompt, then the extractive summary is used (too-large) and the pivot forms", async () => {
    const s = stub()
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* bigHead
        const compacted = yield* cm.compact(SESSION)
        const events = yield* sessions.events(SESSION)
        return { compacted, fallback: events.find((e) => e._tag === "SummaryFallbackUsed") }
      }),
      {
        summarizer: s,
        options: { compactionModel: { ref: small.ref, limits: { context: 700, output: 100 } } },
      },
    )
    expect(s.requests).toHaveLength(0)
    expect(out.compacted.outcome?.status).toBe("finished")
    expect(out.fallback).toMatchObject({ reason: "too-large" })
  })
})

describe("the extractive summariser", () => {
  it("given no model summariser is configured, then compaction uses the extractive one, recorded as pivot/extractive", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* user("Rename the config loader in src/config.ts")
        const compacted = yield* cm.compact(SESSION)
        const started = (yield* sessions.events(SESSION)).find((e) => e._tag === "CompactionStarted")
        return { compacted, started }
      }),
      { summarizer: null },
    )
    expect(out.started?._tag === "CompactionStarted" && out.started.model).toEqual(EXTRACTIVE_MODEL)
    const text = out.compacted.outcome?.status === "finished" ? out.compacted.outcome.text : ""
    expect(text).toContain("## Objective")
    expect(text).toContain("src/config.ts")
  })

  it("given Summarizer.layerExtractive provided as the summariser, then it works as the built-in default", async () => {
    const started = await Effect.runPromise(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* user("Tidy src/index.ts")
        yield* cm.compact(SESSION)
        return (yield* sessions.events(SESSION)).find((e) => e._tag === "CompactionStarted")
      }).pipe(
        Effect.provide(
          ContextManager.layer({ model: SPEC }).pipe(
            Layer.provide(Summarizer.layerExtractive),
            Layer.provide(Ids.Ids.layerSequential),
            Layer.provideMerge(EventStore.layerMemory()),
          ),
        ),
      ),
    )
    expect(started?._tag === "CompactionStarted" && started.model).toEqual(EXTRACTIVE_MODEL)
  })

  it("given the same request twice, then Summarizer.extractive answers the same summary, without usage", async () => {
    const request = {
      sessionId: SESSION,
      model: SPEC.ref,
      limits: SPEC.limits,
      system: Prompt.SYSTEM_PROMPT,
      messages: [],
      head: [],
      maxOutputTokens: 1_000,
    }
    const a = await Effect.runPromise(Summarizer.extractive.summarize(request))
    const b = await Effect.runPromise(Summarizer.extractive.summarize(request))
    expect(a).toEqual(b)
    expect(a.model).toEqual(EXTRACTIVE_MODEL)
    expect(a.usage).toEqual(Tokens.zero)
    expect(a.text).toContain("## Objective")
  })

  const fallbackCase = (name: string, reason: string, summarize: Parameters<typeof stub>[0], options = {}) =>
    it(`given a summariser that ${name}, then the extractive summary replaces it (${reason}) and the pivot forms`, async () => {
      const out = await run(
        Effect.gen(function* () {
          const { cm, sessions } = yield* services
          yield* user("Fix the parser in src/parse.ts")
          const compacted = yield* cm.compact(SESSION)
          const state = yield* sessions.load(SESSION)
          const events = yield* sessions.events(SESSION)
          return {
            compacted,
            pivot: state.session.window.pivot,
            fallback: events.find((e) => e._tag === "SummaryFallbackUsed"),
          }
        }),
        { summarizer: stub(summarize), options: { summaryTimeout: "50 millis", ...options } },
      )
      expect(out.fallback).toMatchObject({ reason })
      expect(out.pivot).toBeDefined()
      expect(out.compacted.outcome?.status === "finished" && out.compacted.outcome.text).toContain("## Objective")
    })

  fallbackCase("fails", "failed", () => Effect.fail(new SummarizerError({ reason: "failed", message: "HTTP 500" })))
  fallbackCase("hangs", "timeout", () => Effect.never)
  fallbackCase("answers nothing", "empty", (r) =>
    Effect.succeed({ text: "  \n", usage: Tokens.zero, finish: "stop", model: r.model }),
  )
  fallbackCase("answers garbage", "invalid", () => Effect.succeed({ text: 42, usage: "lots" } as never))
  fallbackCase("throws", "failed", () =>
    Effect.sync(() => {
      throw new Error("adapter bug")
    }),
  )
  fallbackCase("overflows", "overflow", () =>
    Effect.fail(new SummarizerError({ reason: "overflow", message: "prompt is too long" })),
  )
  fallbackCase("is interrupted on its side", "interrupted", () => Effect.interrupt)
  fallbackCase("answers more than it replaces", "larger", (r) =>
    Effect.succeed({ text: "word ".repeat(5_000), usage: Tokens.zero, finish: "stop", model: r.model }),
  )
})

describe("the facts block", () => {
  it("given a summary that drops every detail, then the stored summary still lists the exact paths and commands from the log", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("fix it")
        yield* cm.recordAssistantStep(SESSION, {
          parts: [
            tool("read", { filePath: "packages/core/src/Window.ts" }, "export const x = 1"),
            tool("edit", { filePath: "packages/core/src/Tail.ts", oldString: "a", newString: "b" }, "ok"),
            tool("bash", { command: "npx vitest run packages/core" }, "1 failed"),
          ],
          usage: used(1_000),
          finish: "tool-calls",
        })
        return yield* cm.compact(SESSION)
      }),
      { summarizer: stub("did stuff") },
    )
    const text = out.outcome?.status === "finished" ? out.outcome.text : ""
    expect(text.startsWith("did stuff")).toBe(true)
    expect(text).toContain("## Facts (from the log)")
    expect(text).toContain("packages/core/src/Window.ts")
    expect(text).toContain("packages/core/src/Tail.ts")
    expect(text).toContain("npx vitest run packages/core")
  })

  // Issue 18: another agent's tool names, mapped with the toolKinds option.
  const theirSteps = (toolKinds?: Record<string, string>) =>
    run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("fix it")
        yield* cm.recordAssistantStep(SESSION, {
          parts: [
            tool("read_file", { path: "packages/core/src/Window.ts" }, "export const x = 1"),
            tool("run_cmd", { cmd: "npx vitest run packages/core" }, "1 failed"),
          ],
          usage: used(1_000),
          finish: "tool-calls",
        })
        return yield* cm.compact(SESSION)
      }),
      { summarizer: stub("did stuff"), options: toolKinds === undefined ? {} : { toolKinds: toolKinds as never } },
    )
  const textOf = (out: { readonly outcome?: { readonly status: string; readonly text?: string } | undefined }) =>
    out.outcome?.status === "finished" ? (out.outcome.text ?? "") : ""

  it("given tools named read_file and run_cmd, then the facts block records them only when toolKinds maps them", async () => {
    const unmapped = textOf(await theirSteps())
    expect(unmapped).toContain("### Files read\n(none)")
    expect(unmapped).toContain("### Commands\n(none)")
    const mapped = textOf(await theirSteps({ read_file: "read", run_cmd: "command" }))
    expect(mapped).toContain("### Files read\n- `packages/core/src/Window.ts`")
    expect(mapped).toContain("### Commands\n- `npx vitest run packages/core`")
  })

  it("given a toolKinds entry that is not a kind, then the layer fails with a one-line InvalidToolKind", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.provide(Effect.void, layer({ options: { toolKinds: { run_cmd: "shell" } as never } })),
    )
    expect(exit._tag).toBe("Failure")
    const error = exit._tag === "Failure" ? Cause.squash(exit.cause) : undefined
    expect(error).toBeInstanceOf(InvalidToolKind)
    expect(String((error as Error).message)).toBe(
      'invalid tool kind "shell" for tool "run_cmd": expected "read", "edit", "command" or "none"',
    )
  })
})

describe("secret redaction", () => {
  const OPENAI = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"
  const GITHUB = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"
  const AWS = "AKIAIOSFODNN7EXAMPLE"

  it("given secrets in the history and in the summary, then the summariser never sees them, the stored summary has none, and each redaction is recorded by kind", async () => {
    const s = stub(`summary mentioning ${AWS}`)
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* user(`use OPENAI_API_KEY=${OPENAI} please`)
        yield* cm.recordAssistantStep(SESSION, {
          parts: [tool("bash", { command: "cat .env" }, `GITHUB_TOKEN=${GITHUB}`)],
          usage: used(1_000),
          finish: "tool-calls",
        })
        yield* cm.compact(SESSION)
        const events = yield* sessions.events(SESSION)
        const state = yield* sessions.load(SESSION)
        return { events, summary: windowOf(state)[1] }
      }),
      { summarizer: s },
    )
    const seen = JSON.stringify(s.requests[0])
    for (const secret of [OPENAI, GITHUB]) expect(seen).not.toContain(secret)
    expect(textOf(out.summary)).not.toContain(AWS)
    expect(textOf(out.summary)).toContain("[REDACTED:aws-access-key-id]")
    const redactions = out.events.filter((e) => e._tag === "SecretsRedacted")
    const input = redactions.find((e) => e._tag === "SecretsRedacted" && e.stage === "summarizer-input")
    const summary = redactions.find((e) => e._tag === "SecretsRedacted" && e.stage === "summary")
    expect(input?._tag === "SecretsRedacted" && input.findings.map((f) => f.kind)).toEqual(
      expect.arrayContaining(["openai-key", "github-token"]),
    )
    expect(summary?._tag === "SecretsRedacted" && summary.findings.map((f) => f.kind)).toEqual(["aws-access-key-id"])
    // Redaction events say what and where, never the secret.
    const recorded = JSON.stringify(redactions)
    for (const secret of [OPENAI, GITHUB, AWS]) expect(recorded).not.toContain(secret)
    // Nothing the compaction recorded carries a secret.
    const afterRequest = out.events.slice(out.events.findIndex((e) => e._tag === "CompactionRequested"))
    for (const secret of [OPENAI, GITHUB, AWS]) expect(JSON.stringify(afterRequest)).not.toContain(secret)
  })

  it("given redactSecrets off, then the summariser sees the text as stored", async () => {
    const s = stub()
    await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user(`key ${OPENAI}`)
        yield* cm.compact(SESSION)
      }),
      { summarizer: s, options: { redactSecrets: false } },
    )
    expect(captured(s.requests[0])).toContain(OPENAI)
  })
})

describe("the HUD", () => {
  it("given steps at 10%, 85% and past the trigger, then the status goes ok, warn, then compacting until prepared", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("go")
        yield* step(6_800)
        const ok = yield* cm.usage(SESSION)
        yield* step(58_000)
        const warn = yield* cm.usage(SESSION)
        yield* step(70_000)
        const compacting = yield* cm.usage(SESSION)
        yield* prepare
        const after = yield* cm.usage(SESSION)
        return { ok, warn, compacting, after }
      }),
    )
    expect(out.ok).toMatchObject({ tokens: 6_800, percent: 10, status: "ok", source: "reported" })
    expect(out.warn.status).toBe("warn")
    expect(out.compacting.status).toBe("compacting")
    expect(out.after).toMatchObject({ status: "ok", source: "estimated", pivots: 1 })
  })
})

describe("session overrides", () => {
  it("given a per-session model override with a smaller window, then that session compacts at its own trigger", async () => {
    const recorded = await run(
      Effect.gen(function* () {
        yield* user("go")
        return yield* step(25_000)
      }),
      {
        options: {
          session: (id) =>
            id === SESSION ? { model: { ref: SPEC.ref, limits: { context: 30_000, output: 8_000 } } } : undefined,
        },
      },
    )
    expect(recorded.overflow).toBe(true)
  })

  it("given an invalid session id, then InvalidSessionId", async () => {
    const error = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        return yield* Effect.flip(cm.recordUserMessage("not a session", { text: "x" }))
      }),
    )
    expect(error._tag).toBe("InvalidSessionId")
  })
})
