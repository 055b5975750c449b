// The recall index on PostgreSQL (tsvector): the cases of recallCases.ts, as on SQLite (Recall.int.test.ts).
import { execFileSync } from "node:child_process"
import { Effect, type ManagedRuntime } from "effect"
import { afterAll, describe, inject } from "vitest"
import { ReadModels } from "../../src/index.ts"
import { searches } from "./recallCases.ts"
import { open, type Stores } from "./support.ts"

describe("recall search on PostgreSQL (tsvector)", () => {
  const url = inject("pgUrl")
  const setupError = inject("pgError")
  const schema = `pivot_recall_${process.pid}_${Date.now().toString(36)}`
  let runtime: ManagedRuntime.ManagedRuntime<Stores, unknown> | undefined
  afterAll(async () => {
    await runtime?.dispose()
    if (setupError === "")
      await Effect.runPromise(
        Effect.try(() =>
          execFileSync("psql", [url, "-q", "-c", `DROP SCHEMA IF EXISTS ${schema} CASCADE;`], { stdio: "ignore" }),
        ).pipe(Effect.ignore),
      )
  })
  searches(() => {
    if (setupError !== "") throw new Error(setupError)
    runtime ??= open(ReadModels.layerPostgres({ url, schema, maxConnections: 2 }))
    return runtime
  })
})
