/**
 * Issue 18: keys a command's schema does not declare (an OpenCode tool state's `time: { start, end }`, any extra
 * field a caller passes) are stripped where commands enter the runtime. Before, they reached the live state and its
 * snapshots but not the log (the event encoder drops them), so a restart from a snapshot differed from a fold.
 */
import { Conversation, Ids } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore, type StoredSnapshot } from "@pivot/store"
import { Effect, Exit, Layer } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { generatedArb, run } from "../../core/test/support/sessions.ts"

const SESSION = "ses_generated"

// Objects whose keys are data (declared as records of anything): extra keys there are kept, as declared.
const OPEN = new Set(["input", "metadata", "data"])

/** The value with undeclared keys added to every object a schema declares field by field (a copy). */
const withUndeclared = (value: unknown, n: { i: number }): unknown => {
  if (Array.isArray(value)) return value.map((v) => withUndeclared(v, n))
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) out[key] = OPEN.has(key) ? v : withUndeclared(v, n)
  const i = ++n.i
  out[i % 2 === 0 ? "time" : `extra${i}`] = i % 2 === 0 ? { start: i, end: i + 1 } : `undeclared ${i}`
  return out
}

/** Everything of a state a restart must reproduce: the session's messages, window and pending work, the runtime's. */
const observe = (state: Sessions.State) => ({
  version: state.session.version,
  messages: Conversation.messages(state.session.window.conversation),
  window: state.session.window.visible.buffer.slice(0, state.session.window.visible.length),
  pending: state.session.pending,
  lastFinished: state.session.lastFinished,
  runtime: state.runtime,
})

const handler = (options: Sessions.Options) =>
  Sessions.Sessions.layer(options).pipe(Layer.provide(Ids.Ids.layerSequential))

describe("undeclared keys in commands", () => {
  it("property: with undeclared keys anywhere in the commands, the events are the plain commands' and live state == fold == restart from a snapshot", async () => {
    let snapshots = 0
    await fc.assert(
      fc.asyncProperty(generatedArb(30), fc.integer({ min: 1, max: 8 }), async (generated, every) => {
        const options: Sessions.Options = { snapshots: { every }, boundedMemory: false }
        const program = Effect.gen(function* () {
          const store = yield* EventStore
          const live = yield* Effect.gen(function* () {
            const sessions = yield* Sessions.Sessions
            let state = Sessions.initialState
            const n = { i: 0 }
            for (const step of generated.steps) {
              const executed = yield* sessions.execute(SESSION, withUndeclared(step.command, n) as Sessions.Command)
              // The independent reference: the Decider's events for the command without the extra keys.
              expect(executed.events).toEqual(step.events)
              state = executed.state
            }
            return state
          }).pipe(Effect.provide(handler(options)))
          const fold = Sessions.fold(
            yield* Effect.provide(
              Effect.flatMap(Sessions.Sessions, (s) => s.events(SESSION)),
              handler({ snapshots: false }),
            ),
          )
          const restarted = yield* Effect.provide(
            Effect.flatMap(Sessions.Sessions, (s) => s.load(SESSION)),
            handler(options),
          )
          if ((yield* store.readSnapshot(`session-${SESSION}`)) !== undefined) snapshots++
          return { live, fold, restarted }
        }).pipe(Effect.provide(EventStore.layerMemory()))
        if (generated.steps.length === 0) return
        const { live, fold, restarted } = await Effect.runPromise(program as Effect.Effect<never>)
        expect(observe(live)).toEqual(observe(fold))
        expect(observe(restarted)).toEqual(observe(fold))
      }),
      { numRuns: 100 },
    )
    // Restarts did resume from snapshots.
    expect(snapshots).toBeGreaterThan(20)
  })

  // The probe's case: an OpenCode tool state carries `time: { start, end }`, which pivot's ToolCompleted does not declare.
  const session = run([
    { kind: "user", text: 10, image: false },
    { kind: "step", tools: [{ tool: "bash", size: 10, status: "pending" }], tokens: 1_000, finish: "tool-calls" },
    { kind: "toolResult", size: 20 },
  ])
  const result = session.steps.at(-1)!
  it("given a tool result whose state has time: { start, end }, then the stored event, the live state and the snapshot hold none", async () => {
    expect(result.command._tag).toBe("RecordToolResult")
    const command = result.command as Extract<Sessions.Command, { _tag: "RecordToolResult" }>
    const time = { time: { start: 1, end: 2 } }
    const withTime = { ...command, state: { ...command.state, ...time } } as Sessions.Command
    const { executed, stored, snapshot } = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        const store = yield* EventStore
        for (const step of session.steps.slice(0, -1)) yield* sessions.execute(SESSION, step.command)
        const executed = yield* sessions.execute(SESSION, withTime)
        const stored = yield* sessions.events(SESSION)
        yield* sessions.flushSnapshots
        const snapshot = yield* store.readSnapshot(`session-${SESSION}`)
        return { executed, stored, snapshot }
      }).pipe(
        Effect.provide(handler({ snapshots: { every: 1 } })),
        Effect.provide(EventStore.layerMemory()),
      ) as Effect.Effect<{
        executed: Sessions.Executed
        stored: ReadonlyArray<Sessions.Event>
        snapshot: StoredSnapshot | undefined
      }>,
    )
    expect(executed.events).toEqual(result.events)
    expect(stored).toEqual(session.events)
    expect(JSON.stringify(observe(executed.state))).not.toContain('"time"')
    expect(snapshot!.data).not.toContain('"time"')
    expect(observe(executed.state)).toEqual(observe(Sessions.fold(stored)))
  })

  it("given a command with a wrong value, then execute fails with a one-line InvalidCommand and appends nothing", async () => {
    const command = result.command as Extract<Sessions.Command, { _tag: "RecordToolResult" }>
    const wrong = { ...command, state: { ...command.state, output: 42 } } as unknown as Sessions.Command
    const exit = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        for (const step of session.steps.slice(0, -1)) yield* sessions.execute(SESSION, step.command)
        const exit = yield* Effect.exit(sessions.execute(SESSION, wrong))
        return { exit, version: (yield* sessions.load(SESSION)).session.version }
      }).pipe(Effect.provide(handler({})), Effect.provide(EventStore.layerMemory())) as Effect.Effect<never>,
    )
    const { exit: failed, version } = exit as { exit: Exit.Exit<unknown, Sessions.ExecuteError>; version: number }
    expect(version).toBe(session.events.length - result.events.length)
    expect(Exit.isFailure(failed)).toBe(true)
    const error = Exit.isFailure(failed) ? (failed.cause.reasons[0] as { error?: unknown })?.error : undefined
    expect(error).toBeInstanceOf(Sessions.InvalidCommand)
    expect((error as Error).message).toMatch(/^invalid RecordToolResult command: state\.?.*output.*: /)
    expect((error as Error).message).not.toContain("\n")
  })
})
