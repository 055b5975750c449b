/**
 * The read models' caches after a forget made by another store layer (issue 18 #1), on PostgreSQL (the server comes
 * from PIVOT_PG_URL or scripts/postgres.sh, see globalSetup): what `ForgetCaches.int.test.ts` checks on SQLite.
 */
import { describe, it } from "vitest"
import { EventStore, ReadModels } from "../../src/index.ts"
import { testSchema } from "../support/postgres.ts"
import { forgetBesideA } from "./support/forgetCaches.ts"

const { url, setupError, schema } = testSchema("pivot_forget_caches")

const ready = () => {
  if (setupError !== "") throw new Error(setupError)
}

describe("read models after a forget made by another store layer (PostgreSQL)", () => {
  let n = 0
  for (const [name, forgetter] of [
    ["with the read-model hooks (pivot forget)", () => ReadModels.layerPostgres({ url, schema, maxConnections: 2 })],
    ["from a bare event store", () => EventStore.layerPostgres({ url, schema, maxConnections: 2 })],
  ] as const)
    for (const snapshots of [false, { every: 2 }] as const)
      it(`given A holding the read models in memory (snapshots ${JSON.stringify(snapshots)}), when B forgets ${name} and A appends, then no read model holds the forgotten text`, async () => {
        ready()
        await forgetBesideA(
          `ses_forget_caches_${++n}`,
          ReadModels.layerPostgres({ url, schema, maxConnections: 2, snapshots }),
          forgetter(),
        )
      })
})
