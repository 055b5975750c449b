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
  it("given help, then it prints the usage listing demo and exits 0", () => {
    for (const name of ["help", "--help", "-h"]) {
      const { io, out, err } = capture()
      expect(run([name], io)).toBe(0)
      expect(out.join("\n")).toBe(usage())
      expect(err).toEqual([])
    }
    expect(usage()).toMatch(/^ {2}demo \[--example FILE\] \[--json\] {2}/m)
  })

  it("given an unknown command, then it prints the usage to stderr and exits 2", () => {
    const { io, out, err } = capture()
    expect(run(["frobnicate"], io)).toBe(2)
    expect(out).toEqual([])
    expect(err.join("\n")).toContain('unknown command "frobnicate"')
    expect(err.join("\n")).toContain("Usage: pivot <command>")
  })

  it("given no command, then it prints the usage to stderr and exits 2", () => {
    const { io, err } = capture()
    expect(run([], io)).toBe(2)
    expect(err.join("\n")).toContain("Usage: pivot <command>")
  })

  it("given an unknown option, then the command prints its usage and exits 2", () => {
    const { io, err } = capture()
    expect(run(["demo", "--colour"], io)).toBe(2)
    expect(err.join("\n")).toContain("unknown argument: --colour")
    expect(err.join("\n")).toContain("Usage: pivot demo [--example FILE] [--json]")
  })

  it("given --example without a value, then it is a usage error", () => {
    const { io, err } = capture()
    expect(run(["demo", "--example"], io)).toBe(2)
    expect(err.join("\n")).toContain("--example needs a value")
  })

  it("given a command and --help, then it prints that command's usage and exits 0", () => {
    const { io, out } = capture()
    expect(run(["demo", "--help"], io)).toBe(0)
    expect(out.join("\n")).toContain("Usage: pivot demo [--example FILE] [--json]")
  })
})

describe("parseOptions", () => {
  const spec = { values: ["example"], flags: ["json"] }
  it("reads --name value, --name=value and flags", () => {
    expect(parseOptions(["--example", "a.json", "--json"], spec)).toEqual({
      values: { example: "a.json" },
      flags: new Set(["json"]),
    })
    expect(parseOptions(["--example=b.json"], spec).values).toEqual({ example: "b.json" })
  })
  it("refuses positional arguments, unknown options and a flag given a value", () => {
    expect(() => parseOptions(["extra"], spec)).toThrow(UsageError)
    expect(() => parseOptions(["--nope"], spec)).toThrow(UsageError)
    expect(() => parseOptions(["--json=yes"], spec)).toThrow(UsageError)
  })
})
