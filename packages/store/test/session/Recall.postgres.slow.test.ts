// The recall index on PostgreSQL (tsvector): the cases of recallCases.ts, as on SQLite (Recall.int.test.ts).
import type { ManagedRuntime } from "effect"
import { afterAll, describe } from "vitest"
import { ReadModels } from "../../src/index.ts"
import { dropSchemas, schemaName, server } from "../support/postgres.ts"
import { searches } from "./recallCases.ts"
import { open, type Stores } from "./support.ts"

describe("recall search on PostgreSQL (tsvector)", () => {
  const { url, setupError } = server()
  const schema = schemaName("pivot_recall")
  let runtime: ManagedRuntime.ManagedRuntime<Stores, unknown> | undefined
  afterAll(async () => {
    await runtime?.dispose()
    if (setupError === "") dropSchemas(url, [schema])
  })
  searches(() => {
    if (setupError !== "") throw new Error(setupError)
    runtime ??= open(ReadModels.layerPostgres({ url, schema, maxConnections: 2 }))
    return runtime
  })
})
