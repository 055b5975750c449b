/** The `pivot` dispatcher: help, unknown commands, usage errors and their exit codes. */

import { describe, expect, it } from "vitest"
import { run, usage } from "../src/Cli.ts"
import type { Io } from "../src/commands/Command.ts"
import { parseOptions, UsageError } from "../src/commands/Command.ts"

const capture = () => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false, columns: undefined, env: {} }
  return { io, out, err }
}

describe("pivot", () => {
  it("given help, then it prints the usage listing every command and exits 0", async () => {
    for (const name of ["help", "--help", "-h"]) {
      const { io, out, err } = capture()
      expect(await run([name], io)).toBe(0)
      expect(out.join("\n")).toBe(usage())
      expect(err).toEqual([])
    }
    for (const synopsis of [
      "demo",
      "import <export.json> [--db FILE]",
      "window <export.json | --db FILE --session ID> [--at VERSION] [--format text|json]",
      "prune <export.json | --db FILE --session ID> --dry-run [--at VERSION] [--format text|json]",
      "inspect <export.json | --db FILE --session ID> [--format text|json]",
      "forget --db FILE <session>",
    ])
      expect(usage()).toMatch(new RegExp(`^ {2}${synopsis.replace(/[[\]|.*?()]/g, "\\$&")}`, "m"))
  })

  it("given an unknown command, then it prints the usage to stderr and exits 2", async () => {
    const { io, out, err } = capture()
    expect(await run(["frobnicate"], io)).toBe(2)
    expect(out).toEqual([])
    expect(err.join("\n")).toContain('unknown command "frobnicate"')
    expect(err.join("\n")).toContain("Usage: pivot <command>")
  })

  it("given no command, then it prints the usage to stderr and exits 2", async () => {
    const { io, err } = capture()
    expect(await run([], io)).toBe(2)
    expect(err.join("\n")).toContain("Usage: pivot <command>")
  })

  it("given an unknown option, then the command prints its usage and exits 2", async () => {
    const { io, err } = capture()
    expect(await run(["demo", "--colour"], io)).toBe(2)
    expect(err.join("\n")).toContain("unknown argument: --colour")
    expect(err.join("\n")).toContain("Usage: pivot demo [--example FILE] [--json]")
  })

  it("given --example without a value, then it is a usage error", async () => {
    const { io, err } = capture()
    expect(await run(["demo", "--example"], io)).toBe(2)
    expect(err.join("\n")).toContain("--example needs a value")
  })

  it("given a command and --help, then it prints that command's usage and exits 0", async () => {
    const { io, out } = capture()
    expect(await run(["demo", "--help"], io)).toBe(0)
    expect(out.join("\n")).toContain("Usage: pivot demo [--example FILE] [--json]")
  })
})

describe("parseOptions", () => {
  const spec = { values: ["example"], flags: ["json"] }
  it("reads --name value, --name=value and flags", () => {
    expect(parseOptions(["--example", "a.json", "--json"], spec)).toEqual({
      values: { example: "a.json" },
      flags: new Set(["json"]),
      positionals: [],
    })
    expect(parseOptions(["--example=b.json"], spec).values).toEqual({ example: "b.json" })
  })
  it("refuses positional arguments, unknown options and a flag given a value", () => {
    expect(() => parseOptions(["extra"], spec)).toThrow(UsageError)
    expect(() => parseOptions(["--nope"], spec)).toThrow(UsageError)
    expect(() => parseOptions(["--json=yes"], spec)).toThrow(UsageError)
  })
  it("takes as many positional arguments as the spec allows, in any position, and no dash-led ones", () => {
    const one = { ...spec, positionals: 1 }
    expect(parseOptions(["--json", "a.json"], one).positionals).toEqual(["a.json"])
    expect(() => parseOptions(["a.json", "b.json"], one)).toThrow(UsageError)
    expect(() => parseOptions(["-x"], one)).toThrow(UsageError)
  })
})
