/**
 * `Effect.fn(name)` and `Effect.withSpan(name)` whose span is made only when tracing is on: a tracer other than
 * Effect's built-in in-memory one is installed (an OpenTelemetry layer, say) and `References.TracerEnabled` is true.
 * Without one nobody can observe the span, and making it (the span, its stack frame, a new fiber context) was a large
 * share of a turn's cost (issue 23): the body then runs untraced.
 *
 * **Example**
 * ```ts
 * const load = Traced.fn("Sessions.load")(function* (sessionId: string) { ... })
 * ```
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"

/** Whether a span made in this fiber would reach a tracing backend. */
export const tracing = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer && fiber.getRef(References.TracerEnabled)

/** `self` in a span named `name` when tracing is on (see the module comment), else `self` as it is. */
export const withSpan =
  (name: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiber((fiber) => (tracing(fiber) ? Effect.withSpan(self, name) : self))

/** `Effect.fnUntraced`, each call in a span named `name` when tracing is on (see the module comment). */
export const fn = (name: string): typeof Effect.fnUntraced =>
  ((...definition: Array<any>) => {
    const untraced = (Effect.fnUntraced as (...definition: Array<any>) => (...args: Array<any>) => Effect.Effect<any>)(
      ...definition,
    )
    const span = withSpan(name)
    return function (this: unknown, ...args: Array<any>) {
      return span(untraced.apply(this, args))
    }
  }) as typeof Effect.fnUntraced
