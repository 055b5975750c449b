/** The viewer's catalog holds folded logs in memory: a forget made elsewhere must reach them (issue 18 #1). */
import { type Events, Ids } from "@pivot/core"
import { Catalog } from "@pivot/server"
import { EventStore, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"

const SESSION = "ses_catalog_forget"
const SECRET = "zebraquokka-forgotten-word"
const model = { providerId: "anthropic", modelId: "claude-test" }
const events: ReadonlyArray<Events.Event> = [
  { _tag: "SessionStarted", sessionId: Ids.unsafe.session(SESSION), at: 0, model },
  {
    _tag: "UserMessageAdded",
    at: 1,
    message: {
      role: "user",
      id: Ids.unsafe.message("msg_u1"),
      createdAt: 1,
      model,
      parts: [{ type: "text", id: Ids.unsafe.part("prt_u1"), text: `the word is ${SECRET}` }],
    },
  },
]

describe("the viewer's catalog after a forget", () => {
  it("given a session held folded in the catalog, when it is forgotten, then the next page holds the erased text only", async () => {
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        yield* SessionLog.append(
          SESSION,
          "no-stream",
          SessionLog.fromEvents(SESSION, events).map(({ event, meta }) => ({ id: meta.id, event })),
          { seal: true },
        )
        const catalog = yield* Catalog.make(store, Effect.succeed([{ sessionId: SESSION }]))
        const before = yield* catalog.events(SESSION, { type: undefined, offset: 0, limit: 100 })
        yield* SessionLog.forget(SESSION)
        const after = yield* catalog.events(SESSION, { type: undefined, offset: 0, limit: 100 })
        const loaded = yield* catalog.session(SESSION)
        return { before, after, loaded }
      }).pipe(Effect.provide(EventStore.layerMemory())),
    )
    expect(JSON.stringify(out.before)).toContain(SECRET) // the control
    expect(JSON.stringify(out.after)).not.toContain(SECRET)
    expect(JSON.stringify(out.loaded.view)).not.toContain(SECRET)
    expect(out.after.events.map((e) => e.type)).toEqual(["SessionStarted", "UserMessageAdded", "SessionForgotten"])
  })
})
