// A fresh server's first ledger answers (issue 32): the ledger is folded behind the pages (in slices, started at the
// server's start, once), so the session page's first requests all arrive while it may be under way. Whatever they
// find, each answer equals the fold of the whole log, and after a writer appends, the caught-up answer equals the fold
// of the longer log.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Ledger } from "@pivot/core"
import { Projections, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { LedgerView, Serve } from "../src/index.ts"
import { ledgerOf } from "../src/Ledgers.ts"
import { play } from "./support/play.ts"

const SESSION = "ses_ledger_fresh"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-serve-ledger-fresh-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const events = play({ sessionId: SESSION, turns: 300, compactEvery: 25, pruneEvery: 5, probes: true })
const log = SessionLog.fromEvents(SESSION, events)
const priceOf: Ledger.PriceOf = () => ({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })

// Appends the log's events from..to, as a writer that does not keep the ledger projection (the OpenCode plugin).
const write = (filename: string, from: number, to: number) =>
  Effect.runPromise(
    SessionLog.append(
      SESSION,
      from === 0 ? "no-stream" : from,
      log.slice(from, to).map(({ event, meta }) => ({ id: meta.id, event })),
    ).pipe(Effect.scoped, Effect.provide(Projections.layerSqlite({ filename, synchronous: "normal" }))),
  )

const get = async (base: string, route: string) => {
  const response = await fetch(`${base}/api/sessions/${SESSION}${route}`)
  expect(response.status, route).toBe(200)
  return (await response.json()) as Record<string, unknown>
}

// What the routes answer for a log's fold (as JSON).
const expected = (upTo: number) => {
  const view = ledgerOf(log.slice(0, upTo), priceOf)
  const compactions = LedgerView.entries(view, { from: 0, to: upTo, kind: "compaction", offset: 0, limit: 200 })
  return JSON.parse(
    JSON.stringify({
      chart: { sessionId: SESSION, head: upTo, source: "log", from: 0, to: upTo, ...LedgerView.chart(view, 0, upTo) },
      entries: {
        sessionId: SESSION,
        head: upTo,
        source: "log",
        from: 0,
        to: upTo,
        offset: 0,
        limit: 200,
        ...compactions,
      },
      all: { sessionId: SESSION, head: upTo, source: "log", ...view },
    }),
  )
}

describe("a fresh server's ledger", () => {
  it("answers the session page's first requests with the fold's figures, and the caught-up ledger after a writer appends", async () => {
    const db = path.join(dir, "pivot.db")
    // Cut inside a prune's run of outputs: the first answers settle it, the later ones must fold on from before that.
    const cut =
      events.findIndex((e, i) => i > 600 && e._tag === "PartCompacted" && events[i + 1]?._tag === "PartCompacted") + 1
    expect(cut).toBeGreaterThan(600)
    await write(db, 0, cut)
    const server = await Serve.start({ source: db, port: 0, priceOf })
    try {
      const base = `http://127.0.0.1:${server.port}`
      // At once, as the session page asks, with the whole ledger beside them: none waits for another's answer.
      const [session, timeline, chart, entries, all] = await Promise.all([
        get(base, ""),
        get(base, "/timeline"),
        get(base, "/ledger/chart"),
        get(base, "/ledger/entries?kind=compaction&limit=200"),
        get(base, "/ledger"),
      ])
      expect(session.head).toBe(cut)
      expect(timeline.head).toBe(cut)
      const want = expected(cut)
      expect((want.chart.marks.version as Array<number>).length).toBeGreaterThan(10)
      expect(chart).toEqual(want.chart)
      expect(entries).toEqual(want.entries)
      expect(all).toEqual(want.all)
      // A writer appends the rest: the ledger is caught up from where it stood.
      await write(db, cut, log.length)
      const later = expected(log.length)
      expect(await get(base, "/ledger/chart")).toEqual(later.chart)
      expect(await get(base, "/ledger/entries?kind=compaction&limit=200")).toEqual(later.entries)
      expect(await get(base, "/ledger")).toEqual(later.all)
    } finally {
      await server.close()
    }
  })
})
