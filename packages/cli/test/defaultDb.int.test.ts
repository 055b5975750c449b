/**
 * The read commands' default database: docs/cli.md says `--db FILE` defaults to `.pivot/pivot.db` and `--session`
 * may be left out when it holds one session, so `pivot import x.json` then `pivot inspect` reads what was imported.
 * It was a usage error unless --session was given. Without a `.pivot/pivot.db` it stays a usage error.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, pivot, tempDir } from "./support/audit.ts"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})
const inDir = (cwd: string, ...args: Array<string>) =>
  spawnSync(process.execPath, ["--conditions=@pivot/source", bin, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  })

describe("the read commands without --db", () => {
  it("given a .pivot/pivot.db holding one session, then inspect, window and prune read it", async () => {
    const dir = tempDir()
    dirs.push(dir)
    expect((await pivot("import", fixture("pruned.json"), "--db", path.join(dir, ".pivot", "pivot.db"))).code).toBe(0)
    const inspect = inDir(dir, "inspect")
    expect(inspect.stderr).toBe("")
    expect(inspect.status).toBe(0)
    expect(inspect.stdout).toMatch(/^session ses_pruned .* · \.pivot\/pivot\.db · /)
    expect(inDir(dir, "window").status).toBe(0)
    expect(inDir(dir, "prune", "--dry-run").status).toBe(0)
  })

  it("given no .pivot/pivot.db, then it is still wrong usage naming both ways", () => {
    const dir = tempDir()
    dirs.push(dir)
    const result = inDir(dir, "inspect")
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("give an export file, or --db FILE --session ID")
    expect(fs.existsSync(path.join(dir, ".pivot"))).toBe(false)
  })
})
