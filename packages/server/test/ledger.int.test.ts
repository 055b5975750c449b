// The ledger route with a pivot's recorded check and probes (issue 20): each compaction entry carries them as the log
// recorded them, and the judge's calls are billed as probe calls — checked against the played events.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Ledger } from "@pivot/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Serve } from "../src/index.ts"
import { play, writeSqlite } from "./support/play.ts"

const SESSION = "ses_ledger"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-serve-ledger-"))
const db = path.join(dir, "pivot.db")
const events = play({ sessionId: SESSION, turns: 24, probes: true })
let server: Serve.Started

beforeAll(async () => {
  await writeSqlite(db, SESSION, events)
  server = await Serve.start({ source: db, port: 0 })
})

afterAll(async () => {
  await server?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("GET /api/sessions/<id>/ledger with probes", () => {
  it("carries each pivot's recorded check and probes on its entry, and bills the judge's calls", async () => {
    const response = await fetch(`http://127.0.0.1:${server.port}/api/sessions/${SESSION}/ledger`)
    expect(response.status).toBe(200)
    const body = (await response.json()) as any
    const answered = events.flatMap((e) => (e._tag === "ProbesAnswered" ? [e] : []))
    const checked = events.flatMap((e) => (e._tag === "ArtifactsChecked" ? [e] : []))
    expect(answered.length).toBeGreaterThan(0)
    const compactions = body.entries.filter((e: { kind: string }) => e.kind === "compaction")
    for (const a of answered) {
      const entry = compactions.find((e: { markerId: string }) => e.markerId === a.markerId)
      expect(entry.probes).toEqual({ model: a.model, probes: a.probes })
      const check = checked.find((c) => c.markerId === a.markerId)!
      // The recorded verdicts, each with whether context_recall can give it back (computed on read, as the fold does).
      expect(entry.retention.recorded).toBe(true)
      expect(entry.retention.artifacts.map(({ recallable: _, ...a }: { recallable?: boolean }) => a)).toEqual(
        check.artifacts,
      )
      const folded = Ledger.entries(Ledger.fold(events)).find((e) => e.markerId === a.markerId)!
      expect(entry.retention.artifacts).toEqual(folded.retention!.artifacts)
      expect(entry.retention.artifacts.every((x: { recallable?: unknown }) => typeof x.recallable === "boolean")).toBe(
        true,
      )
    }
    // The first pivot has neither: its check is computed, and no judge answered.
    expect(compactions[0].probes).toBeUndefined()
    expect(compactions[0].retention.recorded).toBe(false)
    expect(body.calls.filter((c: { kind: string }) => c.kind === "probe")).toHaveLength(answered.length)
    expect(body.totals.probeCalls).toBe(answered.length)
  })
})
