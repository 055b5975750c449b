/**
 * bench:peers itself on a tiny history: a real run of the benchmark, each contender in a process of its own (the slow
 * lane: at load 19 on the 2-core machine the run alone took 56 s of wall, past the fast lane's 60 s limit under more).
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { KINDS } from "../bench/support/contenders.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

describe("npm run bench:peers", () => {
  it("given a tiny history, then it runs every contender and prints the tables", () => {
    const run = spawnSync(
      process.execPath,
      [
        "--conditions=@pivot/source",
        "--expose-gc",
        "scripts/bench/peers.ts",
        "--sizes",
        "150",
        "--turns",
        "3",
        "--restarts",
        "1",
        "--warm-ms",
        "0",
        // Rounds of blocks: turns 0–1 of every contender, then turn 2.
        "--block",
        "2",
      ],
      { cwd: root, encoding: "utf8" },
    )
    expect(run.stderr).not.toMatch(/Error/)
    expect(run.status).toBe(0)
    // A row of every table: the windows grow over the timed turns, and every contender has a figure.
    const row = run.stdout.match(/^\| ([\d,]+) \| (\d+) → (\d+) \|(( [\d,]+ \|){5}) [\d,]+ \(\d turns\) \|$/m)
    expect(row).not.toBeNull()
    expect(Number(row![3])).toBeGreaterThan(Number(row![2]))
    expect(run.stdout).toMatch(/^\| [\d,]+ \| [\d.]+ \| \d+ \| [\d,]+ \| [\d.]+ \| \d+ \| [\d,]+ \|$/m)
    expect(run.stdout).toContain("load average")
    expect(run.stdout).toContain("each contender in a process of its own")
    // Each process's GC pauses inside its own timed calls, one row per contender.
    for (const kind of KINDS) expect(run.stdout).toMatch(new RegExp(`^\\| [\\d,]+ \\| ${kind} \\| \\d+ / 3 \\|`, "m"))
    expect(run.stdout).toMatch(/record a tool step, memory \(worst size\) µs: [\d.]+ \(target ≤ 250\)/)
  }, 300_000)
})
