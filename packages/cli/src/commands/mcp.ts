/**
 * `pivot mcp [db | postgres://URL | export.json] [--session ID]`: pivot's context tools for any MCP client, over stdio
 * (`@pivot/mcp`). Read-only: the store is opened as `pivot serve` opens it (SQLite read-only, PostgreSQL in read-only
 * transactions), and each call reads the session as stored at that moment, so a session `pivot import --follow` is
 * writing answers with its newest events. Standard output carries the protocol only; messages go to standard error.
 * Runs until the client closes the connection.
 */
import { Argument, Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { listing } from "./Catalog.ts"
import { CliError, CliIo, describe, type Entry, report } from "./Command.ts"
import { checkSessionName } from "./Source.ts"

const { synopsis, summary } = listing("mcp")

/** The `mcp` command. */
export const mcp: Entry = {
  name: "mcp",
  synopsis,
  command: Command.make(
    "mcp",
    {
      source: Argument.String("store").pipe(
        Argument.withDescription(
          "a pivot SQLite file (default .pivot/pivot.db), a postgres:// URL or an OpenCode export",
        ),
        Argument.optional,
      ),
      session: Flag.String("session").pipe(
        Flag.withMetavar("ID"),
        Flag.withDescription("the session the tools read when a call names none (default: the store's only session)"),
        Flag.optional,
      ),
    },
    (options) =>
      report(
        "mcp",
        synopsis,
        Effect.scoped(
          Effect.gen(function* () {
            const io = yield* CliIo
            yield* checkSessionName(Option.getOrUndefined(options.session), "--session")
            // Loaded only here: the MCP SDK and the store readers cost every other command start-up time.
            const { Source } = yield* Effect.promise(() => import("@pivot/server"))
            const { Server } = yield* Effect.promise(() => import("@pivot/mcp"))
            const { StdioServerTransport } = yield* Effect.promise(
              () => import("@modelcontextprotocol/sdk/server/stdio.js"),
            )
            const { version } = yield* Effect.promise(() => import("../Cli.ts"))
            const source = yield* Source.parse(Option.getOrUndefined(options.source)).pipe(
              Effect.mapError((error) => new CliError({ message: describe(error) })),
            )
            const catalog = yield* Source.open(source).pipe(
              Effect.mapError((error) => new CliError({ message: describe(error) })),
            )
            const context = yield* Effect.context<never>()
            const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromiseWith(context)(effect)
            const server = Server.make({
              version,
              session: Option.getOrUndefined(options.session),
              reader: {
                ids: () => run(catalog.ids),
                events: (sessionId) =>
                  run(
                    catalog.session(sessionId).pipe(
                      Effect.map((loaded) => loaded.log.map((l) => l.event)),
                      Effect.catchTag("NotFound", () => Effect.succeed(undefined)),
                    ),
                  ),
              },
            })
            const transport = new StdioServerTransport()
            yield* Effect.promise(() => server.connect(transport))
            io.err(`pivot mcp: ${Source.label(source)} over stdio (read-only)`)
            // Serves until the client closes the connection (standard input ends).
            yield* Effect.callback<void>((resume) => {
              const done = () => resume(Effect.void)
              process.stdin.once("end", done)
              process.stdin.once("close", done)
              transport.onclose = done
            })
            yield* Effect.promise(() => server.close())
          }),
        ),
      ),
  ).pipe(
    Command.withDescription(
      "pivot's context tools for any MCP client over stdio: context_recall (search what left the context, list what a compaction dropped, read an original back by id) and context_usage (tokens and cache figures as billed). Read-only, over a SQLite file, a postgres:// URL or an OpenCode export.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      { command: "pivot mcp .pivot/pivot.db --session ses_claude-code-…", description: "serve one session's tools" },
      { command: "claude mcp add pivot -- npx pivot mcp .pivot/pivot.db", description: "add it to Claude Code" },
    ]),
  ),
}
