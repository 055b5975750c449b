import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Facts from "../src/Facts.ts"
import type { AssistantPart, Message, ToolPart } from "../src/Message.ts"
import { assistant, partId, tool, user } from "./support/arbitraries.ts"
import { RUNS } from "./support/runs.ts"

const errored = (
  id: string,
  name: string,
  input: Record<string, unknown>,
  error: string,
  metadata?: object,
): ToolPart => ({
  type: "tool",
  id: partId(id),
  callId: `call_${id}`,
  tool: name,
  state: { status: "error", input, error, ...(metadata === undefined ? {} : { metadata: { ...metadata } }) },
})

const open = (id: string, name: string, input: Record<string, unknown>, status: "pending" | "running"): ToolPart => ({
  type: "tool",
  id: partId(id),
  callId: `call_${id}`,
  tool: name,
  state: { status, input },
})

/** A small, realistic session: read, a failing test run, an edit, a passing run, a search, a patch. */
const fixSession: ReadonlyArray<Message> = [
  user(1, "The test in test/math.test.ts fails. Fix src/math.ts. Do not change the public API."),
  assistant(
    2,
    1,
    [
      { type: "step-start", id: partId("prt_s1") },
      tool(3, "read", "export const add = (a, b) => a - b", { input: { filePath: "src/math.ts" } }),
      tool(4, "read", "expect(add(1, 2)).toBe(3)", { input: { filePath: "test/math.test.ts" } }),
      tool(5, "bash", "FAIL test/math.test.ts > add\nAssertionError: expected -1 to be 3", {
        input: { command: "npm test -- test/math.test.ts", description: "run the test" },
        metadata: { exit: 1 },
      }),
      errored("prt_missing", "read", { filePath: "src/missing.ts" }, "File not found: src/missing.ts"),
    ],
    { finish: "tool-calls" },
  ),
  assistant(
    6,
    1,
    [
      tool(7, "edit", "Edit applied successfully.", {
        input: { filePath: "src/math.ts", oldString: "a - b", newString: "a + b" },
      }),
      tool(8, "bash", "PASS test/math.test.ts", {
        input: { command: "npm test -- test/math.test.ts" },
        metadata: { exit: 0 },
      }),
      tool(9, "grep", "src/math.ts:1", { input: { pattern: "add\\(", path: "src" } }),
      tool(10, "apply_patch", "Success", {
        input: {
          patchText:
            "*** Begin Patch\n*** Update File: README.md\n@@\n-old\n+new\n*** Add File: docs/math.md\n+# Math\n*** End Patch",
        },
      }),
      tool(11, "write", "Wrote file", { input: { filePath: "CHANGELOG.md", content: "- fix add" } }),
    ],
    { finish: "stop" },
  ),
]

describe("Facts.facts", () => {
  it("given a small session, when facts are taken, then paths and commands are exact, unique and in first-seen order", () => {
    const result = Facts.facts(fixSession)
    expect(result.filesRead).toEqual(["src/math.ts", "test/math.test.ts", "src"])
    expect(result.filesEdited).toEqual(["src/math.ts", "README.md", "docs/math.md", "CHANGELOG.md"])
    expect(result.commands).toEqual([{ command: "npm test -- test/math.test.ts", failed: false, exitCode: 0 }])
    expect(result.errors).toEqual(["read: File not found: src/missing.ts"])
  })

  it("given a command that passed then failed, when facts are taken, then it appears once with its latest outcome", () => {
    const messages = [
      user(1, "run it"),
      assistant(2, 1, [
        tool(3, "bash", "ok", { input: { command: "make" }, metadata: { exit: 0 } }),
        tool(4, "bash", "boom", { input: { command: "make" }, metadata: { exit: 2 } }),
      ]),
    ]
    expect(Facts.facts(messages).commands).toEqual([{ command: "make", failed: true, exitCode: 2 }])
  })

  it("given a command that errored without an exit code, when facts are taken, then it failed with no exit code", () => {
    const messages = [assistant(2, 1, [errored("e", "bash", { cmd: "cargo build" }, "timed out after 120000 ms")])]
    const result = Facts.facts(messages)
    expect(result.commands).toEqual([{ command: "cargo build", failed: true }])
    expect(result.errors).toEqual(["bash: timed out after 120000 ms"])
  })

  it("given pending, running and interrupted calls, when facts are taken, then none counts as done or as an error", () => {
    const messages = [
      assistant(2, 1, [
        open("a", "read", { filePath: "a.ts" }, "pending"),
        open("b", "edit", { filePath: "b.ts" }, "running"),
        open("c", "bash", { command: "sleep 100" }, "running"),
        errored("d", "bash", { command: "npm run dev" }, "Tool execution aborted", { interrupted: true }),
      ]),
    ]
    const result = Facts.facts(messages)
    expect(result.filesRead).toEqual([])
    expect(result.filesEdited).toEqual([])
    expect(result.commands).toEqual([{ command: "npm run dev", failed: true }])
    expect(result.errors).toEqual([])
  })

  it("given a failed model call, when facts are taken, then its error is listed but an abort is not", () => {
    const messages = [
      assistant(2, 1, [], { error: { name: "APIError", message: "Internal server error\nstack…" } }),
      assistant(3, 1, [], { error: { name: "MessageAbortedError", message: "aborted" } }),
    ]
    expect(Facts.facts(messages).errors).toEqual(["APIError: Internal server error"])
  })

  it("given more distinct paths than the bound, when facts are taken, then the most recently seen are kept in order", () => {
    const parts: Array<AssistantPart> = []
    for (let i = 0; i < 60; i++) parts.push(tool(`r${i}`, "read", "x", { input: { filePath: `src/f${i}.ts` } }))
    // f0 is seen again last, so it is among the newest.
    parts.push(tool("again", "read", "x", { input: { filePath: "src/f0.ts" } }))
    const result = Facts.facts([assistant(2, 1, parts)])
    expect(result.filesRead).toHaveLength(Facts.MAX_ENTRIES)
    expect(result.filesRead[0]).toBe("src/f0.ts")
    expect(result.filesRead[1]).toBe("src/f11.ts")
    expect(result.filesRead.at(-1)).toBe("src/f59.ts")
  })

  it("given tool inputs of the wrong type, when facts are taken, then they are ignored without throwing", () => {
    const messages = [
      assistant(2, 1, [
        tool(3, "read", "x", { input: { filePath: 42 } }),
        tool(4, "bash", "x", { input: { command: ["ls"] } }),
        tool(5, "edit", "x", { input: {} }),
      ]),
    ]
    expect(Facts.facts(messages)).toEqual(Facts.empty)
  })
})

describe("Facts.patchPaths", () => {
  it("given OpenCode and unified patches, when read, then every touched path is listed in order", () => {
    const patch = [
      "*** Begin Patch",
      "*** Update File: src/a.ts",
      "*** Move to: src/b.ts",
      "*** Delete File: old.txt",
      "--- a/lib/c.ts",
      "+++ b/lib/c.ts",
      "--- /dev/null",
      "+++ /dev/null",
    ].join("\n")
    expect(Facts.patchPaths(patch)).toEqual(["src/a.ts", "src/b.ts", "old.txt", "lib/c.ts"])
  })
})

describe("Facts.factsBlock", () => {
  it("given facts, when rendered, then the block has its headings, code spans and outcomes", () => {
    const block = Facts.factsBlock(Facts.facts(fixSession))
    expect(block).toBe(
      [
        "## Facts (from the log)",
        "### Files read",
        "- `src/math.ts`",
        "- `test/math.test.ts`",
        "- `src`",
        "### Files edited",
        "- `src/math.ts`",
        "- `README.md`",
        "- `docs/math.md`",
        "- `CHANGELOG.md`",
        "### Commands",
        "- `npm test -- test/math.test.ts` — ok (exit 0)",
      ].join("\n"),
    )
  })

  it("given empty facts, when rendered, then every list says (none)", () => {
    expect(Facts.factsBlock(Facts.empty)).toBe(
      [
        "## Facts (from the log)",
        "### Files read",
        "(none)",
        "### Files edited",
        "(none)",
        "### Commands",
        "(none)",
      ].join("\n"),
    )
  })

  it("given a command with backticks and line breaks, when rendered, then it stays one code span on one line", () => {
    const block = Facts.factsBlock({ ...Facts.empty, commands: [{ command: "echo `date`\necho done", failed: true }] })
    expect(block).toContain("- ``echo `date` ⏎ echo done`` — failed")
  })

  it("given huge facts, when rendered, then the block is bounded and counts what it left out", () => {
    const many = (prefix: string) => Array.from({ length: 50 }, (_, i) => `${prefix}/${"d".repeat(150)}/${i}.ts`)
    const huge: Facts.Facts = {
      filesRead: many("read"),
      filesEdited: many("edit"),
      commands: many("cmd").map((command) => ({ command, failed: false })),
      errors: [],
    }
    const block = Facts.factsBlock(huge)
    expect(block.length).toBeLessThanOrEqual(Facts.BLOCK_MAX_CHARS)
    expect(block).toMatch(/^- … and \d+ more$/m)
    // The newest entries are the ones kept.
    expect(block).toContain(`read/${"d".repeat(150)}/49.ts`)
    expect(block).not.toContain(`read/${"d".repeat(150)}/0.ts`)
  })
})

describe("Facts.parse, merge and withBlock", () => {
  it("given a summary that ends with a facts block, when parsed, then the facts come back", () => {
    const value = Facts.facts(fixSession)
    const summary = `## Objective\n- fix it\n\n${Facts.factsBlock(value)}`
    expect(Facts.parse(summary)).toEqual({ ...value, errors: [] })
  })

  it("given a summary without a facts block, when parsed, then it has no facts", () => {
    expect(Facts.parse("## Objective\n- fix it")).toEqual(Facts.empty)
  })

  it("given older and newer facts, when merged, then entries are unique, in first-seen order, with the newest outcome", () => {
    const older: Facts.Facts = {
      filesRead: ["a.ts", "b.ts"],
      filesEdited: ["a.ts"],
      commands: [{ command: "npm test", failed: true, exitCode: 1 }],
      errors: ["bash: boom"],
    }
    const newer: Facts.Facts = {
      filesRead: ["b.ts", "c.ts"],
      filesEdited: ["c.ts"],
      commands: [
        { command: "npm run build", failed: false },
        { command: "npm test", failed: false, exitCode: 0 },
      ],
      errors: ["bash: boom"],
    }
    expect(Facts.merge(older, newer)).toEqual({
      filesRead: ["a.ts", "b.ts", "c.ts"],
      filesEdited: ["a.ts", "c.ts"],
      commands: [
        { command: "npm test", failed: false, exitCode: 0 },
        { command: "npm run build", failed: false },
      ],
      errors: ["bash: boom"],
    })
  })

  it("given a summary with an old facts block and text after it, when given a new block, then only the new block remains", () => {
    const summary = `## Objective\n- x\n\n${Facts.factsBlock({ ...Facts.empty, filesRead: ["old.ts"] })}\n\n## Notes\n- y`
    const updated = Facts.withBlock(summary, { ...Facts.empty, filesRead: ["new.ts"] })
    expect(updated.match(/## Facts \(from the log\)/g)).toHaveLength(1)
    expect(updated).not.toContain("old.ts")
    expect(updated).toContain("## Notes\n- y")
    expect(updated.endsWith("- `new.ts`\n### Files edited\n(none)\n### Commands\n(none)")).toBe(true)
  })

  const lineArb = fc
    .string({ minLength: 1, maxLength: 60 })
    .map((s) => s.replace(/\s+/g, " ").trim())
    .filter((s) => s !== "")
  const factsArb: fc.Arbitrary<Facts.Facts> = fc.record({
    filesRead: fc.uniqueArray(lineArb, { maxLength: 8 }),
    filesEdited: fc.uniqueArray(lineArb, { maxLength: 8 }),
    commands: fc.uniqueArray(
      fc
        .record({
          command: lineArb,
          failed: fc.boolean(),
          exitCode: fc.option(fc.integer({ min: -5, max: 255 }), { nil: undefined }),
        })
        .map(
          ({ command, failed, exitCode }): Facts.Command =>
            exitCode === undefined ? { command, failed } : { command, failed, exitCode },
        ),
      { maxLength: 8, selector: (c) => c.command },
    ),
    errors: fc.constant([]),
  })

  it("parse(factsBlock(facts)) gives back the facts for single-line entries that fit the block", () => {
    fc.assert(
      fc.property(factsArb, (value) => {
        expect(Facts.parse(Facts.factsBlock(value, 100_000))).toEqual(value)
      }),
      RUNS,
    )
  })
})
