/**
 * A command line for the read commands that does not load `effect/cli` (issue 32, ADR 0048). Its input is a command's
 * flags and arguments as effect/cli itself declares them, written at build time beside the precomputed help
 * (`Precompute.ts` → `precomputed.json`): each flag's name and kind (boolean, string, one of some choices). It reads
 * only the plain forms — `--flag value`, a bare boolean `--flag`, positional values — and answers `undefined` for
 * anything else, which then runs effect/cli as before: a flag it does not know (the built-in `--help`, `--version`,
 * `--completions`, a typo), a short flag or a negative number (`-h`, `-3`), `--flag=value`, a negated boolean
 * (`--no-x`), a boolean followed by a word effect/cli would take as its value (`true`, `no`, `0`, …), a flag given
 * twice, a missing value or one that starts with `-`, a choice not in the list, more positional values than declared,
 * or `--`. `fastArgs.test.ts` holds it to effect/cli's own parse on generated argument lists. This module imports
 * nothing.
 */

/** A flag as effect/cli declares it (`Param.extractSingleParams` of the command's flags). */
export interface DeclaredFlag {
  readonly name: string
  /** effect/cli's primitive: `Boolean`, `String` and `Choice` are read here; any other kind sends its use to effect/cli. */
  readonly type: string
  /** The accepted values of a `Choice`. */
  readonly choices?: ReadonlyArray<string> | undefined
  /** Whether the flag has aliases, a value taken when bare, or a custom negation: its use is left to effect/cli. */
  readonly special?: boolean | undefined
}

/** A command's flags and how many positional values it declares (each `Argument`). */
export interface Declared {
  readonly flags: ReadonlyArray<DeclaredFlag>
  readonly arguments: number
}

/** Arguments read in a plain form: each flag given (a boolean as `true`), and the positional values in order. */
export interface ParsedArgs {
  readonly flags: Readonly<Record<string, string | true>>
  readonly arguments: ReadonlyArray<string>
}

/** The words effect/cli reads as a boolean's value after a bare boolean flag (`Schema.TrueLiterals`, `FalseLiterals`). */
export const BOOLEAN_WORDS: ReadonlyArray<string> = ["true", "yes", "on", "1", "y", "false", "no", "off", "0", "n"]

/**
 * The plain reading of `argv` (the arguments after the command's name) for a command declared as `declared`; or
 * `undefined` when it is not plain, and effect/cli decides.
 */
export const parse = (declared: Declared, argv: ReadonlyArray<string>): ParsedArgs | undefined => {
  const flags: Record<string, string | true> = {}
  const positional: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    if (!token.startsWith("-")) {
      positional.push(token)
      continue
    }
    if (!token.startsWith("--") || token === "--" || token.includes("=")) return undefined
    const name = token.slice(2)
    const flag = declared.flags.find((f) => f.name === name)
    if (flag === undefined || flag.special === true || Object.hasOwn(flags, name)) return undefined
    if (flag.type === "Boolean") {
      const next = argv[i + 1]
      if (next !== undefined && BOOLEAN_WORDS.includes(next.toLowerCase())) return undefined
      flags[name] = true
      continue
    }
    if (flag.type !== "String" && flag.type !== "Choice") return undefined
    const value = argv[i + 1]
    if (value === undefined || value.startsWith("-")) return undefined
    if (flag.type === "Choice" && !(flag.choices ?? []).includes(value)) return undefined
    flags[name] = value
    i++
  }
  return positional.length > declared.arguments ? undefined : { flags, arguments: positional }
}
