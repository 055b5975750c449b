/**
 * `serve`: opens a source of sessions and serves the viewer on HTTP until interrupted. Binds 127.0.0.1 unless told
 * otherwise; any other address needs an access token, generated (and reported) when none is given.
 *
 * **Example**
 *
 * ```ts
 * const running = await Serve.start({ source: ".pivot/pivot.db", port: 0 })
 * console.log(`open ${running.url}`)
 * await running.close()
 * ```
 */
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import type { Ledger } from "@pivot/core"
import { Cause, Context, Deferred, Effect, Exit, Layer, Scope } from "effect"
import { HttpServer } from "effect/http"
import * as Catalog from "./Catalog.ts"
import * as HostCheck from "./HostCheck.ts"
import { app } from "./Http.ts"
import * as Ledgers from "./Ledgers.ts"
import { describe, StartupError } from "./ServeError.ts"
import * as Source from "./Source.ts"

/** How to serve. */
export interface ServeOptions {
  /** A SQLite file (default `.pivot/pivot.db`), a `postgres://` URL, or an OpenCode export (`.json`). */
  readonly source?: string | undefined
  /** The port; 0 picks a free one. Default 4319. */
  readonly port?: number | undefined
  /** The address to bind; default 127.0.0.1. Any non-loopback address requires a token. */
  readonly host?: string | undefined
  /** The access token; generated when the host is not loopback and none is given. */
  readonly token?: string | undefined
  /** The usable context (tokens) to draw as a line on the timeline, when known. */
  readonly usable?: number | undefined
  /** Prices for the ledger route; without them, each provider's default cache multipliers. */
  readonly priceOf?: Ledger.PriceOf | undefined
}

/** A running viewer. */
export interface Running {
  /** The address to open (with `?token=` when a token is needed). */
  readonly url: string
  readonly host: string
  readonly port: number
  /** The access token, when one guards the viewer. */
  readonly token: string | undefined
  /** What is served, for messages. */
  readonly source: string
}

/** The default port. */
export const DEFAULT_PORT = 4319

/** Whether an address is the loopback interface (no token needed there): `localhost`, 127.0.0.0/8 or `::1`. */
export const isLoopback = HostCheck.isLoopback

/** Why `token` cannot be the access token (8 to 200 printable characters without spaces), or `undefined`. */
export const tokenProblem = (token: string): string | undefined =>
  /^[\x21-\x7e]{8,200}$/.test(token) ? undefined : "the token must be 8 to 200 printable characters without spaces"

/** Starts the viewer in the current scope; it stops when the scope closes. */
export const serve = (options: ServeOptions = {}): Effect.Effect<Running, StartupError, Scope.Scope> =>
  Effect.gen(function* () {
    const source = yield* Source.parse(options.source)
    const host = options.host ?? "127.0.0.1"
    const port = options.port ?? DEFAULT_PORT
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      return yield* new StartupError({ message: `the port must be an integer from 0 to 65535, got ${port}` })
    const badToken = options.token === undefined ? undefined : tokenProblem(options.token)
    if (badToken !== undefined) return yield* new StartupError({ message: badToken })
    const token =
      options.token ?? (isLoopback(host) ? undefined : yield* Effect.sync(() => randomBytes(24).toString("base64url")))
    const catalog = yield* Source.open(source)
    // The store must answer now, not at the first page: an unreadable one is a startup error.
    yield* Effect.mapError(catalog.ids, (error) => new StartupError({ message: describe(error) }))
    const services = yield* Layer.build(NodeHttpServer.layer(() => http.createServer(), { port, host })).pipe(
      Effect.mapError(
        (error) => new StartupError({ message: `cannot listen on ${host}:${port}: ${describe(error.cause ?? error)}` }),
      ),
    )
    const server = Context.get(services, HttpServer.HttpServer)
    const closing = yield* Deferred.make<void>()
    const ledgers = Ledgers.make(catalog, options.priceOf)
    const address = server.address
    const bound = address._tag === "UnixPathAddress" ? port : address.port
    yield* server.serve(
      app({
        catalog,
        token,
        usable: options.usable,
        priceOf: options.priceOf,
        closing: Deferred.await(closing),
        ledgers,
        // A loopback server answers only requests that name it (DNS rebinding); beyond loopback the token guards.
        loopback: isLoopback(host) ? { host, port: bound } : undefined,
      }),
    )
    // Finalizers run last-added first: the live streams end before the server waits for its connections to close.
    yield* Effect.addFinalizer(() => Deferred.succeed(closing, undefined))
    // Ahead of the first page: the sessions' logs, then the ledgers of those the catalog keeps (newest first).
    yield* Effect.forkScoped(
      Effect.andThen(
        catalog.warm,
        Effect.flatMap(
          Effect.orElseSucceed(catalog.ids, () => []),
          (ids) => ledgers.warm(ids.slice(-Catalog.CACHE_SIZE).reverse()),
        ),
      ),
    )
    const shown = host.includes(":") ? `[${host}]` : host
    return {
      url: `http://${shown}:${bound}/${token === undefined ? "" : `?token=${encodeURIComponent(token)}`}`,
      host,
      port: bound,
      token,
      source: Source.label(source),
    }
  })

/** A running viewer started outside Effect, with a way to stop it. */
export interface Started extends Running {
  /** Stops the server and closes the store. */
  readonly close: () => Promise<void>
}

/** Starts the viewer from a promise-based program. */
export const start = async (options: ServeOptions = {}): Promise<Started> => {
  const scope = Effect.runSync(Scope.make())
  const exit = await Effect.runPromiseExit(Scope.provide(serve(options), scope))
  if (Exit.isFailure(exit)) {
    await Effect.runPromise(Scope.close(scope, exit))
    throw Cause.squash(exit.cause)
  }
  return { ...exit.value, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
