import { Message, Prune } from "@pivot/core"
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { sessionArb } from "./support/arbitraries.ts"
import { RUNS } from "./support/runs.ts"

const decode = Schema.decodeUnknownSync(Schema.Array(Message.Message))

describe("test/support/arbitraries sessionArb", () => {
  it("generated sessions decode as messages, with unique ascending ids and parents pointing at the previous user", () => {
    fc.assert(
      fc.property(sessionArb(), (messages) => {
        expect(() => decode(messages)).not.toThrow()
        const ids = messages.map((m) => m.id)
        expect(ids).toEqual([...new Set(ids)].sort())
        const partIds = messages.flatMap((m) => m.parts.map((p) => p.id))
        expect(partIds).toEqual([...new Set(partIds)].sort())
        let lastUser: string | undefined
        for (const message of messages) {
          if (message.role === "user") lastUser = message.id
          else expect(message.parentId).toBe(lastUser)
        }
        for (const message of messages) {
          const tail = Message.compactionPartOf(message)?.tailStartId
          if (tail !== undefined) expect(ids.indexOf(tail)).toBeLessThan(ids.indexOf(message.id))
        }
      }),
      RUNS,
    )
  })

  it("generated sessions are rich enough: prune selects something in many, and they hold every ingredient", () => {
    const sample = fc.sample(sessionArb(), { numRuns: 500, seed: 20_260_715 })
    const pruning = sample.filter((messages) => Prune.select(messages).parts.length > 0).length
    expect(pruning / sample.length).toBeGreaterThan(0.2)
    const all = sample.flat()
    const tools = all.flatMap((m) => (m.role === "assistant" ? m.parts.filter((p) => p.type === "tool") : []))
    for (const status of ["pending", "running", "completed", "error"]) {
      expect(tools.some((t) => t.state.status === status)).toBe(true)
    }
    expect(tools.some((t) => t.tool === "skill")).toBe(true)
    expect(tools.some((t) => t.state.status === "completed" && t.state.compactedAt !== undefined)).toBe(true)
    expect(all.some((m) => Message.isFinishedSummary(m))).toBe(true)
    expect(all.some((m) => m.role === "assistant" && m.summary === true && m.error !== undefined)).toBe(true)
    expect(all.some((m) => m.role === "assistant" && m.summary === true && m.finish === undefined)).toBe(true)
    expect(
      all.some((m) => m.role === "user" && m.parts.some((p) => p.type === "file" && p.mime.startsWith("image/"))),
    ).toBe(true)
    expect(all.some((m) => Message.compactionPartOf(m)?.tailStartId !== undefined)).toBe(true)
  })
})
