// Crash test: a writer process appending batches to a SQLite file is killed with SIGKILL at random points, over
// and over; after every kill, every append it acknowledged is there and no batch is half-written.

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, type RecordedEvent } from "../src/index.ts"
import { type Ack, random, verify } from "./support/acks.ts"
import * as Kill from "./support/kill.ts"

const writer = fileURLToPath(new URL("./support/writer.ts", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-store-crash-"))
const KILLS = Number(process.env.PIVOT_CRASH_KILLS ?? 110)
const LANES = 2 // two files killed in parallel, to fit the time budget on two cores
const STREAM = "session-shared"

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** Runs the writer once and kills it: sometimes during start-up, usually a few milliseconds after some acks. */
const runAndKill = async (file: string, tag: string, seed: number, next: () => number): Promise<ReadonlyArray<Ack>> => {
  const plan =
    next() < 0.2 ? { acks: 0, delay: next() * 450 } : { acks: 1 + Math.floor(next() * 6), delay: next() * 12 }
  const acks = await Kill.runAndKill([writer, "crash", file, tag, String(seed)], plan, 20_000)
  return acks.map(([version, batch, size]) => ({ version: Number(version), batch: batch!, size: Number(size) }))
}

const readStream = (file: string): Promise<ReadonlyArray<RecordedEvent>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      const stream = yield* store.read(STREAM)
      const all = yield* Stream.runCollect(store.readAll())
      expect(all.map((e) => e.id)).toEqual(stream.map((e) => e.id))
      return stream
    }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
  )

describe("crash safety (SQLite)", () => {
  it(`given a writer SIGKILLed at random points ${KILLS} times, then every acknowledged append survives and no batch is half-written`, async () => {
    const seed = Number(process.env.PIVOT_CRASH_SEED ?? 20_261_122)
    const lane = async (laneNo: number) => {
      const file = path.join(dir, `crash-${laneNo}.db`)
      const next = random(seed + laneNo)
      const acked: Array<Ack> = []
      let kills = 0
      let batches = 0
      for (let i = 0; i < Math.ceil(KILLS / LANES); i++) {
        const acks = await runAndKill(file, `l${laneNo}r${i}`, seed + i, next)
        kills++
        acked.push(...acks)
        batches = verify(await readStream(file), acked)
      }
      return { kills, acked: acked.length, batches }
    }
    const lanes = await Promise.all(Array.from({ length: LANES }, (_, l) => lane(l)))
    const kills = lanes.reduce((sum, l) => sum + l.kills, 0)
    expect(kills).toBeGreaterThanOrEqual(KILLS)
    // The test is only meaningful if the writers got work done between kills.
    expect(lanes.every((l) => l.acked > 50 && l.batches >= l.acked)).toBe(true)
  }, 120_000)
})
