// The read side over real HTTP: a SQLite file written with a projection registered, served read-only; the API lists
// the built-in read models and the projection with its progress, and serves its stored state.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Events, Projection } from "@pivot/core"
import { Projections, SessionLog } from "@pivot/store"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Serve } from "../src/index.ts"
import { play } from "./support/play.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-serve-projections-"))
const db = path.join(dir, "pivot.db")
const events = play({ sessionId: "ses_pj", turns: 12 })

const byType: Projection.Projection<Record<string, number>> = {
  name: "events-by-type",
  version: 2,
  initial: {},
  evolve: (state, event) => ({ ...state, [event._tag]: (state[event._tag] ?? 0) + 1 }),
}
const expected = (list: ReadonlyArray<Events.Event>) => {
  const counts: Record<string, number> = {}
  for (const event of list) counts[event._tag] = (counts[event._tag] ?? 0) + 1
  return counts
}

let server: Serve.Started
let base: string
beforeAll(async () => {
  const runtime = ManagedRuntime.make(
    Projections.layerSqlite({
      filename: db,
      projections: [Projections.async(byType)],
      projector: { pollInterval: "5 millis" },
    }),
  )
  await runtime.runPromise(
    Effect.gen(function* () {
      const entries = events.map((event, i) => ({ id: SessionLog.eventId("ses_pj", i + 1), event }))
      yield* SessionLog.append("ses_pj", 0, entries)
      yield* (yield* Projections.Projections).awaitCaughtUp
    }),
  )
  await runtime.dispose()
  server = await Serve.start({ source: db, port: 0 })
  base = `http://127.0.0.1:${server.port}`
})
afterAll(async () => {
  await server?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("GET /api/projections", () => {
  it("lists the built-in read models and the stored projection with its status", async () => {
    const response = await fetch(`${base}/api/projections`)
    expect(response.status).toBe(200)
    const { projections } = (await response.json()) as { projections: Array<any> }
    expect(projections.filter((p) => p.kind === "built-in").map((p) => p.name)).toContain("window")
    // The built-ins' status: the one session folded, nothing left behind.
    expect(projections.find((p) => p.name === "window").status).toMatchObject({
      mode: "inline",
      ready: true,
      lag: 0,
      keys: 1,
      head: events.length,
    })
    const mine = projections.find((p) => p.name === "events-by-type")
    expect(mine).toMatchObject({ version: 2, kind: "projection", mode: "async", scope: "global" })
    expect(mine.status).toMatchObject({
      ready: true,
      lag: 0,
      failures: 0,
      checkpoint: events.length,
      head: events.length,
    })
  })

  it("serves a projection's stored state, and 404 for one that is not stored", async () => {
    const found = await fetch(`${base}/api/projections/events-by-type`)
    expect(found.status).toBe(200)
    expect(((await found.json()) as { state: unknown }).state).toEqual(expected(events))
    const missing = await fetch(`${base}/api/projections/nope`)
    expect(missing.status).toBe(404)
    expect(((await missing.json()) as { error: string }).error).toBe("no projection nope is stored")
  })
})
