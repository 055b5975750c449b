// Crash test of the inline read models: a writer appending real core events through SessionLog and the read-model
// store is SIGKILLed at random points; after each restart every acknowledged append is there, every read model's
// checkpoint stands at its stream's head (the rows were committed with the events), the tables equal the pure fold,
// and rebuilding them from the log changes nothing. (The store's own test kills 110 times for acknowledgement.)

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { ReadModels, SessionLog } from "../../src/index.ts"
import * as Kill from "../support/kill.ts"
import { expectReadModelsEqualFold } from "./support.ts"

const writer = fileURLToPath(new URL("./support/writer.ts", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-rm-crash-"))
const KILLS = Number(process.env.PIVOT_RM_CRASH_KILLS ?? 20)
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

interface Ack {
  readonly sessionId: string
  readonly version: number
}

/** Runs the writer and kills it after a random number of acks (sometimes before any) and a random delay. */
const runAndKill = async (file: string, seed: number, next: () => number): Promise<ReadonlyArray<Ack>> => {
  const plan =
    next() < 0.15 ? { acks: 0, delay: next() * 600 } : { acks: 1 + Math.floor(next() * 40), delay: next() * 8 }
  const acks = await Kill.runAndKill([writer, file, String(seed)], plan, 30_000)
  return acks.map(([sessionId, version]) => ({ sessionId: sessionId!, version: Number(version) }))
}

/** After a restart: acks present, checkpoints at the heads, tables == fold, rebuild == inline. */
const verify = (file: string, acked: ReadonlyArray<Ack>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const readModels = yield* ReadModels.ReadModels
      const sessions = yield* readModels.sessions
      const heads = new Map(sessions.map((s) => [s.sessionId, s.version]))
      for (const ack of acked) expect(heads.get(ack.sessionId) ?? 0).toBeGreaterThanOrEqual(ack.version)
      for (const { sessionId, version } of sessions) {
        const inline = yield* readModels.tables(sessionId)
        expect(inline.checkpoints.map((c) => c.streamVersion)).toEqual(ReadModels.names.map(() => version))
        const log = yield* SessionLog.read(sessionId)
        yield* expectReadModelsEqualFold(
          sessionId,
          log.map((l) => l.event),
        )
        expect(yield* readModels.tables(sessionId)).toEqual(inline)
        yield* readModels.rebuild(sessionId)
        expect(yield* readModels.tables(sessionId)).toEqual(inline)
      }
      return sessions.reduce((sum, s) => sum + s.version, 0)
    }).pipe(Effect.provide(ReadModels.layerSqlite({ filename: file }))),
  )

describe("crash safety of the inline read models (SQLite)", () => {
  it(`given a writer of core events SIGKILLed ${KILLS} times, then after each restart the read models rebuild equal to the inline tables`, async () => {
    const file = path.join(dir, "crash.db")
    const next = random(Number(process.env.PIVOT_CRASH_SEED ?? 20_261_123))
    const acked: Array<Ack> = []
    let events = 0
    for (let kill = 0; kill < KILLS; kill++) {
      acked.push(...(await runAndKill(file, 42, next)))
      events = await verify(file, acked)
    }
    // Meaningful only if the writers got work done between kills.
    expect(acked.length).toBeGreaterThan(KILLS * 5)
    expect(events).toBeGreaterThan(200)
  }, 180_000)
})
