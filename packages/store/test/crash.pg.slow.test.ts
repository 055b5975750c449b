// Crash test on PostgreSQL: a writer process appending batches to one schema is SIGKILLed at random points, over and
// over; after every kill, every append it acknowledged is there and no batch is half-written.

import { fileURLToPath } from "node:url"
import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { EventStore, type RecordedEvent } from "../src/index.ts"
import { type Ack, random, verify } from "./support/acks.ts"
import * as Kill from "./support/kill.ts"
import { testSchema } from "./support/postgres.ts"

const writer = fileURLToPath(new URL("./support/writer.ts", import.meta.url))
const { url, setupError, schema } = testSchema("pivot_crash")
const KILLS = Number(process.env.PIVOT_PG_CRASH_KILLS ?? 30)
const STREAM = "session-shared"

const readStream = (): Promise<ReadonlyArray<RecordedEvent>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      const stream = yield* store.read(STREAM)
      const all = yield* Stream.runCollect(store.readAll())
      expect(all.map((e) => e.id)).toEqual(stream.map((e) => e.id))
      return stream
    }).pipe(Effect.provide(EventStore.layerPostgres({ url, schema }))),
  )

describe("crash safety (PostgreSQL)", () => {
  it(`given a writer SIGKILLed at random points ${KILLS} times, then every acknowledged append survives and no batch is half-written`, async () => {
    if (setupError !== "") throw new Error(setupError)
    const seed = Number(process.env.PIVOT_CRASH_SEED ?? 20_261_123)
    const next = random(seed)
    const acked: Array<Ack> = []
    let batches = 0
    for (let i = 0; i < KILLS; i++) {
      const plan =
        next() < 0.2 ? { acks: 0, delay: next() * 450 } : { acks: 1 + Math.floor(next() * 6), delay: next() * 12 }
      const acks = await Kill.runAndKill([writer, "crash-pg", url, schema, `r${i}`, String(seed + i)], plan, 20_000)
      acked.push(
        ...acks.map(([version, batch, size]) => ({ version: Number(version), batch: batch!, size: Number(size) })),
      )
      batches = verify(await readStream(), acked)
    }
    // The test is only meaningful if the writer got work done between kills.
    expect(acked.length).toBeGreaterThan(50)
    expect(batches).toBeGreaterThanOrEqual(acked.length)
  }, 180_000)
})
