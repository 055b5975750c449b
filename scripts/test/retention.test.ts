/**
 * bench:cost's retention at every turn's start (support/retention.ts) against a session checked by hand and against a
 * model of sets; and its generator's returning turns (support/costSessions.ts).
 */
import { Ids, type Message, type ModelMessage, Tokens } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { FIRST_RETURN, generate, withReturns } from "../bench/support/costSessions.ts"
import * as Retention from "../bench/support/retention.ts"

let clock = 1
const user = (id: string, text: string): Message.UserMessage => ({
  role: "user",
  id: Ids.unsafe.message(`msg_${id}`),
  createdAt: clock++,
  parts: [{ type: "text", id: Ids.unsafe.part(`prt_${id}`), text }],
})
interface Call {
  readonly tool: string
  readonly input: Record<string, unknown>
  readonly output?: string
  readonly error?: string
}
const step = (id: string, parent: string, calls: ReadonlyArray<Call>): Message.AssistantMessage => ({
  role: "assistant",
  id: Ids.unsafe.message(`msg_${id}`),
  parentId: Ids.unsafe.message(`msg_${parent}`),
  createdAt: clock++,
  model: { providerId: "anthropic", modelId: "claude-test" },
  tokens: Tokens.zero,
  finish: "tool-calls",
  parts: calls.map((c, i) => ({
    type: "tool",
    id: Ids.unsafe.part(`prt_${id}_${i}`),
    callId: `call_${id}_${i}`,
    tool: c.tool,
    state:
      c.error === undefined
        ? { status: "completed", input: c.input, output: c.output ?? "ok", title: c.tool }
        : { status: "error", input: c.input, error: c.error },
  })),
})

// The model messages of a user request and of a step (as `Render` gives them: the calls, then their results).
const shownUser = (text: string): Retention.Shown => ({
  message: { role: "user", content: [{ type: "text", text }] },
  summary: false,
})
const shownStep = (id: string, calls: ReadonlyArray<Call>): ReadonlyArray<Retention.Shown> => [
  {
    message: {
      role: "assistant",
      content: calls.map((c, i) => ({
        type: "tool-call" as const,
        toolCallId: `call_${id}_${i}`,
        toolName: c.tool,
        input: c.input,
      })),
    },
    summary: false,
  },
  {
    message: {
      role: "tool",
      content: calls.map((c, i) => ({
        type: "tool-result" as const,
        toolCallId: `call_${id}_${i}`,
        toolName: c.tool,
        output: { type: "text" as const, value: c.error ?? c.output ?? "ok" },
      })),
    } as ModelMessage.ModelMessage,
    summary: false,
  },
]
const shownSummary = (text: string): Retention.Shown => ({
  message: { role: "assistant", content: [{ type: "text", text }] },
  summary: true,
})

describe("Retention.sample (checked by hand)", () => {
  const request1 = "Fix the parser module: src/parser/parser0.ts mishandles nested arrays"
  const request2 = "Harden the router module: src/router/router1.ts drops trailing slashes"
  const calls1: ReadonlyArray<Call> = [
    { tool: "read", input: { filePath: "src/parser/parser0.ts" }, output: "export const parse = 1" },
    { tool: "bash", input: { command: "npm test -- parser0" }, output: "PASS" },
  ]
  const calls2: ReadonlyArray<Call> = [
    { tool: "read", input: { filePath: "src/router/router1.ts" }, output: "export const route = 1" },
    {
      tool: "edit",
      input: { filePath: "src/router/router1.ts", oldString: "a", newString: "b" },
      output: "Edit applied.",
    },
    { tool: "bash", input: { command: "npm test -- router1" }, error: "TypeError: router1 is not a function" },
  ]
  const history = [user("u1", request1), step("a1", "u1", calls1), user("u2", request2), step("a2", "u2", calls2)]
  // A summary of turn 1 whose prose names its request (and so its file), and whose facts block alone names its
  // command; then turn 2 verbatim.
  const summary = [
    "## Objective",
    `- ${request1}`,
    "",
    "## Facts (from the log)",
    "### Files read",
    "- `src/parser/parser0.ts`",
    "### Files edited",
    "(none)",
    "### Commands",
    "- `npm test -- parser0` — ok",
  ].join("\n")
  const window = [shownSummary(summary), shownUser(request2), ...shownStep("a2", calls2)]

  it("given a summary of turn 1 and turn 2 verbatim, then it counts 8 artifacts: 8 named, 7 bare, 5 verbatim", () => {
    // The artifacts: parser0.ts and router1.ts read, router1.ts edited, the two test commands, router1's error, the
    // two requests. Without the facts block, `npm test -- parser0` is named nowhere; verbatim only (no summary), none
    // of turn 1's three (its file, command and request: the request's keywords are not half in turn 2's text).
    expect(Retention.sample(history, "You are a coding agent.", window)).toEqual({
      artifacts: 8,
      named: 8,
      bare: 7,
      unindexed: 7,
      verbatim: 5,
    })
  })

  it("given turn 1's command only in the summary's reach index, then it is named bare, not unindexed", () => {
    // The same summary with the command moved from the facts block to an index line of Completed (ADR 0060).
    const indexed = summary
      .replace("- `npm test -- parser0` — ok", "(none)")
      .replace("## Facts", "## Work State\n### Completed\n- Also ran: `npm test -- parser0`\n\n## Facts")
    const counts = Retention.sample(history, "You are a coding agent.", [
      shownSummary(indexed),
      shownUser(request2),
      ...shownStep("a2", calls2),
    ])
    expect(counts).toEqual({ artifacts: 8, named: 8, bare: 8, unindexed: 7, verbatim: 5 })
  })

  it("given only the system prompt, then nothing is named; an empty history has no artifacts", () => {
    expect(Retention.sample(history, "You are a coding agent.", [])).toEqual({
      artifacts: 8,
      named: 0,
      bare: 0,
      unindexed: 0,
      verbatim: 0,
    })
    expect(Retention.sample([], "x", window)).toEqual({
      artifacts: 0,
      named: 0,
      bare: 0,
      unindexed: 0,
      verbatim: 0,
    })
  })

  it("given the skeleton of 0, 1, 2 and 3 previous turns, then it names their requests and calls, not their errors", () => {
    // Turn 2's skeleton: its request, router1.ts read and edited, its test command (4 of 8); its error is in an output.
    // Both turns: turn 1's file, command and request too (7). More turns than the session has: the same.
    const named = (turns: number) => Retention.sample(history, "s", Retention.skeletonOf(history, turns).window).bare
    expect([0, 1, 2, 3].map(named)).toEqual([0, 4, 7, 7])
    expect(Retention.skeletonOf(history, 0)).toEqual({ window: [], tokens: Tokens.estimate("[]") })
    expect(Retention.skeletonOf(history, 1).window.map((s) => s.message.role)).toEqual(["user", "assistant"])
  })

  it("sums samples, and shares over the artifacts", () => {
    const totals = Retention.add(
      Retention.add(Retention.empty, { artifacts: 8, named: 8, bare: 7, unindexed: 6, verbatim: 5 }),
      { artifacts: 4, named: 1, bare: 1, unindexed: 1, verbatim: 0 },
    )
    expect(totals).toEqual({ samples: 2, artifacts: 12, named: 9, bare: 8, unindexed: 7, verbatim: 5 })
    expect(Retention.add(totals, totals).samples).toBe(4)
    expect(Retention.share(totals.bare, totals)).toBe("66.7%")
    expect(Retention.share(0, Retention.empty)).toBe("–")
  })
})

describe("Retention at every turn's start (a property against a model of sets)", () => {
  // A session of `n` turns, turn k reading `src/m/file{k}.ts` for request `Do task{k}q`; at turn i's start, a window of
  // some earlier turns verbatim and a summary whose prose names some others' files and requests and whose facts block
  // names yet others' files, and whose reach index names yet others' files by name in their folder's line. The model:
  // the artifacts so far are 2 per earlier turn (its read, its request); a turn is named as sent when verbatim, in the
  // prose or (its file only) in the facts block or the index; bare without the facts block; unindexed without the
  // index too; verbatim only when shown verbatim.
  const where = fc.constantFrom("verbatim", "prose", "index", "facts", "none")
  it("given random sessions and windows, then the sums equal the model's", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(where, { minLength: 20, maxLength: 20 }), { minLength: 1, maxLength: 12 }),
        (turns) => {
          const n = turns.length
          const request = (k: number) => `Do task${k}q`
          const file = (k: number) => `src/m/file${k}.ts`
          const calls = (k: number): ReadonlyArray<Call> => [
            { tool: "read", input: { filePath: file(k) }, output: "x" },
          ]
          const messages = Array.from({ length: n }, (_, k) => [
            user(`u${k}`, request(k)),
            step(`a${k}`, `u${k}`, calls(k)),
          ]).flat()
          let totals = Retention.empty
          let model = Retention.empty
          for (let i = 1; i < n; i++) {
            // Turn i's start: how each earlier turn k is shown (`turns[i][k]`).
            const shownAs = (k: number) => turns[i]![k]!
            const earlier = Array.from({ length: i }, (_, k) => k)
            const prose = earlier.filter((k) => shownAs(k) === "prose").map((k) => `- ${request(k)} in ${file(k)}`)
            const facts = earlier.filter((k) => shownAs(k) === "facts").map((k) => `- \`${file(k)}\``)
            // The reach index (ADR 0060): the file by name in its folder's line.
            const index = earlier.filter((k) => shownAs(k) === "index").map((k) => `\`file${k}.ts\``)
            const summary = [
              "## Objective",
              ...prose,
              "",
              "## Relevant Files",
              ...(index.length === 0 ? [] : [`- Also in \`src/m/\`: ${index.join(", ")}`]),
              "",
              "## Facts (from the log)",
              "### Files read",
              ...facts,
            ].join("\n")
            const window = [
              shownSummary(summary),
              ...earlier
                .filter((k) => shownAs(k) === "verbatim")
                .flatMap((k) => [shownUser(request(k)), ...shownStep(`a${k}`, calls(k))]),
            ]
            totals = Retention.add(totals, Retention.sample(messages.slice(0, 2 * i), "system", window))
            const count = (ways: ReadonlyArray<string>, both: boolean) =>
              earlier.reduce((c, k) => c + (ways.includes(shownAs(k)) ? (both ? 2 : 1) : 0), 0)
            model = Retention.add(model, {
              artifacts: 2 * i,
              // A turn in the facts block or the index names its file only (1); verbatim or in the prose, both (2).
              named: count(["verbatim", "prose"], true) + count(["facts", "index"], false),
              bare: count(["verbatim", "prose"], true) + count(["index"], false),
              unindexed: count(["verbatim", "prose"], true),
              verbatim: count(["verbatim"], true),
            })
          }
          expect(totals).toEqual(model)
        },
      ),
    )
  })
})

describe("the generator's returning turns", () => {
  const options = { turns: 30, breaks: 0 }

  it("given returns, then the session is the same but for the returning turns' requests", () => {
    const plain = generate(7, options)
    const returning = generate(7, { ...options, returns: 0.5 })
    expect(returning.map(({ at, steps }) => ({ at, steps }))).toEqual(plain.map(({ at, steps }) => ({ at, steps })))
    const changed = returning.flatMap((t, i) => (t.request !== plain[i]!.request ? [i] : []))
    expect(changed).toEqual(returning.flatMap((t, i) => (t.returnsTo !== undefined ? [i] : [])))
    expect(changed.length).toBeGreaterThan(5)
  })

  it("given a returning turn, then it names and carries an earlier turn's first read, at least two turns back", () => {
    const turns = generate(11, { ...options, returns: 0.4 })
    for (const [t, turn] of turns.entries()) {
      if (turn.returnsTo === undefined) continue
      const to = turn.returnsToTurn!
      expect(t).toBeGreaterThanOrEqual(FIRST_RETURN)
      expect(to).toBeLessThanOrEqual(t - 2)
      expect(turn.returnsTo).toBe(turns[to]!.steps[0]!.tools[0])
      expect(turn.request).toContain(String(turn.returnsTo.input.filePath))
    }
  })

  it("at the boundaries: no returning turn before the third, none at share 0, every eligible one at share 1", () => {
    const plain = generate(3, options)
    expect(withReturns(plain, 3, 0)).toBe(plain)
    const all = withReturns(plain, 3, 1)
    expect(all.slice(0, FIRST_RETURN).every((t) => t.returnsTo === undefined)).toBe(true)
    expect(all.slice(FIRST_RETURN).every((t) => t.returnsTo !== undefined)).toBe(true)
    // The turn just before the first returning one may not be returned to (it is the previous turn).
    expect(all[FIRST_RETURN]!.returnsToTurn).toBe(0)
  })

  it("given a larger share, then the turns that returned at a smaller one still return", () => {
    const plain = generate(5, options)
    const some = withReturns(plain, 5, 0.2)
    const more = withReturns(plain, 5, 0.6)
    for (const [i, t] of some.entries())
      if (t.returnsTo !== undefined) expect(more[i]!.returnsToTurn).toBe(t.returnsToTurn)
  })
})
