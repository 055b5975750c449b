/** Described tool outputs expand deterministically into realistic text of the stated size. */

import { describe, expect, it } from "vitest"
import { defaultStyle, expand } from "../src/demo/Expand.ts"

describe("expand", () => {
  it("given the same description twice, then the same text (no Math.random)", () => {
    const spec = { lines: 300, sample: "export function route() {" }
    expect(expand("read", { filePath: "src/router.ts" }, spec)).toBe(
      expand("read", { filePath: "src/router.ts" }, spec),
    )
  })

  it("given a read, then exactly `lines` numbered file lines, framed, starting with the sample", () => {
    const text = expand("read", { filePath: "src/router.ts" }, { lines: 1_800, sample: "export function route(...)" })
    const lines = text.split("\n")
    expect(lines.length).toBe(1_800 + 3)
    expect(lines[0]).toBe('<file path="src/router.ts">')
    expect(lines[1]).toBe("00001| export function route(...)")
    expect(lines[1_800]).toMatch(/^01800\| /)
    expect(lines.at(-2)).toBe("(End of file - total 1800 lines)")
  })

  it("given another tool, then exactly `lines` lines ending with the tail", () => {
    for (const style of ["code", "prose", "matches", "paths", "log", "tests"] as const) {
      const text = expand("bash", { command: "npm test" }, { lines: 120, sample: "first", tail: "x\nlast", style })
      const lines = text.split("\n")
      expect(lines.length).toBe(120)
      expect(lines[0]).toBe("first")
      expect(lines.at(-1)).toBe("last")
    }
  })

  it("given different inputs, then different text", () => {
    const spec = { lines: 50 }
    expect(expand("read", { filePath: "a.ts" }, spec)).not.toBe(expand("read", { filePath: "b.ts" }, spec))
  })

  it("picks a style from the tool: Markdown reads are prose", () => {
    expect(defaultStyle("read", { filePath: "src/a.ts" })).toBe("code")
    expect(defaultStyle("read", { filePath: "docs/a.md" })).toBe("prose")
    expect(defaultStyle("grep")).toBe("matches")
    expect(defaultStyle("glob")).toBe("paths")
    expect(defaultStyle("bash")).toBe("log")
  })
})

describe("expand, diff style", () => {
  it("given a described diff, then a unified diff of exactly that many lines, starting with the sample", () => {
    const text = expand(
      "bash",
      { command: "git diff main...HEAD" },
      { lines: 120, style: "diff", sample: "diff --git a/x b/x" },
    )
    const lines = text.split("\n")
    expect(lines).toHaveLength(120)
    expect(lines[0]).toBe("diff --git a/x b/x")
    expect(lines.some((l) => /^@@ -\d+,\d+ \+\d+,\d+ @@$/.test(l))).toBe(true)
    expect(lines.filter((l) => /^[ +-]/.test(l)).length).toBeGreaterThan(60)
  })
})
