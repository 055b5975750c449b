// The plugin recording into PostgreSQL (the `db` option or PIVOT_DB as a postgres:// URL): the run's own test server
// (the store's globalSetup starts it and stops it at the end; or PIVOT_PG_URL), a fresh schema, a fake OpenCode client
// over an importer fixture.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Events } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { ReadModels, SessionLog } from "@pivot/store"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { expect, inject, it } from "vitest"
import type { Client } from "../src/OpenCode.ts"
import * as Plugin from "../src/Plugin.ts"

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")

it("records an OpenCode session into the PostgreSQL store PIVOT_DB names", async () => {
  if (inject("pgError") !== "") throw new Error(inject("pgError"))
  const url = inject("pgUrl")
  const schema = `plugin_${Date.now().toString(36)}`
  const data = JSON.parse(Fs.readFileSync(fixture, "utf8"))
  const client: Client = {
    session: {
      get: async () => ({ data: data.info }),
      messages: async () => ({ data: data.messages }),
      summarize: async () => ({ data: true }),
    },
  }
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-plugin-pg-"))
  const hooks = await Plugin.make({ client, directory }, {}, { PIVOT_DB: `${url}?schema=${schema}` })
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: data.info.id } } })
  await hooks.dispose()
  const stored = await Effect.runPromise(
    Effect.provide(
      Effect.map(SessionLog.read(data.info.id), (logged) => logged.map((l) => JSON.stringify(Events.encode(l.event)))),
      ReadModels.layerPostgres({ url: Redacted.make(url), schema }),
    ),
  )
  const imported = Import.importSession(data)
  if (Result.isFailure(imported)) throw imported.failure
  expect(stored).toEqual(imported.success.events.map((e) => JSON.stringify(Events.encode(e))))
  expect(Fs.existsSync(Path.join(directory, ".pivot"))).toBe(false)
})
