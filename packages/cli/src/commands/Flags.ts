/**
 * The flags the commands share, declared for effect/cli: where a session is read from, `--format`, the integer and
 * list flags, `--limit`/`--tail`/`--from`/`--to`, `--prices` and `--pivot`. Their rules live in the modules that
 * read the values (`Source.ts`, `Limits.ts`, `Prices.ts`), which do not import effect/cli, so a command's handler
 * runs without it (ADR 0048).
 */
import { Argument, CliError as CliErrors, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { DEFAULT_DB } from "./Catalog.ts"
import { isPostgresUrl, parseCount, parseNames } from "./Source.ts"

/** An optional flag whose text `parse` reads (its failure: the flag's one-line error). */
const parsedFlag =
  <A>(parse: (flag: string, text: string) => Result.Result<A, string>) =>
  (name: string, metavar: string, description: string) =>
    Flag.String(name).pipe(
      Flag.withMetavar(metavar),
      Flag.withDescription(description),
      Flag.mapTryCatch(
        (text) => Result.getOrThrowWith(parse(name, text), (message) => new Error(message)),
        (error) => (error instanceof Error ? error.message : String(error)),
      ),
      Flag.optional,
    )

/** An optional list flag (`--protected-tools A,B`) parsed by `parseNames`. */
export const namesFlag = parsedFlag(parseNames)

/** An optional integer flag (`--at VERSION`, `--limit N`) parsed by `parseCount`. */
export const countFlag = parsedFlag(parseCount)

/** `--db` names a SQLite file, not a PostgreSQL URL (`Source.isPostgresUrl`); the URL is not echoed. */
export const sqliteFile = Flag.mapEffect((db: string) =>
  isPostgresUrl(db)
    ? Effect.fail(
        new CliErrors.InvalidValue({
          option: "db",
          value: "postgres://…",
          expected:
            "--db takes a SQLite file; a postgres:// store is read by pivot serve and pivot mcp, as their source argument (the other commands open SQLite only)",
          kind: "flag",
        }),
      )
    : Effect.succeed(db),
)

/** The flags naming a session: `<export.json>` or `--db FILE [--session ID]`. */
export const sourceFlags = {
  file: Argument.String("export.json").pipe(
    Argument.withDescription("an OpenCode export (`opencode export <id>`), read in memory; nothing is written"),
    Argument.optional,
  ),
  db: Flag.String("db").pipe(
    sqliteFile,
    Flag.withMetavar("FILE"),
    Flag.withDescription(`a pivot database, opened read-only (default ${DEFAULT_DB})`),
    Flag.optional,
  ),
  session: Flag.String("session").pipe(
    Flag.withMetavar("ID"),
    Flag.withDescription("the session in the database (may be left out when it holds one)"),
    Flag.optional,
  ),
}

/** `--format text|json` (default text). */
export const formatFlag = Flag.Literals("format", ["text", "json"]).pipe(
  Flag.withDescription("text for people, json for programs"),
  Flag.withDefault("text" as const),
)

/** The four flags, described for a listing whose rows are keyed by `key` (e.g. "message number"). */
export const limitFlags = (key: string) => ({
  limit: countFlag("limit", "N", "print only the first N rows of each long listing"),
  tail: countFlag("tail", "N", "print only the last N rows of each long listing"),
  from: countFlag("from", "K", `print only rows whose ${key} is K or more`),
  to: countFlag("to", "K", `print only rows whose ${key} is K or less`),
})

/** The `--prices FILE` flag. */
export const pricesFlag = Flag.String("prices").pipe(
  Flag.withMetavar("FILE"),
  Flag.withDescription(
    'prices for the ledger, JSON { "provider/model": { input, output, cacheRead, cacheWrite } } in USD per million tokens (default: the model catalog)',
  ),
  Flag.optional,
)

/** `--pivot N`: list what pivot N (from 1; 0: the latest) dropped instead of the overview. */
export const pivotFlag = countFlag("pivot", "N", "list what pivot N (from 1; 0: the latest) summarised, instead")
