/**
 * The command catalog (`commands/Catalog.ts`): what `pivot --help` lists without loading any command must be what each
 * command's own module says.
 */

import { describe, expect, it } from "vitest"
import { run } from "../src/Cli.ts"
import { catalog, listing } from "../src/commands/Catalog.ts"
import type { Io } from "../src/commands/Command.ts"

const capture = () => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false, columns: undefined, env: {} }
  return { io, out, err }
}

describe("the command catalog", () => {
  it("given each listing, then its module's command has its name and usage line, and each name is listed once", async () => {
    expect(new Set(catalog.map((l) => l.name)).size).toBe(catalog.length)
    for (const l of catalog) {
      const entry = await l.load()
      expect(entry.name).toBe(l.name)
      expect(entry.command.name).toBe(l.name)
      expect(entry.synopsis).toBe(l.synopsis)
    }
  })

  it("given pivot --help, then each command's line is its name and the catalog's summary", async () => {
    const { io, out } = capture()
    expect(await run(["--help"], io)).toBe(0)
    const text = out.join("\n")
    for (const l of catalog)
      expect(text).toMatch(new RegExp(`^ {2}${l.name} +${l.summary.slice(0, 30).replace(/[()]/g, "\\$&")}`, "m"))
  })

  it("given a name the catalog does not hold, then listing fails naming it", () => {
    expect(() => listing("nope")).toThrow('no command "nope"')
  })
})
