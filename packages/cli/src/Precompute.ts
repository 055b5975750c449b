/**
 * Makes the table of `Precomputed.ts` at build time: runs the command line (`Cli.run`, effect/cli) on each argument
 * list whose output depends on nothing but the code (the help texts and the version) and keeps what it printed and its
 * exit code. scripts/bundle.mjs calls it on the compiled code and writes the result beside the bundle's entry.
 */
import { run } from "./Cli.ts"
import { catalog } from "./commands/Catalog.ts"
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
  return { keys, answers }
}
