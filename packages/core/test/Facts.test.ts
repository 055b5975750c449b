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

describe("Facts: the tool names, input keys and bounds it reads by", () => {
  const one = (part: ToolPart) => Facts.facts([assistant(1, 0, [part])])

  it.each([...Facts.READ_TOOLS])("given a completed %s call, then its path is a file read", (name) => {
    expect(one(tool(1, name, "x", { input: { path: "a.ts" } })).filesRead).toEqual(["a.ts"])
  })

  it.each([...Facts.EDIT_TOOLS])("given a completed %s call, then its path is a file edited", (name) => {
    expect(one(tool(1, name, "x", { input: { filePath: "a.ts" } })).filesEdited).toEqual(["a.ts"])
  })

  it.each([...Facts.COMMAND_TOOLS])("given a completed %s call, then its command is a command run", (name) => {
    expect(one(tool(1, name, "x", { input: { command: "make" } })).commands).toEqual([
      { command: "make", failed: false },
    ])
  })

  it("given a tool of none of the three kinds, then it adds nothing", () => {
    expect(one(tool(1, "webfetch", "x", { input: { path: "a.ts", command: "make" } }))).toEqual(Facts.empty)
  })

  it.each(["filePath", "file_path", "path", "file", "filename", "target"])(
    "given the path under %s, then it is read",
    (key) => {
      expect(one(tool(1, "read", "x", { input: { [key]: "  src/a.ts  " } })).filesRead).toEqual(["src/a.ts"])
    },
  )

  it.each(["command", "cmd", "script"])("given the command under %s, then it is read", (key) => {
    expect(one(tool(1, "bash", "x", { input: { [key]: " ls -la " } })).commands[0]?.command).toBe("ls -la")
  })

  it("given a blank path key, then the next key is read; given only blanks, nothing", () => {
    expect(one(tool(1, "read", "x", { input: { filePath: "   ", path: "b.ts" } })).filesRead).toEqual(["b.ts"])
    expect(one(tool(1, "read", "x", { input: { filePath: " " } })).filesRead).toEqual([])
  })

  it.each(["exit", "exitCode", "exit_code", "code"])("given the exit code under %s, then it is the outcome", (key) => {
    const c = one(tool(1, "bash", "x", { input: { command: "make" }, metadata: { [key]: 2 } })).commands[0]
    expect(c).toEqual({ command: "make", failed: true, exitCode: 2 })
  })

  it("given exit 0, then the command passed; a non-integer exit code is no exit code", () => {
    expect(one(tool(1, "bash", "x", { input: { command: "a" }, metadata: { exit: 0 } })).commands[0]).toEqual({
      command: "a",
      failed: false,
      exitCode: 0,
    })
    expect(one(tool(1, "bash", "x", { input: { command: "a" }, metadata: { exit: 1.5 } })).commands[0]).toEqual({
      command: "a",
      failed: false,
    })
    expect(one(tool(1, "bash", "x", { input: { command: "a" }, metadata: { exit: "1" } })).commands[0]).toEqual({
      command: "a",
      failed: false,
    })
  })

  it("given an edit by patch text under patchText, patch or diff, then every touched path is edited", () => {
    for (const key of ["patchText", "patch", "diff"])
      expect(one(tool(1, "patch", "x", { input: { [key]: "+++ b/x.ts\n+++ y.ts" } })).filesEdited).toEqual([
        "x.ts",
        "y.ts",
      ])
  })

  it("given a path of MAX_ENTRY_CHARS − 1, MAX_ENTRY_CHARS and + 1 characters, then only the longest is cut, to MAX_ENTRY_CHARS", () => {
    const of = (n: number) => one(tool(1, "read", "x", { input: { path: "p".repeat(n) } })).filesRead[0]!.length
    expect(of(Facts.MAX_ENTRY_CHARS - 1)).toBe(Facts.MAX_ENTRY_CHARS - 1)
    expect(of(Facts.MAX_ENTRY_CHARS)).toBe(Facts.MAX_ENTRY_CHARS)
    expect(of(Facts.MAX_ENTRY_CHARS + 1)).toBe(Facts.MAX_ENTRY_CHARS)
    const command = (n: number) =>
      one(tool(1, "bash", "x", { input: { command: "c".repeat(n) } })).commands[0]!.command.length
    expect(command(Facts.MAX_ENTRY_CHARS + 1)).toBe(Facts.MAX_ENTRY_CHARS)
    expect(command(Facts.MAX_ENTRY_CHARS)).toBe(Facts.MAX_ENTRY_CHARS)
  })

  it("given MAX_ENTRIES and MAX_ENTRIES + 1 distinct paths, then all are kept, then the oldest is dropped", () => {
    const reads = (n: number) =>
      Facts.facts([
        assistant(
          1,
          0,
          Array.from({ length: n }, (_, i) => tool(`r${i}`, "read", "x", { input: { path: `f${i}` } })),
        ),
      ]).filesRead
    expect(reads(Facts.MAX_ENTRIES)).toHaveLength(Facts.MAX_ENTRIES)
    expect(reads(Facts.MAX_ENTRIES)[0]).toBe("f0")
    expect(reads(Facts.MAX_ENTRIES + 1)).toHaveLength(Facts.MAX_ENTRIES)
    expect(reads(Facts.MAX_ENTRIES + 1)[0]).toBe("f1")
  })

  it("given a failed tool, then its error names the tool and its first line; an interrupted one is no error", () => {
    const failed = one(errored("e1", "read", { path: "a.ts" }, "\n\n  No   such\tfile \nsecond line"))
    expect(failed.errors).toEqual(["read: No such file"])
    expect(one(errored("e2", "read", { path: "a.ts" }, "stopped", { interrupted: true })).errors).toEqual([])
    expect(one(errored("e3", "read", { path: "a.ts" }, "stopped", { interrupted: false })).errors).toEqual([
      "read: stopped",
    ])
  })

  it("given a model error, then it is listed by name and first line; a name with abort in any case is not", () => {
    const withError = (name: string) =>
      Facts.facts([assistant(1, 0, [], { error: { name, message: "went wrong\nmore" } })]).errors
    expect(withError("APIError")).toEqual(["APIError: went wrong"])
    expect(withError("MessageAbortedError")).toEqual([])
    expect(withError("ABORT")).toEqual([])
  })
})

describe("Facts: text helpers at their bounds", () => {
  it("firstLine: a line of max − 1, max and max + 1 characters; the first non-blank line, spaces collapsed", () => {
    expect(Facts.firstLine("a".repeat(9), 10)).toBe("a".repeat(9))
    expect(Facts.firstLine("a".repeat(10), 10)).toBe("a".repeat(10))
    expect(Facts.firstLine("a".repeat(11), 10)).toBe(`${"a".repeat(9)}…`)
    expect(Facts.firstLine("\n \n  x   y  \nz")).toBe("x y")
    expect(Facts.firstLine("")).toBe("")
    // Only the first 4 × max characters are read.
    expect(Facts.firstLine(`${" ".repeat(35)}\nlate`, 10)).toBe("late") // 40 characters: read whole
    expect(Facts.firstLine(`${" ".repeat(36)}\nlate`, 10)).toBe("lat") // 41: the first 40
    expect(Facts.firstLine(`${" ".repeat(40)}\nlate`, 10)).toBe("")
  })

  it("code: a text of max − 1, max and max + 1 characters; backticks inside and at the edges", () => {
    expect(Facts.code("a".repeat(4), 5)).toBe("`aaaa`")
    expect(Facts.code("a".repeat(5), 5)).toBe("`aaaaa`")
    expect(Facts.code("a".repeat(6), 5)).toBe("`aaaa…`")
    expect(Facts.code("a`b")).toBe("``a`b``")
    expect(Facts.code("a``b`")).toBe("``` a``b` ```")
    expect(Facts.code("`a")).toBe("`` `a ``")
    expect(Facts.code("x\r\n  y")).toBe("`x ⏎ y`")
  })

  it("inline: each kind of line break becomes ⏎, with the spaces around it", () => {
    expect(Facts.inline("a \n b\rc\u2028d\u2029e\r\nf")).toBe("a ⏎ b ⏎ c ⏎ d ⏎ e ⏎ f")
    expect(Facts.inline("no break")).toBe("no break")
  })

  it("newestWithin: each line kept must leave room for the more-line the older ones would need", () => {
    const lines = ["- a", "- bb", "- ccc"]
    // "- ccc" needs 6 plus 15 for "- … and 2 more\n"; then "- bb" needs 5 more plus 15; "- a" needs 4 and no more-line.
    expect(Facts.newestWithin(lines, 26)).toEqual(lines)
    expect(Facts.newestWithin(lines, 25)).toEqual([Facts.moreLine(2), "- ccc"])
    expect(Facts.newestWithin(lines, 21)).toEqual([Facts.moreLine(2), "- ccc"])
    expect(Facts.newestWithin(lines, 20)).toEqual([Facts.moreLine(3)])
    expect(Facts.newestWithin(lines, 0)).toEqual([Facts.moreLine(3)])
    expect(Facts.newestWithin([], 0)).toEqual([])
    expect(Facts.moreLine(2)).toBe("- … and 2 more")
  })

  it("patchPaths: a moved file, /dev/null and blank paths", () => {
    expect(Facts.patchPaths("*** Move to: new.ts\n+++ /dev/null\n+++ b/ \n*** Delete File: old.ts")).toEqual([
      "new.ts",
      "old.ts",
    ])
    expect(Facts.patchPaths("*** Update File: a.ts")).toEqual(["a.ts"])
    expect(Facts.patchPaths("*** Update File: a.ts")).toEqual(["a.ts"])
  })

  it("targetOf: a command for command tools, else a path, else the first patched path", () => {
    expect(Facts.targetOf(tool(1, "bash", "x", { input: { command: "ls", path: "p" } }))).toBe("ls")
    expect(Facts.targetOf(tool(1, "read", "x", { input: { command: "ls", path: "p" } }))).toBe("p")
    expect(Facts.targetOf(tool(1, "patch", "x", { input: { patch: "+++ b/q.ts" } }))).toBe("q.ts")
    expect(Facts.targetOf(tool(1, "patch", "x", { input: {} }))).toBeUndefined()
  })
})

describe("Facts: the block's parse and strip at their edges", () => {
  it("parse reads a negative exit code and an ok command, and stops at the next ## heading", () => {
    const block = [
      Facts.HEADING,
      "### Files read",
      "- `a.ts`",
      "### Files edited",
      "(none)",
      "### Commands",
      "- `make` — failed (exit -2)",
      "- `ls` — ok",
      "## Next",
      "- `ignored.ts`",
    ].join("\n")
    expect(Facts.parse(`summary\n\n${block}`)).toEqual({
      filesRead: ["a.ts"],
      filesEdited: [],
      commands: [
        { command: "make", failed: true, exitCode: -2 },
        { command: "ls", failed: false },
      ],
      errors: [],
    })
  })

  it("strip keeps the text before the block and the section after it; a summary without a block is unchanged", () => {
    expect(Facts.strip(`Intro.\n\n${Facts.HEADING}\n### Files read\n(none)\n## Notes\nkeep`)).toBe(
      "Intro.\n\n## Notes\nkeep",
    )
    expect(Facts.strip(`Intro.  \n\n${Facts.HEADING}\n### Files read\n(none)`)).toBe("Intro.")
    expect(Facts.strip("No block.")).toBe("No block.")
    expect(Facts.withBlock("", Facts.empty)).toBe(Facts.factsBlock(Facts.empty))
    expect(Facts.withBlock("Body", Facts.empty)).toBe(`Body\n\n${Facts.factsBlock(Facts.empty)}`)
  })
})

describe("Facts.factsBlock: the budget, exactly", () => {
  // The block's room is maxChars minus the headings (68 characters with their line breaks) and three "(none)" lines
  // (21): at maxChars 1,089 the room is 1,000, so files read get 300 characters, files edited 300, commands 400.
  const commands: ReadonlyArray<Facts.Command> = Array.from({ length: 10 }, (_, i) => ({
    command: `cmd-${String(i).padStart(2, "0")}-${"x".repeat(23)}`, // a 39-character line: 400 with the breaks
    failed: false,
  }))
  const read = Array.from({ length: 10 }, (_, i) => `path-${String(i).padStart(2, "0")}-${"y".repeat(17)}`) // 29 + 1
  const facts: Facts.Facts = { filesRead: read, filesEdited: [], commands, errors: [] }

  it("given lists that fill their shares exactly, then at 1,089 characters nothing is left out, at 1,088 one entry of each", () => {
    expect(Facts.HEADING.length + Facts.SUBHEADINGS.reduce((n, h) => n + h.length + 1, 0)).toBe(68)
    const fits = Facts.factsBlock(facts, 1_089)
    expect(fits).not.toContain("more")
    expect(fits).toBe(Facts.factsBlock(facts, 1_000_000))
    const tight = Facts.factsBlock(facts, 1_088).split("\n")
    expect(tight.filter((l) => l === Facts.moreLine(1))).toHaveLength(2)
    expect(tight).not.toContain(`- ${Facts.code(read[0]!)}`)
    expect(tight).toContain(`- ${Facts.code(read[1]!)}`)
    expect(Facts.factsBlock(facts, 1_088).length).toBeLessThanOrEqual(1_088)
  })
})

describe("Facts.parse and strip: the lines they skip", () => {
  it("an indented entry is not an entry; a command line without an outcome is a command that did not fail", () => {
    const block = [Facts.HEADING, "### Files read", "  - `indented.ts`", "### Commands", "- `odd` trailing text"].join(
      "\n",
    )
    expect(Facts.parse(block)).toEqual({
      filesRead: [],
      filesEdited: [],
      commands: [{ command: "odd", failed: false }],
      errors: [],
    })
  })

  it("an entry before any sub-heading is ignored; the last of two blocks is the one read", () => {
    const first = Facts.factsBlock({ ...Facts.empty, filesRead: ["old.ts"] })
    const second = [Facts.HEADING, "- `stray.ts`", "### Files read", "- `new.ts`"].join("\n")
    expect(Facts.parse(`${first}\n\ntext\n\n${second}`).filesRead).toEqual(["new.ts"])
  })

  it("strip keeps a summary's leading spaces", () => {
    expect(Facts.strip(`  Intro.\n\n${Facts.HEADING}\n(none)`)).toBe("  Intro.")
  })
})

describe("your own tool names (toolKinds, issue 18)", () => {
  // The fix session again, with tools named as another agent names them.
  const renamed: Record<string, string> = {
    read: "read_file",
    bash: "run_cmd",
    edit: "replace_in_file",
    grep: "search",
  }
  const theirs: ReadonlyArray<Message> = fixSession.map((m) =>
    m.role !== "assistant"
      ? m
      : {
          ...m,
          parts: m.parts.map((p) =>
            p.type === "tool" && renamed[p.tool] !== undefined ? { ...p, tool: renamed[p.tool]! } : p,
          ),
        },
  )
  const kinds: Facts.ToolKinds = { read_file: "read", run_cmd: "command", replace_in_file: "edit", search: "read" }

  it("given other tool names and no mapping, then the facts miss what they did", () => {
    const facts = Facts.facts(theirs)
    expect(facts.filesRead).toEqual([])
    expect(facts.commands).toEqual([])
    expect(Facts.factsBlock(facts)).toContain("### Files read\n(none)")
    expect(Facts.factsBlock(facts)).toContain("### Commands\n(none)")
  })

  it("given a mapping of those names, then the facts are the same as with OpenCode's names (errors name the tool)", () => {
    const expected = Facts.facts(fixSession)
    expect(Facts.facts(theirs, Facts.toolsOf(kinds))).toEqual({
      ...expected,
      errors: expected.errors.map((e) => e.replace(/^read:/, "read_file:")),
    })
  })

  it("a mapping is laid over OpenCode's names: unmapped defaults still count, and none removes one", () => {
    const tools = Facts.toolsOf({ run_cmd: "command", bash: "none", read: "edit" })
    expect(["run_cmd", "bash", "read", "grep", "write", "unknown"].map(tools.kindOf)).toEqual([
      "command",
      undefined,
      "edit",
      "read",
      "edit",
      undefined,
    ])
    expect(Facts.toolsOf(undefined)).toBe(Facts.OPENCODE_TOOLS)
  })

  it("property: a name's kind is its mapping's, else OpenCode's (from the three lists)", () => {
    const names = fc.constantFrom("read", "bash", "edit", "write", "grep", "read_file", "run_cmd", "x", "constructor")
    const kind = fc.constantFrom("read", "edit", "command", "none") as fc.Arbitrary<Facts.ToolKind | "none">
    fc.assert(
      fc.property(fc.dictionary(names, kind), names, (mapping, name) => {
        const reference = Object.hasOwn(mapping, name)
          ? mapping[name] === "none"
            ? undefined
            : mapping[name]
          : Facts.COMMAND_TOOLS.has(name)
            ? "command"
            : Facts.READ_TOOLS.has(name)
              ? "read"
              : Facts.EDIT_TOOLS.has(name)
                ? "edit"
                : undefined
        expect(Facts.toolsOf(mapping).kindOf(name)).toBe(reference)
      }),
      RUNS,
    )
  })
})
