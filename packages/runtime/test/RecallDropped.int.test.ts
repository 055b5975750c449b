/**
 * What a pivot dropped (issue 31): `context_recall` with `{ pivot: N }` (or nothing: the latest) lists exactly the
 * messages the summariser was given for that pivot (`SummaryRequest.head`, recorded by the stub summariser), in order,
 * with their sizes; each listed id gives its original back; a pivot the session does not have is a recorded miss.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { layer, SESSION, services, stub, tool, used } from "./support/harness.ts"

const turns = (n: number) =>
  Effect.gen(function* () {
    const { cm } = yield* services
    for (let i = 0; i < 2; i++) {
      yield* cm.recordUserMessage(SESSION, { text: `round ${n}.${i}: keep the public API of parser.ts` })
      yield* cm.recordAssistantStep(SESSION, {
        parts: [
          { type: "reasoning" as const, text: `thinking about round ${n}.${i}` },
          tool("read", { filePath: `src/parser${n}${i}.ts` }, `export const parse${n}${i} = () => ${n * 10 + i}\n`),
          tool("bash", { command: `npm test -- ${n}${i}` }, `PASS ${n}${i}`),
        ],
        usage: used(1_000 * n + i),
        finish: "tool-calls",
      })
      yield* cm.recordAssistantStep(SESSION, {
        parts: [{ type: "text" as const, text: `done with round ${n}.${i}` }],
        usage: used(1_000 * n + i + 1),
        finish: "stop",
      })
    }
  })

describe("context_recall lists what a pivot dropped", () => {
  it("given 3 pivots, then each list is the summariser's input for it, in order, and {} lists the latest", async () => {
    const summarizer = stub("summary")
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const { cm } = yield* services
        for (const n of [1, 2, 3]) {
          yield* turns(n)
          yield* cm.compact(SESSION)
        }
        const lists = yield* Effect.forEach([1, 2, 3], (pivot) => cm.recall(SESSION, { pivot }))
        const latest = yield* cm.recall(SESSION, {})
        const missing = yield* cm.recall(SESSION, { pivot: 4 })
        const ids = lists.flatMap((l) => [...l.text.matchAll(/\b(prt_[\w-]+(?:-input)?) \(/g)].map((m) => m[1]!))
        const originals = yield* Effect.forEach(ids, (id) => cm.recall(SESSION, { id }))
        return { lists, latest, missing, ids, originals }
      }).pipe(Effect.provide(layer({ summarizer, options: { recall: true } }))) as Effect.Effect<any, never>,
    )
    expect(summarizer.requests).toHaveLength(3)
    for (const [i, list] of out.lists.entries()) {
      const head = summarizer.requests[i]!.head
      expect(head.length).toBeGreaterThan(0)
      expect(list.found).toEqual(head.map((m: { id: string }) => m.id))
      expect(list.text.split("\n")[0]).toMatch(
        new RegExp(`^Pivot #${i + 1} \\(summary msg_\\w+\\) summarised ${head.length} messages, `),
      )
      for (const m of head) expect(list.text).toContain(`- ${m.id} (${m.role}, `)
    }
    expect(out.lists[0].text).toContain("- files read: src/parser10.ts, src/parser11.ts")
    expect(out.lists[0].text).toContain("- commands: npm test -- 10, npm test -- 11")
    expect(out.latest.text).toBe(out.lists[2].text)
    expect(out.missing.text).toBe("No pivot #4: the session has 3 pivots (1 to 3).")
    expect(out.missing.found).toEqual([])
    // Every id a list names gives an original back (none is unknown).
    expect(out.ids.length).toBeGreaterThan(10)
    for (const o of out.originals) expect(o.found).toHaveLength(1)
  })
})
