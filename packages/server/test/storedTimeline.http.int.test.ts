// The session page's first answers from the timeline read model (ADR 0057) against the fold of the log: a server over
// a store whose rows stand at the head answers `/api/sessions/:id` as a server that folds the log does (the same file
// with the read model's checkpoint removed), and the whole timeline as bands of the same steps: same head, step count,
// triggers, legend and non-prune marks, every point a step of the fold, the peak and the trough kept.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Projections, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { TIMELINE_POINTS } from "../src/Http.ts"
import { Serve, SessionView } from "../src/index.ts"
import { play } from "./support/play.ts"

const SESSION = "ses_stored_timeline"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "timeline2-http-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
// Two model steps a turn: more steps than the timeline's points, so that the fold's answer is sampled too.
const events = play({ sessionId: SESSION, turns: Math.ceil(TIMELINE_POINTS / 2) + 20, compactEvery: 25, pruneEvery: 5 })
const log = SessionLog.fromEvents(SESSION, events)

const write = (filename: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      for (let i = 0; i < log.length; i += 2_000)
        yield* SessionLog.append(
          SESSION,
          i === 0 ? "no-stream" : i,
          log.slice(i, i + 2_000).map(({ event, meta }) => ({ id: meta.id, event })),
        )
    }).pipe(Effect.scoped, Effect.provide(Projections.layerSqlite({ filename, synchronous: "normal" }))),
  )

/** What the routes answer, as far as the test reads them. */
interface Answer {
  readonly [key: string]: unknown
  readonly bands?: boolean
  readonly marks: ReadonlyArray<{ readonly kind: string; readonly count: number }>
  readonly legend: { readonly prune: number }
  readonly points: { readonly version: Array<number>; readonly total: Array<number>; readonly input: Array<number> }
}

const answers = async (db: string) => {
  const server = await Serve.start({ source: db, port: 0 })
  try {
    const get = async (route: string) => {
      const response = await fetch(`http://127.0.0.1:${server.port}/api/sessions/${SESSION}${route}`)
      expect(response.status, route).toBe(200)
      return (await response.json()) as Answer
    }
    return { session: await get(""), timeline: await get("/timeline") }
  } finally {
    await server.close()
  }
}

describe("the session page's first answers from the timeline read model", () => {
  it("given a store whose timeline rows stand at the head, then the session's answer is the fold's, and the timeline is bands of the fold's steps", async () => {
    const stored = path.join(dir, "stored.db")
    await write(stored)
    const folded = path.join(dir, "folded.db")
    fs.copyFileSync(stored, folded)
    // Without the read model's checkpoint the rows are not trusted: that server folds the log.
    const raw = new DatabaseSync(folded)
    raw.exec("DELETE FROM pivot_rm_checkpoints WHERE model = 'timeline'")
    raw.close()
    const fromRows = await answers(stored)
    const fromFold = await answers(folded)
    expect(fromRows.session).toEqual(fromFold.session)

    const rows = fromRows.timeline
    const fold = fromFold.timeline
    expect(rows.bands).toBe(true)
    expect(fold.bands).toBeUndefined()
    for (const key of ["head", "from", "to", "steps", "triggers", "legend"]) expect(rows[key], key).toEqual(fold[key])
    const nonPrune = (marks: Answer["marks"]) => marks.filter((m) => m.kind !== "prune").map(({ count: _, ...m }) => m)
    expect(nonPrune(rows.marks)).toEqual(nonPrune(fold.marks))
    // Prune marks: one per bucket at most, standing for every cleared output.
    const prunes = rows.marks.filter((m) => m.kind === "prune")
    expect(prunes.reduce((n, m) => n + m.count, 0)).toBe(fold.legend.prune)

    // Every point is a step of the fold, in version order, within the points' budget; the peak and trough are kept.
    const view = SessionView.make(SESSION)
    for (const { event, meta } of log) SessionView.evolve(view, event, meta)
    const byVersion = new Map(view.steps.map((s) => [s.version, s]))
    const points = rows.points
    expect(points.version.length).toBeLessThanOrEqual(TIMELINE_POINTS)
    expect(points.version).toEqual([...points.version].sort((a, b) => a - b))
    points.version.forEach((v, i) => {
      expect(byVersion.get(v)?.total).toBe(points.total[i])
      expect(byVersion.get(v)?.input).toBe(points.input[i])
    })
    const totals = view.steps.map((s) => s.total)
    expect(Math.max(...points.total)).toBe(Math.max(...totals))
    expect(Math.min(...points.total)).toBe(Math.min(...totals))
  }, 300_000)
})
