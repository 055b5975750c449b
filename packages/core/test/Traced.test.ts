/** Traced: spans only when a tracing backend is installed, and the body's result and failure either way. */
import { describe, expect, it } from "@effect/vitest"
import { Traced } from "@pivot/core"
import { Effect, References, Tracer } from "effect"

/** A tracer that records the names of the spans made through it. */
const recording = () => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (options) => {
      names.push(options.name)
      return new Tracer.NativeSpan(options)
    },
  })
  return { names, tracer }
}

const double = Traced.fn("Test.double")(function* (n: number) {
  const span = yield* Effect.currentSpan.pipe(Effect.option)
  return { value: n * 2, span: span._tag === "Some" ? span.value.name : undefined }
})

const fails = Traced.fn("Test.fails")(function* (reason: string) {
  return yield* Effect.fail(reason)
})

describe("Traced", () => {
  it.effect("with a tracer installed, each call runs in its named span", () =>
    Effect.gen(function* () {
      const { names, tracer } = recording()
      const result = yield* Effect.withTracer(double(21), tracer)
      expect(result).toEqual({ value: 42, span: "Test.double" })
      yield* Effect.withTracer(Traced.withSpan("Test.span")(Effect.void), tracer)
      expect(names).toEqual(["Test.double", "Test.span"])
    }),
  )

  it.effect("with the built-in tracer (no backend), no span is made and the result is the same", () =>
    Effect.gen(function* () {
      expect(yield* double(21)).toEqual({ value: 42, span: undefined })
    }),
  )

  it.effect("with tracing disabled, no span is made even with a tracer installed", () =>
    Effect.gen(function* () {
      const { names, tracer } = recording()
      const result = yield* Effect.withTracer(double(1), tracer).pipe(
        Effect.provideService(References.TracerEnabled, false),
      )
      expect(result.value).toBe(2)
      expect(names).toEqual([])
    }),
  )

  it.effect("failures pass through, traced or not", () =>
    Effect.gen(function* () {
      const { tracer } = recording()
      expect(yield* Effect.flip(fails("no"))).toBe("no")
      expect(yield* Effect.flip(Effect.withTracer(fails("still no"), tracer))).toBe("still no")
    }),
  )
})
