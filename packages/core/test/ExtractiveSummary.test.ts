import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ArtifactCheck from "../src/ArtifactCheck.ts"
import * as ExtractiveSummary from "../src/ExtractiveSummary.ts"
import * as Facts from "../src/Facts.ts"
import type { AssistantPart, Message, ToolPart, UserMessage } from "../src/Message.ts"
import * as Prompt from "../src/Prompt.ts"
import { assistant, marker, partId, sessionArb, summary, tool, user } from "./support/arbitraries.ts"
import { RUNS, runs } from "./support/runs.ts"

const { summarize } = ExtractiveSummary

const TEMPLATE_HEADINGS = Prompt.TEMPLATE.split("\n").filter((line) => line.startsWith("#"))
const ALL_HEADINGS = [...TEMPLATE_HEADINGS, Facts.HEADING, ...Facts.SUBHEADINGS]

const headings = (text: string) => text.split("\n").filter((line) => line.startsWith("#"))

/** The lines under `heading` up to the next heading. */
const section = (text: string, heading: string): Array<string> => {
  const lines = text.split("\n")
  const start = lines.indexOf(heading)
  if (start === -1) return []
  const out: Array<string> = []
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("#")) break
    if (line !== "") out.push(line)
  }
  return out
}

/** A summary without its errors' and failed commands' index lines (ADR 0070: the only lines past MAX_CHARS). */
const withoutFailures = (text: string) =>
  text
    .split("\n")
    .filter((l) => !/^- Also (?:hit|failed): /.test(l))
    .join("\n")

const bash = (id: string, command: string, output: string, exit: number): ToolPart =>
  tool(id, "bash", output, { input: { command }, metadata: { exit } })

/** A tail of `count` failed test runs of long names (what the failures' index of a summary holds). */
const failingSuites = (count: number): ReadonlyArray<Message> => [
  user(10, "Run every suite"),
  assistant(
    11,
    10,
    Array.from({ length: count }, (_, k) =>
      bash(`11_${k}`, `npm test -- --suite packages/very/long/path/to/suite-${k}.test.ts`, "FAIL", 1),
    ),
    { finish: "tool-calls" },
  ),
]

const fixHead: ReadonlyArray<Message> = [
  user(1, "The test in test/math.test.ts fails. Fix src/math.ts. Do not change the public API."),
  assistant(
    2,
    1,
    [
      tool(3, "read", "export const add = (a, b) => a - b", { input: { filePath: "src/math.ts" } }),
      bash("4", "npm test -- test/math.test.ts", "FAIL test/math.test.ts\nAssertionError: expected -1 to be 3", 1),
      tool(5, "edit", "Edit applied successfully.", {
        input: { filePath: "src/math.ts", oldString: "a - b", newString: "a + b" },
      }),
      bash("6", "npm test -- test/math.test.ts", "PASS test/math.test.ts", 0),
    ],
    { finish: "tool-calls" },
  ),
  assistant(7, 1, [{ type: "text", id: partId("prt_t7"), text: "Fixed: add now adds." }], { finish: "stop" }),
]

describe("ExtractiveSummary.summarize", () => {
  it("given a finished fix, when summarised, then every section is there in order with exact paths and commands", () => {
    const text = summarize({ head: fixHead })
    expect(headings(text)).toEqual(ALL_HEADINGS)
    expect(section(text, "## Objective")).toEqual([
      "- The test in test/math.test.ts fails. Fix src/math.ts. Do not change the public API.",
    ])
    expect(section(text, "## Important Details")).toEqual(["- Do not change the public API."])
    expect(section(text, "### Completed")).toEqual(["- Edited `src/math.ts`", "- Ran `npm test -- test/math.test.ts`"])
    expect(section(text, "### Active")).toEqual(["(none)"])
    // The failure was followed by a success of the same command.
    expect(section(text, "### Blocked")).toEqual(["(none)"])
    expect(section(text, "## Next Move")).toEqual([ExtractiveSummary.WAIT_FOR_USER])
    expect(section(text, "## Relevant Files")).toEqual(["- `src/math.ts`: read, edited"])
    expect(section(text, "### Commands")).toEqual(["- `npm test -- test/math.test.ts` — ok (exit 0)"])
  })

  it("given an empty head, when summarised, then every section says (none)", () => {
    const text = summarize({ head: [] })
    expect(headings(text)).toEqual(ALL_HEADINGS)
    for (const heading of ALL_HEADINGS.filter((h) => h !== "## Work State" && h !== Facts.HEADING))
      expect(section(text, heading)).toEqual(
        heading === "## Next Move" ? [ExtractiveSummary.WAIT_FOR_USER] : ["(none)"],
      )
  })

  it("given an unfinished turn with a failing command, when summarised, then it is blocked and the next move continues", () => {
    const head = [
      user(1, "Make the build pass"),
      assistant(2, 1, [bash("3", "npx tsc -b", "src/a.ts(3,1): error TS2322: Type 'string' is not assignable", 2)], {
        finish: "tool-calls",
      }),
    ]
    const text = summarize({ head })
    expect(section(text, "### Active")).toEqual(["- Working on: Make the build pass"])
    expect(section(text, "### Blocked")).toEqual([
      "- `npx tsc -b` failed (exit 2): src/a.ts(3,1): error TS2322: Type 'string' is not assignable",
    ])
    expect(section(text, "## Next Move")).toEqual([
      "1. Continue the user's latest request: Make the build pass",
      "2. Fix the failure of `npx tsc -b` and run it again",
    ])
    expect(section(text, "### Commands")).toEqual(["- `npx tsc -b` — failed (exit 2)"])
  })

  it("given a call left running, when summarised, then it is active and re-run first after the request", () => {
    const running: ToolPart = {
      type: "tool",
      id: partId("prt_run"),
      callId: "c",
      tool: "bash",
      state: { status: "running", input: { command: "npm run e2e" } },
    }
    const text = summarize({ head: [user(1, "Run the e2e suite"), assistant(2, 1, [running])] })
    expect(section(text, "### Active")).toEqual(["- `npm run e2e` was started and did not finish"])
    expect(section(text, "## Next Move")).toEqual([
      "1. Continue the user's latest request: Run the e2e suite",
      "2. Re-run `npm run e2e`, which did not finish",
    ])
  })

  it("given an unanswered user request, when summarised, then the next move answers it", () => {
    const text = summarize({ head: [...fixHead, user(8, "Now add subtract()")] })
    expect(section(text, "## Next Move")).toEqual(["1. Answer the user's latest request: Now add subtract()"])
  })

  it("given a failed model call, when summarised, then it is blocked and retried; an abort waits for the user", () => {
    const failed = summarize({
      head: [user(1, "go"), assistant(2, 1, [], { error: { name: "APIError", message: "Overloaded" } })],
    })
    expect(section(failed, "### Blocked")).toEqual(["- The last model call failed: APIError: Overloaded"])
    expect(section(failed, "## Next Move")).toContain("2. Retry the step that failed")
    const aborted = summarize({
      head: [user(1, "go"), assistant(2, 1, [], { error: { name: "MessageAbortedError", message: "aborted" } })],
    })
    expect(section(aborted, "## Next Move")).toEqual([ExtractiveSummary.WAIT_FOR_USER])
  })

  it("given a failure in the head fixed in the tail, when summarised, then it is not blocked", () => {
    const head = [
      user(1, "fix lint"),
      assistant(2, 1, [bash("3", "npm run lint", "2 errors", 1)], { finish: "tool-calls" }),
    ]
    const tail = [assistant(4, 1, [bash("5", "npm run lint", "clean", 0)], { finish: "stop" })]
    expect(section(summarize({ head }), "### Blocked")).toEqual(["- `npm run lint` failed (exit 1): 2 errors"])
    const text = summarize({ head, tail })
    expect(section(text, "### Blocked")).toEqual(["(none)"])
    expect(section(text, "## Next Move")).toEqual([ExtractiveSummary.WAIT_FOR_USER])
    // The tail is kept verbatim after the summary, so its facts are not repeated.
    expect(section(text, "### Commands")).toEqual(["- `npm run lint` — failed (exit 1)"])
  })

  it("given synthetic continue messages and markers, when summarised, then they are not requests", () => {
    const continueMessage: UserMessage = {
      ...user(4, Prompt.CONTINUE_TEXT),
      parts: [{ type: "text", id: partId("prt_c"), text: Prompt.CONTINUE_TEXT, synthetic: true }],
    }
    const unflagged = user(5, Prompt.continueText(true))
    const text = summarize({
      head: [user(1, "Write docs"), marker(2), summary(3, 2, "old"), continueMessage, unflagged],
    })
    expect(section(text, "## Objective")).toEqual(["- Write docs"])
  })

  it("given media-only and huge requests, when summarised, then they are placeholders and one bounded line", () => {
    const image: UserMessage = {
      role: "user",
      id: user(1, "").id,
      createdAt: 1,
      parts: [
        {
          type: "file",
          id: partId("prt_img"),
          mime: "image/png",
          filename: "shot.png",
          url: "data:image/png;base64,AAAA",
        },
      ],
    }
    const text = summarize({ head: [image, user(2, `Refactor ${"x".repeat(100_000)}`)] })
    const objective = section(text, "## Objective")
    expect(objective[0]).toBe("- [Attached image/png: shot.png]")
    expect(objective[1]!.length).toBeLessThanOrEqual(250)
    expect(objective[1]!.endsWith("…")).toBe(true)
  })

  it("given the same input twice, when summarised, then the text is identical (also for a structural copy)", () => {
    const input = { head: fixHead, tail: [user(9, "thanks")], previousSummary: "## Objective\n- Earlier goal" }
    expect(summarize(input)).toBe(summarize(input))
    expect(summarize(structuredClone(input))).toBe(summarize(input))
  })
})

describe("ExtractiveSummary.summarize with a previous summary", () => {
  const firstHead: ReadonlyArray<Message> = [
    user(1, "Add a CSV export to src/export.ts. Always keep the header row."),
    assistant(
      2,
      1,
      [
        tool(3, "read", "...", { input: { filePath: "src/export.ts" } }),
        tool(4, "write", "ok", { input: { filePath: "src/csv.ts", content: "..." } }),
        bash("5", "npm test", "1 failed", 1),
      ],
      { finish: "tool-calls" },
    ),
  ]
  const secondHead: ReadonlyArray<Message> = [
    assistant(
      6,
      1,
      [
        tool(7, "edit", "ok", { input: { filePath: "src/csv.ts", oldString: "a", newString: "b" } }),
        bash("8", "npm test", "all passed", 0),
      ],
      { finish: "stop" },
    ),
    user(9, "Also export JSON. Never drop null fields."),
    assistant(
      10,
      9,
      [tool(11, "edit", "ok", { input: { filePath: "src/export.ts", oldString: "x", newString: "y" } })],
      {
        finish: "stop",
      },
    ),
  ]

  it("given a previous extractive summary, when updated, then objective and details merge without duplicate lines", () => {
    const previousSummary = summarize({ head: firstHead })
    expect(section(previousSummary, "### Blocked")).toEqual(["- `npm test` failed (exit 1): 1 failed"])
    const text = summarize({ head: secondHead, previousSummary })
    expect(headings(text)).toEqual(ALL_HEADINGS)
    expect(section(text, "## Objective")).toEqual([
      "- Add a CSV export to src/export.ts. Always keep the header row.",
      "- Also export JSON. Never drop null fields.",
    ])
    expect(section(text, "## Important Details")).toEqual([
      "- Always keep the header row.",
      "- Never drop null fields.",
    ])
    expect(section(text, "### Completed")).toEqual([
      "- Edited `src/csv.ts`",
      "- Ran `npm test`",
      "- Edited `src/export.ts`",
    ])
    // The earlier blocker was resolved by a later success of the same command.
    expect(section(text, "### Blocked")).toEqual(["(none)"])
    expect(section(text, "### Files read")).toEqual(["- `src/export.ts`"])
    expect(section(text, "### Files edited")).toEqual(["- `src/csv.ts`", "- `src/export.ts`"])
    expect(section(text, "### Commands")).toEqual(["- `npm test` — ok (exit 0)"])
    expect(section(text, "## Relevant Files")).toEqual(["- `src/csv.ts`: edited", "- `src/export.ts`: read, edited"])
    for (const heading of ALL_HEADINGS) {
      const lines = section(text, heading)
      expect(new Set(lines).size).toBe(lines.length)
    }
  })

  it("given the same update applied twice, when summarised, then no line is duplicated", () => {
    const once = summarize({ head: secondHead, previousSummary: summarize({ head: firstHead }) })
    const twice = summarize({ head: secondHead, previousSummary: once })
    expect(twice).toBe(once)
  })

  it("given a model-written summary in the older layout, when updated, then its lines are kept under our sections", () => {
    const previousSummary = [
      "## Goal",
      "Ship the CSV export",
      "## Instructions",
      "- Use tabs, not commas",
      "## Accomplished",
      "- Wrote `src/csv.ts`",
      "## Next Steps",
      "1. Write tests",
      "## Relevant files",
      "- src/csv.ts: the writer",
      "- docs/csv.md: the spec",
    ].join("\n")
    const text = summarize({ head: [], previousSummary })
    expect(section(text, "## Objective")).toEqual(["- Ship the CSV export"])
    expect(section(text, "## Important Details")).toEqual(["- Use tabs, not commas"])
    expect(section(text, "### Completed")).toEqual(["- Wrote `src/csv.ts`"])
    // Nothing happened since, so the previous next move still stands.
    expect(section(text, "## Next Move")).toEqual(["1. Write tests"])
    expect(section(text, "## Relevant Files")).toEqual(["- src/csv.ts: the writer", "- docs/csv.md: the spec"])
  })

  it("given a previous summary with a facts block, when updated with new work, then the old facts survive", () => {
    const previousSummary = summarize({ head: firstHead })
    const text = summarize({
      head: [user(20, "next"), assistant(21, 20, [bash("22", "ls", "a", 0)], { finish: "stop" })],
      previousSummary,
    })
    expect(section(text, "### Files edited")).toEqual(["- `src/csv.ts`"])
    expect(section(text, "### Commands")).toEqual(["- `npm test` — failed (exit 1)", "- `ls` — ok (exit 0)"])
    // Still failing: nothing since ran `npm test` again.
    expect(section(text, "### Blocked")).toEqual(["- `npm test` failed (exit 1): 1 failed"])
  })
})

describe("ExtractiveSummary.summarize bounds", () => {
  it("given a huge session, when summarised, then it names everything within what it replaces, and within MAX_CHARS with counts when it must", () => {
    const head: Array<Message> = []
    for (let i = 0; i < 200; i++) {
      const u = i * 3 + 1
      head.push(user(u, `Request ${i}: ${"please do the thing. You must keep it fast. ".repeat(50)}`))
      const parts: Array<AssistantPart> = []
      for (let j = 0; j < 3; j++) {
        const path = `packages/very/long/path/${"segment/".repeat(10)}file-${i}-${j}.ts`
        parts.push(tool(`${u}_r${j}`, "read", "y".repeat(50_000), { input: { filePath: path } }))
        parts.push(tool(`${u}_e${j}`, "edit", "ok", { input: { filePath: path } }))
        parts.push(bash(`${u}_b${j}`, `npm run check -- ${path}`, "z".repeat(20_000), j % 2))
      }
      head.push(assistant(u + 1, u, parts, { finish: "tool-calls" }))
    }
    const text = summarize({ head })
    // 600 files and 300 failed commands: every name takes it past MAX_CHARS, within what it replaces (ADR 0072).
    expect(text.length).toBeGreaterThan(ExtractiveSummary.MAX_CHARS)
    expect(text.length).toBeLessThanOrEqual(ExtractiveSummary.replacedChars({ head }))
    expect(headings(text)).toEqual(ALL_HEADINGS)
    const counted = (t: string) => section(t, "## Relevant Files")[0]!
    expect(counted(text)).not.toMatch(/^- … and \d+ more$/)
    expect(text).toContain("file-0-0.ts")
    // Within MAX_CHARS (the runtime's digest), the oldest are counted instead.
    const within = summarize({ head, withinMaxChars: true })
    expect(within.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    expect(headings(within)).toEqual(ALL_HEADINGS)
    expect(counted(within)).toMatch(/^- … and \d+ more$/)
    // The first request and the newest are kept.
    for (const t of [text, within]) {
      expect(section(t, "## Objective")[0]).toMatch(/^- Request 0: /)
      expect(t).toContain("Request 199: ")
    }
  })

  it("given a huge previous summary, when updated, then the text stays bounded", () => {
    const previousSummary = Array.from(
      { length: 2_000 },
      (_, i) => `## Section ${i}\n- detail ${i} ${"w".repeat(300)}`,
    ).join("\n")
    const text = summarize({ head: fixHead, previousSummary })
    expect(text.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    expect(headings(text)).toEqual(ALL_HEADINGS)
  })
})

describe("ExtractiveSummary properties", () => {
  const inputArb = fc.record({
    head: sessionArb({ maxTurns: 10 }),
    tail: fc.option(sessionArb({ minTurns: 0, maxTurns: 3 }), { nil: undefined }),
    previousSummary: fc.option(fc.oneof(fc.string({ maxLength: 500 }), fc.constant(summarize({ head: fixHead }))), {
      nil: undefined,
    }),
  })

  it("the extractive summary never throws, always has all TEMPLATE headings with no empty section, is bounded and deterministic", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const text = summarize(input)
        expect(headings(text)).toEqual(ALL_HEADINGS)
        for (const heading of ALL_HEADINGS)
          if (heading !== "## Work State" && heading !== Facts.HEADING)
            expect(section(text, heading).length).toBeGreaterThan(0)
        // Past MAX_CHARS only by what failed (ADR 0070), or when it names everything (no count of names left out).
        if (withoutFailures(text).length > ExtractiveSummary.MAX_CHARS)
          for (const heading of ["## Relevant Files", "### Completed"])
            expect(section(text, heading)[0]).not.toMatch(/^- … and \d+ more$/)
        expect(text.length).toBeLessThanOrEqual(
          Math.max(ExtractiveSummary.MAX_CHARS, ExtractiveSummary.replacedChars(input)),
        )
        expect(summarize({ ...input, withinMaxChars: true }).length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
        expect(summarize(input)).toBe(text)
      }),
      RUNS,
    )
  })

  it("the facts block keeps the newest paths and commands of the head exactly and counts the ones it left out", () => {
    fc.assert(
      fc.property(sessionArb({ maxTurns: 8 }), (head) => {
        const facts = Facts.facts(head)
        const text = summarize({ head })
        const parsed = Facts.parse(text)
        const lists = [
          ["### Files read", facts.filesRead, parsed.filesRead],
          ["### Files edited", facts.filesEdited, parsed.filesEdited],
          ["### Commands", facts.commands.map((c) => c.command), parsed.commands.map((c) => c.command)],
        ] as const
        for (const [heading, expected, shown] of lists) {
          const more = section(text, heading)
            .map((line) => /^- … and (\d+) more$/.exec(line))
            .find((m) => m !== null)
          const dropped = more ? Number(more[1]) : 0
          expect(shown).toEqual(expected.slice(dropped).map(Facts.inline))
        }
      }),
      RUNS,
    )
  })
})

describe("ExtractiveSummary.midTask", () => {
  const text = (id: string, t: string): AssistantPart => ({ type: "text", id: partId(id), text: t })
  const answered = (finish: string | undefined) =>
    ExtractiveSummary.midTask([
      user(1, "go"),
      assistant(2, 1, [text("t", "done")], finish === undefined ? {} : { finish }),
    ])

  it.each(["tool-calls", "tool_calls", "tool_use", "length", "max_tokens", "unknown"])(
    "given a last step that finished with %s, then the assistant was still working",
    (finish) => {
      expect(answered(finish)).toBe(true)
    },
  )

  it.each(["stop", "end_turn", "content-filter"])(
    "given a last step that finished with %s, then it was not",
    (finish) => {
      expect(answered(finish)).toBe(false)
    },
  )

  it("given a last step with no finish, then it was still working; given no conversation, it was not", () => {
    expect(answered(undefined)).toBe(true)
    expect(ExtractiveSummary.midTask([])).toBe(false)
    expect(ExtractiveSummary.midTask([marker(1)])).toBe(false)
  })

  it("given an unanswered user request, then it was working; a summary after it does not count as an answer", () => {
    expect(ExtractiveSummary.midTask([user(1, "go")])).toBe(true)
    expect(ExtractiveSummary.midTask([user(1, "go"), summary(2, 1, "the summary")])).toBe(true)
  })

  it("given a last step with a pending or running call, then it was working even when it finished with stop", () => {
    for (const status of ["pending", "running"] as const) {
      const open: ToolPart = {
        type: "tool",
        id: partId(`prt_${status}`),
        callId: status,
        tool: "bash",
        state: { status, input: { command: "make" } },
      }
      expect(ExtractiveSummary.midTask([user(1, "go"), assistant(2, 1, [open], { finish: "stop" })])).toBe(true)
    }
  })

  it("given a failed last step, then it was working unless the failure was an abort (any case)", () => {
    const failed = (name: string) =>
      ExtractiveSummary.midTask([user(1, "go"), assistant(2, 1, [], { error: { name, message: "x" }, finish: "stop" })])
    expect(failed("APIError")).toBe(true)
    expect(failed("MessageAbortedError")).toBe(false)
    expect(failed("USER_ABORT")).toBe(false)
  })
})

describe("ExtractiveSummary: what counts as a request", () => {
  const userWith = (parts: UserMessage["parts"]): UserMessage => ({ ...user(1, "x"), parts })

  it("synthetic and ignored text parts are not the user's words; a subtask and attached media are", () => {
    const text = summarize({
      head: [
        userWith([
          { type: "text", id: partId("a"), text: "Hidden", synthetic: true },
          { type: "text", id: partId("b"), text: "Ignored", ignored: true },
          { type: "text", id: partId("c"), text: "Fix the parser" },
          { type: "subtask", id: partId("d"), agent: "explore", description: "find the tests", prompt: "p" },
        ]),
      ],
    })
    expect(section(text, "## Objective")).toEqual(["- Fix the parser Subtask for explore: find the tests"])
  })

  it("a request of only a synthetic continue text, or only blanks, is no request", () => {
    const text = summarize({
      head: [user(1, Prompt.CONTINUE_TEXT), user(2, "   "), user(3, Prompt.continueText(true))],
    })
    expect(section(text, "## Objective")).toEqual(["(none)"])
  })

  it("a one-sentence request states no constraint; the sentences of a longer one that state a rule are details", () => {
    expect(section(summarize({ head: [user(1, "Never touch the API.")] }), "## Important Details")).toEqual(["(none)"])
    const text = summarize({
      head: [user(1, "Add a flag. You must keep the defaults. It is blue! Prefer small commits?\nAvoid new deps")],
    })
    expect(section(text, "## Important Details")).toEqual([
      "- You must keep the defaults.",
      "- Prefer small commits?",
      "- Avoid new deps",
    ])
  })
})

describe("ExtractiveSummary: a previous summary's sections under other names", () => {
  it.each([
    ["Goal", "## Objective"],
    ["Task", "## Objective"],
    ["Aim", "## Objective"],
    ["Accomplished", "### Completed"],
    ["Done", "### Completed"],
    ["Finished", "### Completed"],
    ["In progress", "### Active"],
    ["Current work", "### Active"],
    ["Blockers", "### Blocked"],
    ["Blocking", "### Blocked"],
    ["Relevant files", "## Relevant Files"],
    ["Key files", "## Relevant Files"],
    ["Notes", "## Important Details"],
  ])("a section headed %s is read as %s", (name, heading) => {
    const text = summarize({ head: [], previousSummary: `## ${name}\n- the remembered line\n` })
    expect(section(text, heading)).toContain("- the remembered line")
  })

  it("next steps are kept only while nothing new happened", () => {
    const previousSummary = "## Next steps\n1. Deploy the fix\n"
    expect(section(summarize({ head: [], previousSummary }), "## Next Move")).toEqual(["1. Deploy the fix"])
    expect(section(summarize({ head: fixHead, previousSummary }), "## Next Move")).toEqual([
      ExtractiveSummary.WAIT_FOR_USER,
    ])
  })

  it("(none) lines, more-lines, bullets and numbering are dropped from what is kept", () => {
    const previousSummary = "## Important Details\n- (none)\n- … and 3 more\n* starred\n2) numbered\n+ plus\n"
    expect(section(summarize({ head: [], previousSummary }), "## Important Details")).toEqual([
      "- starred",
      "- numbered",
      "- plus",
    ])
  })
})

describe("ExtractiveSummary: failures in the work state", () => {
  it("a failed edit is blocked as the tool of the path; an interrupted call is not a failure", () => {
    const failedEdit: ToolPart = {
      type: "tool",
      id: partId("prt_e"),
      callId: "e",
      tool: "edit",
      state: { status: "error", input: { filePath: "src/a.ts" }, error: "oldString not found\nmore" },
    }
    const interrupted: ToolPart = {
      type: "tool",
      id: partId("prt_i"),
      callId: "i",
      tool: "bash",
      state: { status: "error", input: { command: "make" }, error: "stopped", metadata: { interrupted: true } },
    }
    const text = summarize({
      head: [user(1, "go"), assistant(2, 1, [failedEdit, interrupted], { finish: "tool-calls" })],
    })
    expect(section(text, "### Blocked")).toEqual(["- edit of `src/a.ts` failed: oldString not found"])
    expect(section(text, "### Active")).toEqual(["- `make` was started and did not finish"])
  })

  it("a failed command names its last output line; a failed command with no output names none", () => {
    const text = summarize({
      head: [
        user(1, "go"),
        assistant(2, 1, [bash("1", "make a", "line one\nthe last line\n\n  ", 2), bash("2", "make b", "", 3)], {
          finish: "tool-calls",
        }),
      ],
    })
    expect(section(text, "### Blocked")).toEqual([
      "- `make a` failed (exit 2): the last line",
      "- `make b` failed (exit 3)",
    ])
  })

  it("a blocker of the previous summary stays until the tail shows its command succeed", () => {
    const previousSummary = "## Blocked\n- `npm test` failed (exit 1): boom\n"
    const still = summarize({ head: [], previousSummary })
    expect(section(still, "### Blocked")).toEqual(["- `npm test` failed (exit 1): boom"])
    const fixed = summarize({
      head: [user(1, "go"), assistant(2, 1, [bash("1", "npm test", "ok", 0)], { finish: "stop" })],
      previousSummary,
    })
    expect(section(fixed, "### Blocked")).toEqual(["(none)"])
  })
})

describe("ExtractiveSummary.summarize with your own tool names (toolKinds, issue 18)", () => {
  const renamed: Record<string, string> = { read: "read_file", bash: "run_cmd", edit: "replace_in_file" }
  const theirs: ReadonlyArray<Message> = fixHead.map((m) =>
    m.role !== "assistant"
      ? m
      : {
          ...m,
          parts: m.parts.map((p) =>
            p.type === "tool" && renamed[p.tool] !== undefined ? { ...p, tool: renamed[p.tool]! } : p,
          ),
        },
  )

  it("given the names mapped, then the summary is the one OpenCode's names give; unmapped, commands are (none)", () => {
    const toolKinds = { read_file: "read", run_cmd: "command", replace_in_file: "edit" } as const
    expect(summarize({ head: theirs, toolKinds })).toBe(summarize({ head: fixHead }))
    const unmapped = summarize({ head: theirs })
    expect(section(unmapped, "### Commands")).toEqual(["(none)"])
    expect(section(unmapped, "### Completed")).toEqual(["(none)"])
  })
})

describe("ExtractiveSummary reach: summaries of summaries keep older files and commands (ADR 0060)", () => {
  // Turn `t` of a session: a request, reads of `src/<area>/t<t>k<k>.ts` (k < files), an edit of the first, a test run
  // (`npm test -- <area><t>q`). No name is part of another's (a file is named by its last segment, a command by its line).
  const AREAS = ["parser", "router", "cache", "auth"]
  const turn = (t: number, files: number): ReadonlyArray<Message> => {
    const area = AREAS[t % AREAS.length]!
    const base = 1_000 * (t + 1)
    const paths = Array.from({ length: files }, (_, k) => `src/${area}/t${t}k${k}.ts`)
    return [
      user(base, `Fix the ${area} module, turn ${t}`),
      assistant(
        base + 1,
        base,
        [
          ...paths.map((p, k) => tool(`${base}_r${k}`, "read", "x", { input: { filePath: p } })),
          tool(`${base}_e`, "edit", "ok", { input: { filePath: paths[0]!, oldString: "a", newString: "b" } }),
          bash(`${base}_b`, `npm test -- ${area}${t}q`, "PASS", 0),
        ],
        { finish: "stop" },
      ),
    ]
  }
  /** Every turn summarised in its own compaction, each summary updating the previous one (as the runtime does). */
  const compacted = (turns: number, files: (t: number) => number, factsBlock = true) => {
    let previousSummary: string | undefined
    const all: Array<Message> = []
    for (let t = 0; t < turns; t++) {
      const head = turn(t, files(t))
      all.push(...head)
      previousSummary = summarize({ head, factsBlock, ...(previousSummary === undefined ? {} : { previousSummary }) })
    }
    return { text: previousSummary!, all }
  }
  /** The files read and edited and the commands of `all` (the reference), and those `text` does not name. */
  const missed = (all: ReadonlyArray<Message>, text: string) =>
    ArtifactCheck.check(all, text)
      .filter((a) => a.kind !== "request" && a.kind !== "error" && !a.named)
      .map((a) => a.text)

  it("given twelve compactions of a turn each, then the last summary still names every file and command; its sections alone name the newest only", () => {
    // 12 turns × (3 files read, 1 edited, 1 command): 60 artifacts, more than Relevant Files' 650 and Completed's 600
    // characters hold; the facts block is left out, as a model's summary has none.
    const { text, all } = compacted(12, () => 3)
    const bare = Facts.strip(text)
    expect(missed(all, bare)).toEqual([])
    // The decay the index undoes: without it, the oldest turns' files and commands are gone.
    const lost = missed(all, ExtractiveSummary.withoutIndex(bare))
    expect(lost).toContain("src/parser/t0k1.ts")
    expect(lost).toContain("npm test -- parser0q")
    expect(text.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    expect(ExtractiveSummary.withoutIndex(text).length).toBeLessThanOrEqual(ExtractiveSummary.SECTIONS_MAX_CHARS)
    expect(section(text, "## Relevant Files")[0]).toMatch(/^- Also in `src\/\w+\/`: t\d+k\d\.ts, /)
    expect(section(text, "### Completed")).toContain("- Also ran: `npm test -- parser0q`, `npm test -- router1q`")
  })

  it("given one compaction whose files fit the section, then it writes no index (the summary is unchanged)", () => {
    const head = turn(0, 3)
    const text = summarize({ head })
    expect(text).toBe(ExtractiveSummary.withoutIndex(text))
    expect(missed(head, Facts.strip(text))).toEqual([])
  })

  it("property: over repeated compactions, with or without the facts block, the summary stays within MAX_CHARS, the sections within SECTIONS_MAX_CHARS, names the newest turn whole, and names every file and command while the session is small", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        (files, withFacts) => {
          const { text, all } = compacted(files.length, (t) => files[t]!, withFacts)
          expect(text.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
          expect(ExtractiveSummary.withoutIndex(text).length).toBeLessThanOrEqual(ExtractiveSummary.SECTIONS_MAX_CHARS)
          const bare = Facts.strip(text)
          const newest = turn(files.length - 1, files.at(-1)!)
          expect(missed(newest, bare)).toEqual([])
          // The reference: every file and command so far. 40 turns of at most 4 files fit the room the sections leave.
          expect(missed(all, bare)).toEqual([])
        },
      ),
      runs(100),
    )
  })

  it("index lines are at most LINE_MAX characters: a line of exactly LINE_MAX stays one, one character more makes two", () => {
    // A folder of 100 characters: head + name + ", b" + ", c" is LINE_MAX with a name of the rest (plain names bare).
    const folder = `${"d".repeat(99)}/`
    const head = `${ExtractiveSummary.ALSO} in \`${folder}\`: `
    const name = "a".repeat(ExtractiveSummary.LINE_MAX - head.length - 6)
    const index = (first: string) => ExtractiveSummary.filesIndex([`${folder}${first}`, `${folder}b`, `${folder}c`])
    expect(index(name).map((l) => l.length)).toEqual([ExtractiveSummary.LINE_MAX])
    expect(index(name.slice(1)).map((l) => l.length)).toEqual([ExtractiveSummary.LINE_MAX - 1])
    // One more: `c` moves to a line of its own.
    expect(index(`${name}x`).map((l) => l.length)).toEqual([ExtractiveSummary.LINE_MAX - 2, head.length + 1])
    // A name that is not plain (a space) is a code span: two characters more, so the same cap moves `c` on.
    expect(index(`${name.slice(2)} `).map((l) => l.length)).toEqual([ExtractiveSummary.LINE_MAX - 2, head.length + 1])
  })

  it("an index line written before ADR 0065 (every name a code span, edits one path each) is read back the same", () => {
    expect(ExtractiveSummary.fromIndex(["Also in `src/a/`: `z.ts`, `x.ts`", "Also edited: `src/a/x.ts`"])).toEqual([
      "`src/a/z.ts`: seen earlier",
      "`src/a/x.ts`: seen earlier",
      "Edited `src/a/x.ts`",
    ])
  })

  it("edits in the index are grouped by folder like files (ADR 0065): the folder once, not once an edit", () => {
    const done = ExtractiveSummary.completedIndex([
      "Edited `src/parser/parser1.ts`",
      "Edited `src/parser/parser2.ts`",
      "Edited `src/router/router3.ts`",
    ])
    expect(done).toEqual([
      "Also edited in `src/parser/`: parser1.ts, parser2.ts",
      "Also edited in `src/router/`: router3.ts",
    ])
    expect(ExtractiveSummary.fromIndex(done)).toEqual([
      "Edited `src/parser/parser1.ts`",
      "Edited `src/parser/parser2.ts`",
      "Edited `src/router/router3.ts`",
    ])
  })

  it("given fifty-five compactions of a four-file turn each, then the last summary names every file and command (the index before ADR 0065 lost the first at fifty)", () => {
    const { text, all } = compacted(55, () => 4)
    expect(missed(all, Facts.strip(text))).toEqual([])
    expect(text.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
  })

  it("given no facts block, then the index takes its room: every file and command of seventy compactions, within MAX_CHARS", () => {
    const { text, all } = compacted(70, () => 4, false)
    expect(text).not.toContain(Facts.HEADING)
    expect(missed(all, text)).toEqual([])
    expect(text.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    // With the facts block the index needs more than the room left: it takes the summary past MAX_CHARS (ADR 0072).
    const withBlock = compacted(70, () => 4).text
    expect(withBlock.length).toBeGreaterThan(ExtractiveSummary.MAX_CHARS)
    expect(missed(all, Facts.strip(withBlock))).toEqual([])
  })

  it("property: an index read back gives each path once, in order of its folder's newest, whatever its characters", () => {
    const segment = fc.constantFrom("a", "b.ts", "my file.ts", "x,y.ts", "a, b.ts", "n`t.ts", "é.md", "-x.ts")
    const path = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join("/"))
    fc.assert(
      fc.property(fc.array(path, { minLength: 1, maxLength: 30 }), (paths) => {
        const back = ExtractiveSummary.fromIndex(ExtractiveSummary.filesIndex(paths)).map((l) =>
          l.replace(/: seen earlier$/, ""),
        )
        const spans = back.map((l) => /^(`+) ?(.+?) ?\1$/.exec(l)?.[2])
        expect(new Set(spans)).toEqual(new Set(paths))
        expect(spans.length).toBe(new Set(paths).size)
      }),
      runs(200),
    )
  })

  it("an index read back gives each path, command and edit once, in its folder; root files too", () => {
    const paths = ["src/a/x.ts", "README.md", "src/b/y.ts", "src/a/z.ts", "src/a/x.ts"]
    const index = ExtractiveSummary.filesIndex(paths)
    // Folders in the order of their newest file; a path once.
    expect(index).toEqual(["Also in the root: README.md", "Also in `src/b/`: y.ts", "Also in `src/a/`: z.ts, x.ts"])
    expect(ExtractiveSummary.fromIndex(index)).toEqual([
      "`README.md`: seen earlier",
      "`src/b/y.ts`: seen earlier",
      "`src/a/z.ts`: seen earlier",
      "`src/a/x.ts`: seen earlier",
    ])
    const done = ExtractiveSummary.completedIndex([
      "Ran `npm test`",
      "Edited `src/a/x.ts`",
      "Ran `ls`",
      "Ran `npm test`",
      "Wrote docs",
    ])
    expect(done).toEqual(["Also edited in `src/a/`: x.ts", "Also ran: `npm test`, `ls`"])
    expect(ExtractiveSummary.fromIndex([...done, "Ran `make`"])).toEqual([
      "Edited `src/a/x.ts`",
      "Ran `npm test`",
      "Ran `ls`",
      "Ran `make`",
    ])
  })
})

describe("ExtractiveSummary recency: the files last worked on stay, the oldest names go first (ADR 0066)", () => {
  const read = (id: string, path: string) => tool(id, "read", "x", { input: { filePath: path } })
  const edit = (id: string, path: string) =>
    tool(id, "edit", "ok", { input: { filePath: path, oldString: "a", newString: "b" } })

  it("given an edited file and then a file only read, then Relevant Files lists them in the order they were last used", () => {
    const head = [
      user(1, "Fix the parser"),
      assistant(2, 1, [read("3", "src/a/main.ts"), edit("4", "src/a/main.ts")], { finish: "tool-calls" }),
      assistant(5, 1, [read("6", "src/a/helper.ts")], { finish: "stop" }),
    ]
    // Before ADR 0066 the files only read came first, whenever they were read.
    expect(section(summarize({ head }), "## Relevant Files")).toEqual([
      "- `src/a/main.ts`: read, edited",
      "- `src/a/helper.ts`: read",
    ])
  })

  it("given a previous summary whose facts block names its files, then its list keeps its own order (not read, then edited)", () => {
    const previousSummary = [
      "## Relevant Files",
      "- `src/a/old.ts`: read, edited",
      "- `src/b/new.ts`: read",
      "",
      Facts.factsBlock({
        filesRead: ["src/a/old.ts", "src/b/new.ts"],
        filesEdited: ["src/a/old.ts"],
        commands: [],
        errors: [],
      }),
    ].join("\n")
    const head = [user(10, "Go on"), assistant(11, 10, [read("12", "src/c/next.ts")], { finish: "stop" })]
    expect(section(summarize({ head, previousSummary }), "## Relevant Files")).toEqual([
      "- `src/a/old.ts`: read, edited",
      "- `src/b/new.ts`: read",
      "- `src/c/next.ts`: read",
    ])
  })

  it("given more older files than the index holds, then the oldest names are left out, whatever their folder", () => {
    // A previous list of folder a's first 150 files, then folder b's 250, then one more in a: a's group is the newest
    // folder, so cutting whole index lines (before ADR 0066) dropped b's names and kept a's oldest. 30 files read in c
    // fill the section.
    const older = [
      ...Array.from({ length: 150 }, (_, i) => `src/a/alpha_module_${i}.ts`),
      ...Array.from({ length: 250 }, (_, i) => `src/b/bravo_module_${i}.ts`),
      "src/a/alpha_module_newest.ts",
    ]
    const newer = Array.from({ length: 30 }, (_, i) => `src/c/charlie_${i}.ts`)
    const paths = [...older, ...newer]
    const previousSummary = ["## Relevant Files", ...older.map((p) => `- \`${p}\`: read`)].join("\n")
    const head = [
      user(1, "Survey the code"),
      assistant(
        2,
        1,
        newer.map((p, i) => read(`r${i}`, p)),
        { finish: "stop" },
      ),
    ]
    // Within MAX_CHARS (the runtime's digest); a summary that may pass it names them all (ADR 0072).
    const every = summarize({ head, previousSummary, factsBlock: false })
    expect(paths.filter((p) => !ArtifactCheck.names("file-read", p, every))).toEqual([])
    const text = summarize({ head, previousSummary, factsBlock: false, withinMaxChars: true })
    expect(text.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    const named = paths.map((p) => ArtifactCheck.names("file-read", p, text))
    const left = named.indexOf(true)
    // Some are left out, and those are the oldest: every path from the first named one on is named.
    expect(left).toBeGreaterThan(0)
    expect(named.slice(left).every((n) => n)).toBe(true)
    expect(named.slice(0, left).some((n) => n)).toBe(false)
    expect(section(text, "## Relevant Files")[0]).toBe(`- … and ${left} more`)
  })

  it("newestFitting: at the room all entries' index lines take, all of them; one character less, the newest that fit with the more-line", () => {
    const index = (names: ReadonlyArray<string>) => ExtractiveSummary.filesIndex(names.map((n) => `src/x/${n}`))
    const size = (lines: ReadonlyArray<string>) => lines.reduce((n, l) => n + l.length + 3, 0)
    const older = Array.from({ length: 8 }, (_, i) => `file_${i}.ts`)
    const all = size(index(older))
    expect(ExtractiveSummary.newestFitting(older, index, all)).toEqual(older)
    // Without the oldest: its index and the line counting the one left out, which is more than all eight take.
    const cut = (n: number) => size(index(older.slice(n))) + Facts.moreLine(n).length + 1
    expect(cut(1)).toBeGreaterThan(all)
    expect(cut(2)).toBeLessThan(all)
    expect(ExtractiveSummary.newestFitting(older, index, all - 1)).toEqual(older.slice(2))
    expect(ExtractiveSummary.newestFitting(older, index, cut(2))).toEqual(older.slice(2))
    expect(ExtractiveSummary.newestFitting(older, index, cut(2) - 1)).toEqual(older.slice(3))
    expect(ExtractiveSummary.newestFitting(older, index, cut(7))).toEqual(older.slice(7))
    expect(ExtractiveSummary.newestFitting(older, index, cut(7) - 1)).toEqual([])
    expect(ExtractiveSummary.newestFitting(older, index, 0)).toEqual([])
    expect(ExtractiveSummary.newestFitting([], index, 100)).toEqual([])
  })
})

describe("ExtractiveSummary: the summary keeps what failed, by name (ADR 0070)", () => {
  /** A read that failed: an error (`read: …`) of Important Details only (a read is no command or edit to block). */
  const failedRead = (id: string, path: string): ToolPart => ({
    type: "tool",
    id: partId(`prt_${id}`),
    callId: id,
    tool: "read",
    state: { status: "error", input: { filePath: path }, error: `ENOENT: no such file or directory, open '${path}'` },
  })
  /** A turn of a request and `errors` failed reads, then `failures` failed commands (`npm test -- <tag>-<k>`). */
  const turn = (id: number, tag: string, errors: number, failures: number): ReadonlyArray<Message> => [
    user(id, `Fix the ${tag} tests`),
    assistant(
      id + 1,
      id,
      [
        ...Array.from({ length: errors }, (_, k) => failedRead(`${id}_r${k}`, `src/${tag}/missing-${k}.ts`)),
        ...Array.from({ length: failures }, (_, k) =>
          bash(`${id}_b${k}`, `npm test -- ${tag}-${k}`, `FAIL ${tag}-${k}: expected 1 to be 2`, 1),
        ),
      ],
      { finish: "stop" },
    ),
  ]
  /** Each head summarised in turn, each summary updating the previous one; without facts block (it names commands). */
  const chain = (heads: ReadonlyArray<ReadonlyArray<Message>>): string =>
    heads.reduce<string | undefined>(
      (previousSummary, head) =>
        summarize({ head, factsBlock: false, ...(previousSummary === undefined ? {} : { previousSummary }) }),
      undefined,
    )!
  const failureLines = (text: string) => text.split("\n").filter((l) => /^- Also (?:hit|failed): /.test(l))

  it("given seven errors in one head, then the first two are still named (main kept the head's last five)", () => {
    const text = summarize({ head: turn(1, "parser", 7, 0), factsBlock: false })
    for (let k = 0; k < 7; k++) expect(text).toContain(`src/parser/missing-${k}.ts`)
  })

  it("given an error Important Details left out, then it is still named two summaries later", () => {
    // 30 errors do not fit Important Details' 1,000 characters: the oldest go to its index, read back twice.
    const first = chain([turn(1, "parser", 30, 0)])
    expect(section(first, "## Important Details")[0]).toMatch(/^- Also hit: `read: ENOENT/)
    const text = chain([turn(1, "parser", 30, 0), turn(10, "router", 30, 0), turn(20, "cache", 30, 0)])
    for (const tag of ["parser", "router", "cache"])
      for (let k = 0; k < 30; k++) expect(text).toContain(`src/${tag}/missing-${k}.ts`)
  })

  it("given a failed command Blocked left out, then it is still named two summaries later; one run since successfully is not", () => {
    const fixed = [
      user(40, "Run the parser tests again"),
      assistant(41, 40, [bash("41_b", "npm test -- parser-1", "PASS", 0)], { finish: "stop" }),
    ]
    const text = chain([turn(1, "parser", 0, 12), [...turn(10, "router", 0, 12), ...fixed], turn(20, "cache", 0, 12)])
    const blocked = section(text, "### Blocked").join("\n")
    for (const tag of ["parser", "router", "cache"])
      for (let k = 0; k < 12; k++)
        if (tag !== "parser" || k !== 1) expect(blocked).toContain(`npm test -- ${tag}-${k}\``)
    expect(blocked).not.toContain("npm test -- parser-1`")
    // A command failed twice is named once.
    const again = chain([turn(1, "parser", 0, 12), turn(10, "parser", 0, 12)])
    expect(section(again, "### Blocked").join("\n").split("npm test -- parser-0`").length).toBe(2)
  })

  // A head whose read output pads what the summary replaces by `pad` characters (the summary does not name it), and a
  // tail of failed commands of long names: the failures' index takes the summary past MAX_CHARS.
  const bounded = (pad: number) => ({
    head: [
      user(1, "Make the whole suite pass"),
      assistant(2, 1, [tool(3, "read", "x".repeat(pad), { input: { filePath: "src/suite.ts" } })], { finish: "stop" }),
    ],
    tail: failingSuites(120),
    factsBlock: false,
  })
  it("the summary passes MAX_CHARS only by the failures' index, and never past what it replaces: at that size, one character more, one less", () => {
    const roomy = summarize(bounded(100_000))
    const whole = roomy.length
    expect(whole).toBeGreaterThan(ExtractiveSummary.MAX_CHARS)
    expect(withoutFailures(roomy).length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    expect(failureLines(roomy).length).toBeGreaterThan(0)
    // The pad that makes what the summary replaces exactly the whole summary's size.
    const exact = whole - ExtractiveSummary.replacedChars(bounded(0))
    expect(ExtractiveSummary.replacedChars(bounded(exact))).toBe(whole)
    expect(summarize(bounded(exact))).toBe(roomy)
    expect(summarize(bounded(exact + 1))).toBe(roomy)
    const cut = summarize(bounded(exact - 1))
    expect(cut.length).toBeLessThanOrEqual(whole - 1)
    expect(cut.length).toBeGreaterThan(ExtractiveSummary.MAX_CHARS)
    expect(section(cut, "### Blocked")[0]).toMatch(/^- … and \d+ more$/)
    // What it leaves out is the oldest: the newest failure is still named, the first is not.
    expect(cut).toContain("suite-119.test.ts")
    expect(cut).not.toContain("suite-0.test.ts`")
    // With less to replace than MAX_CHARS, the summary keeps within MAX_CHARS.
    const small = summarize(bounded(0))
    expect(ExtractiveSummary.replacedChars(bounded(0))).toBeLessThan(ExtractiveSummary.MAX_CHARS)
    expect(small.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    expect(section(small, "### Blocked")[0]).toMatch(/^- … and \d+ more$/)
  })

  it("withinMaxChars keeps the failures' index too within MAX_CHARS, the newest failures named (the runtime's digest)", () => {
    const roomy = summarize(bounded(100_000))
    expect(roomy.length).toBeGreaterThan(ExtractiveSummary.MAX_CHARS)
    const within = summarize({ ...bounded(100_000), withinMaxChars: true })
    expect(within.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    expect(headings(within)).toEqual(headings(roomy))
    expect(section(within, "### Blocked")[0]).toMatch(/^- … and \d+ more$/)
    expect(within).toContain("suite-119.test.ts")
    expect(within).not.toContain("suite-0.test.ts`")
    // A summary already within MAX_CHARS is the same with it.
    expect(summarize({ ...bounded(0), withinMaxChars: true })).toBe(summarize(bounded(0)))
  })
})

describe("ExtractiveSummary: every name, within what the summary replaces (ADR 0072)", () => {
  // 80 files of long names read in one head, more than the room under MAX_CHARS names; a read whose output (which the
  // summary does not name) pads what the summary replaces by `pad` characters; and a tail of 300 failed commands whose
  // index takes the whole summary past what the head alone replaces (the tail is not replaced).
  const files = Array.from(
    { length: 80 },
    (_, i) => `src/module_${Math.floor(i / 20)}/component_${"k".repeat(90)}_${i}.ts`,
  )
  const input = (pad: number) => ({
    head: [
      user(1, "Survey the code"),
      assistant(
        2,
        1,
        [
          ...files.map((p, i) => tool(`r${i}`, "read", "ok", { input: { filePath: p } })),
          tool("pad", "read", "x".repeat(pad), { input: { filePath: files[79]! } }),
        ],
        { finish: "stop" },
      ),
    ],
    tail: failingSuites(300),
    factsBlock: false,
  })
  const unnamed = (text: string) => files.filter((p) => !ArtifactCheck.names("file-read", p, text))
  const MORE = /^- … and \d+ more$/

  it("names every file and failure past MAX_CHARS when what it replaces is at least its size: at that size, one character more, one less", () => {
    const roomy = summarize(input(100_000))
    const whole = roomy.length
    expect(withoutFailures(roomy).length).toBeGreaterThan(ExtractiveSummary.MAX_CHARS)
    expect(unnamed(roomy)).toEqual([])
    expect(roomy.split("\n").filter((l) => MORE.test(l))).toEqual([])
    // The pad that makes what the summary replaces exactly the whole summary's size.
    const exact = whole - ExtractiveSummary.replacedChars(input(0))
    expect(exact).toBeGreaterThan(0)
    expect(ExtractiveSummary.replacedChars(input(exact))).toBe(whole)
    expect(summarize(input(exact))).toBe(roomy)
    expect(summarize(input(exact + 1))).toBe(roomy)
    // One character less: the files' index keeps within the room under MAX_CHARS, its oldest names counted, the
    // newest kept; what failed takes the rest, within what the summary replaces (ADR 0070).
    const cut = summarize(input(exact - 1))
    expect(cut.length).toBeLessThanOrEqual(whole - 1)
    expect(withoutFailures(cut).length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    expect(section(cut, "## Relevant Files")[0]).toMatch(MORE)
    expect(unnamed(cut)).toContain(files[0])
    expect(unnamed(cut)).not.toContain(files[78])
  })

  it("withinMaxChars keeps it within MAX_CHARS whatever it replaces, the newest names kept", () => {
    const within = summarize({ ...input(100_000), withinMaxChars: true })
    expect(within.length).toBeLessThanOrEqual(ExtractiveSummary.MAX_CHARS)
    expect(section(within, "## Relevant Files")[0]).toMatch(MORE)
    expect(section(within, "### Blocked")[0]).toMatch(MORE)
    expect(unnamed(within)).not.toContain(files[78])
  })

  it("names a command by its whole first line: three that differ only past 160 characters stay three, two summaries on", () => {
    const long = (k: number) =>
      `curl -fsS -X POST http://127.0.0.1:4319/api/${"segment/".repeat(20)}items -d '{"id":${k}}'`
    const script = `python3 - <<'EOF'\nprint(${"1 + ".repeat(60)}1)\nEOF`
    const run = (id: number, commands: ReadonlyArray<string>): ReadonlyArray<Message> => [
      user(id, "Try the API"),
      assistant(
        id + 1,
        id,
        commands.map((c, k) => bash(`${id}_${k}`, c, "ok", 0)),
        { finish: "stop" },
      ),
    ]
    const commands = [long(1), long(2), long(3), script]
    expect(long(1).length).toBeGreaterThan(160)
    // Forty more commands push these four out of Completed's budget into its index, read back by the next summary.
    const filler = Array.from({ length: 40 }, (_, k) => `npm test -- suite-${k}`)
    let text: string | undefined
    for (const head of [run(1, commands), run(10, filler.slice(0, 20)), run(20, filler.slice(20))])
      text = summarize({ head, factsBlock: false, ...(text === undefined ? {} : { previousSummary: text }) })
    for (const c of commands) expect(ArtifactCheck.names("command", c, text!)).toBe(true)
    expect(text).toMatch(/^- Also ran: /m)
    // A multi-line command is named by its first line; the rest is cut.
    expect(text).toContain("`python3 - <<'EOF' ⏎ print(1 + ")
    expect(text).not.toContain("1) ⏎ EOF")
  })
})
