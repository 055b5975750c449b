/**
 * Snapshots written by a process killed at random moments (slow lane: it kills real processes): every acknowledged
 * event stays, and a fresh handler resumes to the fold from zero without a warning.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Events } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { runAndKill } from "../../store/test/support/kill.ts"
import { observe, withHandler } from "./support/snapshots.ts"

const SESSION = "ses_generated"
const stream = Events.streamName(SESSION)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-snapshots-killed-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("a process killed while writing snapshots", () => {
  it("leaves every acknowledged event intact, and a fresh handler resumes to the fold from zero without a warning (6 kills)", async () => {
    const writer = fileURLToPath(new URL("./support/snapshottingWriter.ts", import.meta.url))
    for (let round = 0; round < 6; round++) {
      const filename = path.join(dir, `killed-${round}.db`)
      const acks = await runAndKill([writer, filename], { acks: 5 + round * 40, delay: (round * 13) % 17 }, 60_000)
      const acked = Number(acks.at(-1)?.[0] ?? 0)
      const out = await withHandler(
        EventStore.layerSqlite({ filename }),
        { snapshots: { every: 1 } },
        (sessions, store) =>
          Effect.all({
            state: sessions.load(SESSION),
            events: sessions.events(SESSION),
            snapshot: store.readSnapshot(stream),
          }),
      )
      expect(out.warnings).toEqual([])
      expect(out.value.events.length).toBeGreaterThanOrEqual(acked)
      expect(out.value.snapshot?.version ?? 0).toBeGreaterThan(0)
      expect(observe(out.value.state)).toEqual(observe(Sessions.fold(out.value.events)))
    }
  }, 180_000)
})
