// The contract against PostgreSQL: the server comes from PIVOT_PG_URL or scripts/postgres.sh (see globalSetup);
// each test gets its own schema, dropped at the end.

import { Effect, Fiber, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { EventStore } from "../src/index.ts"
import { contract, ev, storeOf } from "./contract.ts"
import { dropSchemas, server } from "./support/postgres.ts"

const { url, setupError } = server()
const run = `t${process.pid}_${Date.now().toString(36)}`
const schemas: Array<string> = []

/** Drops the schemas made so far (each contract's cleanup drops what it and the earlier ones made). */
const dropMade = async () => {
  if (setupError === "") dropSchemas(url, schemas)
}

contract({
  name: "postgres",
  fresh: async () => {
    if (setupError !== "") throw new Error(setupError)
    const schema = `pivot_${run}_${schemas.length}`
    schemas.push(schema)
    return { open: () => EventStore.layerPostgres({ url, schema, pollInterval: "200 millis", maxConnections: 20 }) }
  },
  cleanup: () => dropMade(),
})

// The same contract with every append holding the store-wide lock and numbering its rows in its own transaction (the
// path of an append inside a caller's transaction, ADR 0012).
contract({
  name: "postgres, appendLock store",
  fresh: async () => {
    if (setupError !== "") throw new Error(setupError)
    const schema = `pivot_${run}_${schemas.length}`
    schemas.push(schema)
    return {
      open: () =>
        EventStore.layerPostgres({ url, schema, pollInterval: "200 millis", maxConnections: 20, appendLock: "store" }),
    }
  },
  cleanup: () => dropMade(),
})

describe("EventStore.layerPostgres", () => {
  it("LISTEN/NOTIFY wakes a subscriber on another connection at once, without waiting for a poll", async () => {
    if (setupError !== "") throw new Error(setupError)
    const schema = `pivot_${run}_notify`
    schemas.push(schema)
    // Polling every minute: only a notification can deliver within the timeout.
    const layer = () => EventStore.layerPostgres({ url, schema, pollInterval: "60 seconds" })
    const ids = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const reader = yield* storeOf(layer())
          const writer = yield* storeOf(layer())
          const fiber = yield* reader.subscribe().pipe(Stream.take(2), Stream.runCollect, Effect.forkChild)
          yield* Effect.sleep("300 millis")
          yield* writer.append("s", "any", [ev("a")])
          yield* writer.append("s", "any", [ev("b")])
          return (yield* Fiber.join(fiber).pipe(Effect.timeout("5 seconds"))).map((e) => e.id)
        }),
      ),
    )
    expect(ids).toEqual(["a", "b"])
  })

  it("refuses a schema name that is not a plain identifier", async () => {
    const error = await Effect.runPromise(
      Effect.flip(Effect.provide(Effect.void, EventStore.layerPostgres({ url, schema: "x; DROP TABLE y" }))),
    )
    expect(error).toMatchObject({ _tag: "StoreUnavailable" })
  })

  it("an unreachable server fails with StoreUnavailable", async () => {
    // Port 9 on loopback: nothing listens there.
    const error = await Effect.runPromise(
      Effect.flip(
        Effect.provide(
          Effect.void,
          EventStore.layerPostgres({ url: "postgres://postgres@127.0.0.1:9/postgres", connectTimeout: "2 seconds" }),
        ),
      ),
    )
    expect(error).toMatchObject({ _tag: "StoreUnavailable" })
  })
})
