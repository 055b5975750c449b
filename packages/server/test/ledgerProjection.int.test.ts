// The ledger route reads the ledger projection when it covers the session's head (priced at the server's prices) and
// folds the log otherwise; both answers are the same ledger.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Ledger } from "@pivot/core"
import { Projections, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { Serve } from "../src/index.ts"
import { ledgerOf } from "../src/Ledgers.ts"
import { play } from "./support/play.ts"

const SESSION = "ses_ledger_projection"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-serve-ledger-projection-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const events = play({ sessionId: SESSION, turns: 24, probes: true })
const log = SessionLog.fromEvents(SESSION, events)
const priceOf: Ledger.PriceOf = () => ({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })

// Appends the log's events from..to; with `ledger`, waits until the ledger projection has caught up.
const write = (filename: string, from: number, to: number, ledger: boolean) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const batch = log.slice(from, to)
      yield* SessionLog.append(
        SESSION,
        from === 0 ? "no-stream" : from,
        batch.map(({ event, meta }) => ({ id: meta.id, event })),
      )
      if (ledger) yield* (yield* Projections.Projections).awaitCaughtUp
    }).pipe(
      Effect.scoped,
      Effect.provide(
        Projections.layerSqlite({ filename, synchronous: "normal", ledger, projector: { pollInterval: "5 millis" } }),
      ),
    ),
  )

const ledgerAt = async (db: string) => {
  const server = await Serve.start({ source: db, port: 0, priceOf })
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/api/sessions/${SESSION}/ledger`)
    expect(response.status).toBe(200)
    return (await response.json()) as {
      source: string
      head: number
      totals: unknown
      entries: unknown
      calls: unknown
    }
  } finally {
    await server.close()
  }
}

describe("GET /api/sessions/<id>/ledger over the ledger projection", () => {
  it("answers the projection when it covers the head, the log's fold when it is behind: the same ledger", async () => {
    const db = path.join(dir, "pivot.db")
    const half = Math.floor(log.length / 2)
    await write(db, 0, half, true)
    const projected = await ledgerAt(db)
    expect(projected.source).toBe("projection")
    expect(projected.head).toBe(half)
    const want = JSON.parse(JSON.stringify(ledgerOf(log.slice(0, half), priceOf)))
    expect({ totals: projected.totals, entries: projected.entries, calls: projected.calls }).toEqual(want)
    // Written by a process that does not keep the ledger: the projection is behind, the route folds the log.
    await write(db, half, log.length, false)
    const folded = await ledgerAt(db)
    expect(folded.source).toBe("log")
    expect(folded.head).toBe(log.length)
    expect({ totals: folded.totals, entries: folded.entries, calls: folded.calls }).toEqual(
      JSON.parse(JSON.stringify(ledgerOf(log, priceOf))),
    )
    expect((want as { totals: { compactions: number } }).totals.compactions).toBeGreaterThan(0)
  })
})
