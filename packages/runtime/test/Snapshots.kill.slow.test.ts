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
import { runAndKillPrinting } from "../../store/test/support/kill.ts"
import { observe, withHandler } from "./support/snapshots.ts"

const SESSION = "ses_generated"
const stream = Events.streamName(SESSION)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-snapshots-killed-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("a process killed while writing snapshots", () => {
  it("leaves every acknowledged event intact, and a fresh handler resumes to the fold from zero without a warning (6 kills)", async () => {
    const writer = fileURLToPath(new URL("./support/snapshottingWriter.ts", import.meta.url))
    let roundsSnapshotted = 0
    for (let round = 0; round < 6; round++) {
      const filename = path.join(dir, `killed-${round}.db`)
      const printed = await runAndKillPrinting(
        [writer, filename],
        { acks: 5 + round * 40, delay: (round * 13) % 17 },
        60_000,
      )
      const last = (tag: string) => Number(printed.filter((line) => line[0] === tag).at(-1)?.[1] ?? 0)
      const acked = last("ack")
      // When the writer committed its first snapshot depends on the machine's load: the kill may come before it.
      const snapshotted = last("snapshot")
      if (snapshotted > 0) roundsSnapshotted++
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
      // Never older than the last snapshot the writer saw committed (a later one may have committed unreported).
      expect(out.value.snapshot?.version ?? 0).toBeGreaterThanOrEqual(snapshotted)
      expect(observe(out.value.state)).toEqual(observe(Sessions.fold(out.value.events)))
    }
    // The resumes above started from a snapshot, not only from zero.
    expect(roundsSnapshotted).toBeGreaterThan(0)
  }, 180_000)
})
