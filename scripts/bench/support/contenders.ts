// bench:peers' contenders (issue 23), one implementation each, run either in a process of their own
// (support/contender.ts, the default) or all in the bench's process (`--together`, to measure what sharing a heap and a
// JIT does to each). Every contender loads the same session from the same files, warms up on its own, then per turn
// takes the same new events (pivot's memory contender records them and hands them out) and times its own call.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { DatabaseSync } from "node:sqlite"
import { StringDecoder } from "node:string_decoder"
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage, trimMessages } from "@langchain/core/messages"
import { Events, Ids, type Message, Prune, Render } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore, type NewEvent, type RecordedEvent } from "@pivot/store"
import { type ModelMessage, pruneMessages } from "ai"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { MODEL, PRUNING, runtime, SESSION, SYNCHRONOUS } from "./agentLoop.ts"
import { readStep } from "./bulkSession.ts"
import { type GcInside, gcWatch } from "./gcWatch.ts"
import * as OpenCode from "./openCode.ts"

export const KINDS = [
  "pivot-memory",
  "pivot-sqlite",
  "opencode-sqlite",
  "opencode-memory",
  "prune-messages",
  "trim-messages",
] as const
export type Kind = (typeof KINDS)[number]

/** What a contender is given: the session's files (written once by the bench), and where its own SQLite file goes. */
export interface Setup {
  readonly kind: Kind
  /** The session's events, one encoded `NewEvent` per line. */
  readonly events: string
  /** The snapshot the runtime writes after the session's last pivot (JSON), for pivot's stores. */
  readonly snapshot: string
  /** pivot's or OpenCode's SQLite file. */
  readonly db: string
  readonly warmMs: number
  /** trimMessages: run while its turns have spent under this (µs); it still takes every turn's events. */
  readonly budget: number
  /** pivot's warm-up: a session made as the timed one, of `WARM_SIZE` stored messages (its events and snapshot). */
  readonly warmEvents: string
  readonly warmSnapshot: string
  /** pivot: this is the throwaway copy its warm-up runs on (it warms no copy of its own). */
  readonly copy?: boolean
}

export interface Loaded {
  /** Plain messages of an app without compaction (the whole history `pruneMessages` and `trimMessages` process). */
  readonly plain: number
  readonly ms: number
}

export interface TurnResult {
  /** The timed call (pivot: prune + `prepare`), µs; absent when the contender's budget is spent. */
  readonly micros?: number | undefined
  /** The same call's CPU time, µs: every thread of its process (the collector's helpers too), not the waits. */
  readonly cpu?: number | undefined
  /** pivot: each tool step recorded, µs. */
  readonly record?: ReadonlyArray<number>
  /** pivot: each tool step's CPU time, µs. */
  readonly recordCpu?: ReadonlyArray<number>
  /** pivot and OpenCode: the model messages of the window, as a hash of their JSON, to compare across processes. */
  readonly window?: { readonly hash: string; readonly length: number }
  /** pivot's memory contender: the events the turn recorded, for the others. */
  readonly events?: ReadonlyArray<RecordedEvent>
  /** OpenCode on SQLite: its prune pass, µs, while it has spent under 5 s. */
  readonly prunePass?: number | undefined
}

export interface Contender {
  readonly load: () => Promise<Loaded>
  /** Warms up on a side session or on read-only calls; `run: false` (trimMessages past its extrapolation) skips it. */
  readonly warm: (run: boolean) => Promise<void>
  readonly turn: (i: number, events: ReadonlyArray<RecordedEvent>) => Promise<TurnResult>
  readonly close: () => Promise<void>
}

export type Watch = ReturnType<typeof gcWatch>
export type GcReport = Map<string, GcInside>

const now = () => performance.now()

interface Mark {
  readonly wall: number
  readonly cpu: NodeJS.CpuUsage
}
interface Timing {
  readonly micros: number
  readonly cpu: number
}
const mark = (): Mark => ({ cpu: process.cpuUsage(), wall: now() })
/** Ends a timed section started at `m`: its wall time and its process's CPU time, and its GC pauses charged to `who`. */
const stop = (watch: Watch, who: string, m: Mark): Timing => {
  const t1 = now()
  const cpu = process.cpuUsage(m.cpu)
  watch.section(who, m.wall, t1)
  return { micros: (t1 - m.wall) * 1000, cpu: cpu.user + cpu.system }
}
const WARM_SESSION = "ses_warm"
/** The stored messages of the session pivot's warm-up runs on (see `pivot`'s `warm`). */
export const WARM_SIZE = 10_000
const USABLE = MODEL.limits.context - MODEL.limits.output

/** The tool steps of timed turn `i`: 2 to 5. */
export const stepsOf = (i: number) => 2 + (i % 4)

const windowOf = (messages: ReadonlyArray<unknown>) => ({
  hash: createHash("sha256").update(JSON.stringify(messages)).digest("hex"),
  length: messages.length,
})

// ---- the session's files -----------------------------------------------------------------------------------------------

/** Writes the session's events, one per line (a million events do not fit one string). */
export const writeEvents = (file: string, events: ReadonlyArray<NewEvent>) => {
  const fd = fs.openSync(file, "w")
  try {
    for (let at = 0; at < events.length; at += 5_000)
      fs.writeSync(
        fd,
        `${events
          .slice(at, at + 5_000)
          .map((e) => JSON.stringify(e))
          .join("\n")}\n`,
      )
  } finally {
    fs.closeSync(fd)
  }
}

/** Reads the session's events back in batches of `size`. */
const readEvents = (file: string, size: number, each: (batch: Array<NewEvent>) => void) => {
  const fd = fs.openSync(file, "r")
  const buffer = Buffer.alloc(16 << 20)
  const decoder = new StringDecoder("utf8")
  let rest = ""
  let batch: Array<NewEvent> = []
  try {
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, buffer.length, null)
      const text = rest + (n === 0 ? decoder.end() : decoder.write(buffer.subarray(0, n)))
      const lines = text.split("\n")
      rest = n === 0 ? "" : lines.pop()!
      for (const line of lines) {
        if (line === "") continue
        batch.push(JSON.parse(line) as NewEvent)
        if (batch.length === size) {
          each(batch)
          batch = []
        }
      }
      if (n === 0) break
    }
    if (batch.length > 0) each(batch)
  } finally {
    fs.closeSync(fd)
  }
}

/** The events as the store would hand them out: what the peers decode. */
const recorded = (stream: string, e: NewEvent, streamVersion: number): RecordedEvent => ({
  id: e.id,
  type: e.type,
  version: e.version,
  data: e.data,
  metadata: null,
  stream,
  streamVersion,
  position: streamVersion,
  recordedAt: 0,
})

const decode = (r: RecordedEvent) => {
  const decoded = Sessions.decodeEvent(SESSION, r)
  if (decoded._tag === "Failure") throw new Error(decoded.failure.message)
  return decoded.success
}

// ---- pivot -------------------------------------------------------------------------------------------------------------

type Runtime = ManagedRuntime.ManagedRuntime<ContextManager | Sessions.Sessions | EventStore, unknown>

/**
 * One realistic turn: a user message, `steps` tool steps (each with a ~600-character output), then `prune` and
 * `prepare`, timed together. Usage stays under the trigger, so no turn compacts: every contender does the same work.
 */
const pivotTurn = (sessionId: string, i: number, steps: number, section?: (what: string, m: Mark) => Timing) =>
  Effect.gen(function* () {
    const cm = yield* ContextManager
    yield* cm.recordUserMessage(sessionId, { text: `request ${i}: look at src/module${i % 40}.ts and fix the bug` })
    const record: Array<Timing> = []
    for (let s = 0; s < steps; s++) {
      const m = mark()
      yield* cm.recordAssistantStep(sessionId, readStep(i, s))
      if (section !== undefined) record.push(section("record", m))
    }
    const m = mark()
    yield* cm.prune(sessionId)
    const prepared = yield* cm.prepare(sessionId)
    const timing = section?.("", m)
    return { record, timing, window: prepared.modelMessages }
  })

const pivot = (setup: Setup, watch: Watch): Contender => {
  const store =
    setup.kind === "pivot-memory"
      ? EventStore.layerMemory()
      : EventStore.layerSqlite({ filename: setup.db, synchronous: SYNCHRONOUS })
  const rt = ManagedRuntime.make(runtime(store as Layer.Layer<EventStore, unknown>, Ids.Ids.layer, PRUNING)) as Runtime
  const stream = Events.streamName(SESSION)
  const section = (what: string, m: Mark) => stop(watch, what === "" ? setup.kind : `${setup.kind} ${what}`, m)
  let version = 0
  return {
    load: async () => {
      const t0 = now()
      const snapshot = JSON.parse(fs.readFileSync(setup.snapshot, "utf8")) as { version: number }
      await rt.runPromise(
        Effect.gen(function* () {
          const es = yield* EventStore
          const batches: Array<Array<NewEvent>> = []
          readEvents(setup.events, 2_000, (batch) => batches.push(batch))
          for (const batch of batches) {
            yield* es.append(stream, version, batch)
            version += batch.length
          }
          // The runtime writes a snapshot after each pivot; the history ends just after one.
          yield* es.writeSnapshot(stream, snapshot as never)
          yield* (yield* Sessions.Sessions).load(SESSION)
        }),
      )
      return { plain: 0, ms: now() - t0 }
    },
    warm: async () => {
      // Half the time on a copy of a session made as the timed one was (the same generator, `WARM_SIZE` stored
      // messages, loaded from files the same way, in a runtime and store of its own, thrown away after): the timed
      // turns' code on data of the same shapes, as each peer warms up on the session itself. Its messages come decoded
      // from the store, with other shapes than freshly recorded ones: warmed only on a recorded side session, the first
      // timed turns ran on code not yet optimised for them. The copy's size is the same at every size, so is the
      // warm-up (loading it is not counted in `warmMs`).
      if (!setup.copy) {
        const quiet = gcWatch()
        const copy = pivot(
          { ...setup, events: setup.warmEvents, snapshot: setup.warmSnapshot, copy: true, db: `${setup.db}.warm` },
          quiet,
        )
        await copy.load()
        const t0 = now()
        for (let i = 0; i < 3 || now() - t0 < setup.warmMs / 2; i++) await copy.turn(i, [])
        await copy.close()
        quiet.stop()
      }
      // The rest on a side session of the timed runtime: its store and caches in use.
      const t1 = now()
      for (let i = 0; now() - t1 < setup.warmMs / (setup.copy ? 1 : 2) || i < 3; i++)
        await rt.runPromise(pivotTurn(WARM_SESSION, i, stepsOf(i)))
    },
    turn: async (i) => {
      const t = await rt.runPromise(pivotTurn(SESSION, i, stepsOf(i), section))
      const events =
        setup.kind === "pivot-memory"
          ? await rt.runPromise(
              Effect.gen(function* () {
                return yield* (yield* EventStore).read(stream, { from: version + 1 })
              }),
            )
          : []
      if (events.length > 0) version = events[events.length - 1]!.streamVersion
      return {
        micros: t.timing!.micros,
        cpu: t.timing!.cpu,
        record: t.record.map((r) => r.micros),
        recordCpu: t.record.map((r) => r.cpu),
        window: windowOf(t.window),
        events,
      }
    },
    close: () => rt.dispose(),
  }
}

// ---- the peers ---------------------------------------------------------------------------------------------------------

const warmFor = async (ms: number, run: () => unknown) => {
  const t0 = now()
  for (let i = 0; now() - t0 < ms && i < 1_000; i++) await run()
}

const timed = async <A>(watch: Watch, who: string, run: () => A | Promise<A>) => {
  const m = mark()
  const value = await run()
  return { ...stop(watch, who, m), value }
}

/** Loads the session into a peer's store through `mirror`, then takes each turn's new events the same way. */
const fed = (
  setup: Setup,
  stores: ReadonlyArray<OpenCode.InMemory | OpenCode.OnSqlite>,
  plain?: (m: Message.Message) => void,
) => {
  const feed = OpenCode.mirror(SESSION, stores, plain)
  const stream = Events.streamName(SESSION)
  const sqlite = stores.find((s) => s instanceof OpenCode.OnSqlite)
  const inTransaction = (run: () => void) => {
    sqlite?.db.exec("BEGIN")
    run()
    sqlite?.db.exec("COMMIT")
  }
  return {
    load: () => {
      let version = 0
      inTransaction(() =>
        readEvents(setup.events, 2_000, (batch) => {
          for (const e of batch) feed(decode(recorded(stream, e, ++version)))
        }),
      )
    },
    take: (events: ReadonlyArray<RecordedEvent>) =>
      inTransaction(() => {
        for (const r of events) feed(decode(r))
      }),
  }
}

const openCode = (setup: Setup, watch: Watch): Contender => {
  const store =
    setup.kind === "opencode-memory"
      ? new OpenCode.InMemory()
      : new OpenCode.OnSqlite(new DatabaseSync(setup.db), SESSION)
  const source = fed(setup, [store])
  let pruneSpent = 0
  return {
    load: async () => {
      const t0 = now()
      source.load()
      return { plain: 0, ms: now() - t0 }
    },
    warm: () => warmFor(setup.warmMs, () => OpenCode.step(store.newestFirst())),
    turn: async (_i, events) => {
      source.take(events)
      const o = await timed(watch, setup.kind, () => OpenCode.step(store.newestFirst()))
      let prunePass: number | undefined
      // OpenCode's prune pass (opt-in upstream, after the loop) reads the whole session: timed while it has spent
      // under 5 s, in a table of its own.
      if (store instanceof OpenCode.OnSqlite && pruneSpent < 5_000_000) {
        const { protect = Prune.PRUNE_PROTECT, minimum = Prune.PRUNE_MINIMUM } = PRUNING.prune
        prunePass = (
          await timed(watch, "opencode prune pass", () => OpenCode.prunePass(store.messages(), protect, minimum))
        ).micros
        pruneSpent += prunePass
      }
      return { micros: o.micros, cpu: o.cpu, window: windowOf(o.value), prunePass }
    },
    close: async () => {
      if (store instanceof OpenCode.OnSqlite) store.db.close()
    },
  }
}

const textOf = (content: unknown): string => (typeof content === "string" ? content : JSON.stringify(content))

const toLangChain = (m: ModelMessage): Array<BaseMessage> => {
  if (m.role === "user" || m.role === "system") return [new HumanMessage(textOf(m.content))]
  if (m.role === "assistant") {
    const parts = typeof m.content === "string" ? [] : m.content
    const calls = parts.flatMap((p) =>
      p.type === "tool-call" ? [{ id: p.toolCallId, name: p.toolName, args: p.input as Record<string, unknown> }] : [],
    )
    const text = parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
    return [new AIMessage({ content: typeof m.content === "string" ? m.content : text, tool_calls: calls })]
  }
  return m.content.flatMap((p) =>
    p.type === "tool-result" ? [new ToolMessage({ content: textOf(p.output), tool_call_id: p.toolCallId })] : [],
  )
}

const approxTokens = (messages: ReadonlyArray<BaseMessage>): number =>
  messages.reduce((n, m) => n + Math.round(textOf(m.content).length / 4) + 4, 0)

/**
 * `pruneMessages` and `trimMessages` over the whole plain history (what an app without compaction keeps: every
 * message, unpruned, no markers or summaries), as they run every turn.
 */
const plainHistory = (setup: Setup, watch: Watch): Contender => {
  const plain: Array<ModelMessage> = []
  const langChain: Array<BaseMessage> = []
  const trim = setup.kind === "trim-messages"
  const source = fed(setup, [], (m) => {
    for (const rendered of Render.renderMessage(m)) {
      plain.push(rendered as ModelMessage)
      if (trim) langChain.push(...toLangChain(rendered as ModelMessage))
    }
  })
  const call: () => unknown = trim
    ? () =>
        trimMessages(langChain, { maxTokens: USABLE, strategy: "last", tokenCounter: approxTokens, startOn: "human" })
    : () => pruneMessages({ messages: plain, reasoning: "before-last-message", toolCalls: "before-last-2-messages" })
  let runs = true
  let spent = 0
  let turns = 0
  return {
    load: async () => {
      const t0 = now()
      source.load()
      return { plain: plain.length, ms: now() - t0 }
    },
    warm: async (run) => {
      runs = run
      if (run) await warmFor(setup.warmMs, call)
    },
    turn: async (_i, events) => {
      source.take(events)
      // trimMessages grows with the square of the history: it runs while it has spent under its budget (once at least).
      if (!runs || (trim && spent >= setup.budget && turns > 0)) return {}
      const t = await timed(watch, setup.kind, call)
      spent += t.micros
      turns++
      return { micros: t.micros, cpu: t.cpu }
    },
    close: async () => {},
  }
}

/**
 * Turns `from` to `from + n - 1` back to back, the k-th taking `events[k]` (none for pivot's memory contender, which
 * records them).
 */
export const runTurns = async (
  contender: Contender,
  from: number,
  n: number,
  events: ReadonlyArray<ReadonlyArray<RecordedEvent>>,
): Promise<Array<TurnResult>> => {
  const out: Array<TurnResult> = []
  for (let k = 0; k < n; k++) out.push(await contender.turn(from + k, events[k] ?? []))
  return out
}

export const make = (setup: Setup, watch: Watch): Contender =>
  setup.kind === "pivot-memory" || setup.kind === "pivot-sqlite"
    ? pivot(setup, watch)
    : setup.kind === "opencode-memory" || setup.kind === "opencode-sqlite"
      ? openCode(setup, watch)
      : plainHistory(setup, watch)

export { gcWatch }
