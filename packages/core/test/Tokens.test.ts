import { Tokens } from "@pivot/core"
import { describe, expect, it } from "vitest"

describe("Tokens.estimate", () => {
  it("T1 estimate of 4000 chars is 1000", () => expect(Tokens.estimate("x".repeat(4000))).toBe(1000))
})
