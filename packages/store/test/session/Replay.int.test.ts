// Replay and time travel: the window at any version is exactly the window the model saw then, folding from a
// finished summary equals folding from zero, and pivots name the versions to replay.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Events, Session, ValidWindow, Window } from "@pivot/core"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { runs } from "../../../core/test/support/runs.ts"
import { EventStore, ReadModels, Replay, SessionLog } from "../../src/index.ts"
import { appendGenerated, freshSession, type GeneratedSession, open, sessionArb } from "./support.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-replay-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** The window after every version: `windows[v]` is what the model saw after the first `v` events. */
const recordWindows = (events: ReadonlyArray<Events.Event>) => {
  const windows: Array<Window.State> = [Window.initial]
  let state = Window.initial
  for (const event of events) {
    state = Window.evolve(state, event)
    windows.push(state)
  }
  return windows
}

const sqlite = open(ReadModels.layerSqlite({ filename: path.join(dir, "replay.db"), synchronous: "normal" }))
const memory = open(EventStore.layerMemory())
afterAll(async () => {
  await sqlite.dispose()
  await memory.dispose()
})

/** For every version, windowAt renders what was recorded; for every pivot, its version shows the pivot's window. */
const replayEqualsRecorded = (session: GeneratedSession) =>
  Effect.gen(function* () {
    const sessionId = freshSession("r")
    const head = yield* appendGenerated(sessionId, session)
    const windows = recordWindows(session.events)
    for (let version = 0; version <= head; version++) {
      const replayed = yield* Replay.windowAt(sessionId, version)
      // The window at every version is a valid model input: recorded order, and nothing sent breaks a rule.
      expect(ValidWindow.orderViolations(replayed)).toEqual([])
      expect(ValidWindow.inputViolations(Window.render(replayed)).filter((v) => v.rule !== "empty-input")).toEqual([])
      expect(Window.render(replayed)).toEqual(Window.render(windows[version]!))
      expect(Window.messages(replayed)).toEqual(Window.messages(windows[version]!))
    }
    for (const pivot of yield* Replay.pivots(sessionId)) {
      const after = Window.messages(yield* Replay.windowAt(sessionId, pivot.version))
      expect(after.slice(0, 2).map((m) => m.id)).toEqual([pivot.markerId, pivot.summaryId])
      expect(Window.messages(yield* Replay.windowAt(sessionId, pivot.requestedVersion - 1))).toEqual(
        Window.messages(windows[pivot.requestedVersion - 1]!),
      )
    }
    const last = yield* Replay.stateAt(sessionId, head)
    expect(last.version).toBe(head)
    expect(Window.messages(last.window)).toEqual(Window.messages(windows[head]!))
  })

describe("Replay", () => {
  it("property: folding the window from a finished summary's origin equals folding from zero, at every version (1000 runs)", () => {
    let skipped = 0
    fc.assert(
      fc.property(sessionArb(30), (session) => {
        const log = SessionLog.fromEvents("ses_o", session.events)
        const windows = recordWindows(session.events)
        for (let version = 0; version <= log.length; version++) {
          const origin = Replay.originOf(log, version)
          if (origin > 1) skipped += origin - 1
          const fromOrigin = Replay.windowOf(log, version)
          expect(ValidWindow.orderViolations(fromOrigin)).toEqual([])
          expect(Window.messages(fromOrigin)).toEqual(Window.messages(windows[version]!))
          expect(Window.render(fromOrigin)).toEqual(Window.render(windows[version]!))
        }
      }),
      runs(1000),
    )
    // The optimisation must actually skip events, or the property proves nothing.
    expect(skipped).toBeGreaterThan(1000)
  }, 120_000)

  it("property: with SQL read models, windowAt every version renders exactly the window recorded then (80 runs; 8 in the fast lane)", async () => {
    await fc.assert(
      fc.asyncProperty(sessionArb(25), (session) =>
        sqlite.runPromise(replayEqualsRecorded(session) as Effect.Effect<void, unknown, EventStore>),
      ),
      runs(80),
    )
  }, 120_000)

  it("property: on a store without read models, windowAt every version renders the window recorded then (80 runs; 8 in the fast lane)", async () => {
    await fc.assert(
      fc.asyncProperty(sessionArb(25), (session) => memory.runPromise(replayEqualsRecorded(session))),
      runs(80),
    )
  }, 120_000)

  it("given read models, then the origin they find is where the latest pivot's oldest kept message was added", async () => {
    const session = fc
      .sample(sessionArb(40), { numRuns: 300, seed: 5 })
      .find((s) => s.events.filter((e) => e._tag === "SummaryFinished").length >= 2)!
    await sqlite.runPromise(
      Effect.gen(function* () {
        const sessionId = freshSession("o")
        const head = yield* appendGenerated(sessionId, session)
        const readModels = yield* ReadModels.ReadModels
        const log = SessionLog.fromEvents(sessionId, session.events)
        const origins = new Set<number>()
        for (let version = 1; version <= head; version++) {
          const origin = yield* readModels.origin(sessionId, version)
          expect(origin).toBe(Replay.originOf(log, version))
          origins.add(origin)
        }
        expect(origins.size).toBeGreaterThan(1)
      }) as Effect.Effect<void, unknown, EventStore>,
    )
  })

  it("stateAt folds the Decider's state of the prefix", async () => {
    const session = fc.sample(sessionArb(30), { numRuns: 1, seed: 3 })[0]!
    await memory.runPromise(
      Effect.gen(function* () {
        const sessionId = freshSession("s")
        const head = yield* appendGenerated(sessionId, session)
        for (const version of [0, 1, Math.floor(head / 2), head]) {
          const state = yield* Replay.stateAt(sessionId, version)
          const expected = Session.fold(session.events.slice(0, version))
          expect(state.version).toBe(version)
          expect(state.pending).toBe(expected.pending)
          expect(state.lastFinished).toBe(expected.lastFinished)
          expect(Window.messages(state.window)).toEqual(Window.messages(expected.window))
        }
      }),
    )
  })

  it("given a version outside the stream or an unknown session, then typed errors say so", async () => {
    const session = fc.sample(sessionArb(10), { numRuns: 1, seed: 4 })[0]!
    const errors = await memory.runPromise(
      Effect.gen(function* () {
        const sessionId = "ses_range"
        const head = yield* appendGenerated(sessionId, session)
        return [
          yield* Effect.flip(Replay.windowAt(sessionId, head + 1)),
          yield* Effect.flip(Replay.windowAt(sessionId, -1)),
          yield* Effect.flip(Replay.stateAt(sessionId, 1.5)),
          yield* Effect.flip(Replay.windowAt("ses_nobody", 1)),
          yield* Effect.flip(Replay.pivots("ses_nobody")),
          head,
        ] as const
      }),
    )
    const head = errors[5]
    expect(errors[0]).toMatchObject({ _tag: "VersionOutOfRange", version: head + 1, head })
    expect(errors[0].message).toBe(
      `version ${head + 1} is out of range: session ses_range has ${head} events (use 0 to ${head})`,
    )
    expect(errors[1]).toMatchObject({ _tag: "VersionOutOfRange", version: -1 })
    expect(errors[2]).toMatchObject({ _tag: "VersionOutOfRange", version: 1.5 })
    expect(errors[3]).toMatchObject({ _tag: "UnknownSession", sessionId: "ses_nobody" })
    expect(errors[4]).toMatchObject({ _tag: "UnknownSession" })
  })
})
