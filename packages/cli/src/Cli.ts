/**
 * The `pivot` command line on `effect/cli`: typed flags, `--version`, per-command help with examples, suggestions for
 * typos and shell completions (`--completions bash|zsh|fish`). `pivot help [command]` is `--help`. Errors are one
 * line on standard error: wrong usage exits 2 with the usage line, a failure exits 1.
 */
import * as fs from "node:fs"
import * as Console from "effect/Console"
import { CliConfig, CliOutput, Command, GlobalFlag, type HelpDoc } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { catalog, type Listing } from "./commands/Catalog.ts"
import { CliIo, consoleOf, type Entry, exitCodeOf, type Io } from "./commands/Command.ts"
import { packageFile } from "./PackageFiles.ts"
import * as Services from "./Services.ts"

export type { Io } from "./commands/Command.ts"
export { processIo } from "./commands/Command.ts"

/** The version in the CLI package's package.json. */
export const version: string = (JSON.parse(fs.readFileSync(packageFile("package.json"), "utf8")) as { version: string })
  .version

/** The `pivot` command with the given subcommands. */
const rootOf = (subcommands: ReadonlyArray<Entry["command"]>) =>
  Command.make("pivot").pipe(
    Command.withDescription(
      "an event-sourced context-window manager for LLM agents. Exit codes: 0 success, 1 failure, 2 wrong usage.",
    ),
    Command.withSubcommands(subcommands),
    Command.withExamples([
      { command: "pivot demo", description: "a scripted coding-agent session: usage, prunes, pivots" },
      { command: "pivot import session.json", description: "store an OpenCode export in .pivot/pivot.db" },
      { command: "pivot inspect --db .pivot/pivot.db --limit 20", description: "a stored session at a glance" },
      { command: "pivot --completions bash > ~/.pivot-completion.bash", description: "shell completions" },
    ]),
  )

/** A command as `pivot --help` lists it (its name and summary), without loading its module. */
const listed = (listing: Listing) => Command.make(listing.name).pipe(Command.withShortDescription(listing.summary))

/**
 * The subcommands a run needs, loading only what it uses: the chosen command's module when the first argument names
 * one; every module for shell completions (they hold every flag); otherwise (help, the version, no or an unknown
 * command) only the catalog's names and summaries, which is all those print.
 */
export const subcommandsFor = (argv: ReadonlyArray<string>) =>
  Effect.promise(async (): Promise<ReadonlyArray<Entry["command"]>> => {
    const chosen = catalog.find((l) => l.name === argv[0])
    if (chosen !== undefined) return [(await chosen.load()).command]
    if (argv.includes("--completions")) {
      const entries: ReadonlyArray<Entry> = await Promise.all(catalog.map((l) => l.load()))
      return entries.map((e) => e.command)
    }
    return catalog.map(listed)
  })

const synopsisOf = (path: ReadonlyArray<string>): string => {
  const entry = catalog.find((e) => e.name === path[1])
  return entry === undefined ? "pivot <command> [flags]" : `pivot ${entry.name} ${entry.synopsis}`.trimEnd()
}

const oneLine = (error: { readonly message: string; readonly suggestions?: ReadonlyArray<string> }): string => {
  const first = error.message.split("\n")[0]!.trim()
  const suggestions = error.suggestions ?? []
  return suggestions.length === 0 ? first : `${first} (did you mean ${suggestions.join(" or ")}?)`
}

const plainFormatter = CliOutput.defaultFormatter({ colors: false })

/** Help on standard output when asked for; wrong usage as one line per problem plus the usage line on stderr. */
const presenter = (io: Io): CliOutput.Presenter => ({
  present: (event) =>
    Effect.sync(() => {
      switch (event._tag) {
        case "Help": {
          const text = plainFormatter.formatHelpDoc(event.helpDoc as HelpDoc.HelpDoc)
          // No command given: the help goes to stderr, and the exit code says wrong usage.
          if (event.reason === "Requested") io.out(text)
          else io.err(text)
          return
        }
        case "InvalidInvocation": {
          const where = event.commandPath.length > 1 ? `pivot ${event.commandPath.slice(1).join(" ")}` : "pivot"
          for (const error of event.errors) io.err(`${where}: ${oneLine(error as never)}`)
          io.err(`Usage: ${synopsisOf(event.commandPath)}`)
          io.err(`Run "${where} --help" for its flags and examples.`)
          return
        }
        case "Version":
          io.out(`pivot ${event.version}`)
          return
      }
    }),
})

/**
 * `pivot help` and `pivot help <command>` are `--help`. effect/cli answers `--help` before it reads the command, so
 * for a command that does not exist (`pivot help windw`, `pivot windw --help`) the flag is left out: the unknown
 * command is then wrong usage with its suggestion (exit 2), not the root help (exit 0).
 */
const normalize = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const args = argv[0] === "help" ? [...argv.slice(1), "--help"] : argv
  const first = args[0]
  return first !== undefined && !first.startsWith("-") && !catalog.some((l) => l.name === first)
    ? args.filter((arg) => arg !== "--help" && arg !== "-h")
    : args
}

/** Runs `pivot` with the arguments after the program name; answers the exit code. */
export const main = (argv: ReadonlyArray<string>, io: Io): Effect.Effect<number> =>
  Effect.flatMap(subcommandsFor(normalize(argv)), (subcommands) =>
    Command.runWith(rootOf(subcommands), { version })(normalize(argv)),
  ).pipe(
    Effect.provideService(CliIo, io),
    Effect.provideService(CliOutput.Presenter, presenter(io)),
    Effect.provideService(Console.Console, consoleOf(io)),
    Effect.provide(
      Layer.mergeAll(
        Services.layer,
        CliConfig.layer({ builtIns: [GlobalFlag.Help, GlobalFlag.Version, GlobalFlag.Completions] }),
      ),
    ),
    Effect.exit,
    Effect.map((exit) => exitCodeOf(io, exit)),
  )

/** Runs `pivot` as a promise (for tests and embedding); answers the exit code once the command is done. */
export const run = (argv: ReadonlyArray<string>, io: Io): Promise<number> => Effect.runPromise(main(argv, io))
