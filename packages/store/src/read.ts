/**
 * `@pivot/store/read`: what a reader of a stored session needs (the event store, the session's log, replay, a
 * read-only SQLite open and the read models' service tag) without the read models' code, which `ReadOnly` loads only
 * when a database has their tables. The package's main entry re-exports the read models and every read model with
 * them, so a command that reads through it loads them all (issue 32, ADR 0062).
 */

/** Recorded events, expected versions and append results. */
export * from "./Event.ts"
/** The `EventStore` service and its layers. */
export * from "./EventStore.ts"
/** The store's typed failures. */
export * from "./StoreError.ts"
/** The read models' service: its tag and shape (the layers are in the main entry's `ReadModels`). */
export * as ReadModels from "./session/ReadModelsService.ts"
/** A SQLite store opened read-only, loading the read models' code only when the database has their tables. */
export * as ReadOnly from "./session/ReadOnly.ts"
/** Replay and time travel: `stateAt`, `windowAt`, `pivots`. */
export * as Replay from "./session/Replay.ts"
/** The typed failures of reading a session. */
export * from "./session/SessionError.ts"
/** A session's core events in the store: encoding, the upcasting decoder, read and append. */
export * as SessionLog from "./session/SessionLog.ts"

// As the main entry does: the copy of effect this package loaded (core's EffectCopies; registering twice is a no-op).
import { EffectCopies } from "@pivot/core"
import * as Schema from "effect/Schema"

EffectCopies.register("@pivot/store", Schema.String)
