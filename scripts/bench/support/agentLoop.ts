// The agent loop the benchmarks replay: user turns, tool-using steps whose usage is the window's estimate plus a fixed
// overhead, and automatic compactions by the extractive summariser whenever the context fills up. Shared by
// prepare.ts (pivot's cost per turn) and peers.ts (pivot beside stateless peers on the same history).
import { Events, Ids, Prune, Tokens, Window } from "@pivot/core"
import { ContextManager, type ContextManagerError, type Options, Sessions } from "@pivot/runtime"
import { EventStore, type NewEvent, type RecordedEvent } from "@pivot/store"
import { Effect, Layer } from "effect"

export const SESSION = "ses_bench"
export const MODEL = { ref: { providerId: "bench", modelId: "bench" }, limits: { context: 24_000, output: 4_000 } }
export const OVERHEAD = 2_000

export const runtime = (
  store: Layer.Layer<EventStore, unknown>,
  ids: Layer.Layer<Ids.Ids>,
  options: Omit<Options, "model"> = {},
) => ContextManager.layer({ model: MODEL, ...options }).pipe(Layer.provide(ids), Layer.provideMerge(store))

/** bench:peers' SQLite setting for pivot: OpenCode's (`synchronous = NORMAL` in WAL); pivot's default is FULL. */
export const SYNCHRONOUS = "normal" as const

/**
 * Pruning on (OpenCode ships it off), with OpenCode's thresholds in proportion to this 24k-token model (core's
 * `Prune.sized`: protect 20 % of the context, act once 10 % can be freed): OpenCode's absolute 40,000 / 20,000 tokens
 * never fire below them, and a prune that never acts costs little to measure.
 */
export const PRUNING = { config: { prune: true }, prune: Prune.sized(MODEL.limits.context) } satisfies Omit<
  Options,
  "model"
>

export const services = Effect.all({ cm: ContextManager, sessions: Sessions.Sessions })

/** One turn of the loop: a request, a tool-using step and a closing step; `usage` says what each step reports. */
export const turn = (
  i: number,
  usage: (window: Window.State) => number,
  timed?: (micros: number) => void,
): Effect.Effect<void, ContextManagerError, ContextManager | Sessions.Sessions> =>
  Effect.gen(function* () {
    const { cm, sessions } = yield* services
    yield* cm.recordUserMessage(SESSION, { text: `request ${i}: look at src/module${i % 40}.ts and fix the bug` })
    const t0 = performance.now()
    yield* cm.prepare(SESSION)
    timed?.((performance.now() - t0) * 1000)
    const tokens = usage((yield* sessions.load(SESSION)).session.window)
    yield* cm.recordAssistantStep(SESSION, {
      parts: [
        { type: "text", text: "Reading the file." },
        {
          type: "tool",
          callId: `call_${i}`,
          tool: "read",
          state: {
            status: "completed",
            input: { filePath: `src/module${i % 40}.ts` },
            output: `export const value${i} = ${i}\n`.repeat(20),
          },
        },
      ],
      usage: { ...Tokens.zero, input: tokens },
      finish: "tool-calls",
    })
    yield* cm.prepare(SESSION)
    yield* cm.recordAssistantStep(SESSION, {
      parts: [{ type: "text", text: `Fixed module ${i}.` }],
      usage: { ...Tokens.zero, input: tokens },
      finish: "stop",
    })
  })

export const windowTokens = (window: Window.State) =>
  Tokens.estimate(JSON.stringify(Window.render(window).map((r) => r.message))) + OVERHEAD

/** The history: the loop run until `count` events, as recorded. */
export const generate = (count: number) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    for (let i = 0; (yield* store.streamVersion(Events.streamName(SESSION))) < count; i++) yield* turn(i, windowTokens)
    return yield* store.read(Events.streamName(SESSION))
  }).pipe(Effect.provide(runtime(EventStore.layerMemory(), Ids.Ids.layerSequential)))

/** The first prefix of at least `size` events that leaves no compaction outstanding. */
export const settledPrefix = (recorded: ReadonlyArray<RecordedEvent>, size: number): ReadonlyArray<RecordedEvent> => {
  let state = Sessions.initialState
  for (let i = 0; i < recorded.length; i++) {
    const decoded = Sessions.decodeEvent(SESSION, recorded[i]!)
    if (decoded._tag === "Failure") throw new Error(decoded.failure.message)
    state = Sessions.evolve(state, decoded.success)
    const settled = state.session.pending === undefined && state.runtime.awaitingContinue === undefined
    if (i + 1 >= size && settled && recorded[i]!.type === "AssistantStepRecorded") return recorded.slice(0, i + 1)
  }
  return recorded
}

export const load = (events: ReadonlyArray<RecordedEvent>) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const batch: Array<NewEvent> = events.map((e) => ({ id: e.id, type: e.type, version: e.version, data: e.data }))
    for (let at = 0; at < batch.length; at += 2_000)
      yield* store.append(Events.streamName(SESSION), at, batch.slice(at, at + 2_000))
  })

export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
