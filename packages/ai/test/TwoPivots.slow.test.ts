// Issue 18 item 6: `createPivot` twice on one SQLite file in one process. Each opens its own store layer (its own
// connection); a wait for the other's lock must never block the event loop both share (ADR 0014). Slow lane: 1,000
// pairs of turns through the whole stack (read models included).
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { MockLanguageModelV4 } from "ai/test"
import { afterAll, describe, expect, it } from "vitest"
import { createPivot } from "../src/index.ts"

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-two-pivots-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

const LIMITS = { context: 100_000, output: 8_000 }
const step = (text: string) =>
  ({
    content: [{ type: "text", text }],
    finishReason: "stop",
    usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 },
  }) as unknown as Parameters<Awaited<ReturnType<typeof createPivot>>["record"]>[0]

describe("two createPivot on one SQLite file in one process", () => {
  it("given 1,000 pairs of turns interleaved between them, then none fails and each pivot reads back every turn of the other", async () => {
    const store = Path.join(dir, "pivot.db")
    const model = new MockLanguageModelV4()
    const a = await createPivot({ model, store, limits: LIMITS, session: "a", summarizer: false })
    const b = await createPivot({ model, store, limits: LIMITS, session: "b", summarizer: false })
    try {
      const failures: Array<string> = []
      const turn = async (pivot: typeof a, session: string, i: number) => {
        const handle = pivot.session(session)
        await handle.user(`question ${i}`)
        await handle.record(step(`answer ${i}`))
      }
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(
          Array.from({ length: 100 }, (_, j) => batch * 100 + j).flatMap((i) => [
            turn(a, `a${i % 7}`, i).catch((e: unknown) => failures.push(String(e))),
            turn(b, `b${i % 7}`, i).catch((e: unknown) => failures.push(String(e))),
          ]),
        )
      }
      expect(failures).toEqual([])
      // Written by one, read by the other: each session holds its user messages and answers.
      let messages = 0
      for (let s = 0; s < 7; s++) {
        messages += (await a.session(`b${s}`).messages()).length
        messages += (await b.session(`a${s}`).messages()).length
      }
      expect(messages).toBe(4_000)
    } finally {
      await a.close()
      await b.close()
    }
  }, 600_000)
})
