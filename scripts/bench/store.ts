// Event store benchmark on SQLite: append throughput (one event per append, and batched) and full replay through
// `EventStore.readAll` against the floor measured in the same run on the same file (a raw SELECT of the same rows
// + JSON.parse of their payloads).
//
//   node scripts/bench/store.ts [--single N] [--batches N] [--batch-size N] [--replay N]

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { parseArgs } from "node:util"
import { EventStore, type NewEvent } from "@pivot/store"
import { Effect, Stream } from "effect"

const { values } = parseArgs({
  options: {
    single: { type: "string", default: "2000" },
    batches: { type: "string", default: "200" },
    "batch-size": { type: "string", default: "100" },
    replay: { type: "string", default: "100000" },
  },
})
const SINGLE = Number(values.single)
const BATCHES = Number(values.batches)
const BATCH_SIZE = Number(values["batch-size"])
const REPLAY = Number(values.replay)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-store-"))

// A payload shaped like a recorded assistant step: some text, a tool call, token usage.
const event = (i: number): NewEvent => ({
  id: `evt_${i.toString().padStart(10, "0")}`,
  type: "AssistantStepRecorded",
  version: 1,
  data: {
    messageId: `msg_${i}`,
    parts: [
      { type: "text", text: `Step ${i}: I looked at the file and the function returns early when the list is empty.` },
      { type: "tool", tool: "read", callId: `call_${i}`, input: { path: `src/file${i % 50}.ts` }, status: "completed" },
    ],
    usage: { input: 1200 + (i % 300), output: 80 + (i % 40), reasoning: 0, cacheRead: 900 },
  },
  metadata: { causation: `cmd_${i}` },
})

const now = () => performance.now()

const run = <A, E>(
  filename: string,
  effect: Effect.Effect<A, E, EventStore>,
  synchronous: "full" | "normal" = "full",
): Promise<A> => Effect.runPromise(Effect.provide(effect, EventStore.layerSqlite({ filename, synchronous })))

const appendOneAtATime = (filename: string, synchronous: "full" | "normal") =>
  run(
    filename,
    Effect.gen(function* () {
      const store = yield* EventStore
      const start = now()
      for (let i = 0; i < SINGLE; i++) yield* store.append(`session-${i % 10}`, "any", [event(i)])
      return now() - start
    }),
    synchronous,
  )

const appendBatched = (filename: string, batches: number, size: number) =>
  run(
    filename,
    Effect.gen(function* () {
      const store = yield* EventStore
      const start = now()
      for (let b = 0; b < batches; b++) {
        yield* store.append(
          `session-${b % 10}`,
          "any",
          Array.from({ length: size }, (_, k) => event(b * size + k)),
        )
      }
      return now() - start
    }),
  )

const replayStore = (filename: string) =>
  run(
    filename,
    Effect.gen(function* () {
      const store = yield* EventStore
      const start = now()
      const count = yield* Stream.runCount(store.readAll())
      return { ms: now() - start, count }
    }),
  )

// The floor: node:sqlite directly, fetching all rows at once or iterating them, whichever is faster on the run.
const replayFloor = (filename: string, how: "all" | "iterate") => {
  const db = new DatabaseSync(filename, { readOnly: true })
  try {
    const start = now()
    const statement = db.prepare(
      "SELECT position, event_id, stream, stream_version, type, schema_version, data, metadata, recorded_at FROM pivot_events ORDER BY position",
    )
    let count = 0
    for (const row of how === "all" ? statement.all() : statement.iterate()) {
      JSON.parse(row.data as string)
      if (row.metadata !== null) JSON.parse(row.metadata as string)
      count++
    }
    return { ms: now() - start, count }
  } finally {
    db.close()
  }
}

const best = async <A extends { ms: number }>(times: number, f: () => A | Promise<A>): Promise<A> => {
  let result: A | undefined
  for (let i = 0; i < times; i++) {
    const r = await f()
    if (result === undefined || r.ms < result.ms) result = r
  }
  return result!
}

const main = async () => {
  const single = await appendOneAtATime(path.join(dir, "single.db"), "full")
  const singleNormal = await appendOneAtATime(path.join(dir, "single-normal.db"), "normal")
  const batched = await appendBatched(path.join(dir, "batched.db"), BATCHES, BATCH_SIZE)

  const replayFile = path.join(dir, "replay.db")
  await appendBatched(replayFile, Math.ceil(REPLAY / 1000), 1000)
  const floorAll = await best(5, () => replayFloor(replayFile, "all"))
  const floorIterate = await best(5, () => replayFloor(replayFile, "iterate"))
  const floor = floorAll.ms < floorIterate.ms ? floorAll : floorIterate
  const ours = await best(5, () => replayStore(replayFile))
  if (floor.count !== ours.count) throw new Error(`replay read ${ours.count} events, the floor ${floor.count}`)

  const perSecond = (events: number, ms: number) => Math.round((events / ms) * 1000).toLocaleString("en-US")
  const rows: Array<readonly [string, string, string]> = [
    ["append, one event per append", `${SINGLE} events`, `${perSecond(SINGLE, single)} events/s`],
    ["  same, synchronous = normal", `${SINGLE} events`, `${perSecond(SINGLE, singleNormal)} events/s`],
    [
      `append, batches of ${BATCH_SIZE}`,
      `${BATCHES * BATCH_SIZE} events`,
      `${perSecond(BATCHES * BATCH_SIZE, batched)} events/s`,
    ],
    [
      `replay floor (SELECT + JSON.parse, ${floor === floorAll ? "all()" : "iterate()"})`,
      `${floor.count} events`,
      `${perSecond(floor.count, floor.ms)} events/s (${floor.ms.toFixed(0)} ms)`,
    ],
    [
      "replay via EventStore.readAll",
      `${ours.count} events`,
      `${perSecond(ours.count, ours.ms)} events/s (${ours.ms.toFixed(0)} ms)`,
    ],
    ["replay / floor", "", `${((floor.ms / ours.ms) * 100).toFixed(0)}% of the floor's throughput (target ≥ 50%)`],
  ]
  const width = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)))
  console.log(`SQLite event store (node ${process.versions.node}, SQLite ${process.versions.sqlite})`)
  for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(width[c]!)).join("  "))
}

main()
  .finally(() => fs.rmSync(dir, { recursive: true, force: true }))
  .catch((error) => {
    console.error(error)
    process.exit(1)
  })
