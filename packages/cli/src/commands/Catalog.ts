/**
 * Every `pivot` command as `pivot --help` lists it: its name, usage line and one-line summary, and how to load it.
 * This module imports nothing heavy, so listing the commands costs no store, core or server code; a command's own
 * module (its flags, its handler and what they import) is loaded only when that command runs (`Cli.ts`). Adding a
 * command is one entry here.
 */
import type { Entry, Fast } from "./Command.ts"

/** The database the commands read and write when `--db` is not given. */
export const DEFAULT_DB = ".pivot/pivot.db"

/** A command as the catalog knows it, before its module is loaded. */
export interface Listing {
  readonly name: string
  /** Arguments in the usage line, e.g. `<export.json> [--db FILE]`. */
  readonly synopsis: string
  /** The one line `pivot --help` shows beside the name. */
  readonly summary: string
  /** Imports the command's module. */
  readonly load: () => Promise<Entry>
  /**
   * Imports the command's handler from a module without effect/cli, for a command the plain command line runs
   * (`FastArgs.ts`, `Fast.ts`, ADR 0048); its `load()` entry then names its `flags`.
   */
  readonly fast?: () => Promise<Fast<any>>
}

const SOURCE = "<export.json | --db FILE --session ID>"

/** The commands, in the order `pivot --help` lists them. */
export const catalog: ReadonlyArray<Listing> = [
  {
    name: "demo",
    synopsis: "[--example FILE] [--json] [--db FILE]",
    summary: "a coding-agent session on pivot through the AI SDK: usage, prunes, pivots, replay",
    load: () => import("./demo.ts").then((m) => m.demo),
  },
  {
    name: "import",
    synopsis: "<file|folder> [--db FILE] [--encrypt] [--follow]",
    summary: `store an OpenCode session export in a pivot database (default ${DEFAULT_DB})`,
    load: () => import("./import.ts").then((m) => m.importCommand),
  },
  {
    name: "window",
    synopsis: `${SOURCE} [--at VERSION] [--format text|json] [--sources] [--limit N | --tail N] [--from K] [--to K]`,
    summary: "the model input of the next model call (or right after event VERSION)",
    load: () => import("./windowCommand.ts").then((m) => m.window),
    fast: () => import("./window.ts").then((m) => m.fast),
  },
  {
    name: "prune",
    synopsis: `${SOURCE} --dry-run [--at VERSION] [--protect N] [--minimum N] [--protected-tools A,B] [--format text|json] [--limit N | --tail N] [--from K] [--to K]`,
    summary: "which old tool outputs a prune would clear, and the tokens it frees (writes nothing)",
    load: () => import("./prune.ts").then((m) => m.prune),
  },
  {
    name: "inspect",
    synopsis: `${SOURCE} [--format text|json] [--prices FILE] [--limit N | --tail N] [--from V] [--to V] [--pivot N]`,
    summary:
      "events, pivots (what each summarised and kept, --at to replay), prunes, usage, the ledger (cost, cache, kept)",
    load: () => import("./inspectCommand.ts").then((m) => m.inspect),
    fast: () => import("./inspect.ts").then((m) => m.fast),
  },
  {
    name: "whatif",
    synopsis:
      "<export.json | --db FILE --session ID> [--strategies A,B] [--prices FILE] [--context N] [--output N] [--cache anthropic|openai] [--format text|json]",
    summary: "replay a session under each strategy: cost, cache, compactions, artifacts kept",
    load: () => import("./whatif.ts").then((m) => m.whatif),
  },
  {
    name: "fork",
    synopsis: "--db FILE <session> --into NAME [--at VERSION] [--encrypt]",
    summary: "fork a session at a version into a new session",
    load: () => import("./fork.ts").then((m) => m.fork),
  },
  {
    name: "pin",
    synopsis: "--db FILE <session> <message> [--part PART] [--budget TOKENS]",
    summary: "pin a message so it stays verbatim after every pivot (writes)",
    load: () => import("./pin.ts").then((m) => m.pin),
  },
  {
    name: "unpin",
    synopsis: "--db FILE <session> <message> [--part PART]",
    summary: "remove a message's pins (writes)",
    load: () => import("./pin.ts").then((m) => m.unpin),
  },
  {
    name: "rebuild",
    synopsis: "[--db FILE] [--session ID]",
    summary: "rewrite the read models of a database from its events",
    load: () => import("./rebuild.ts").then((m) => m.rebuild),
  },
  {
    name: "projections",
    synopsis: "[list|status|rebuild NAME] [--db FILE] [--format text|json]",
    summary: "list the read models and projections, their status, or rebuild one",
    load: () => import("./projections.ts").then((m) => m.projections),
  },
  {
    name: "check",
    synopsis: "[--db FILE]",
    summary: "check a database: PRAGMA integrity_check, a replay of every session, its read models against a rebuild",
    load: () => import("./check.ts").then((m) => m.check),
  },
  {
    name: "forget",
    synopsis: "--db FILE <session>",
    summary: "erase a session's encrypted fields by deleting its key; history stays",
    load: () => import("./forget.ts").then((m) => m.forget),
  },
  {
    name: "serve",
    synopsis:
      "[db | export.json | postgres://URL] [--port N] [--host ADDR] [--token T] [--usable TOKENS] [--prices FILE]",
    summary: "a read-only web viewer of a store or an export",
    load: () => import("./serve.ts").then((m) => m.serve),
  },
  {
    name: "mcp",
    synopsis: "[db | postgres://URL | export.json] [--session ID]",
    summary: "pivot's context tools for MCP clients (Claude Code, Codex CLI), read-only",
    load: () => import("./mcp.ts").then((m) => m.mcp),
  },
]

/** The catalog's entry for a command name (each command module reads its usage line and summary here). */
export const listing = (name: string): Listing => {
  const found = catalog.find((l) => l.name === name)
  if (found === undefined) throw new Error(`pivot: no command "${name}" in the catalog`)
  return found
}
