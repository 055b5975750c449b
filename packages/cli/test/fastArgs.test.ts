/**
 * The plain command line of the read commands (FastArgs.ts, Args.ts, ADR 0048) against effect/cli's own parse of the
 * same commands: on every argument list it answers either nothing (effect/cli then runs) or exactly the options
 * effect/cli hands the handler. Its declarations are the build's (`Precompute.declarations`, from effect/cli's
 * parameters), and effect/cli is the reference: the real `windowCommand.ts` / `inspectCommand.ts` flags under a root
 * command with pivot's built-in flags, the handler replaced by one that keeps its options.
 */

import { CliConfig, CliOutput, Command, GlobalFlag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { catalog } from "../src/commands/Catalog.ts"
import type { Fast } from "../src/commands/Command.ts"
import { BOOLEAN_WORDS, type Declared, parse } from "../src/FastArgs.ts"
import { declarations, declare } from "../src/Precompute.ts"
import * as Services from "../src/Services.ts"

const silent: CliOutput.Presenter = { present: () => Effect.void }

/** What effect/cli hands `name`'s handler for `argv` (the arguments after the command's name), or `undefined`. */
const reference = async (name: string, flags: Readonly<Record<string, unknown>>, argv: ReadonlyArray<string>) => {
  let got: unknown
  const command = Command.make(name, flags as never, (options) =>
    Effect.sync(() => {
      got = options
    }),
  )
  await Effect.runPromise(
    Command.runWith(Command.make("pivot").pipe(Command.withSubcommands([command])), { version: "0" })([
      name,
      ...argv,
    ]).pipe(
      Effect.provideService(CliOutput.Presenter, silent),
      Effect.provide(
        Layer.mergeAll(
          Services.layer,
          CliConfig.layer({ builtIns: [GlobalFlag.Help, GlobalFlag.Version, GlobalFlag.Completions] }),
        ),
      ),
      Effect.exit,
    ),
  )
  return got
}

interface FastCommand {
  readonly name: string
  readonly declared: Declared
  readonly flags: Readonly<Record<string, unknown>>
  readonly fast: Fast<unknown>
}

const commands: Array<FastCommand> = []
beforeAll(async () => {
  const declared = await declarations()
  for (const listing of catalog) {
    if (listing.fast === undefined) continue
    const entry = await listing.load()
    commands.push({
      name: listing.name,
      declared: declared[listing.name]!,
      flags: entry.flags!,
      fast: await listing.fast(),
    })
  }
}, 60_000)

/** The plain reading's options for `argv`, or `undefined` when it leaves them to effect/cli. */
const plain = (command: FastCommand, argv: ReadonlyArray<string>) => {
  const parsed = parse(command.declared, argv)
  return parsed === undefined ? undefined : command.fast.options(parsed)
}

/** The plain reading's answer is effect/cli's, or none. Answers whether the plain reading took the arguments. */
const agrees = async (command: FastCommand, argv: ReadonlyArray<string>): Promise<boolean> => {
  const mine = plain(command, argv)
  if (mine === undefined) return false
  expect(mine, `${command.name} ${JSON.stringify(argv)}`).toEqual(await reference(command.name, command.flags, argv))
  return true
}

describe("the declarations written at build time", () => {
  it("given the catalog, then window and inspect have handlers without effect/cli, with their flags declared", () => {
    expect(commands.map((c) => c.name)).toEqual(["window", "inspect"])
    const window = commands[0]!.declared
    expect(window.arguments).toBe(1)
    expect(window.flags.map((f) => f.name)).toEqual([
      "db",
      "session",
      "at",
      "format",
      "sources",
      "limit",
      "tail",
      "from",
      "to",
    ])
    expect(window.flags.find((f) => f.name === "format")).toEqual({
      name: "format",
      type: "Choice",
      choices: ["text", "json"],
    })
    expect(window.flags.find((f) => f.name === "sources")).toEqual({ name: "sources", type: "Boolean" })
  })

  it("given a flag with an alias, a value when bare or its own negation, then it is marked for effect/cli", async () => {
    const { Flag } = await import("effect/cli")
    const declared = declare({
      a: Flag.String("alpha").pipe(Flag.withAlias("a")),
      b: Flag.Boolean("beta").pipe(Flag.withNegation("without-beta")),
      c: Flag.String("gamma").pipe(Flag.withOptionalValue("x")),
      d: Flag.Int("delta"),
    })
    expect(declared.flags.map((f) => [f.name, f.type, f.special === true])).toEqual([
      ["alpha", "String", true],
      ["beta", "Boolean", true],
      ["gamma", "String", true],
      ["delta", "Int", false],
    ])
    expect(parse(declared, ["--alpha", "v"])).toBeUndefined()
    expect(parse(declared, ["--delta", "3"])).toBeUndefined()
  })
})

describe("the plain command line against effect/cli", () => {
  const db = "demo.db"
  it("given plain argument lists, then it reads them, as effect/cli does", async () => {
    const window = commands[0]!
    const inspect = commands[1]!
    const taken: ReadonlyArray<[FastCommand, ReadonlyArray<string>]> = [
      [window, []],
      [window, ["--db", db]],
      [window, ["session.json"]],
      [window, ["session.json", "--sources", "--from", "10", "--to", "20"]],
      [window, ["--db", db, "--session", "ses_abc", "--tail", "20"]],
      [window, ["--db", db, "--at", "120", "--format", "json"]],
      [window, ["--db", db, "--at", "0", "--format", "text", "--sources"]],
      [window, ["--sources", "--db", db]],
      [window, ["--db", db, "--limit", "3", "--tail", "2"]],
      [window, ["--db", db, "--from", "5", "--to", "2"]],
      [window, ["--db", "", "--session", ""]],
      [window, ["--db", db, "--at", " 7 "]],
      [window, ["--db", db, "--at", "9007199254740991"]],
      [inspect, ["--db", db, "--limit", "5"]],
      [inspect, ["--db", db, "--format", "json", "--prices", "p.json", "--pivot", "0"]],
      [inspect, ["x.json", "--tail", "3"]],
    ]
    for (const [command, argv] of taken) expect(await agrees(command, argv), JSON.stringify(argv)).toBe(true)
  })

  it("given forms it leaves to effect/cli, then it answers nothing", async () => {
    const window = commands[0]!
    const left: ReadonlyArray<ReadonlyArray<string>> = [
      ["--help"],
      ["-h"],
      ["--version"],
      ["--completions", "bash"],
      ["--db=demo.db"],
      ["-d", db],
      ["--", "--db"],
      ["--db", db, "--db", db],
      ["--db"],
      ["--db", "-x"],
      ["--at", "-3"],
      ["--at", "x"],
      ["--at", "1.5"],
      ["--at", "1e3"],
      ["--at", "9007199254740992"],
      ["--format", "xml"],
      ["--format", "JSON"],
      ["--sources", "true"],
      ["--sources", "no"],
      ["--sources", "0"],
      ["--no-sources"],
      ["--sourcs"],
      ["--SOURCES"],
      ["a.json", "b.json"],
      ["--db", "postgres://user:secret@host/db"],
      ["--db", "PostgreSQL://host/db"],
      ["-"],
    ]
    for (const argv of left) expect(plain(window, argv), JSON.stringify(argv)).toBeUndefined()
  })

  it("given generated argument lists, then it answers effect/cli's options or nothing", async () => {
    // Pieces: each flag of both commands with a good value, then single tokens (a flag without its value, values good
    // and bad, built-in flags, forms left to effect/cli). Mostly plain pieces, so plain lists come up often.
    const flagged = fc.constantFrom(
      ["--db", "x.db"],
      ["--session", "ses_1"],
      ["--at", "3"],
      ["--format", "json"],
      ["--format", "text"],
      ["--sources"],
      ["--limit", "2"],
      ["--tail", "0"],
      ["--from", "1"],
      ["--to", "4"],
      ["--prices", "p.json"],
      ["--pivot", "1"],
      ["s.json"],
    )
    const single = fc
      .constantFrom(
        "--db",
        "--at",
        "--format",
        "--sources",
        "--help",
        "--no-sources",
        "--db=x.db",
        "--",
        "-h",
        "-3",
        "x.db",
        "3",
        " 4",
        "1.5",
        "json",
        "xml",
        "",
        "postgres://h/d",
      )
      .map((token) => [token])
    // The words effect/cli takes as a bare boolean's value, alone or after the boolean flag.
    const word = fc.constantFrom(...BOOLEAN_WORDS)
    const afterBoolean = fc.oneof(
      word.map((token) => [token]),
      word.map((token) => ["--sources", token]),
    )
    const argvs = fc
      .array(
        fc.oneof(
          { arbitrary: flagged, weight: 4 },
          { arbitrary: single, weight: 1 },
          { arbitrary: afterBoolean, weight: 1 },
        ),
        { maxLength: 5 },
      )
      .map((pieces) => pieces.flat())
    let taken = 0
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 1), argvs, async (which, argv) => {
        if (await agrees(commands[which]!, argv)) taken++
      }),
      { numRuns: 800 },
    )
    // The generator reaches plain lists often enough for the comparison to mean something.
    expect(taken).toBeGreaterThan(100)
  }, 120_000)
})
