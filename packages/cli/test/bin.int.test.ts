/** The `pivot` executables as processes: the Node version guard, exit codes and the JSON-lines stream. */

import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Events } from "@pivot/core"
import { describe, expect, it } from "vitest"

const src = (file: string) => fileURLToPath(new URL(`../src/${file}`, import.meta.url))
const exec = (node: string, file: string, ...args: Array<string>) =>
  spawnSync(node, [src(file), ...args], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })

// The machines' system Node (20) cannot run pivot; the guard must say so instead of failing to parse.
const systemNode = "/usr/bin/node"
const systemMajor = existsSync(systemNode)
  ? Number(spawnSync(systemNode, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }).stdout.trim())
  : Number.NaN

describe("bin", () => {
  it.skipIf(!(systemMajor < 22))("given Node < 22, when bin.mjs runs, then it explains and exits 1", () => {
    const result = exec(systemNode, "bin.mjs", "demo")
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("pivot needs Node >= 22.18")
    expect(result.stdout).toBe("")
  })

  it("given this Node, when bin.mjs runs help, then it loads the TypeScript entry and exits 0", () => {
    const result = exec(process.execPath, "bin.mjs", "help")
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("Usage: pivot <command>")
  })

  it("given an unknown command, when bin.ts runs, then the exit code is 2", () => {
    const result = exec(process.execPath, "bin.ts", "nope")
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('unknown command "nope"')
  })

  it("given demo --json, when bin.ts runs, then stdout is one decodable event per line", () => {
    const result = exec(process.execPath, "bin.ts", "demo", "--json")
    expect(result.status).toBe(0)
    const lines = result.stdout.trimEnd().split("\n")
    expect(lines.length).toBeGreaterThan(50)
    expect(lines.at(-1)).toMatch(/^\{"_tag":/)
    for (const line of lines) expect(() => Events.decode(JSON.parse(line))).not.toThrow()
  })
})
