/**
 * `@pivot/store`: pivot's event store (memory, SQLite, PostgreSQL), its typed errors, and event versioning.
 */

/** Events to append, recorded events, expected versions and append results. */
export * from "./Event.ts"
/** The `EventStore` service and its layers. */
export * from "./EventStore.ts"
/** `node:sqlite`, loaded when a SQLite database opens; a Node without it (before 22.16) is named in one line. */
export * as NodeSqlite from "./internal/nodeSqlite.ts"
/** Projection plugins: your read models, inline or async, stored, rebuilt on a version bump, served by `get`. */
export * as Projections from "./projections/index.ts"
/** Snapshot integrity: the checksum written beside each snapshot and the check before trusting one. */
export * as Snapshot from "./Snapshot.ts"
/** The store's typed failures. */
export * from "./StoreError.ts"
/** The SQL read models (window, usage, compactions, prune index, audit), inline, checkpointed and rebuildable. */
export * as ReadModels from "./session/ReadModels.ts"
/** A SQLite store opened read-only, loading the read models' code only when the database has their tables. */
export * as ReadOnly from "./session/ReadOnly.ts"
/** Replay and time travel: `stateAt`, `windowAt`, `pivots`. */
export * as Replay from "./session/Replay.ts"
/** The typed failures of reading a session: undecodable events, unknown sessions, versions out of range. */
export * from "./session/SessionError.ts"
/** A session's core events in the store: encoding, the upcasting decoder, read and append. */
export * as SessionLog from "./session/SessionLog.ts"
/** The synchronous SQLite driver (`node:sqlite`, or `bun:sqlite` in Bun); read-only opens leave no side files behind. */
export * as SqliteDriver from "./sqlite/driver.ts"
/** pivot's `SqlClient` over `node:sqlite`, shaped like `@effect/sql-sqlite-node`. */
export * as SqliteClient from "./sqlite/SqliteClient.ts"
/** Event versioning: upcasters and the decode step that applies them and the caller's schemas. */
export * as Upcast from "./Upcast.ts"

// The copy of effect this package loaded, so a second copy is named when it breaks a decode (core's EffectCopies).
import { EffectCopies } from "@pivot/core"
import * as Schema from "effect/Schema"

EffectCopies.register("@pivot/store", Schema.String)
