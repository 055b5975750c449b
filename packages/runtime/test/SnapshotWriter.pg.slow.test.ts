/**
 * ADR 0024 on PostgreSQL (the slow lane): a forget committed by one store layer (another process's connections) while
 * a snapshot of the text it erases waits in a handler over a second layer: the snapshot's write, let go after the
 * forget, writes nothing (it checks for the marker under the stream's lock, which `forget` takes), and a restart reads
 * the text as erased. The server is the run's test server (the store's globalSetup); the test drops its schema.
 */
import { Events } from "@pivot/core"
import { EventStore } from "@pivot/store"
import { Context, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { run as generate } from "../../core/test/support/sessions.ts"
import { testSchema } from "../../store/test/support/postgres.ts"
import { forgetRace, SECRET } from "./support/snapshotWriter.ts"

const { url, setupError, schema } = testSchema("pivot_snapwriter")

const SESSION = "ses_generated"

describe("the snapshot writer on PostgreSQL", () => {
  it("a forget committed by another store layer while a snapshot waits wins: nothing is written, a restart reads the text as erased", async () => {
    if (setupError !== "") throw new Error(setupError)
    const generated = generate([
      { kind: "user", text: 30, image: false },
      { kind: "step", tools: [{ tool: "read", size: 200, status: "completed" }], tokens: 1_000, finish: "stop" },
      { kind: "user", text: 30, image: false },
    ])
    const [start, ...rest] = generated.steps
    const out = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const layer = () => EventStore.layerPostgres({ url, schema }) as Layer.Layer<EventStore>
          const a = Context.get(yield* Layer.build(layer()), EventStore)
          const b = Context.get(yield* Layer.build(layer()), EventStore)
          const raced = yield* forgetRace(
            a,
            b,
            SESSION,
            start!.command,
            rest.map((step) => step.command),
            Effect.void,
          )
          const events = yield* b.read(Events.streamName(SESSION))
          return { ...raced, types: events.map((e) => e.type) }
        }),
      ),
    )
    expect(out.types).toContain("SessionForgotten")
    expect(out.stored?.data ?? "").not.toContain(SECRET)
    expect(out.stored).toBeUndefined()
    expect(out.restarted).not.toContain(SECRET)
    expect(out.restarted).toContain(EventStore.ERASED)
  }, 120_000)
})
