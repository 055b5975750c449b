// The cost ledger as an async projection on SQLite: its stored state, priced at read time, equals the ledger folded
// from the whole log at those prices (Ledger.fold, the on-demand path), on generated sessions; a process that did not
// keep it (restart, events written by another process) is caught up from the log; a stale state is not used.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Events, Ledger } from "@pivot/core"
import { Effect, ManagedRuntime } from "effect"
import fc from "fast-check"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { Projections, ReadModels, SessionLog } from "../../src/index.ts"
import { appendBatches } from "../projections/support.ts"
import { type GeneratedSession, sessionArb } from "../session/support.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-ledger-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let files = 0
const fresh = () => path.join(dir, `l${++files}.db`)

const opened: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const runtime of opened.splice(0)) await runtime.dispose()
})
const open = (filename: string, ledger: boolean) => {
  const runtime = ManagedRuntime.make(
    Projections.layerSqlite({
      filename,
      synchronous: "normal",
      ledger,
      projector: { pollInterval: "5 millis", leaseTime: "200 millis" },
    }),
  )
  opened.push(runtime)
  return runtime
}

const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
const priceOf: Ledger.PriceOf = (ref) => (ref.providerId.length % 2 === 0 ? PRICE : undefined)

// Usage planted on every call (the generator's sessions report little), so that prices move every figure.
const withUsage = (session: GeneratedSession, seed: number): GeneratedSession => {
  let n = seed
  const tokens = () => {
    n = (n * 7919 + 13) % 100_003
    return { input: n % 5_000, output: n % 700, reasoning: n % 50, cacheRead: (n * 3) % 40_000, cacheWrite: n % 9_000 }
  }
  const plant = (e: Events.Event): Events.Event =>
    e._tag === "AssistantStepRecorded"
      ? { ...e, message: { ...e.message, tokens: tokens() } }
      : e._tag === "SummaryFinished"
        ? { ...e, summary: { ...e.summary, tokens: tokens() } }
        : e
  const batches = session.batches.map((batch) => batch.map(plant))
  return { batches, events: batches.flat() }
}

const sessions = (n: number, seed: number) =>
  fc.sample(sessionArb(25), { numRuns: n, seed }).map((s, i) => withUsage(s, seed + i))

/** The projected ledger of a session, priced; undefined when the projection does not cover its head. */
const projected = (sessionId: string, head: number) =>
  Effect.gen(function* () {
    const projections = yield* Projections.Projections
    return ReadModels.ledger.priced(yield* projections.stored(ReadModels.ledger.NAME, sessionId), head, priceOf)
  })

const expectLedgerOf = (state: Ledger.State | undefined, events: ReadonlyArray<Events.Event>) => {
  expect(state).toBeDefined()
  const want = Ledger.fold(events, priceOf)
  expect(Ledger.calls(state!)).toEqual(Ledger.calls(want))
  expect(Ledger.entries(state!)).toEqual(Ledger.entries(want))
  expect(Ledger.totals(state!)).toStrictEqual(Ledger.totals(want))
}

describe("the ledger projection", () => {
  it("priced when read, equals the ledger folded from the whole log, after every batch of generated sessions", async () => {
    const runtime = open(fresh(), true)
    const generated = sessions(6, 21)
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        for (const [i, session] of generated.entries()) {
          let version = 0
          let seen: Array<Events.Event> = []
          for (const batch of session.batches) {
            version = yield* appendBatches(`ses_${i}`, [batch], version)
            seen = [...seen, ...batch]
            yield* projections.awaitCaughtUp
            expectLedgerOf(yield* projected(`ses_${i}`, version), seen)
          }
        }
        const status = (yield* projections.status).find((s) => s.name === ReadModels.ledger.NAME)
        expect(status).toMatchObject({ mode: "async", scope: "session", ready: true, lag: 0, failures: 0 })
        expect(Projections.readSide(yield* projections.status).find((e) => e.name === "ledger")?.kind).toBe("built-in")
        // Its state holds the session's messages: erasing the session erases it.
        yield* SessionLog.forget("ses_0")
        expect((yield* projections.stored(ReadModels.ledger.NAME, "ses_0"))?.state).toBeNull()
        expect((yield* projections.stored(ReadModels.ledger.NAME, "ses_1"))?.state).not.toBeNull()
      }),
    )
    expect(generated.some((s) => s.events.some((e) => e._tag === "SummaryFinished"))).toBe(true)
  })

  it("is caught up from the log by a process that keeps it, after events written by one that does not (a restart)", async () => {
    const file = fresh()
    const [first, second] = sessions(20, 5).filter((s) => s.batches.length >= 4)
    const half = Math.ceil(first!.batches.length / 2)
    // A writer without the ledger (an import, a CLI command): nothing projects its events.
    const writer = open(file, false)
    const head = await writer.runPromise(appendBatches("ses_a", first!.batches.slice(0, half)))
    await writer.dispose()
    const keeper = open(file, true)
    await keeper.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* projections.awaitCaughtUp
        expectLedgerOf(yield* projected("ses_a", head), first!.batches.slice(0, half).flat())
      }),
    )
    await keeper.dispose()
    // More events while no process keeps it: the stored state is behind the head, so readers fold the log instead.
    const late = open(file, false)
    const end = await late.runPromise(
      Effect.gen(function* () {
        const end = yield* appendBatches("ses_a", first!.batches.slice(half), head)
        yield* appendBatches("ses_b", second!.batches)
        expect(end).toBeGreaterThan(head)
        expect(yield* projected("ses_a", end)).toBeUndefined()
        return end
      }),
    )
    await late.dispose()
    const again = open(file, true)
    await again.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* projections.awaitCaughtUp
        expectLedgerOf(yield* projected("ses_a", end), first!.events)
        expectLedgerOf(yield* projected("ses_b", second!.events.length), second!.events)
      }),
    )
  })

  it("reserves its name: a user's projection called ledger is refused", async () => {
    const runtime = ManagedRuntime.make(
      Projections.layerSqlite({
        filename: fresh(),
        projections: [Projections.async({ ...ReadModels.ledger.projection, version: 2 })],
      }),
    )
    opened.push(runtime)
    await expect(runtime.runPromise(Effect.void)).rejects.toThrow(/built-in read model/)
  })
})
