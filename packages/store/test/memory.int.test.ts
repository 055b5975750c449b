// The contract against the in-memory store (two opens of one handle share the store).
import { Context, Effect, Layer } from "effect"
import { EventStore } from "../src/index.ts"
import { contract } from "./contract.ts"

contract({
  name: "memory",
  fresh: async () => {
    const context = await Effect.runPromise(Effect.scoped(Layer.build(EventStore.layerMemory())))
    const store = Context.get(context, EventStore)
    return { open: () => Layer.succeed(EventStore, store) }
  },
})
