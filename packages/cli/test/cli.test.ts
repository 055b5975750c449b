/** The `pivot` command line on effect/cli: help, --version, suggestions, usage errors and their exit codes. */

import * as fs from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { run, version } from "../src/Cli.ts"
import type { Io } from "../src/commands/Command.ts"
import { isLimited, omitted, select } from "../src/commands/Limits.ts"
import * as Progress from "../src/commands/Progress.ts"
import { parseCount, parseNames } from "../src/commands/Source.ts"

const capture = (extra: Partial<Io> = {}) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    isTTY: false,
    columns: undefined,
    env: {},
    ...extra,
  }
  return { io, out, err }
}

const commands = ["demo", "import", "window", "prune", "inspect", "rebuild", "check", "forget", "serve"]

describe("pivot", () => {
  it("given --help, -h or help, then it lists every command on stdout and exits 0", async () => {
    for (const args of [["--help"], ["-h"], ["help"]]) {
      const { io, out, err } = capture()
      expect(await run(args, io)).toBe(0)
      const text = out.join("\n")
      for (const name of commands) expect(text).toMatch(new RegExp(`^ {2}${name} +\\S`, "m"))
      expect(text).toContain("--version")
      expect(text).toContain("--completions")
      expect(err).toEqual([])
    }
  })

  it("given --version, then it prints the CLI package's version and exits 0", async () => {
    const { io, out } = capture()
    expect(await run(["--version"], io)).toBe(0)
    const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    expect(version).toBe(pkg.version)
    expect(out).toEqual([`pivot ${pkg.version}`])
  })

  it("given a command and --help (or help <command>), then its flags and examples, exit 0", async () => {
    for (const args of [
      ["window", "--help"],
      ["help", "window"],
    ]) {
      const { io, out } = capture()
      expect(await run(args, io)).toBe(0)
      const text = out.join("\n")
      for (const flag of ["--db FILE", "--session ID", "--at VERSION", "--format", "--limit N", "--tail N", "--from K"])
        expect(text).toContain(flag)
      expect(text).toContain("EXAMPLES")
      expect(text).toContain("pivot window session.json")
    }
    // Every command has its own help (not one repeated line).
    const helps = new Set<string>()
    for (const name of commands) {
      const { io, out } = capture()
      expect(await run([name, "--help"], io)).toBe(0)
      expect(out.join("\n")).toContain(`pivot ${name}`)
      helps.add(out.join("\n"))
    }
    expect(helps.size).toBe(commands.length)
  })

  it("given help for an unknown command (help windw, windw --help), then it is the same wrong usage, not the root help", async () => {
    for (const argv of [
      ["help", "windw"],
      ["windw", "--help"],
      ["windw", "-h"],
    ]) {
      const { io, out, err } = capture()
      expect(await run(argv, io), argv.join(" ")).toBe(2)
      expect(out).toEqual([])
      expect(err[0]).toBe('pivot: Unknown subcommand "windw" for "pivot" (did you mean window?)')
    }
  })

  it("given an unknown command close to a real one, then one line suggests it, the usage follows, exit 2", async () => {
    const { io, out, err } = capture()
    expect(await run(["windw"], io)).toBe(2)
    expect(out).toEqual([])
    expect(err[0]).toBe('pivot: Unknown subcommand "windw" for "pivot" (did you mean window?)')
    expect(err[1]).toBe("Usage: pivot <command> [flags]")
  })

  it("given a mistyped flag, then one line suggests the real one and the command's usage follows, exit 2", async () => {
    const { io, err } = capture()
    expect(await run(["window", "x.json", "--formt", "json"], io)).toBe(2)
    expect(err[0]).toBe("pivot window: Unrecognized flag: --formt in command pivot window (did you mean --format?)")
    expect(err[1]).toMatch(/^Usage: pivot window <export\.json \| --db FILE --session ID>/)
  })

  it("given no command, then the help goes to stderr and the exit code is 2", async () => {
    const { io, out, err } = capture()
    expect(await run([], io)).toBe(2)
    expect(out).toEqual([])
    expect(err.join("\n")).toContain("SUBCOMMANDS")
  })

  it("given --completions bash, then it prints a completion script naming the commands", async () => {
    const { io, out } = capture()
    expect(await run(["--completions", "bash"], io)).toBe(0)
    const script = out.join("\n")
    expect(script).toContain("complete")
    for (const name of commands) expect(script).toContain(name)
  })

  it("given --example without a value, then it is a usage error naming the flag", async () => {
    const { io, err } = capture()
    expect(await run(["demo", "--example"], io)).toBe(2)
    expect(err[0]).toMatch(/^pivot demo: .*--example/)
  })

  it("given a version beyond the safe integers, a sign or a fraction, then it is refused, never rounded", async () => {
    for (const bad of ["99999999999999999999", "9007199254740992", "-1", "1.5", "1e3", "x"]) {
      const { io, out, err } = capture()
      expect(await run(["window", "x.json", `--at=${bad}`], io)).toBe(2)
      expect(out).toEqual([])
      expect(err[0]).toContain("an integer from 0 to 9007199254740991 for --at")
      expect(err.join("\n")).not.toContain("e+")
    }
  })
})

describe("parseCount", () => {
  it("accepts 0 up to Number.MAX_SAFE_INTEGER and nothing beyond", () => {
    expect(parseCount("at", "0")).toEqual(Result.succeed(0))
    expect(parseCount("at", String(Number.MAX_SAFE_INTEGER - 1))).toEqual(Result.succeed(Number.MAX_SAFE_INTEGER - 1))
    expect(parseCount("at", String(Number.MAX_SAFE_INTEGER))).toEqual(Result.succeed(Number.MAX_SAFE_INTEGER))
    expect(Result.isFailure(parseCount("at", "9007199254740992"))).toBe(true)
    for (const bad of ["", "-1", "+1", "1.0", "0x10", "1e2", "Infinity", "1 2"])
      expect(Result.isFailure(parseCount("at", bad))).toBe(true)
  })
})

describe("parseNames", () => {
  it("splits on commas, trims, drops repeats in order, and refuses any empty name", () => {
    expect(parseNames("protected-tools", "skill")).toEqual(Result.succeed(["skill"]))
    expect(parseNames("protected-tools", " task , skill,task ")).toEqual(Result.succeed(["task", "skill"]))
    for (const bad of ["", " ", "a,", ",a", "a,,b", "a, ,b"])
      expect(Result.isFailure(parseNames("protected-tools", bad))).toBe(true)
  })
})

describe("limits", () => {
  const rows = Array.from({ length: 10 }, (_, i) => ({ key: (i + 1) * 10 }))
  const keys = (limits: Parameters<typeof select>[2]) => select(rows, (r) => r.key, limits).map((r) => r.key)

  it("keeps the first N (--limit) or the last N (--tail), at 0, N − 1, N and N + 1 of the rows", () => {
    expect(keys({})).toHaveLength(10)
    expect(keys({ limit: 0 })).toEqual([])
    expect(keys({ limit: 9 })).toHaveLength(9)
    expect(keys({ limit: 10 })).toHaveLength(10)
    expect(keys({ limit: 11 })).toHaveLength(10)
    expect(keys({ tail: 0 })).toEqual([])
    expect(keys({ tail: 2 })).toEqual([90, 100])
    expect(keys({ tail: 11 })).toHaveLength(10)
  })

  it("keeps keys from --from to --to, both ends included, before --limit/--tail apply", () => {
    expect(keys({ from: 30, to: 50 })).toEqual([30, 40, 50])
    expect(keys({ from: 31, to: 49 })).toEqual([40])
    expect(keys({ from: 29 })[0]).toBe(30)
    expect(keys({ to: 10 })).toEqual([10])
    expect(keys({ to: 9 })).toEqual([])
    expect(keys({ from: 30, limit: 2 })).toEqual([30, 40])
    expect(keys({ to: 50, tail: 2 })).toEqual([40, 50])
    expect(isLimited({})).toBe(false)
    expect(isLimited({ to: 0 })).toBe(true)
  })

  it("notes what was left out, and nothing when all is shown", () => {
    expect(omitted(10, 10, "rows")).toBeUndefined()
    expect(omitted(3, 20_000, "rows")).toBe("  (showing 3 of 20,000 rows; see --limit, --tail, --from, --to)")
  })

  it("refuses --limit with --tail, and --from after --to (exit 2)", async () => {
    for (const args of [
      ["window", "x.json", "--limit", "1", "--tail", "1"],
      ["inspect", "x.json", "--from", "5", "--to", "4"],
    ]) {
      const { io, err } = capture()
      expect(await run(args, io)).toBe(2)
      expect(err[0]).toMatch(/^pivot (window|inspect): (give --limit or --tail, not both|--from 5 is after --to 4)$/)
    }
  })
})

describe("progress", () => {
  const clock = () => {
    let t = 0
    return { now: () => t, tick: (ms: number) => (t += ms) }
  }

  it("prints nothing unless the Io asks for progress", () => {
    const { io, err } = capture()
    const progress = Progress.start(io, "import:", "events", { total: 10, now: clock().now })
    progress.advance(10)
    progress.done()
    expect(err).toEqual([])
  })

  it("off a terminal, prints a plain line with counts and rate at most once per interval, and one when done", () => {
    const { io, err } = capture({ progress: true })
    const c = clock()
    const progress = Progress.start(io, "import:", "events", { total: 4000, every: 2000, now: c.now })
    c.tick(1999)
    progress.advance(1000)
    expect(err).toEqual([])
    c.tick(1)
    progress.advance(1000)
    expect(err).toEqual(["import: 2,000/4,000 events · 1,000/s"])
    c.tick(500)
    progress.advance(2000)
    progress.done()
    expect(err).toEqual(["import: 2,000/4,000 events · 1,000/s", "import: 4,000/4,000 events · 1,600/s"])
  })

  it("off a terminal, work done within the interval prints nothing at all", () => {
    const { io, err } = capture({ progress: true })
    const c = clock()
    const progress = Progress.start(io, "import:", "events", { total: 5, every: 2000, now: c.now })
    c.tick(100)
    progress.advance(5)
    progress.done()
    expect(err).toEqual([])
  })

  it("on a terminal, redraws one line with a bar, counts and rate, ending it with a newline", () => {
    const drawn: Array<string> = []
    const { io } = capture({ progress: true, errIsTTY: true, errRewrite: (t) => drawn.push(t) })
    const c = clock()
    const progress = Progress.start(io, "rebuild:", "events", { total: 100, every: 100, now: c.now })
    c.tick(100)
    progress.advance(50)
    c.tick(100)
    progress.advance(50)
    progress.done()
    expect(drawn[0]).toBe(`rebuild: [${"█".repeat(12)}${"░".repeat(12)}] 50/100 events · 500/s`)
    expect(drawn.at(-1)).toBe(`rebuild: [${"█".repeat(24)}] 100/100 events · 500/s\n`)
  })
})
