/** The `pivot` executables as processes: the Node version guard, exit codes and the JSON-lines stream. */

import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Events } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { realExport, realSessionId, repoRoot } from "./support/audit.ts"

const src = (file: string) => fileURLToPath(new URL(`../src/${file}`, import.meta.url))
// Processes run the sources, as the tests do: `@pivot/*` imports resolve through the "@pivot/source" condition.
const fromSource = "--conditions=@pivot/source"
const exec = (node: string, file: string, ...args: Array<string>) =>
  spawnSync(node, [fromSource, src(file), ...args], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })

// The machines' system Node (20) cannot run pivot; the guard must say so instead of failing to parse.
const systemNode = "/usr/bin/node"
const systemMajor = existsSync(systemNode)
  ? Number(spawnSync(systemNode, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }).stdout.trim())
  : Number.NaN

describe("bin", () => {
  it.skipIf(!(systemMajor < 22))("given Node < 22, when bin.mjs runs, then it explains and exits 1", () => {
    const result = exec(systemNode, "bin.mjs", "demo")
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("pivot needs Node >= 22.16")
    expect(result.stdout).toBe("")
  })

  it("given this Node, when bin.mjs runs help, then it loads the TypeScript entry and exits 0", () => {
    const result = exec(process.execPath, "bin.mjs", "help")
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("pivot <subcommand> [flags]")
    const version = exec(process.execPath, "bin.mjs", "--version")
    expect(version.status).toBe(0)
    expect(version.stdout).toMatch(/^pivot \d+\.\d+\.\d+\n$/)
  })

  it("given an unknown command, when bin.ts runs, then the exit code is 2", () => {
    const result = exec(process.execPath, "bin.ts", "nope")
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('Unknown subcommand "nope"')
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it("given demo --json, when bin.ts runs, then stdout is one decodable event per line", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pivot-bin-demo-"))
    const result = exec(process.execPath, "bin.ts", "demo", "--json", "--db", path.join(dir, "demo.db"))
    rmSync(dir, { recursive: true, force: true })
    expect(result.status).toBe(0)
    const lines = result.stdout.trimEnd().split("\n")
    expect(lines.length).toBeGreaterThan(50)
    expect(lines.at(-1)).toMatch(/^\{"_tag":/)
    for (const line of lines) expect(() => Events.decode(JSON.parse(line))).not.toThrow()
  })

  it("given import, when bin.mjs runs it in a child Node, then output and exit codes pass through", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pivot-bin-import-"))
    const db = path.join(dir, "import.db")
    try {
      const first = exec(process.execPath, "bin.mjs", "import", realExport, "--db", db)
      expect(first.status).toBe(0)
      expect(first.stdout).toContain(`imported session ${realSessionId} into ${db}`)
      const again = exec(process.execPath, "bin.mjs", "import", realExport, "--db", db)
      expect(again.status).toBe(0)
      expect(again.stdout).toContain("nothing to import")
      const missing = exec(process.execPath, "bin.mjs", "import", path.join(dir, "absent.json"), "--db", db)
      expect(missing.status).toBe(1)
      expect(missing.stderr).toContain("cannot read")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("given the repository's node_modules/.bin/pivot (what npx pivot runs), then help works", () => {
    const bin = path.join(repoRoot, "node_modules/.bin/pivot")
    expect(existsSync(bin)).toBe(true)
    const result = spawnSync(process.execPath, [fromSource, bin, "help"], { encoding: "utf8" })
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/^ {2}import +store an OpenCode session export/m)
  })

  it("given no --db, when import and window run in a directory, then they use .pivot/pivot.db there", () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), "pivot-bin-"))
    try {
      const run = (...args: Array<string>) =>
        spawnSync(process.execPath, [fromSource, src("bin.ts"), ...args], { cwd, encoding: "utf8" })
      const imported = run("import", realExport)
      expect(imported.status).toBe(0)
      expect(imported.stdout).toContain(`imported session ${realSessionId} into .pivot/pivot.db`)
      expect(existsSync(path.join(cwd, ".pivot/pivot.db"))).toBe(true)
      const window = run("window", "--session", realSessionId, "--format", "json")
      expect(window.status).toBe(0)
      expect(JSON.parse(window.stdout).messages.length).toBe(55)
      const bad = run("window", "--session", "ses_nobody")
      expect(bad.status).toBe(1)
      expect(bad.stderr.trim().split("\n")).toHaveLength(1)
    } finally {
      rmSync(cwd, { recursive: true, force: true })
    }
  })

  it("given a cache folder, when bin.mjs runs, then Node's compile cache is written there", () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "pivot-bin-cache-"))
    try {
      const cache = path.join(home, "cache")
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CACHE_HOME: cache }
      delete env.NODE_COMPILE_CACHE
      delete env.NODE_DISABLE_COMPILE_CACHE
      const result = spawnSync(process.execPath, [fromSource, src("bin.mjs"), "--version"], { encoding: "utf8", env })
      expect(result.status).toBe(0)
      const dir = path.join(cache, "pivot", "node-compile-cache")
      expect(existsSync(dir)).toBe(true)
      expect(readdirSync(dir, { recursive: true }).length).toBeGreaterThan(1)
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })

  it("given a cache folder that cannot be made, when bin.mjs runs, then the command runs as without a cache", () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "pivot-bin-cache-"))
    try {
      // A file where the cache folder would go: mkdir fails, as in a read-only home.
      const blocked = path.join(home, "blocked")
      writeFileSync(blocked, "")
      const run = (cacheHome: string | undefined) => {
        const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: "1" }
        delete env.NODE_COMPILE_CACHE
        delete env.XDG_CACHE_HOME
        if (cacheHome !== undefined) env.XDG_CACHE_HOME = cacheHome
        else env.NODE_DISABLE_COMPILE_CACHE = "1"
        return spawnSync(process.execPath, [fromSource, src("bin.mjs"), "--version"], { encoding: "utf8", env })
      }
      const blockedRun = run(blocked)
      const uncached = run(undefined)
      expect({ status: blockedRun.status, stdout: blockedRun.stdout, stderr: blockedRun.stderr }).toEqual({
        status: 0,
        stdout: uncached.stdout,
        stderr: "",
      })
      expect(uncached.stdout).toMatch(/^pivot \d+\.\d+\.\d+\n$/)
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })
})
