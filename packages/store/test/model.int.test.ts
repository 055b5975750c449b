import { Effect } from "effect"
import fc from "fast-check"
import { describe, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import { EventStore } from "../src/index.ts"
import { agreesWithModel, commands } from "./model.ts"

describe("EventStore.layerSqlite (in-memory database)", () => {
  it("property: for any sequence of appends, results, the log and every stream equal the list model's", async () => {
    await fc.assert(
      fc.asyncProperty(commands, (cmds) =>
        Effect.runPromise(agreesWithModel(EventStore.layerSqlite({ filename: ":memory:" }), cmds)),
      ),
      runs(1000),
    )
  }, 60_000)
})
