/**
 * Benchmark: the realistic turn (issue 23), pivot alone. A session of 1k, 10k, 100k (and with `--max 1000000`, 1M)
 * stored messages, made by support/bulkSession.ts and resumed by a fresh runtime from its snapshot; then measured
 * turns, each: record a user message, record 2–5 tool steps (an assistant step with a ~2,000-character tool output,
 * the last one finishing the turn), then `prune` and `prepare`. Only turns that start with a window of 100–195
 * messages are counted: once it holds 195, a manual compaction (extractive, not timed) starts the next cycle.
 *
 * Reported per store and size: the median (and p95) of recording one tool step, and of `prune` + `prepare`.
 * Run: `npm run bench:turn [-- --max 1000000] [--turns 200] [--stores memory,sqlite] [--protect N --minimum N]
 * [--profile FILE]`. Compare ratios,
 * not absolutes: the machine is shared.
 */
import * as fs from "node:fs"
import * as inspector from "node:inspector/promises"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { Ids, Tokens, Window } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore, type NewEvent } from "@pivot/store"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { percentile, SESSION } from "./support/agentLoop.ts"
import { bulkSession } from "./support/bulkSession.ts"

const { values } = parseArgs({
  options: {
    max: { type: "string", default: "100000" },
    min: { type: "string", default: "1000" },
    turns: { type: "string", default: "200" },
    stores: { type: "string", default: "memory,sqlite" },
    // Prune thresholds (tokens) instead of OpenCode's: `--protect 2000 --minimum 0` prunes on every turn, as
    // bench:peers does.
    protect: { type: "string" },
    minimum: { type: "string" },
    // A CPU profile of the measured turns only (setup and generation left out), written to this file.
    profile: { type: "string" },
  },
})
const TURNS = Number(values.turns)
const SIZES = [1_000, 10_000, 100_000, 1_000_000].filter((n) => n >= Number(values.min) && n <= Number(values.max))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-turn-"))
const gc = () => (globalThis as { gc?: () => void }).gc?.()
// A model whose window holds the 100–195 messages of a cycle (the prune still clears old outputs past 40k tokens).
const MODEL = { ref: { providerId: "bench", modelId: "bench" }, limits: { context: 200_000, output: 8_000 } }
const WINDOW_MIN = 100
const WINDOW_MAX = 195

type Store = EventStore["Service"]

const profiler = (() => {
  const session = new inspector.Session()
  return {
    start: async () => {
      session.connect()
      await session.post("Profiler.enable")
      await session.post("Profiler.start")
    },
    stop: async (file: string) => {
      const { profile } = await session.post("Profiler.stop")
      fs.writeFileSync(file, JSON.stringify(profile))
      session.disconnect()
    },
  }
})()

const messagesIn = (events: ReadonlyArray<NewEvent>) =>
  events.filter((e) => e.type === "UserMessageAdded" || e.type === "AssistantStepRecorded").length

/** Grows the session to at least `size` stored messages and writes its snapshot; answers the message count. */
const grow = async (store: Store, bulk: ReturnType<typeof bulkSession>, had: number, size: number) => {
  let messages = had
  while (messages < size) {
    const events = bulk.until(bulk.state.session.version + Math.min(20_000, Math.ceil((size - messages) * 1.4)))
    messages += messagesIn(events)
    for (let at = 0; at < events.length; at += 2_000) {
      const expected = await Effect.runPromise(store.streamVersion(bulk.stream))
      await Effect.runPromise(store.append(bulk.stream, expected, events.slice(at, at + 2_000)))
    }
  }
  await Effect.runPromise(
    store.writeSnapshot(bulk.stream, {
      version: bulk.state.session.version,
      format: Sessions.SNAPSHOT_FORMAT,
      data: Sessions.encodeSnapshot(Sessions.retain(bulk.state)),
    }),
  )
  return messages
}

const output = (i: number, k: number) => `export const value${i}_${k} = ${i * 7 + k} // line of the file\n`.repeat(40)

interface Measured {
  readonly step: number
  readonly stepP95: number
  readonly prepare: number
  readonly prepareP95: number
}

/** Measured turns on a fresh runtime over `store`; the step and prune+prepare samples in µs. */
const measure = (store: Store, first: number, turns = TURNS) =>
  Effect.gen(function* () {
    const cm = yield* ContextManager
    const sessions = yield* Sessions.Sessions
    const windowSize = () => Effect.map(sessions.load(SESSION), (s) => Window.messages(s.session.window).length)
    yield* cm.prepare(SESSION)
    const steps: Array<number> = []
    const prepares: Array<number> = []
    let counted = 0
    for (let i = first; counted < turns; i++) {
      const size = yield* windowSize()
      if (size >= WINDOW_MAX) {
        yield* cm.compact(SESSION)
        continue
      }
      const timed = size >= WINDOW_MIN
      const user = yield* cm.recordUserMessage(SESSION, { text: `request ${i}: look at src/module${i % 40}.ts` })
      const k = 2 + (i % 4)
      for (let s = 0; s < k; s++) {
        const last = s === k - 1
        const t0 = performance.now()
        yield* cm.recordAssistantStep(SESSION, {
          parentId: user.messageId,
          parts: [
            { type: "text", text: last ? `Fixed module ${i}.` : "Reading the file." },
            {
              type: "tool",
              callId: `call_${i}_${s}`,
              tool: last ? "edit" : "read",
              state: {
                status: "completed",
                input: { filePath: `src/module${(i + s) % 40}.ts` },
                output: output(i, s),
              },
            },
          ],
          usage: { ...Tokens.zero, input: 20_000 + size * 100, output: 200 },
          finish: last ? "stop" : "tool-calls",
        })
        if (timed) steps.push((performance.now() - t0) * 1000)
      }
      const t1 = performance.now()
      yield* cm.prune(SESSION)
      yield* cm.prepare(SESSION)
      if (timed) {
        prepares.push((performance.now() - t1) * 1000)
        counted++
      }
    }
    steps.sort((a, b) => a - b)
    prepares.sort((a, b) => a - b)
    return {
      step: percentile(steps, 0.5),
      stepP95: percentile(steps, 0.95),
      prepare: percentile(prepares, 0.5),
      prepareP95: percentile(prepares, 0.95),
    }
  }).pipe(
    Effect.provide(
      ContextManager.layer({
        model: MODEL,
        ...(values.protect === undefined && values.minimum === undefined
          ? {}
          : {
              prune: {
                ...(values.protect === undefined ? {} : { protect: Number(values.protect) }),
                ...(values.minimum === undefined ? {} : { minimum: Number(values.minimum) }),
              },
            }),
      }).pipe(Layer.provide(Ids.Ids.layer), Layer.provideMerge(Layer.succeed(EventStore, store))),
    ),
  )

/** Turns on a throwaway memory store first, so that the first size measured is not the one that warms the JIT. */
const warmUp = async () => {
  const scope = await Effect.runPromise(Scope.make())
  const store: Store = await Effect.runPromise(
    Effect.map(Layer.buildWithScope(EventStore.layerMemory(), scope), (context) =>
      Context.get(context, EventStore),
    ) as Effect.Effect<Store>,
  )
  await grow(store, bulkSession(SESSION), 0, 1_000)
  await Effect.runPromise(measure(store, 0, 40) as Effect.Effect<unknown>)
  await Effect.runPromise(Scope.close(scope, Exit.void))
}

const main = async () => {
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")
  console.log(`pivot realistic turn: sizes ${SIZES.join(", ")} messages; ${TURNS} measured turns per size`)
  console.log(`node ${process.version}, ${os.cpus().length} cores, load ${load()}\n`)
  console.log("| store | stored messages | record a tool step µs (p95) | prune + prepare µs (p95) |")
  console.log("|---|---:|---:|---:|")
  const rows: Array<{ kind: string; size: number; step: number; prepare: number }> = []
  const kinds = (["memory", "sqlite"] as const).filter((k) => values.stores.split(",").includes(k))
  await warmUp()
  for (const kind of kinds) {
    const scope = await Effect.runPromise(Scope.make())
    const layer =
      kind === "memory"
        ? EventStore.layerMemory()
        : EventStore.layerSqlite({ filename: path.join(dir, "turn.db"), synchronous: "normal" })
    const store: Store = await Effect.runPromise(
      Effect.map(Layer.buildWithScope(layer, scope), (context) =>
        Context.get(context, EventStore),
      ) as Effect.Effect<Store>,
    )
    const bulk = bulkSession(SESSION)
    let messages = 0
    let first = 0
    for (const size of SIZES) {
      messages = await grow(store, bulk, messages, size)
      // The measured turns appended events the generator has not seen: it adopts them before growing further.
      gc()
      if (values.profile !== undefined) await profiler.start()
      first += 100_000
      const r = await Effect.runPromise(measure(store, first) as Effect.Effect<Measured>)
      if (values.profile !== undefined) await profiler.stop(`${values.profile}.${kind}-${size}.cpuprofile`)
      bulk.adopt(await Effect.runPromise(store.read(bulk.stream, { from: bulk.state.session.version + 1 })))
      rows.push({ kind, size, step: r.step, prepare: r.prepare })
      console.log(
        `| ${kind} | ${messages} | ${r.step.toFixed(0)} (${r.stepP95.toFixed(0)}) | ${r.prepare.toFixed(0)} (${r.prepareP95.toFixed(0)}) |`,
      )
    }
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  console.log("")
  for (const kind of kinds) {
    const of = (size: number) => rows.find((r) => r.kind === kind && r.size === size)!
    const a = of(SIZES[0]!)
    const b = of(SIZES.at(-1)!)
    console.log(
      `${kind}: ${SIZES[0]} → ${SIZES.at(-1)} messages: step ×${(b.step / a.step).toFixed(2)}, prune + prepare ×${(b.prepare / a.prepare).toFixed(2)}`,
    )
  }
  console.log(`load at the end: ${load()}`)
  fs.rmSync(dir, { recursive: true, force: true })
}

await main()
