/**
 * Makes the table of `Precomputed.ts` at build time: runs the command line (`Cli.run`, effect/cli) on each argument
 * list whose output depends on nothing but the code (the help texts and the version) and keeps what it printed and its
 * exit code. scripts/bundle.mjs calls it on the compiled code and writes the result beside the bundle's entry.
 */
import { Param, Primitive } from "effect/cli"
import { run } from "./Cli.ts"
import { catalog } from "./commands/Catalog.ts"
import type { Declared } from "./FastArgs.ts"
import { type Answer, keyOf, type Table } from "./Precomputed.ts"

/** The argument lists answered from the table: the help, no command, the version, and each command's help. */
export const precomputedArgvs = (): ReadonlyArray<ReadonlyArray<string>> => [
  [],
  ["--help"],
  ["-h"],
  ["help"],
  ["--version"],
  ["-v"],
  ...catalog.flatMap(({ name }) => [
    [name, "--help"],
    [name, "-h"],
    ["help", name],
  ]),
]

/** What `pivot <argv>` prints and exits with, captured as the process would write it. */
export const capture = async (argv: ReadonlyArray<string>): Promise<Answer> => {
  let stdout = ""
  let stderr = ""
  const code = await run(argv, {
    out: (line) => {
      stdout += `${line}\n`
    },
    err: (line) => {
      stderr += `${line}\n`
    },
    isTTY: false,
    columns: undefined,
    env: {},
  })
  return { stdout, stderr, code }
}

// effect/cli's own walk of a parameter into its single flags and arguments, and a choice's keys: what its parser reads
// (internal/parser.ts calls the same functions). Exported at run time, left out of its published types.
const cliInternals = { ...Param, ...Primitive } as unknown as {
  readonly extractSingleParams: (param: unknown) => ReadonlyArray<Param.Single<Param.ParamKind, unknown>>
  readonly getChoiceKeys: (primitive: unknown) => ReadonlyArray<string> | undefined
}

/**
 * A command's flags and arguments as effect/cli declares them (`Command.make`'s config), in the form the plain
 * command line reads (`FastArgs.ts`, ADR 0048): each flag's name, its primitive's kind and choices, and whether it
 * has anything the plain reading leaves to effect/cli (aliases, a value when bare, a custom negation).
 */
export const declare = (config: Readonly<Record<string, unknown>>): Declared => {
  const singles = Object.values(config).flatMap(cliInternals.extractSingleParams)
  return {
    flags: singles
      .filter((single) => single.kind === "flag")
      .map((single) => {
        const choices = cliInternals.getChoiceKeys(single.primitiveType)
        const special = single.aliases.length > 0 || single.optionalValue !== undefined || single.negation !== undefined
        return {
          name: single.name,
          type: single.primitiveType._tag,
          ...(choices === undefined ? {} : { choices: [...choices] }),
          ...(special ? { special } : {}),
        }
      }),
    arguments: singles.filter((single) => single.kind === "argument").length,
  }
}

/** The declared flags of each command that has a handler without effect/cli (its catalog entry's `fast`). */
export const declarations = async (): Promise<Record<string, Declared>> => {
  const out: Record<string, Declared> = {}
  for (const listing of catalog) {
    if (listing.fast === undefined) continue
    const entry = await listing.load()
    if (entry.flags === undefined) throw new Error(`pivot: ${listing.name} has a fast handler but declares no flags`)
    out[listing.name] = declare(entry.flags)
  }
  return out
}

/**
 * The table for every precomputed argument list. An answer that names `packageRoot` (a path of the machine that
 * built it, which an installed copy would not share) is left out, so that command runs as usual.
 */
export const precompute = async (packageRoot: string): Promise<Table> => {
  const keys: Record<string, number> = {}
  const answers: Array<Answer> = []
  const seen = new Map<string, number>()
  for (const argv of precomputedArgvs()) {
    const answer = await capture(argv)
    if (answer.stdout.includes(packageRoot) || answer.stderr.includes(packageRoot)) continue
    const text = JSON.stringify(answer)
    let index = seen.get(text)
    if (index === undefined) {
      index = answers.push(answer) - 1
      seen.set(text, index)
    }
    keys[keyOf(argv)] = index
  }
  return { keys, answers, commands: await declarations() }
}
