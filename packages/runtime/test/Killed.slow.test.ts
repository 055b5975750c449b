/**
 * The process really killed (SIGKILL) in the middle of a compaction, at random points after it started: a fresh
 * runtime on the same SQLite file resumes it, and the pivot forms exactly once — never half a pivot.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Ids } from "@pivot/core"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, expect, it } from "vitest"
import { runAndKill } from "../../store/test/support/kill.ts"
import { run, SESSION, services, stub, windowOf } from "./support/harness.ts"

const writer = fileURLToPath(new URL("./support/compactingWriter.ts", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-runtime-killed-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

it("given a process SIGKILLed at random points after CompactionStarted, when a fresh runtime prepares, then the pivot forms exactly once (8 kills)", async () => {
  for (let round = 0; round < 8; round++) {
    const file = path.join(dir, `killed-${round}.db`)
    // The writer acknowledges once CompactionStarted is stored; kill it 0–40 ms later.
    const acks = await runAndKill([writer, file], { acks: 1, delay: (round * 37) % 41 }, 30_000)
    expect(acks[0]).toContain("CompactionStarted")

    const summarizer = stub("resumed summary")
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        const prepared = yield* cm.prepare(SESSION)
        return { prepared, events: yield* sessions.events(SESSION), state: yield* sessions.load(SESSION) }
      }),
      { ids: Ids.Ids.layer, store: EventStore.layerSqlite({ filename: file }), summarizer },
    )
    const count = (tag: string) => out.events.filter((e) => e._tag === tag).length
    expect(count("CompactionRequested")).toBe(1)
    expect(count("CompactionStarted")).toBe(1)
    expect(count("SummaryFinished")).toBe(1)
    expect(count("ContinueRequested")).toBe(1)
    expect(summarizer.requests.length).toBeLessThanOrEqual(1)
    const window = windowOf(out.state)
    expect(window[0]?.role === "user" && window[0].parts[0]?.type).toBe("compaction")
    expect(window[1]?.role === "assistant" && window[1].summary).toBe(true)
  }
}, 120_000)
