/**
 * `forget` reaches a writer that is still running (issue 18 #1). Writer A (a ContextManager encrypting at rest, the
 * summariser's redaction off, so only erasure protects the secrets) keeps its runtime open on a real SQLite file with
 * every cache warm — its live state, the read models' folded states, its snapshots; B, an independent store layer on
 * the same file (what `pivot forget` opens), forgets the session. A's next `prepare` must not show a secret, and no
 * compaction of A may write forgotten text again: not in the events (under a new key), the read models (window,
 * compactions, the FTS table), the read-model snapshot, nor anywhere in the file, its WAL or shared memory.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Ids, Tokens } from "@pivot/core"
import { ContextManager, Summarizer, type SummaryRequest } from "@pivot/runtime"
import { EventStore, ReadModels, SessionLog } from "@pivot/store"
import { Effect, Layer, ManagedRuntime } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { RUNS } from "../../core/test/support/runs.ts"
import { SAMPLES } from "../../core/test/support/secrets.ts"
import { fileBytes, formsOf } from "./support/bytes.ts"
import { SESSION, SPEC, tool, used } from "./support/harness.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-forget-live-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const ALL = SAMPLES.map((s) => s.text).join("\n")

/** The kinds of secret found in `text` in any stored form. */
const kindsIn = (text: string): ReadonlyArray<string> =>
  SAMPLES.filter((s) => formsOf(s.secret).some((form) => text.includes(form))).map((s) => s.kind)

/** The kinds of secret left anywhere in the database's files. */
const onDisk = (filename: string) => [...new Set(fileBytes(filename).flatMap((f) => kindsIn(f.bytes)))]

/**
 * A summariser that writes back everything it was given (the worst case: any secret in its input reaches the summary),
 * running `during` on its `nth` call before answering.
 */
const echo = (
  requests: Array<SummaryRequest>,
  during?: { readonly nth: number; readonly run: () => Promise<unknown> },
) =>
  Summarizer.of({
    summarize: (request) =>
      Effect.gen(function* () {
        requests.push(request)
        if (during !== undefined && requests.length === during.nth) yield* Effect.promise(during.run)
        return {
          text: `summary of ${JSON.stringify(request.messages)}`,
          usage: { ...Tokens.zero, input: 10, output: 2 },
          finish: "stop",
          model: request.model,
        }
      }),
  })

/** Writer A's runtime, open until disposed. */
const writer = (filename: string, summarizer: ReturnType<typeof echo>) =>
  ManagedRuntime.make(
    ContextManager.layer({ model: SPEC, encryptAtRest: true, redactSecrets: false, fallback: false }).pipe(
      Layer.provide(Layer.succeed(Summarizer, summarizer)),
      Layer.provide(Ids.Ids.layer),
      Layer.provideMerge(ReadModels.layerSqlite({ filename })),
    ),
  )

/** B: an independent store layer on the same file, as `pivot forget` opens it. */
const forgetFrom = (filename: string) =>
  Effect.runPromise(SessionLog.forget(SESSION).pipe(Effect.provide(ReadModels.layerSqlite({ filename }))))

/** A session with every kind of secret, a pivot and a read model snapshot, every cache of A warm. */
const record = Effect.gen(function* () {
  const cm = yield* ContextManager
  yield* cm.recordUserMessage(SESSION, { text: `credentials:\n${ALL}` })
  yield* cm.recordAssistantStep(SESSION, {
    parts: [
      { type: "reasoning", text: `the user pasted ${ALL}` },
      { type: "text", text: `using ${ALL}` },
      tool("bash", { command: `deploy ${ALL}` }, `deployed with ${ALL}`),
    ],
    usage: used(2_000),
    finish: "tool-calls",
  })
  yield* cm.compact(SESSION)
  yield* cm.recordUserMessage(SESSION, { text: `again: ${ALL}` })
  yield* cm.recordAssistantStep(SESSION, { parts: [{ type: "text", text: `noted ${ALL}` }], usage: used(3_000) })
  return yield* cm.prepare(SESSION)
})

/** Everything a fresh reader gets back: every event, the read models' rows, the window. */
const readBack = (filename: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const readModels = yield* ReadModels.ReadModels
      const window = yield* readModels.window(SESSION)
      const compactions = yield* readModels.compactions(SESSION)
      return {
        log: yield* SessionLog.read(SESSION),
        window,
        compactions,
        tables: yield* readModels.tables(SESSION),
        recall: yield* readModels.recall(SESSION, "summary deployed credentials", 50),
      }
    }).pipe(Effect.provide(ReadModels.layerSqlite({ filename }))),
  )

describe("forget with the writer still running (issue 18 #1)", () => {
  it("given A open with warm caches, when B forgets the session, then A's next prepare and its next compaction hold no forgotten text, anywhere", async () => {
    const filename = path.join(dir, "idle.db")
    const requests: Array<SummaryRequest> = []
    const a = writer(filename, echo(requests))
    try {
      const before = await a.runPromise(record)
      expect(kindsIn(JSON.stringify(before.messages))).toHaveLength(SAMPLES.length) // the control

      const forgotten = await forgetFrom(filename)
      expect(forgotten.keyDeleted).toBe(true)

      const after = await a.runPromise(
        Effect.gen(function* () {
          const cm = yield* ContextManager
          const prepared = yield* cm.prepare(SESSION)
          const compacted = yield* cm.compact(SESSION)
          return { prepared, compacted, next: yield* cm.prepare(SESSION) }
        }),
      )
      expect(kindsIn(JSON.stringify(after.prepared.messages))).toEqual([])
      expect(JSON.stringify(after.prepared.messages)).toContain(EventStore.ERASED)
      expect(after.compacted.outcome?.status).toBe("finished")
      expect(kindsIn(JSON.stringify(requests.at(-1)?.messages))).toEqual([])
      expect(kindsIn(JSON.stringify(after.next.messages))).toEqual([])

      const read = await readBack(filename)
      expect(read.log.at(-1)?.event._tag).not.toBe("SessionForgotten") // A wrote after the forget
      expect(read.log.some((l) => l.event._tag === "SessionForgotten")).toBe(true)
      expect(kindsIn(JSON.stringify(read))).toEqual([])
      expect(onDisk(filename)).toEqual([])
    } finally {
      await a.dispose()
    }
  })

  it("given a compaction of A in flight, when B forgets the session while the summariser runs, then the summary written from the old text is refused and the compaction is done again from the erased session", async () => {
    const filename = path.join(dir, "in-flight.db")
    const requests: Array<SummaryRequest> = []
    // The second summariser call is the compaction after `record`'s: B forgets while it runs.
    const a = writer(filename, echo(requests, { nth: 2, run: () => forgetFrom(filename) }))
    try {
      await a.runPromise(record)
      const out = await a.runPromise(
        Effect.gen(function* () {
          const cm = yield* ContextManager
          const compacted = yield* cm.compact(SESSION)
          return { compacted, prepared: yield* cm.prepare(SESSION) }
        }),
      )
      expect(requests).toHaveLength(3)
      expect(kindsIn(JSON.stringify(requests[1]!.messages))).not.toEqual([]) // read before the forget
      expect(kindsIn(JSON.stringify(requests[2]!.messages))).toEqual([]) // read again after it
      expect(out.compacted.outcome?.status).toBe("finished")
      expect(kindsIn(JSON.stringify(out.prepared.messages))).toEqual([])

      const read = await readBack(filename)
      const summaries = read.log.filter((l) => l.event._tag === "SummaryFinished")
      expect(summaries).toHaveLength(2)
      expect(kindsIn(JSON.stringify(read))).toEqual([])
      expect(onDisk(filename)).toEqual([])
    } finally {
      await a.dispose()
    }
  })
})

type Op =
  | { readonly _tag: "user" }
  | { readonly _tag: "step"; readonly tokens: number }
  | { readonly _tag: "prepare" }
  | { readonly _tag: "compact" }
  | { readonly _tag: "prune" }
  | { readonly _tag: "recall" }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant({ _tag: "user" } as const),
  fc.integer({ min: 500, max: 75_000 }).map((tokens) => ({ _tag: "step", tokens }) as const),
  fc.constant({ _tag: "prepare" } as const),
  fc.constant({ _tag: "compact" } as const),
  fc.constant({ _tag: "prune" } as const),
  fc.constant({ _tag: "recall" } as const),
)

/** Runs one op of writer A; `text` is what it writes (secrets before the forget, plain text after it). */
const runOp = (o: Op, text: string) =>
  Effect.gen(function* () {
    const cm = yield* ContextManager
    switch (o._tag) {
      case "user":
        return void (yield* cm.recordUserMessage(SESSION, { text }))
      case "step":
        return void (yield* cm.recordAssistantStep(SESSION, {
          parts: [{ type: "text", text }, tool("bash", { command: text }, `${text}\n${"log line\n".repeat(50)}`)],
          usage: used(o.tokens),
          finish: "tool-calls",
        }))
      case "prepare":
        return void (yield* cm.prepare(SESSION))
      case "compact":
        return void (yield* cm.compact(SESSION))
      case "prune":
        return void (yield* cm.prune(SESSION))
      case "recall":
        return void (yield* cm.recall(SESSION, { query: "log line" }))
    }
  })

describe("forget at any point of any session (issue 18 #1)", () => {
  it("for any ops before and after, and a forget between them or inside the next summariser call: once forgotten, nothing A prepares or writes holds a secret", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 8 }),
        fc.array(op, { minLength: 0, maxLength: 8 }),
        fc.boolean(),
        async (before, after, insideSummariser) => {
          const out = await Effect.runPromise(
            Effect.scoped(
              Effect.gen(function* () {
                // One store, two programs: A with its caches, and the forget made beside it.
                const store = yield* EventStore
                const forgetNow = () =>
                  Effect.runPromise(
                    Effect.asVoid(SessionLog.forget(SESSION).pipe(Effect.provideService(EventStore, store))),
                  )
                let armed = false
                let forgotten = false
                const requests: Array<SummaryRequest> = []
                const summarizer = Summarizer.of({
                  summarize: (request) =>
                    Effect.gen(function* () {
                      requests.push(request)
                      if (armed && !forgotten) {
                        forgotten = true
                        yield* Effect.promise(forgetNow)
                      }
                      return {
                        text: `summary of ${JSON.stringify(request.messages)}`,
                        usage: { ...Tokens.zero, input: 10, output: 2 },
                        finish: "stop",
                        model: request.model,
                      }
                    }),
                })
                const a = yield* Layer.build(
                  ContextManager.layer({
                    model: SPEC,
                    encryptAtRest: true,
                    redactSecrets: false,
                    fallback: false,
                    config: { prune: true },
                    prune: { protect: 10, minimum: 10 },
                  }).pipe(
                    Layer.provide(Layer.succeed(Summarizer, summarizer)),
                    Layer.provide(Ids.Ids.layerSequential),
                    Layer.provide(Layer.succeed(EventStore, store)),
                  ),
                )
                const inA = <X, E>(effect: Effect.Effect<X, E, ContextManager>) => Effect.provide(effect, a)
                yield* inA(
                  Effect.forEach([{ _tag: "user" } as const, ...before], (o) => runOp(o, `credentials:\n${ALL}`)),
                )
                if (insideSummariser) armed = true
                else {
                  forgotten = true
                  yield* Effect.promise(forgetNow)
                }
                yield* inA(Effect.forEach(after, (o) => runOp(o, "plain words")))
                if (!forgotten) {
                  forgotten = true
                  yield* Effect.promise(forgetNow)
                }
                const prepared = yield* inA(Effect.flatMap(ContextManager, (cm) => cm.prepare(SESSION)))
                const log = yield* SessionLog.read(SESSION).pipe(Effect.provideService(EventStore, store))
                return { prepared: JSON.stringify(prepared.messages), log: JSON.stringify(log) }
              }),
            ).pipe(Effect.provide(EventStore.layerMemory())),
          )
          expect(kindsIn(out.prepared)).toEqual([])
          expect(kindsIn(out.log)).toEqual([])
        },
      ),
      { ...RUNS, numRuns: Math.min(RUNS.numRuns, 60) },
    )
  })
})
