import { describe, expect, it } from "vitest"
import * as Prompt from "../src/Prompt.ts"

describe("Prompt.buildPrompt (§2.10)", () => {
  it("V1 given plugin context, when the prompt is built, then it holds the work-state sections and relevant files", () => {
    const prompt = Prompt.buildPrompt({ context: ["conversation history"] })
    expect(prompt).toContain("## Work State\n### Completed")
    expect(prompt).toContain("### Active")
    expect(prompt).toContain("### Blocked")
    expect(prompt).toContain("## Relevant Files")
  })

  it("given no previous summary, when built, then it is [new anchor, TEMPLATE, ...context] joined by blank lines", () => {
    const prompt = Prompt.buildPrompt({ context: ["one", "two"] })
    expect(prompt).toBe([Prompt.anchor(), Prompt.TEMPLATE, "one", "two"].join("\n\n"))
    expect(prompt).not.toContain("<previous-summary>")
  })

  it("given a previous summary, when built, then the anchor wraps it in a previous-summary block, once", () => {
    const prompt = Prompt.buildPrompt({ previousSummary: "summary one", context: [] })
    expect(prompt).toBe([Prompt.anchor("summary one"), Prompt.TEMPLATE].join("\n\n"))
    expect(prompt).toContain("<previous-summary>\nsummary one\n</previous-summary>")
    expect(prompt.split("summary one")).toHaveLength(2)
    expect(Prompt.anchor("summary one")).toMatch(/update/i)
  })

  it("given the template, when its headings are read, then they are exactly the required structure in order", () => {
    const headings = Prompt.TEMPLATE.split("\n").filter((line) => line.startsWith("#"))
    expect(headings).toEqual([
      "## Objective",
      "## Important Details",
      "## Work State",
      "### Completed",
      "### Active",
      "### Blocked",
      "## Next Move",
      "## Relevant Files",
    ])
  })

  it("given the template, when read, then it asks to keep empty sections, number next moves and list files with reasons", () => {
    expect(Prompt.TEMPLATE).toContain("(none)")
    expect(Prompt.TEMPLATE).toMatch(/## Next Move\n1\. /)
    expect(Prompt.TEMPLATE).toMatch(/## Relevant Files\n- path: why it matters/)
    expect(Prompt.TEMPLATE).toMatch(/never reproduce secrets or credentials/i)
    expect(Prompt.TEMPLATE).toMatch(/never mention that the context was compacted/i)
  })
})

describe("Prompt.SYSTEM_PROMPT (§2.10)", () => {
  const points: ReadonlyArray<readonly [string, RegExp]> = [
    [
      "summarises only the given history; newest turns may be kept verbatim",
      /summarise only the history you are given/i,
    ],
    ["the kept turns", /newest turns may be kept word for word/i],
    ["updates a previous summary instead of repeating it", /<previous-summary>[\s\S]*update[\s\S]*do not repeat/i],
    ["keeps every section", /keep every section/i],
    ["preserves exact paths and identifiers", /preserve exact file paths[^.]*identifiers/i],
    ["terse bullets", /terse bullets/i],
    ["never answers the conversation", /never answer/i],
    ["never mentions summarising", /never mention that you are summarising/i],
    ["the conversation's language", /language the conversation uses/i],
    ["never reproduces secrets", /never reproduce secrets or credentials/i],
  ]
  for (const [point, pattern] of points)
    it(`given the compaction agent's system prompt, then it says: ${point}`, () => {
      expect(Prompt.SYSTEM_PROMPT).toMatch(pattern)
    })
})

describe("Prompt continue and error texts (§2.8 steps 11 and 13)", () => {
  it("C4 given an auto compaction without overflow, when continuing, then the text is exactly OpenCode's", () => {
    expect(Prompt.continueText(false)).toBe(
      "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.",
    )
  })

  it("C12 given an overflow compaction, when continuing, then the media explanation comes first", () => {
    const text = Prompt.continueText(true)
    expect(text).toBe(Prompt.OVERFLOW_PREFIX + Prompt.CONTINUE_TEXT)
    expect(text).toContain("previous request exceeded the provider's size limit")
    expect(Prompt.OVERFLOW_PREFIX.endsWith("smaller or fewer files.\n\n")).toBe(true)
  })

  it("C3 given the summariser overflowed, when the error is written, then it names the right case", () => {
    expect(Prompt.tooLargeMessage(false)).toBe(
      "Session too large to compact - context exceeds model limit even after stripping media",
    )
    expect(Prompt.tooLargeMessage(true)).toBe("Conversation history too large to compact - exceeds model context limit")
  })
})
