// Benchmark: how long reading a session's model-input window takes, from the inline SQL read model and by folding
// the log, as the session grows from 1k to 100k messages. The target is a flat read-model latency: it reads the
// window's rows (bounded by compaction), not the history.
//
// Each session is played through the Decider as an agent loop: a user turn, a tool-using step (a 1,500-character
// output), a closing step, and an auto compaction with a two-turn tail every 25 turns, ending halfway between two
// compactions. It is stored in SQLite with the inline read models (appended 2,000 events at a time), then read:
//   - read model: `ReadModels.window` (checks the checkpoint, SELECTs the rows) + `Render.render`
//   - replay:     `Replay.windowAt(head)` with the read models (reads only the events after the latest pivot's origin)
//   - fold:       `SessionLog.read` of the whole stream + `Window.fold` + `Render.render`
//
//   node scripts/bench/window-read.ts [--sizes 1000,10000,100000]

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { type Commands, type Events, Ids, type Message, Render, Session, Window } from "@pivot/core"

type MessageId = Parameters<typeof Ids.unsafe.message>[0] extends string ? ReturnType<typeof Ids.unsafe.message> : never

import { type EventStore, ReadModels, Replay, SessionLog } from "@pivot/store"
import { Effect, Result } from "effect"

const { values } = parseArgs({ options: { sizes: { type: "string", default: "1000,10000,100000" } } })
const SIZES = values.sizes.split(",").map(Number)
const TURNS_PER_COMPACTION = 25
const MODEL = { providerId: "bench", modelId: "bench" }
const LIMITS = { context: 200_000, output: 32_000 }

const conversationSize = (state: Session.State) => state.window.conversation.order.length

/** An agent-loop session of about `messages` stored messages, decided command by command. */
const play = (messages: number): Array<Events.Event> => {
  let state = Session.initialState
  const events: Array<Events.Event> = []
  let n = 0
  const id = (prefix: "msg" | "prt") => `${prefix}_${String(++n).padStart(10, "0")}`
  const msg = () => Ids.unsafe.message(id("msg"))
  const prt = () => Ids.unsafe.part(id("prt"))
  const apply = (command: Commands.Command) => {
    const decision = Session.decide(command, state)
    if (Result.isFailure(decision)) throw new Error(`${command._tag}: ${decision.failure._tag}`)
    events.push(...decision.success)
    state = Session.fold(decision.success, state)
  }
  const step = (parentId: MessageId, parts: Array<Message.AssistantPart>, finish: string) =>
    apply({
      _tag: "RecordAssistantStep",
      message: {
        role: "assistant",
        id: msg(),
        parentId,
        createdAt: n,
        model: MODEL,
        tokens: { input: 20_000 + (n % 5_000), output: 120, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
        finish,
        parts,
      },
    })
  apply({ _tag: "StartSession", sessionId: Ids.unsafe.session("ses_bench"), at: 0, model: MODEL })
  // Every session stops at the same point of its compaction cycle, so their windows are alike in size.
  for (let turn = 1; conversationSize(state) < messages || turn % TURNS_PER_COMPACTION !== 13; turn++) {
    const user: Message.UserMessage = {
      role: "user",
      id: msg(),
      createdAt: n,
      parts: [
        { type: "text", id: prt(), text: `Turn ${turn}: please look at src/module${turn % 40}.ts and fix the bug.` },
      ],
    }
    apply({ _tag: "AddUserMessage", message: user })
    const tool: Message.AssistantPart = {
      type: "tool",
      id: prt(),
      callId: `call_${n}`,
      tool: "read",
      state: {
        status: "completed",
        input: { filePath: `src/module${turn % 40}.ts` },
        output: `// module ${turn}\n${"export const value = compute(input) // line\n".repeat(34)}`,
        title: "read",
      },
    }
    step(user.id, [{ type: "text", id: prt(), text: "Reading the module first." }, tool], "tool-calls")
    step(user.id, [{ type: "text", id: prt(), text: `Fixed the early return in module ${turn}.` }], "stop")
    if (turn % TURNS_PER_COMPACTION === 0) {
      const markerId = msg()
      apply({ _tag: "CreateCompaction", at: n, markerId, partId: prt(), auto: true })
      apply({
        _tag: "ProcessCompaction",
        at: n,
        markerId,
        summaryId: msg(),
        model: MODEL,
        compactionLimits: LIMITS,
        config: { tail_turns: 2 },
      })
      apply({
        _tag: "FinishSummary",
        at: n,
        markerId,
        partId: prt(),
        text: `## Objective\n- Fix the modules\n## Work State\n### Completed\n- modules up to ${turn}`,
        tokens: { input: 0, output: 400, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      })
      apply({ _tag: "Continue", at: n, markerId, messageId: msg() })
    }
  }
  return events
}

const timeMs = async (runs: number, read: () => Promise<unknown>) => {
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await read()
    samples.push(performance.now() - start)
  }
  samples.sort((a, b) => a - b)
  return { median: samples[Math.floor(samples.length / 2)]!, p95: samples[Math.floor(samples.length * 0.95)]! }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-window-read-"))
const rows: Array<Array<string>> = []
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(0))
let first: { readModel: number; replay: number; fold: number } | undefined
let last: typeof first

try {
  for (const size of SIZES) {
    const events = play(size)
    const messages = Session.fold(events).window.conversation.order.length
    const filename = path.join(dir, `window-${size}.db`)
    const layer = ReadModels.layerSqlite({ filename, synchronous: "normal" })
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const log = SessionLog.fromEvents("ses_bench", events)
        const appendStart = performance.now()
        for (let i = 0; i < log.length; i += 2_000) {
          const chunk = log.slice(i, i + 2_000).map(({ event, meta }) => ({ id: meta.id, event }))
          yield* SessionLog.append("ses_bench", i, chunk)
        }
        const appendMs = performance.now() - appendStart
        const readModels = yield* ReadModels.ReadModels
        const windowSize = (yield* readModels.window("ses_bench")).length
        const context = yield* Effect.context<ReadModels.ReadModels | EventStore>()
        const runIn = <A, E>(effect: Effect.Effect<A, E, ReadModels.ReadModels | EventStore>) =>
          Effect.runPromise(Effect.provide(effect, context))
        const readModel = yield* Effect.promise(() =>
          timeMs(300, () => runIn(Effect.map(readModels.window("ses_bench"), (w) => Render.render(w)))),
        )
        const replay = yield* Effect.promise(() =>
          timeMs(100, () => runIn(Effect.map(Replay.windowAt("ses_bench", events.length), Window.render))),
        )
        const fold = yield* Effect.promise(() =>
          timeMs(size >= 100_000 ? 3 : size >= 10_000 ? 10 : 50, () =>
            runIn(Effect.map(SessionLog.read("ses_bench"), (l) => Window.render(Window.fold(l.map((x) => x.event))))),
          ),
        )
        return { appendMs, windowSize, readModel, replay, fold }
      }).pipe(Effect.provide(layer)),
    )
    const fileMiB = fs.statSync(filename).size / 2 ** 20
    rows.push([
      String(messages),
      String(events.length),
      String(result.windowSize),
      `${fmt(result.readModel.median)} (p95 ${fmt(result.readModel.p95)})`,
      `${fmt(result.replay.median)} (p95 ${fmt(result.replay.p95)})`,
      fmt(result.fold.median),
      `${((events.length / result.appendMs) * 1000).toFixed(0)}`,
      fileMiB.toFixed(0),
    ])
    const point = { readModel: result.readModel.median, replay: result.replay.median, fold: result.fold.median }
    first ??= point
    last = point
    console.error(`done ${size}`)
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}

console.log(
  "| messages | events | window (messages) | read model ms | replay from origin ms | full fold ms | inline append events/s | file MiB |",
)
console.log("|---|---|---|---|---|---|---|---|")
for (const row of rows) console.log(`| ${row.join(" | ")} |`)
if (first !== undefined && last !== undefined && rows.length > 1)
  console.log(
    `\nGrowth from the smallest to the largest session: read model ×${(last.readModel / first.readModel).toFixed(2)}, ` +
      `replay ×${(last.replay / first.replay).toFixed(2)}, full fold ×${(last.fold / first.fold).toFixed(1)}.`,
  )
