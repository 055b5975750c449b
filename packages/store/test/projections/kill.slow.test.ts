// An async projection's process SIGKILLed 50 times while another writes: after the last life catches up, its state
// equals the tally of every event written, counted here from the events themselves — no event applied twice (the
// count would be over), none skipped (under).
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Events } from "@pivot/core"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { sessionArb } from "../session/support.ts"
import { appendBatches, openSqlite, reference } from "./support.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-projections-kill-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const script = path.join(import.meta.dirname, "projector.ts")

/** Starts the projector and SIGKILLs it `delay` ms after it said it started (or at the safety limit). */
const lifeKilledAfter = (file: string, delay: number) =>
  new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ["--conditions=@pivot/source", script, file, "run"], {
      stdio: ["ignore", "pipe", "pipe"],
    })
    let out = ""
    const safety = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      if (!out.includes("started") && (out + chunk).includes("started")) setTimeout(() => child.kill("SIGKILL"), delay)
      out += chunk
    })
    child.on("close", () => {
      clearTimeout(safety)
      resolve(out.split("\n").filter((line) => line.startsWith("ack ")).length)
    })
  })

describe("an async projection killed and restarted under a concurrent writer (SQLite)", () => {
  it("50 SIGKILLs: the final state equals the reference tally of every event written", async () => {
    const file = path.join(dir, "kill.db")
    const writer = openSqlite(file, [])
    const sessions = fc.sample(sessionArb(40), { numRuns: 12, seed: 4242 })
    const written: Array<Events.Event> = []
    const versions = sessions.map(() => 0)
    const batchesWritten = sessions.map(() => 0)
    let next = 0
    // One batch of one session per tick, round robin, while a projector life runs.
    const writeSome = async (count: number) => {
      for (let k = 0; k < count; k++) {
        const s = next++ % sessions.length
        const batches = sessions[s]!.batches
        const index = batchesWritten[s]!
        if (index >= batches.length) continue
        versions[s] = await writer.runPromise(appendBatches(`ses_k${s}`, [batches[index]!], versions[s]!))
        written.push(...batches[index]!)
        batchesWritten[s] = index + 1
      }
    }
    let acks = 0
    for (let life = 0; life < 50; life++) {
      const running = lifeKilledAfter(file, 10 + ((life * 37) % 190))
      await writeSome(6)
      acks += await running
    }
    await writer.dispose()
    const final = spawnSync(process.execPath, ["--conditions=@pivot/source", script, file, "final"], {
      encoding: "utf8",
      timeout: 60_000,
    })
    expect(final.stderr).toBe("")
    expect(JSON.parse(final.stdout.trim().split("\n").at(-1)!)).toEqual(reference(written))
    expect(written.length).toBeGreaterThan(100)
    expect(acks).toBeGreaterThan(0) // lives did work before they were killed
  }, 600_000)
})
