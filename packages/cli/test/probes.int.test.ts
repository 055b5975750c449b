/**
 * A pivot's probes in `pivot inspect` (issue 20 item 5): a recorded `ProbesAnswered` shown beside its pivot in text
 * (what the judge named from the summary alone, by kind, and what it missed; or why it gave no answer) and in JSON as
 * recorded, with the judge's call counted in the ledger; a pivot without probes shows none.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Events, type Probe } from "@pivot/core"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, pivot, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let dbs = 0

const PROBES: ReadonlyArray<Probe.Probe> = [
  {
    kind: "request",
    question: "What did the user ask for? List each request.",
    answer: "fix the config loader",
    expected: [
      { text: "first request", found: true },
      { text: "second request", found: true },
    ],
  },
  {
    kind: "file-read",
    question: "Which files did you read? List every path.",
    answer: "unknown",
    expected: [{ text: "/repo/config.json", found: false }],
  },
]

/** The compaction-tail fixture imported, then `events` appended after it (as the runtime records them). */
const withEvents = async (events: ReadonlyArray<Events.Event>) => {
  const db = path.join(dir, `probes-${++dbs}.db`)
  expect((await pivot("import", fixture("compaction-tail.json"), "--db", db)).code).toBe(0)
  const json = JSON.parse((await pivot("inspect", "--db", db, "--format", "json")).stdout)
  await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      yield* store.append(
        `session-${json.sessionId}`,
        "any",
        events.map((event, i) => ({
          id: `evt_probes_${dbs}_${i}`,
          type: event._tag,
          version: Events.versions[event._tag],
          data: Events.encode(event),
        })),
      )
    }).pipe(Effect.provide(EventStore.layerSqlite({ filename: db }))),
  )
  return { db, markerId: json.pivots[0].markerId as string }
}

const answered = (markerId: string, extra: Partial<Extract<Events.Event, { _tag: "ProbesAnswered" }>> = {}) =>
  ({
    _tag: "ProbesAnswered",
    at: 1,
    markerId,
    model: { providerId: "anthropic", modelId: "claude-haiku-4-5" },
    usage: { input: 1_000, output: 100, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    probes: PROBES,
    ...extra,
  }) as Events.Event

describe("pivot inspect with probes", () => {
  it("given a pivot's recorded probes, then text shows what the judge named and missed beside the pivot, JSON has them as recorded", async () => {
    // The marker of the fixture's one pivot.
    const { db, markerId } = await withEvents([])
    const probed = await withEvents([answered(markerId)])
    const text = (await pivot("inspect", "--db", probed.db)).stdout
    expect(text).toMatch(
      /#1 auto[^\n]*\n(?: {5}[^\n]*\n)* {5}kept: [^\n]*\n(?: {5}not named: [^\n]*\n)? {5}probes: the judge anthropic\/claude-haiku-4-5 answered from the summary alone, naming 2 of 3 artifacts \(files read 0\/1, requests 2\/2\)\n {5}not answered: file-read "\/repo\/config.json"/,
    )
    // The judge's call is counted with the others.
    expect(text).toMatch(/calls \(1 summary, 1 probe\)/)
    const json = JSON.parse((await pivot("inspect", "--db", probed.db, "--format", "json")).stdout)
    expect(json.pivots[0].probes).toEqual({
      model: "anthropic/claude-haiku-4-5",
      expected: 3,
      found: 2,
      probes: PROBES,
    })
    expect(json.pivots[0].ledger.probes).toBeUndefined()
    expect(json.ledger.totals.probeCalls).toBe(1)
    expect(json.ledger.calls.filter((c: { kind: string }) => c.kind === "probe")).toHaveLength(1)
    // Without probes: nothing about them.
    const plain = (await pivot("inspect", "--db", db)).stdout
    expect(plain).not.toContain("probes:")
    expect(plain).toMatch(/calls \(1 summary\)/)
    expect(JSON.parse((await pivot("inspect", "--db", db, "--format", "json")).stdout).pivots[0].probes).toBeUndefined()
  })

  it("given a judge that gave no answer, then the pivot says why", async () => {
    const { markerId } = await withEvents([])
    const failed = await withEvents([
      {
        _tag: "ProbesAnswered",
        at: 1,
        markerId: markerId as never,
        probes: [],
        error: "the judge took longer than 1m",
      },
    ])
    const text = (await pivot("inspect", "--db", failed.db)).stdout
    expect(text).toContain("     probes: the judge gave no answer (the judge took longer than 1m)")
    const json = JSON.parse((await pivot("inspect", "--db", failed.db, "--format", "json")).stdout)
    expect(json.pivots[0].probes).toMatchObject({ error: "the judge took longer than 1m", expected: 0, found: 0 })
  })
})
