/**
 * `@pivot/store`: pivot's event store (memory, SQLite, PostgreSQL), its typed errors, and event versioning.
 */

/** Events to append, recorded events, expected versions and append results. */
export * from "./Event.ts"
/** The `EventStore` service and its layers. */
export * from "./EventStore.ts"

/** The store's typed failures. */
export * from "./StoreError.ts"
/** pivot's `SqlClient` over `node:sqlite`, shaped like `@effect/sql-sqlite-node`. */
export * as SqliteClient from "./sqlite/SqliteClient.ts"
/** Event versioning: upcasters and the decode step that applies them and the caller's schemas. */
export * as Upcast from "./Upcast.ts"
