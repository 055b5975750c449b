// A subscriber process killed with SIGKILL at random points and restarted resumes from its checkpoint: across all
// its lives it handles every event exactly once, in order, with no gap and no duplicate, while new events keep
// arriving. Run on SQLite and PostgreSQL.

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, type Layer, ManagedRuntime, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, type ReadError } from "../src/index.ts"
import { random } from "./support/acks.ts"
import * as Kill from "./support/kill.ts"
import { testSchema } from "./support/postgres.ts"

const writer = fileURLToPath(new URL("./support/writer.ts", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-store-subscriber-"))
const { url, setupError, schema } = testSchema("pivot_subscriber")
const KILLS = Number(process.env.PIVOT_SUBSCRIBER_KILLS ?? 15)

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

const event = (id: string) => ({ id, type: "Written", version: 1, data: { id } })

const run = async (layer: Layer.Layer<EventStore, ReadError>, backend: string, target: string) => {
  const checkpoint = path.join(dir, `${backend}.checkpoint.json`)
  const next = random(20_261_124)
  // Keeps the store open for the whole test, appending while the subscriber lives and dies.
  const runtime = ManagedRuntime.make(layer)
  let appended = 0
  const appendSome = (n: number) =>
    runtime.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        for (let k = 0; k < n; k++) {
          const id = `evt_${backend}_${++appended}`
          yield* store.append(`stream-${appended % 3}`, "any", [event(id)])
        }
      }),
    )
  let acks = 0
  for (let life = 0; life < KILLS; life++) {
    await appendSome(5 + Math.floor(next() * 20))
    // Appends keep arriving while this life runs, so it is killed both catching up and following live.
    const live = new Promise<void>((resolve) => setTimeout(() => appendSome(5).then(() => resolve()), next() * 300))
    const plan = { acks: Math.floor(next() * 10), delay: next() * 200 }
    const acked = await Kill.runAndKill([writer, "subscribe", backend, target, checkpoint], plan, 20_000)
    acks += acked.length
    await live
  }
  // A last life that is allowed to catch up: killed once it has handled everything still outstanding.
  const total = appended
  const handled = fs.existsSync(checkpoint) ? JSON.parse(fs.readFileSync(checkpoint, "utf8")).ids.length : 0
  await Kill.runAndKill(
    [writer, "subscribe", backend, target, checkpoint],
    { acks: total - handled, delay: 50 },
    60_000,
  )
  await runtime.dispose()
  return { total, acks }
}

describe.each(["sqlite", "postgres"])("a subscriber killed and restarted (%s)", (backend) => {
  it(`given a subscriber SIGKILLed at random points ${KILLS} times, then it resumes from its checkpoint without gaps or duplicates`, async () => {
    if (backend === "postgres" && setupError !== "") throw new Error(setupError)
    const target = backend === "sqlite" ? path.join(dir, "subscriber.db") : `${url}#${schema}`
    const layer =
      backend === "sqlite" ? EventStore.layerSqlite({ filename: target }) : EventStore.layerPostgres({ url, schema })
    const checkpoint = path.join(dir, `${backend}.checkpoint.json`)
    const { total, acks } = await run(layer, backend, target)
    const all = await Effect.runPromise(
      Effect.gen(function* () {
        return yield* Stream.runCollect((yield* EventStore).readAll())
      }).pipe(Effect.provide(layer)),
    )
    const handled = JSON.parse(fs.readFileSync(checkpoint, "utf8")) as { position: number; ids: Array<string> }
    expect(all).toHaveLength(total)
    expect(handled.ids).toEqual(all.map((e) => e.id)) // every event, in global order, once
    expect(handled.position).toBe(all.at(-1)!.position)
    expect(acks).toBeGreaterThan(0) // some lives did work before they were killed
  }, 180_000)
})
