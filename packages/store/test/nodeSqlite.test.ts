// node:sqlite is loaded when a SQLite database opens, not when pivot is imported: on a Node without it (or without
// its busy timeouts, before 22.16) opening says so in one line; importing the store never needs it.
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import * as NodeSqlite from "../src/internal/nodeSqlite.ts"

describe("loading node:sqlite", () => {
  it("given a Node before 22.16, when a SQLite store would open, then one line names the Node it needs", () => {
    for (const version of ["20.20.2", "22.4.0", "22.15.1"]) {
      expect(() => NodeSqlite.load(version)).toThrow(
        `pivot's SQLite store needs Node >= 22.16 (node:sqlite with busy timeouts), but this is Node ${version}: run on Node 22.16+ or 24, or use an in-memory store`,
      )
    }
  })

  it("given this Node, then it is node:sqlite itself", () => {
    expect(NodeSqlite.load().DatabaseSync).toBe(process.getBuiltinModule("node:sqlite").DatabaseSync)
  })

  it("the minimum is the packages' engines", () => {
    const engines = JSON.parse(readFileSync(join(import.meta.dirname, "../package.json"), "utf8")).engines.node
    expect(engines).toBe(`>=${NodeSqlite.MINIMUM_NODE}`)
  })

  it("no module of any package imports node:sqlite's values at load time (types only; the CLI's check too)", () => {
    const packages = join(import.meta.dirname, "../..")
    const walk = (dir: string): Array<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
      )
    const sources = readdirSync(packages)
      .map((name) => join(packages, name, "src"))
      .filter(existsSync)
      .flatMap(walk)
    expect(sources.length).toBeGreaterThan(50)
    const eager = sources.filter((file) =>
      /^import\s+(?!type\b)[^\n]*from\s+"node:sqlite"/m.test(readFileSync(file, "utf8")),
    )
    expect(eager.map((file) => file.slice(packages.length + 1))).toEqual([])
  })
})
