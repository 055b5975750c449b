/**
 * The viewer's HTTP application: the pages, the JSON API under `/api`, the server-sent events of a session and the
 * bundled assets, as one `effect/http` handler. Read-only by construction: GET and HEAD are the only methods (405
 * otherwise; a HEAD is answered as its GET, and the platform's server sends it without the body),
 * an access token guards every route when one is set, and every answer carries a strict content security policy.
 */
import { timingSafeEqual } from "node:crypto"
import type { CompactionHistory, Events, Ledger } from "@pivot/core"
import { WhatIf, WhatIfTable } from "@pivot/runtime"
import { Effect, Stream } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Assets from "./Assets.ts"
import type { CatalogShape } from "./Catalog.ts"
import * as Compress from "./Compress.ts"
import * as HostCheck from "./HostCheck.ts"
import * as Ledgers from "./Ledgers.ts"
import * as LedgerView from "./LedgerView.ts"
import * as Pages from "./Pages.ts"
import { BadRequest, describe, NotFound, type RequestError } from "./ServeError.ts"
import * as SessionView from "./SessionView.ts"
import * as StoredTimeline from "./StoredTimeline.ts"
import * as WindowView from "./WindowView.ts"

/** What the application serves from. */
export interface AppOptions {
  readonly catalog: CatalogShape
  /** When set, every request must carry it (`?token=`, the cookie it sets, or `Authorization: Bearer`). */
  readonly token?: string | undefined
  /** Model limits for the usable-limit line, when known. */
  readonly usable?: number | undefined
  /** Prices for the ledger (`/api/sessions/:id/ledger`); without them, each provider's default cache multipliers. */
  readonly priceOf?: Ledger.PriceOf | undefined
  /**
   * Completes when the server stops: the live streams end then, rather than holding their connections open until the
   * HTTP server's graceful shutdown gives up on them (20 s).
   */
  readonly closing?: Effect.Effect<void> | undefined
  /**
   * The loopback address and port the server listens on: when set, a request whose `Host` header names another
   * server is refused with a 403 (`HostCheck.refusal`, the DNS-rebinding guard). Unset beyond loopback, where the
   * token guards every request.
   */
  readonly loopback?: HostCheck.Bound | undefined
  /** The sessions' ledgers (`Ledgers.make` over the catalog at `priceOf` when not given, e.g. to warm them). */
  readonly ledgers?: Ledgers.LedgersShape | undefined
}

/** Points of the timeline per answer, at most (a chart is ~1,000 pixels wide; zooming asks for a range). */
export const TIMELINE_POINTS = 4_000

/** Events per page of the event log, at most. */
export const MAX_PAGE = 500

const SESSION_ID = /^[A-Za-z0-9_.:-]{1,200}$/
const VERSION = /^\d{1,9}$/
const TOKEN_COOKIE = "pivot_token"

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
}

const withSecurity = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, SECURITY_HEADERS)

const json = (body: unknown, status = 200) => HttpServerResponse.jsonUnsafe(body, { status })

const sessionIdOf = (raw: string) => {
  let id: string
  try {
    id = decodeURIComponent(raw)
  } catch {
    return Effect.fail(new BadRequest({ message: "malformed session id" }))
  }
  return SESSION_ID.test(id)
    ? Effect.succeed(id)
    : Effect.fail(new BadRequest({ message: `malformed session id ${JSON.stringify(id.slice(0, 80))}` }))
}

/** A non-negative integer of the request; `expected` says what it must be when it is not one. */
const integerOf = (raw: string | null | undefined, what: string, expected: string) =>
  raw !== null && raw !== undefined && VERSION.test(raw)
    ? Effect.succeed(Number(raw))
    : Effect.fail(new BadRequest({ message: `${what} must be ${expected}, got ${JSON.stringify(raw ?? "")}` }))

const versionOf = (raw: string | null | undefined, what: string) =>
  integerOf(raw, what, "a stream version (an integer ≥ 0)")

// An offset or a page size is a count, not a stream version.
const countOf = (raw: string | null, fallback: number, what: string) =>
  raw === null ? Effect.succeed(fallback) : integerOf(raw, what, "an integer ≥ 0")

const inRange = (head: number, version: number, sessionId: string) =>
  version <= head
    ? Effect.succeed(version)
    : Effect.fail(
        new NotFound({
          message: `version ${version} is out of range: session ${sessionId} has ${head} events (0 to ${head})`,
        }),
      )

/** The JSON API and page routes; `undefined` when nothing matches. */
/** The timeline's JSON per session, kept until the session moves on (the chart asks again on every live update). */
type TimelineCache = WeakMap<SessionView.State, { readonly version: number; readonly body: string }>

/** The what-if comparisons per session view, by query (each is a replay per strategy: seconds, not milliseconds). */
type WhatIfCache = WeakMap<SessionView.State, Map<string, { readonly version: number; readonly body: string }>>

const CACHE_RULES: ReadonlyArray<string> = ["anthropic", "openai"]

/**
 * The session replayed under each strategy (`WhatIf.session`): `strategies` (comma-separated names, default all),
 * `context` and `output` (the model's limits when the catalog does not know it), `cache` (`anthropic` or `openai`).
 */
const whatIf = (
  sessionId: string,
  log: ReadonlyArray<{ readonly event: Events.Event }>,
  query: URLSearchParams,
  priceOf: Ledger.PriceOf | undefined,
) =>
  Effect.gen(function* () {
    const names = query.get("strategies")
    const strategies =
      names === null
        ? undefined
        : yield* WhatIf.strategiesOf(names.split(",").map((n) => n.trim())).pipe(
            Effect.mapError((error) => new BadRequest({ message: error.message })),
          )
    const context = query.has("context")
      ? yield* integerOf(query.get("context"), "context", "a number of tokens (an integer ≥ 1)")
      : undefined
    if (context === 0) return yield* new BadRequest({ message: "context must be a number of tokens (an integer ≥ 1)" })
    const output = query.has("output")
      ? yield* integerOf(query.get("output"), "output", "a number of tokens (an integer ≥ 0)")
      : undefined
    const cache = query.get("cache")
    if (cache !== null && !CACHE_RULES.includes(cache))
      return yield* new BadRequest({ message: `cache must be anthropic or openai, got ${JSON.stringify(cache)}` })
    return yield* WhatIf.session(
      sessionId,
      log.map((l) => l.event),
      {
        strategies,
        context,
        output,
        rules: cache === null ? undefined : (cache as "anthropic" | "openai"),
        priceOf,
      },
    ).pipe(Effect.mapError((error) => new BadRequest({ message: describe(error) })))
  })

/** The pivots as the session's API answer lists them, numbered from 1. */
const pivotsJson = (entries: ReadonlyArray<CompactionHistory.Entry>) =>
  entries.map((entry, i) => ({
    number: i + 1,
    markerId: entry.markerId,
    summaryId: entry.summaryId,
    version: entry.settledVersion,
    requestedVersion: entry.requestedVersion,
    auto: entry.auto,
    // Why it was asked for, when the log recorded it (`CompactionRequested.reason`).
    ...(entry.reason === undefined ? {} : { reason: entry.reason }),
    overflow: entry.overflow,
    fallback: entry.fallback,
  }))

/** The live stream of a session's heads from a global position: the current head first, then each new one. */
const liveStream = (options: AppOptions, sessionId: string, head: number, position: number) => {
  const encoder = new TextEncoder()
  const hello = Stream.succeed(encoder.encode(`retry: 1000\nevent: head\ndata: ${head}\n\n`))
  const updates = options.catalog.live(sessionId, position).pipe(
    Stream.map((version) => encoder.encode(`event: head\ndata: ${version}\n\n`)),
    options.closing === undefined ? (stream) => stream : Stream.interruptWhen(options.closing),
  )
  return HttpServerResponse.stream(Stream.concat(hello, updates), {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-store", "x-accel-buffering": "no" },
  })
}

/**
 * The answers the session page's first render asks for, from the store's timeline rows when they stand at the head
 * (ADR 0057): the session's figures (`/api/sessions/:id`), its whole timeline when the fold's would be sampled too
 * (more steps than `TIMELINE_POINTS`: bands of the buckets), and its live stream. `undefined`: the log is folded.
 */
const storedAnswer = (
  options: AppOptions & { readonly storedTimelines: StoredCache },
  sessionId: string,
  sub: string | undefined,
  arg: string | undefined,
  query: URLSearchParams,
) =>
  Effect.gen(function* () {
    const wanted =
      arg === undefined &&
      (sub === undefined || sub === "live" || (sub === "timeline" && !query.has("from") && !query.has("to")))
    if (!wanted) return undefined
    const stored = yield* options.catalog.stored(sessionId)
    if (stored === undefined) return undefined
    const head = stored.head
    if (sub === undefined)
      return json({
        ...StoredTimeline.summary(sessionId, stored),
        head,
        pivots: pivotsJson(StoredTimeline.pivots(stored)),
        types: StoredTimeline.types(stored),
      })
    if (sub === "live") return liveStream(options, sessionId, head, stored.position)
    const steps = StoredTimeline.stepCount(stored)
    if (steps <= TIMELINE_POINTS) return undefined
    const cached = options.storedTimelines.get(sessionId)
    if (cached !== undefined && cached.version === head)
      return HttpServerResponse.text(cached.body, { contentType: "application/json" })
    const points = StoredTimeline.bands(stored.buckets, TIMELINE_POINTS)
    const triggers = StoredTimeline.triggers(stored.buckets)
    const body = JSON.stringify({
      head,
      from: 0,
      to: head,
      steps,
      usable: options.usable,
      // Each bucket's lowest and highest step (merged to at most TIMELINE_POINTS): bands, readable at any count.
      bands: true,
      points: {
        version: points.map((p) => p.version),
        input: points.map((p) => p.input),
        cache: points.map((p) => p.cache),
        output: points.map((p) => p.output),
        total: points.map((p) => p.total),
      },
      triggers,
      chart: SessionView.chart(points, triggers, 0, head),
      marks: StoredTimeline.marks(stored.buckets),
      legend: StoredTimeline.legend(stored.buckets),
    })
    options.storedTimelines.set(sessionId, { version: head, body })
    return HttpServerResponse.text(body, { contentType: "application/json" })
  })

/** The timeline answers made from stored rows, per session, kept until it moves on. */
type StoredCache = Map<string, { readonly version: number; readonly body: string }>

const route = (
  options: AppOptions & {
    readonly timelines: TimelineCache
    readonly ledgers: Ledgers.LedgersShape
    readonly whatifs: WhatIfCache
    readonly storedTimelines: StoredCache
  },
  segments: ReadonlyArray<string>,
  query: URLSearchParams,
): Effect.Effect<HttpServerResponse.HttpServerResponse, RequestError> | undefined => {
  const { catalog, timelines } = options
  const [first, ...rest] = segments
  if (first === undefined) return Effect.succeed(Pages.page({ page: "sessions", title: "sessions" }))
  if (first === "sessions" && rest.length >= 1) {
    const [raw, sub, arg, ...more] = rest
    if (more.length > 0) return undefined
    return Effect.gen(function* () {
      const sessionId = yield* sessionIdOf(raw!)
      // The session page itself needs only to know the session: its timeline rows say so without reading the log.
      if (sub === undefined && (yield* catalog.stored(sessionId)) !== undefined)
        return Pages.page({ page: "session", title: sessionId, sessionId })
      const loaded = yield* catalog.session(sessionId)
      const head = loaded.view.version
      if (sub === undefined) return Pages.page({ page: "session", title: sessionId, sessionId })
      if (sub === "versions" && arg !== undefined) {
        const version = yield* inRange(head, yield* versionOf(arg, "the version"), sessionId)
        return Pages.page({ page: "window", title: `${sessionId} at ${version}`, sessionId, version })
      }
      if (sub === "diff" && arg === undefined) {
        yield* inRange(head, yield* versionOf(query.get("from") ?? "0", "from"), sessionId)
        yield* inRange(head, yield* versionOf(query.get("to") ?? String(head), "to"), sessionId)
        return Pages.page({ page: "diff", title: `${sessionId} diff`, sessionId })
      }
      if (sub === "pivots" && arg !== undefined) {
        const number = yield* integerOf(arg, "the pivot number", "an integer ≥ 1")
        if (number < 1 || number > SessionView.pivots(loaded.view).length)
          return yield* new NotFound({ message: `session ${sessionId} has no pivot #${number}` })
        return Pages.page({ page: "pivot", title: `${sessionId} pivot #${number}`, sessionId, version: number })
      }
      if (sub === "events" && arg === undefined)
        return Pages.page({ page: "events", title: `${sessionId} events`, sessionId })
      return yield* new NotFound({ message: "no such page" })
    })
  }
  if (first !== "api") return undefined
  const [what, raw, sub, arg, tail, ...more] = rest
  if (what === "projections" && sub === undefined) {
    if (raw === undefined) return Effect.map(catalog.projections, (projections) => json({ projections }))
    return Effect.map(catalog.projection(raw, query.get("key") ?? undefined), (found) =>
      json({ name: raw, key: query.get("key") ?? null, ...found }),
    )
  }
  if (what !== "sessions" || more.length > 0) return undefined
  if (raw === undefined) return Effect.map(catalog.sessions, (sessions) => json({ sessions }))
  return Effect.gen(function* () {
    const sessionId = yield* sessionIdOf(raw)
    const fromRows = yield* storedAnswer(options, sessionId, sub, arg, query)
    if (fromRows !== undefined) return fromRows
    const loaded = yield* catalog.session(sessionId)
    const view = loaded.view
    const head = view.version
    if (sub === undefined) {
      const pivots = pivotsJson(SessionView.pivots(view))
      const types = Object.fromEntries([...view.byType].map(([type, versions]) => [type, versions.length]))
      return json({ ...SessionView.summary(view), head, pivots, types })
    }
    if (sub === "timeline" && arg === undefined) {
      // The whole session at most TIMELINE_POINTS points (peaks kept); a zoomed range asks again with from/to.
      const ranged = query.has("from") || query.has("to")
      const from = ranged ? yield* versionOf(query.get("from") ?? "0", "from") : 0
      const to = ranged ? yield* versionOf(query.get("to") ?? String(head), "to") : head
      if (from > to) return yield* new BadRequest({ message: `from (${from}) must be at most to (${to})` })
      const cached = ranged ? undefined : timelines.get(view)
      if (cached !== undefined && cached.version === head)
        return HttpServerResponse.text(cached.body, { contentType: "application/json" })
      const steps = SessionView.stepsBetween(view.steps, from, to, TIMELINE_POINTS)
      const body = JSON.stringify({
        head,
        from,
        to,
        steps: view.steps.filter((s) => s.version >= from && s.version <= to).length,
        usable: options.usable,
        // Columns, not rows: compact, and the shape the chart takes as is.
        points: {
          version: steps.map((s) => s.version),
          input: steps.map((s) => s.input),
          cache: steps.map((s) => s.cache),
          output: steps.map((s) => s.output),
          total: steps.map((s) => s.total),
        },
        triggers: view.triggers,
        // What the chart draws, x from `from` to `to` (see `SessionView.chart`), and the legend's counts.
        chart: SessionView.chart(steps, view.triggers, Math.min(from, head, to), Math.min(to, head)),
        marks: ranged ? [] : view.marks,
        legend: SessionView.legend(view.marks),
      })
      if (!ranged) timelines.set(view, { version: head, body })
      return HttpServerResponse.text(body, { contentType: "application/json" })
    }
    if (sub === "ledger" && tail === undefined && (arg === undefined || arg === "chart" || arg === "entries")) {
      // Folded without holding the server up, once, caught up as the session moves on (`Ledgers`).
      const ledger = yield* options.ledgers.of(loaded)
      // The head it was folded to: the session may have moved on while it was folded.
      const { version: at, source, view: ledgerView, bodies } = ledger
      const cachedBody = (key: string, make: () => unknown) => {
        let body = bodies.get(key)
        if (body === undefined) {
          body = JSON.stringify(make())
          bodies.set(key, body)
        }
        return HttpServerResponse.text(body, { contentType: "application/json" })
      }
      if (arg === undefined) return cachedBody("all", () => ({ sessionId, head: at, source, ...ledgerView }))
      const ranged = query.has("from") || query.has("to")
      const from = ranged ? yield* versionOf(query.get("from") ?? "0", "from") : 0
      const to = ranged ? yield* versionOf(query.get("to") ?? String(at), "to") : at
      if (from > to) return yield* new BadRequest({ message: `from (${from}) must be at most to (${to})` })
      if (arg === "chart") {
        const make = () => ({ sessionId, head: at, source, from, to, ...LedgerView.chart(ledgerView, from, to) })
        return ranged ? json(make()) : cachedBody("chart", make)
      }
      const kind = query.get("kind") ?? undefined
      if (kind !== undefined && kind !== "compaction" && kind !== "prune")
        return yield* new BadRequest({ message: `kind must be compaction or prune, got ${JSON.stringify(kind)}` })
      const markerId = query.get("marker") ?? undefined
      if (markerId !== undefined && !SESSION_ID.test(markerId))
        return yield* new BadRequest({ message: "marker must be a message id" })
      const offset = yield* countOf(query.get("offset"), 0, "offset")
      const limit = Math.min(LedgerView.MAX_ENTRIES, yield* countOf(query.get("limit"), 50, "limit"))
      return json({
        sessionId,
        head: at,
        source,
        from,
        to,
        offset,
        limit,
        ...LedgerView.entries(ledgerView, { from, to, kind, markerId, offset, limit }),
      })
    }
    if (sub === "whatif" && arg === undefined) {
      const key = query.toString()
      const byQuery = options.whatifs.get(view) ?? new Map()
      const cached = byQuery.get(key)
      if (cached !== undefined && cached.version === head)
        return HttpServerResponse.text(cached.body, { contentType: "application/json" })
      const comparison = yield* whatIf(sessionId, loaded.log, query, options.priceOf)
      // The figures, and the same as the rows and legend `pivot whatif` prints (`WhatIfTable`, their one home).
      const table = { rows: WhatIfTable.rows(comparison), legend: WhatIfTable.legend }
      const body = JSON.stringify({ head, ...comparison, table })
      byQuery.set(key, { version: head, body })
      options.whatifs.set(view, byQuery)
      return HttpServerResponse.text(body, { contentType: "application/json" })
    }
    if (sub === "window" && arg !== undefined && (tail === undefined || tail === "raw")) {
      const version = yield* inRange(head, yield* versionOf(arg, "the version"), sessionId)
      const at = WindowView.at(loaded.log, version, SessionView.originAt(view, version))
      if (tail === "raw") return HttpServerResponse.text(WindowView.json(at), { contentType: "application/json" })
      return json({
        sessionId,
        version,
        head,
        pivot: at.pivot,
        entries: WindowView.entries(at),
        marks: view.marks.filter((m) => m.kind !== "prune").map((m) => ({ version: m.version, kind: m.kind })),
      })
    }
    if (sub === "diff" && arg === undefined) {
      const from = yield* inRange(head, yield* versionOf(query.get("from"), "from"), sessionId)
      const to = yield* inRange(head, yield* versionOf(query.get("to"), "to"), sessionId)
      const rows = WindowView.diff(
        WindowView.at(loaded.log, from, SessionView.originAt(view, from)).messages,
        WindowView.at(loaded.log, to, SessionView.originAt(view, to)).messages,
      )
      const counts = { entered: 0, left: 0, replaced: 0, changed: 0, same: 0 }
      for (const row of rows) counts[row.change]++
      return json({ sessionId, from, to, counts, rows })
    }
    if (sub === "pivots" && arg !== undefined && tail === undefined) {
      const number = yield* integerOf(arg, "the pivot number", "an integer ≥ 1")
      const report = WindowView.pivotReport(loaded.log, SessionView.pivots(view), number)
      if (report === undefined) return yield* new NotFound({ message: `session ${sessionId} has no pivot #${number}` })
      return json(report)
    }
    if (sub === "events" && arg === undefined) {
      const type = query.get("type") ?? undefined
      if (type !== undefined && !/^[A-Za-z]{1,64}$/.test(type))
        return yield* new BadRequest({ message: "type must be an event type name" })
      const offset = yield* countOf(query.get("offset"), 0, "offset")
      const limit = Math.min(MAX_PAGE, yield* countOf(query.get("limit"), 50, "limit"))
      const page = yield* catalog.events(sessionId, { type, offset, limit })
      return json({ sessionId, type, offset, limit, ...page })
    }
    if (sub === "live" && arg === undefined) return liveStream(options, sessionId, head, loaded.position)
    return yield* new NotFound({ message: "no such API route" })
  })
}

const sameToken = (given: string | undefined, expected: string) => {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

const errorResponse = (isApi: boolean, status: number, message: string) =>
  isApi ? json({ error: message }, status) : Pages.errorPage(status, message)

/** The viewer as one `effect/http` handler. */
export const app = (options: AppOptions) => {
  const timelines: TimelineCache = new WeakMap()
  const ledgers = options.ledgers ?? Ledgers.make(options.catalog, options.priceOf)
  const whatifs: WhatIfCache = new WeakMap()
  const storedTimelines: StoredCache = new Map()
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(request.url, "http://viewer.invalid")
    const isApi = url.pathname.startsWith("/api/") || url.pathname === "/api"
    // A HEAD is handled as its GET: `NodeHttpServer` writes the status and headers of a HEAD's response and drops its
    // body (as effect's `HttpRouter` routes a HEAD to the GET route).
    if (request.method !== "GET" && request.method !== "HEAD")
      return withSecurity(
        HttpServerResponse.setHeader(
          errorResponse(
            isApi,
            405,
            `method ${request.method} not allowed: the viewer is read-only (GET and HEAD only)`,
          ),
          "allow",
          "GET, HEAD",
        ),
      )
    if (options.loopback !== undefined) {
      const refused = HostCheck.refusal(request.headers.host, options.loopback)
      if (refused !== undefined) return withSecurity(errorResponse(isApi, 403, refused))
    }
    let setCookie = false
    if (options.token !== undefined) {
      const bearer = request.headers.authorization?.match(/^Bearer (.+)$/)?.[1]
      const fromQuery = url.searchParams.get("token") ?? undefined
      const ok =
        sameToken(fromQuery, options.token) ||
        sameToken(bearer, options.token) ||
        sameToken(request.cookies[TOKEN_COOKIE], options.token)
      if (!ok) {
        // A token given and wrong is told apart from none (the user pasted a stale URL, not forgot it).
        const given = fromQuery !== undefined || bearer !== undefined || request.cookies[TOKEN_COOKIE] !== undefined
        const message = given
          ? "the access token is not this server's (use the URL `pivot serve` printed)"
          : "an access token is required (?token=…)"
        return withSecurity(errorResponse(isApi, 401, message))
      }
      setCookie = sameToken(fromQuery, options.token)
    }
    const segments = url.pathname.split("/").filter((s) => s.length > 0)
    let response: HttpServerResponse.HttpServerResponse
    if (segments[0] === "assets" && segments.length === 2) {
      const asset = Assets.get(segments[1]!)
      response =
        asset === undefined
          ? errorResponse(false, 404, "no such asset")
          : HttpServerResponse.uint8Array(asset.bytes, {
              contentType: asset.contentType,
              headers: { "cache-control": "max-age=300" },
            })
      return Compress.response(withSecurity(response), request.headers["accept-encoding"])
    }
    const handled = route({ ...options, timelines, ledgers, whatifs, storedTimelines }, segments, url.searchParams)
    response =
      handled === undefined
        ? errorResponse(isApi, 404, `no such ${isApi ? "API route" : "page"}: ${url.pathname}`)
        : yield* handled.pipe(
            Effect.catch((error) =>
              Effect.succeed(
                errorResponse(
                  isApi,
                  error._tag === "NotFound" ? 404 : error._tag === "BadRequest" ? 400 : 500,
                  describe(error),
                ),
              ),
            ),
          )
    response = withSecurity(response)
    if (setCookie)
      response = HttpServerResponse.setHeader(
        response,
        "set-cookie",
        `${TOKEN_COOKIE}=${encodeURIComponent(options.token!)}; HttpOnly; SameSite=Strict; Path=/`,
      )
    return Compress.response(response, request.headers["accept-encoding"])
  })
}
