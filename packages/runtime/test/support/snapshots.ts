// What the snapshot tests share: a handler over a store with the warnings it logs, and what a state shows.
import { Ids } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer, Logger } from "effect"

export type Store = EventStore["Service"]

/** What anyone can observe of a session's state, apart from which old messages it holds in memory. */
export const observe = (state: Sessions.State): Record<string, unknown> => ({
  version: state.session.version,
  pending: state.session.pending,
  lastFinished: state.session.lastFinished,
  pivot: state.session.window.pivot,
  window: state.session.window.visible.buffer.slice(0, state.session.window.visible.length),
  runtime: state.runtime,
})

export const serviceOf = (layer: Layer.Layer<EventStore, unknown>): Promise<Store> =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* EventStore
    }).pipe(Effect.provide(layer)) as Effect.Effect<Store>,
  )

/** Runs a program with a fresh handler over `store`, collecting the warnings it logs. */
export const withHandler = async <A, E>(
  store: Store | Layer.Layer<EventStore, unknown>,
  options: Sessions.Options,
  program: (sessions: Sessions.SessionsShape, store: Store) => Effect.Effect<A, E>,
) => {
  const warnings: Array<string> = []
  const capture = Logger.make(({ logLevel, message }) => {
    if (logLevel === "Warn") warnings.push(String(Array.isArray(message) ? message[0] : message))
  })
  const value = await Effect.runPromise(
    Effect.gen(function* () {
      return yield* program(yield* Sessions.Sessions, yield* EventStore)
    }).pipe(
      Effect.provide(Sessions.Sessions.layer(options).pipe(Layer.provide(Ids.Ids.layerSequential))),
      Layer.isLayer(store) ? Effect.provide(store) : Effect.provideService(EventStore, store),
      Effect.provide(Logger.layer([capture])),
    ) as Effect.Effect<A>,
  )
  return { value, warnings }
}
