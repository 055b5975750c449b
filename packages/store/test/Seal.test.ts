// The crypto-shredding codec on its own: what opens, what reads as erased, and what is corruption.
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import * as Seal from "../src/internal/seal.ts"

const key = Seal.newKey()
const data = { text: "hunter2 is the password", n: 1, list: ["a", ""], deep: { x: ["y"] } }
const sealed = Seal.sealData(data, [["text"], ["list", "*"], ["deep"]], key, "s") as typeof data
const open = (value: unknown, k: Seal.StreamKey | undefined, stream = "s") =>
  Effect.runSyncExit(Seal.unsealData(value, k, stream, "test"))

describe("Seal", () => {
  it("given sealed fields, then strings become envelopes (empty ones stay), numbers and other fields stay", () => {
    expect(sealed.text).toMatch(/^pivot:sealed:v1:[0-9a-f]{32}:/)
    expect(sealed.text).not.toContain("hunter2")
    expect(sealed.list[1]).toBe("")
    expect(sealed.n).toBe(1)
    expect(data.text).toBe("hunter2 is the password") // the input is not mutated
    // A fresh IV per field: the same text seals differently each time.
    expect((Seal.sealData(data, [["text"]], key, "s") as typeof data).text).not.toBe(sealed.text)
  })

  it("given the stream's key, then every envelope opens to its plain value", () => {
    expect(open(sealed, key)).toEqual(Exit.succeed(data))
  })

  it("given no key, or a newer key of the stream, then every envelope reads as ERASED", () => {
    const erased = { text: Seal.ERASED, n: 1, list: [Seal.ERASED, ""], deep: { x: [Seal.ERASED] } }
    expect(open(sealed, undefined)).toEqual(Exit.succeed(erased))
    expect(open(sealed, Seal.newKey())).toEqual(Exit.succeed(erased))
  })

  it("given a tampered ciphertext, or an envelope moved to another stream, then StoreCorrupt (never silently erased)", () => {
    const last = sealed.text.at(-1) === "A" ? "B" : "A"
    const tampered = { ...sealed, text: `${sealed.text.slice(0, -1)}${last}` }
    const failure = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? "failed" : "opened")
    expect(failure(open(tampered, key))).toBe("failed")
    expect(failure(open(sealed, key, "other-stream"))).toBe("failed")
  })

  it("given strings that only look like envelopes, then they are left as they are", () => {
    const text = { a: "pivot:sealed:v1:not-an-envelope", b: "pivot:sealed:v1:", c: "plain" }
    expect(open(text, key)).toEqual(Exit.succeed(text))
    expect(Seal.mayBeSealed(JSON.stringify({ c: "plain" }))).toBe(false)
  })
})
