// The viewer over a PostgreSQL store (the slow lane: needs the test server of scripts/postgres.sh); the SQLite
// sources and every route are in http.int.test.ts.
import { ValidWindow, Window } from "@pivot/core"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { describe, expect, inject, it } from "vitest"
import { Serve } from "../src/index.ts"
import { play } from "./support/play.ts"

describe("sources", () => {
  it("serves a PostgreSQL store read-only (?schema= picks the schema)", async () => {
    const url = inject("pgUrl")
    expect(inject("pgError")).toBe("")
    const schema = `serve_${process.pid}_${Date.now() % 100000}`
    const small = play({ sessionId: "ses_pg", turns: 12 })
    await Effect.runPromise(
      SessionLog.append(
        "ses_pg",
        "no-stream",
        SessionLog.fromEvents("ses_pg", small).map(({ event, meta }) => ({ id: meta.id, event })),
      ).pipe(Effect.provide(ReadModels.layerPostgres({ url, schema }))),
    )
    const served = await Serve.start({ source: `${url}?schema=${schema}`, port: 0 })
    try {
      const response = await fetch(`http://127.0.0.1:${served.port}/api/sessions/ses_pg/window/${small.length}/raw`)
      expect(await response.text()).toBe(ValidWindow.toJson(Window.messages(Window.fold(small))))
      expect(served.source).not.toContain("password")
    } finally {
      await served.close()
    }
  })
})
