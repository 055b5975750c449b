// node:sqlite is loaded when a SQLite database opens, not when pivot is imported: on a Node without it (or without
// its busy timeouts, before 22.16) opening says so in one line; importing the store never needs it.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import * as NodeSqlite from "../src/internal/nodeSqlite.ts"

const src = join(import.meta.dirname, "../src")

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

  it("no module of the store imports node:sqlite's values at load time (types only)", () => {
    const files = [
      "sqlite/SqliteClient.ts",
      "sqlite/driver.ts",
      "internal/sqliteFile.ts",
      "internal/nodeSqlite.ts",
      "EventStore.ts",
    ]
    const eager = files.filter((file) =>
      /^import\s+(?!type\b)[^\n]*from\s+"node:sqlite"/m.test(readFileSync(join(src, file), "utf8")),
    )
    expect(eager).toEqual([])
  })
})
