/** `@pivot/server`: `pivot serve`, the read-only web viewer for auditing sessions. */

/** The sessions served, folded in memory and caught up with the store. */
export * as Catalog from "./Catalog.ts"
/** Response compression (brotli, gzip) as the request accepts it. */
export * as Compress from "./Compress.ts"
/** The DNS-rebinding guard: which `Host` headers name a loopback viewer. */
export * as HostCheck from "./HostCheck.ts"
/** The HTTP application (pages, JSON API, server-sent events, assets). */
export * as Http from "./Http.ts"
/** Each session's ledger, folded without holding the server up, once, and caught up as the session moves on. */
export * as Ledgers from "./Ledgers.ts"
/** What the pages ask of a session's ledger: the cost chart and entries by range or pivot. */
export * as LedgerView from "./LedgerView.ts"
/** The HTML of the pages and error pages, and the escaping they use. */
export * as Pages from "./Pages.ts"
/** Starting the viewer: `serve` (an Effect) and `start` (a promise). */
export * as Serve from "./Serve.ts"
/** The viewer's typed failures. */
export * from "./ServeError.ts"
/** What the viewer knows of a session: figures, timeline, marks. */
export * as SessionView from "./SessionView.ts"
/** Opening a source: SQLite, PostgreSQL, or an OpenCode export. */
export * as Source from "./Source.ts"
/** The window at a version, diffs, pivot reports. */
export * as WindowView from "./WindowView.ts"

// The copy of effect this package loaded, so a second copy is named when it breaks a decode (core's EffectCopies).
import { EffectCopies } from "@pivot/core"
import * as Schema from "effect/Schema"

EffectCopies.register("@pivot/server", Schema.String)
