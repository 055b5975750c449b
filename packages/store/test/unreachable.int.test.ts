// A PostgreSQL server that cannot be reached is a store that is unavailable, not a corrupt one: the read-only open
// (what `pivot serve postgres://…` does) used to say "not a pivot event store (no migrations table)" for a refused
// connection. Port 1 on loopback refuses at once, so no server is needed.
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { EventStore } from "../src/index.ts"

describe("a PostgreSQL store that cannot be reached", () => {
  it("fails to open read-only with StoreUnavailable naming the connection, not StoreCorrupt", async () => {
    const layer = EventStore.layerSql({ readonly: true }).pipe(
      Layer.provide(PgClient.layer({ url: Redacted.make("postgres://me:pw@127.0.0.1:1/pivot") })),
    )
    const open = Effect.gen(function* () {
      yield* EventStore
    })
    const error = await Effect.runPromise(Effect.flip(Effect.provide(open, layer)))
    expect(error._tag).toBe("StoreUnavailable")
    expect(error.message).not.toContain("migrations")
  })
})
