/**
 * `pivot serve [store | export.json | postgres://…] [--port N] [--host ADDR] [--token T] [--usable N] [--prices FILE]`: the read-only
 * web viewer (`@pivot/server`). Binds 127.0.0.1 unless `--host` names another address, which then needs an access
 * token (generated and printed unless given). Runs until interrupted (Ctrl-C), then closes the server.
 */

import { Argument, Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { listing } from "./Catalog.ts"
import { CliError, CliIo, describe, type Entry, report, UsageError } from "./Command.ts"
import { countFlag, pricesFlag } from "./Flags.ts"
import { pricesOf } from "./Prices.ts"

/** The port `pivot serve` binds when `--port` is not given (`Serve.DEFAULT_PORT`; a test keeps them equal). */
export const DEFAULT_PORT = 4319

const { synopsis, summary } = listing("serve")

/** The `serve` command. */
export const serve: Entry = {
  name: "serve",
  synopsis,
  command: Command.make(
    "serve",
    {
      source: Argument.String("source").pipe(
        Argument.withDescription(
          "a pivot SQLite file (default .pivot/pivot.db), a postgres:// URL or an OpenCode export",
        ),
        Argument.optional,
      ),
      port: countFlag("port", "N", `the port (default ${DEFAULT_PORT}; 0 picks a free one)`),
      host: Flag.String("host").pipe(
        Flag.withMetavar("ADDR"),
        Flag.withDescription("the address to bind (default 127.0.0.1); another address requires an access token"),
        Flag.optional,
      ),
      token: Flag.String("token").pipe(
        Flag.withMetavar("T"),
        Flag.withDescription("the access token (generated and printed when --host is not loopback)"),
        Flag.optional,
      ),
      usable: countFlag("usable", "TOKENS", "the usable context to draw on the timeline, when known"),
      prices: pricesFlag,
    },
    (options) =>
      report(
        "serve",
        synopsis,
        Effect.scoped(
          Effect.gen(function* () {
            const io = yield* CliIo
            const port = Option.getOrUndefined(options.port)
            if (port !== undefined && port > 65535)
              return yield* new UsageError({ message: "--port needs an integer from 0 to 65535" })
            // Read before binding: a bad price file is refused without starting a server.
            const prices = yield* pricesOf(options.prices)
            // Loaded only when serving: the web server's modules cost every other command ~0.3 s of start-up.
            const { Serve } = yield* Effect.promise(() => import("@pivot/server"))
            const { Config } = yield* Effect.promise(() => import("@pivot/runtime"))
            const token = Option.getOrUndefined(options.token)
            // A token the server would refuse is wrong usage (exit 2, with the usage line), as a bad port is.
            const badToken = token === undefined ? undefined : Serve.tokenProblem(token)
            if (badToken !== undefined) return yield* new UsageError({ message: `--token: ${badToken}` })
            const running = yield* Serve.serve({
              source: Option.getOrUndefined(options.source),
              port,
              host: Option.getOrUndefined(options.host),
              token,
              usable: Option.getOrUndefined(options.usable),
              priceOf: (ref) => Config.priceOf(ref, prices),
            }).pipe(Effect.mapError((error) => new CliError({ message: describe(error) })))
            io.out(`pivot serve: ${running.source} on ${running.url}`)
            if (running.token !== undefined) io.out(`access token: ${running.token} (the address above carries it)`)
            io.out("read-only; press Ctrl-C to stop")
            return yield* Effect.never
          }),
        ),
      ),
  ).pipe(
    Command.withDescription(
      "A read-only web viewer: the sessions, context usage per model step with pivots and prunes marked, the exact window at any version, diffs, pivot reports, the event log, live updates. Binds 127.0.0.1 by default.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      { command: "pivot serve .pivot/demo.db", description: "the demo's store on http://127.0.0.1:4319" },
      { command: "pivot serve session.json --port 0", description: "an OpenCode export, on a free port" },
      { command: "pivot serve .pivot/pivot.db --host 0.0.0.0", description: "on every address, with a token" },
    ]),
  ),
}
