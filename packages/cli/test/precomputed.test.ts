/**
 * `pivot --help`, `--version` and each command's help are answered from texts effect/cli made at build time
 * (Precomputed.ts, Precompute.ts, ADR 0037): only the exact argument lists whose output depends on nothing but the
 * code, and never one that names the machine's own paths. bundle.slow.test.ts checks the built table against the
 * sources and the installed command's output byte for byte.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { version } from "../src/Cli.ts"
import { catalog } from "../src/commands/Catalog.ts"
import { precompute, precomputedArgvs } from "../src/Precompute.ts"
import * as Precomputed from "../src/Precomputed.ts"

let table: Precomputed.Table
beforeAll(async () => {
  table = await precompute(path.join(os.tmpdir(), "no-such-package-root"))
}, 120_000)

describe("the precomputed answers", () => {
  it("given every precomputed argument list, then each is answered", () => {
    expect(precomputedArgvs().length).toBe(6 + 3 * catalog.length)
    for (const argv of precomputedArgvs()) expect(Precomputed.answer(table, argv), argv.join(" ")).toBeDefined()
    expect(Object.keys(table.keys).length).toBe(precomputedArgvs().length)
  })

  it("given arguments one token away from a precomputed list, then none is answered (the command line runs)", () => {
    const near: ReadonlyArray<ReadonlyArray<string>> = [
      ["--help", "--help"],
      ["--HELP"],
      ["--help "],
      ["window"],
      ["window", "--help", "--db", "x.db"],
      ["window", "--help", "x"],
      ["help", "window", "x"],
      ["help", "nope"],
      ["nope", "--help"],
      ["--version", "--help"],
      ["--completions", "bash"],
    ]
    for (const argv of near) expect(Precomputed.answer(table, argv), argv.join(" ")).toBeUndefined()
    expect(Precomputed.answer(undefined, ["--help"])).toBeUndefined()
  })

  it("given --help, help and no command, then the same help: on stdout with exit 0, or on stderr with exit 2", () => {
    const help = Precomputed.answer(table, ["--help"])!
    expect(help.stdout).toContain("pivot <subcommand> [flags]")
    for (const name of catalog.map((l) => l.name)) expect(help.stdout).toContain(`  ${name} `)
    expect(help).toEqual({ stdout: help.stdout, stderr: "", code: 0 })
    expect(Precomputed.answer(table, ["help"])).toEqual(help)
    expect(Precomputed.answer(table, ["-h"])).toEqual(help)
    expect(Precomputed.answer(table, [])).toEqual({ stdout: "", stderr: help.stdout, code: 2 })
  })

  it("given --version or -v, then the package's version", () => {
    for (const argv of [["--version"], ["-v"]])
      expect(Precomputed.answer(table, argv)).toEqual({ stdout: `pivot ${version}\n`, stderr: "", code: 0 })
  })

  it("given a command's --help, -h or help <command>, then its own help, one per command", () => {
    const helps = new Set<string>()
    for (const { name } of catalog) {
      const own = Precomputed.answer(table, [name, "--help"])!
      expect(own.code).toBe(0)
      expect(own.stdout).toContain(`pivot ${name}`)
      expect(Precomputed.answer(table, [name, "-h"])).toEqual(own)
      expect(Precomputed.answer(table, ["help", name])).toEqual(own)
      helps.add(own.stdout)
    }
    expect(helps.size).toBe(catalog.length)
  })

  it("given an answer that names the package root, then it is left out", async () => {
    // ".pivot/pivot.db" stands for a path of the building machine: it is in the help of the commands that read a
    // database, and not in the root help or the version.
    const partial = await precompute(".pivot/pivot.db")
    expect(Precomputed.answer(partial, ["window", "--help"])).toBeUndefined()
    expect(Precomputed.answer(partial, ["--version"])).toEqual(Precomputed.answer(table, ["--version"]))
    expect(Object.keys(partial.keys).length).toBeLessThan(Object.keys(table.keys).length)
  }, 120_000)

  it("given a table file, then it is read; a missing or unreadable one is no table", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-precomputed-"))
    try {
      const file = path.join(dir, "precomputed.json")
      expect(Precomputed.read(pathToFileURL(file))).toBeUndefined()
      fs.writeFileSync(file, "{ not json")
      expect(Precomputed.read(pathToFileURL(file))).toBeUndefined()
      fs.writeFileSync(file, JSON.stringify(table))
      expect(Precomputed.read(pathToFileURL(file))).toEqual(table)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
