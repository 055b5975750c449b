// A model-based property: for any sequence of appends, a store answers exactly as a plain list model predicts.
import { Effect, type Layer, Result, Stream } from "effect"
import fc from "fast-check"
import { EventStore, type ExpectedVersion, expectedVersionMatches, type ReadError } from "../src/index.ts"

interface Command {
  readonly stream: number
  readonly expected: ExpectedVersion
  readonly count: number
  /** Reuse the id of an earlier event (index into all ids generated so far), to provoke DuplicateEventId. */
  readonly reuse: number | undefined
}

const command: fc.Arbitrary<Command> = fc.record({
  stream: fc.nat({ max: 2 }),
  expected: fc.oneof(fc.constantFrom<ExpectedVersion>("any", "no-stream", "stream-exists"), fc.nat({ max: 4 })),
  count: fc.nat({ max: 3 }),
  reuse: fc.option(fc.nat({ max: 20 }), { nil: undefined, freq: 5 }),
})

/** Commands for the property. */
export const commands = fc.array(command, { maxLength: 12 })

/** Runs the commands against a fresh store and the model; resolves to nothing, or throws on the first difference. */
export const agreesWithModel = (layer: Layer.Layer<EventStore, ReadError>, cmds: ReadonlyArray<Command>) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const streams = new Map<string, Array<string>>()
    const log: Array<string> = []
    const generated: Array<string> = []
    let fresh = 0
    for (const cmd of cmds) {
      const stream = `s${cmd.stream}`
      const ids = Array.from({ length: cmd.count }, () => `e${fresh++}`)
      if (cmd.reuse !== undefined && ids.length > 0 && generated.length > 0) {
        ids[ids.length - 1] = generated[cmd.reuse % generated.length]!
      }
      generated.push(...ids)
      const current = streams.get(stream) ?? []
      const stored = new Set(log)
      const result = yield* Effect.result(
        store.append(
          stream,
          cmd.expected,
          ids.map((id) => ({ id, type: "T", version: 1, data: { id } })),
        ),
      )
      const duplicates = ids.filter((id, i) => stored.has(id) || ids.indexOf(id) !== i)
      let want: unknown
      if (duplicates.length > 0) want = { _tag: "DuplicateEventId" }
      else if (!expectedVersionMatches(cmd.expected, current.length))
        want = { _tag: "WrongExpectedVersion", actual: current.length }
      else {
        streams.set(stream, [...current, ...ids])
        log.push(...ids)
        want = { streamVersion: current.length + ids.length }
      }
      const got = Result.isSuccess(result) ? result.success : result.failure
      for (const [key, value] of Object.entries(want as object)) {
        if ((got as any)[key] !== value) {
          throw new Error(`append ${JSON.stringify(cmd)} → ${JSON.stringify(got)}, model says ${JSON.stringify(want)}`)
        }
      }
    }
    const all = (yield* Stream.runCollect(store.readAll({ pageSize: 3 }))).map((e) => e.id)
    if (JSON.stringify(all) !== JSON.stringify(log)) throw new Error(`log ${all} ≠ model ${log}`)
    for (const [stream, ids] of streams) {
      const read = (yield* store.read(stream)).map((e) => e.id)
      if (JSON.stringify(read) !== JSON.stringify(ids)) throw new Error(`${stream}: ${read} ≠ model ${ids}`)
    }
  }).pipe(Effect.provide(layer))
