/**
 * Benchmark: the cost per turn of producing the next model input, pivot beside three stateless peers, on the same
 * generated session and in one run (issue 11, part 5). A stateless peer keeps no folded state, so every turn it
 * redoes its work over the stored history:
 *
 * - AI SDK `pruneMessages` over the whole message history (reasoning and old tool calls dropped);
 * - LangChain `trimMessages` over the whole history, keeping the newest messages that fit the usable window;
 * - an OpenCode-style rebuild from OpenCode's SQLite layout (a `message` and a `part` table of JSON rows): read the
 *   session newest first in pages of 50, parse, run `filterCompacted` (spec §2.11: stop at the latest completed
 *   compaction's tail, then reorder marker, summary, tail, later turns) and render the model messages.
 *
 * pivot's turn is `ContextManager.prepare` on a live session (the fold is kept, only new events are read). The
 * history is the agent loop of prepare.ts (pivots by the extractive summariser whenever the context fills up); each
 * size is its first N stored messages. Run: `npm run bench:peers [-- --turns N] [--max 10000]`. Compare ratios, not absolutes.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { parseArgs } from "node:util"
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage, trimMessages } from "@langchain/core/messages"
import { Conversation, type Events, Ids, Message, Render } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore, type RecordedEvent } from "@pivot/store"
import { type ModelMessage, pruneMessages } from "ai"
import { Effect } from "effect"
import { generate, load, MODEL, percentile, runtime, SESSION, services, settledPrefix } from "./support/agentLoop.ts"

const { values } = parseArgs({
  options: { turns: { type: "string", default: "50" }, max: { type: "string", default: "100000" } },
})
const TURNS = Number(values.turns)
const SIZES = [1_000, 10_000, 100_000].filter((size) => size <= Number(values.max))
const USABLE = MODEL.limits.context - MODEL.limits.output
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-peers-"))

const MESSAGE_EVENTS = new Set([
  "UserMessageAdded",
  "AssistantStepRecorded",
  "ProviderErrorReported",
  "CompactionRequested",
  "SummaryFinished",
  "SummaryFailed",
  "TurnReplayed",
  "ContinueRequested",
])

/**
 * The prefix holding at least `messages` stored messages, extended to the step just before the next compaction: the
 * fullest window of that pivot cycle, where a rebuild that reads back to the last pivot has the most to read.
 */
const prefixOf = (history: ReadonlyArray<RecordedEvent>, messages: number) => {
  let seen = 0
  let at = history.length
  for (let i = 0; i < history.length; i++) {
    if (MESSAGE_EVENTS.has(history[i]!.type)) seen++
    if (seen >= messages) {
      at = i + 1
      break
    }
  }
  const next = history.findIndex((e, i) => i >= at && e.type === "CompactionRequested")
  if (next === -1) return settledPrefix(history, at)
  let end = next - 1
  while (end > at && history[end]!.type !== "AssistantStepRecorded") end--
  return history.slice(0, end + 1)
}

const decoded = (events: ReadonlyArray<RecordedEvent>): Array<Events.Event> =>
  events.map((e) => {
    const r = Sessions.decodeEvent(SESSION, e)
    if (r._tag === "Failure") throw new Error(r.failure.message)
    return r.success
  })

/** Every stored message in order, with each marker's `tail_start_id` as OpenCode stores it. */
const storedMessages = (events: ReadonlyArray<Events.Event>) => {
  let conversation = Conversation.initial
  const tailStart = new Map<string, string>()
  for (const event of events) {
    conversation = Conversation.evolve(conversation, event)
    if (event._tag === "CompactionStarted" && event.plan.tailStartId !== undefined)
      tailStart.set(event.markerId, event.plan.tailStartId)
  }
  return { messages: Conversation.messages(conversation), tailStart }
}

// ---- OpenCode-style stateless rebuild -------------------------------------------------------------------------------

interface Row {
  readonly id: string
  readonly data: string
}

const openCodeDb = (file: string, messages: ReadonlyArray<Message.Message>, tailStart: Map<string, string>) => {
  const db = new DatabaseSync(file)
  db.exec(`CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, data TEXT NOT NULL);
    CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, data TEXT NOT NULL);
    CREATE INDEX message_session_idx ON message (session_id, time_created, id);
    CREATE INDEX part_message_idx ON part (message_id, id);`)
  const insertMessage = db.prepare("INSERT INTO message VALUES (?, ?, ?, ?)")
  const insertPart = db.prepare("INSERT INTO part VALUES (?, ?, ?, ?)")
  db.exec("BEGIN")
  messages.forEach((m, i) => {
    const { parts, ...info } = m
    insertMessage.run(m.id, SESSION, i, JSON.stringify(info))
    parts.forEach((part, j) => {
      const stored = part.type === "compaction" ? { ...part, tail_start_id: tailStart.get(m.id) } : part
      insertPart.run(`${m.id}_${String(j).padStart(4, "0")}`, m.id, SESSION, JSON.stringify(stored))
    })
  })
  db.exec("COMMIT")
  return db
}

/** One OpenCode-style turn: page the session newest first, stop at the boundary, reorder, render. */
const openCodeTurn = (db: DatabaseSync) => {
  const page = db.prepare(
    "SELECT id, time_created AS t, data FROM message WHERE session_id = ? AND time_created < ? ORDER BY time_created DESC LIMIT 50",
  )
  const partsOf = db.prepare("SELECT id, data FROM part WHERE message_id = ? ORDER BY id")
  return () => {
    const completed = new Set<string>()
    let retain: string | undefined
    const result: Array<Message.Message & { readonly parts: ReadonlyArray<{ tail_start_id?: string }> }> = []
    let before = Number.MAX_SAFE_INTEGER
    walk: for (;;) {
      const rows = page.all(SESSION, before) as unknown as ReadonlyArray<Row & { readonly t: number }>
      if (rows.length === 0) break
      for (const row of rows) {
        before = row.t
        const info = JSON.parse(row.data)
        const parts = (partsOf.all(row.id) as unknown as ReadonlyArray<Row>).map((p) => JSON.parse(p.data))
        const m = { ...info, parts }
        result.push(m)
        if (retain !== undefined) {
          if (m.id === retain) break walk
          continue
        }
        const compaction = m.role === "user" ? parts.find((p: { type: string }) => p.type === "compaction") : undefined
        if (compaction !== undefined && completed.has(m.id)) {
          if (compaction.tail_start_id === undefined) break walk
          retain = compaction.tail_start_id
          if (retain === m.id) break walk
          continue
        }
        if (m.role === "assistant" && m.summary && m.finish && !m.error) completed.add(m.parentId)
      }
    }
    result.reverse()
    const tailOf = (m: (typeof result)[number]) => m.parts.find((p) => "tail_start_id" in p)?.tail_start_id
    const ci = result.findLastIndex((m) => tailOf(m) !== undefined)
    let ordered = result
    if (ci !== -1) {
      const marker = result[ci]!
      const si = result.findIndex(
        (m, i) => i > ci && m.role === "assistant" && m.summary === true && m.parentId === marker.id,
      )
      const ti = result.findIndex((m) => m.id === tailOf(marker))
      if (ti >= 0 && ti < ci && si > ci)
        ordered = [...result.slice(ci, si + 1), ...result.slice(ti, ci), ...result.slice(si + 1)]
    }
    return Render.toModelMessages(ordered as unknown as ReadonlyArray<Message.Message>).length
  }
}

// ---- LangChain -----------------------------------------------------------------------------------------------------

const textOf = (content: unknown): string => (typeof content === "string" ? content : JSON.stringify(content))

const toLangChain = (messages: ReadonlyArray<ModelMessage>): Array<BaseMessage> =>
  messages.flatMap((m): Array<BaseMessage> => {
    if (m.role === "user" || m.role === "system") return [new HumanMessage(textOf(m.content))]
    if (m.role === "assistant") {
      const parts = typeof m.content === "string" ? [] : m.content
      const calls = parts.flatMap((p) =>
        p.type === "tool-call"
          ? [{ id: p.toolCallId, name: p.toolName, args: p.input as Record<string, unknown> }]
          : [],
      )
      const text = parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
      return [new AIMessage({ content: typeof m.content === "string" ? m.content : text, tool_calls: calls })]
    }
    return m.content.flatMap((p) =>
      p.type === "tool-result" ? [new ToolMessage({ content: textOf(p.output), tool_call_id: p.toolCallId })] : [],
    )
  })

const approxTokens = (messages: ReadonlyArray<BaseMessage>): number =>
  messages.reduce((n, m) => n + Math.round(textOf(m.content).length / 4) + 4, 0)

// ---- the run -------------------------------------------------------------------------------------------------------

/** The median of up to TURNS timed turns after `WARM_UP_MS` of unmeasured ones, stopping early once 5 s were spent (at least one turn). */
/** Every contender first runs for this long unmeasured, so that each is timed with its code compiled (JIT-warm). */
const WARM_UP_MS = 200

const time = async (run: () => unknown | Promise<unknown>) => {
  const samples: Array<number> = []
  const warm = performance.now()
  for (let i = 0; i < 1_000 && performance.now() - warm < WARM_UP_MS; i++) await run()
  const start = performance.now()
  for (let i = 0; i < TURNS && (i === 0 || performance.now() - start < 5_000); i++) {
    const t0 = performance.now()
    await run()
    samples.push((performance.now() - t0) * 1000)
  }
  samples.sort((a, b) => a - b)
  return percentile(samples, 0.5)
}

const pivotTurn = (events: ReadonlyArray<RecordedEvent>) =>
  Effect.gen(function* () {
    yield* load(events)
    const { cm, sessions } = yield* services
    yield* sessions.load(SESSION)
    const warm = performance.now()
    for (let i = 0; i < 1_000 && performance.now() - warm < WARM_UP_MS; i++) yield* cm.prepare(SESSION)
    const samples: Array<number> = []
    for (let i = 0; i < TURNS; i++) {
      const t0 = performance.now()
      yield* cm.prepare(SESSION)
      samples.push((performance.now() - t0) * 1000)
    }
    samples.sort((a, b) => a - b)
    const window = (yield* cm.prepare(SESSION)).messages.length
    return { median: percentile(samples, 0.5), window }
  }).pipe(Effect.provide(runtime(EventStore.layerMemory(), Ids.Ids.layer)))

const main = async () => {
  const g0 = performance.now()
  const history = await Effect.runPromise(generate(Math.round(Math.max(...SIZES) * 1.15)))
  console.log(
    `history: ${history.length} events, ${history.filter((e) => e.type === "SummaryFinished").length} pivots, generated in ${((performance.now() - g0) / 1000).toFixed(1)} s; median of ${TURNS} turns per cell after ${WARM_UP_MS} ms of warm-up\n`,
  )
  console.log(
    "| stored messages | window messages | pivot `prepare` µs | AI SDK `pruneMessages` µs | LangChain `trimMessages` µs | OpenCode-style rebuild µs | × pruneMessages | × trimMessages | × OpenCode-style |",
  )
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  let lastTrim: { readonly micros: number; readonly messages: number } | undefined
  for (const size of SIZES) {
    const prefix = prefixOf(history, size)
    const events = decoded(prefix)
    const { messages, tailStart } = storedMessages(events)
    // What a plain app keeps: its conversation without pivot's markers and summaries.
    const plain = messages.filter(
      (m) => !(m.role === "assistant" && m.summary === true) && Message.compactionPartOf(m) === undefined,
    )
    const modelMessages = Render.toModelMessages(plain)
    const langChain = toLangChain(modelMessages)
    const db = openCodeDb(path.join(dir, `opencode-${size}.db`), messages, tailStart)
    ;(globalThis as { gc?: () => void }).gc?.()
    const pivot = await Effect.runPromise(pivotTurn(prefix))
    const prune = await time(() =>
      pruneMessages({ messages: modelMessages, reasoning: "before-last-message", toolCalls: "before-last-2-messages" }),
    )
    // trimMessages counts the kept list again for every message it considers (quadratic with a list counter): past
    // a minute per turn it is extrapolated from the previous size instead of run.
    const expected = lastTrim === undefined ? 0 : lastTrim.micros * (messages.length / lastTrim.messages) ** 2
    const trimRan = expected < 60_000_000
    const trim = trimRan
      ? await time(() =>
          trimMessages(langChain, {
            maxTokens: USABLE,
            strategy: "last",
            tokenCounter: approxTokens,
            startOn: "human",
          }),
        )
      : expected
    if (trimRan) lastTrim = { micros: trim, messages: messages.length }
    const rebuild = openCodeTurn(db)
    const openCode = await time(rebuild)
    db.close()
    const x = (peer: number) => `×${(peer / pivot.median).toFixed(0)}`
    const trimCell = trimRan ? trim.toFixed(0) : `≈${trim.toExponential(1)} (extrapolated, not run)`
    console.log(
      `| ${messages.length} | ${pivot.window} | ${pivot.median.toFixed(0)} | ${prune.toFixed(0)} | ${trimCell} | ${openCode.toFixed(0)} | ${x(prune)} | ${x(trim)} | ${x(openCode)} |`,
    )
  }
}

main().finally(() => fs.rmSync(dir, { recursive: true, force: true }))
