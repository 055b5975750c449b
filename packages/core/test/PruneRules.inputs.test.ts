/**
 * The zero-cost rules that clear tool inputs, at their boundaries: `superseded-writes` (what counts as a write, an edit
 * and a whole read of the same path, and the order), `errored-inputs(n)` at n − 1, n and n + 1 turns; both composed
 * with `Strategy.withRules`, and batched by cache-aware (a warm cache whose walk clears nothing waits; cold, a pivot
 * or a walk that clears something, they apply). A property against a reference model is in
 * `PruneRules.inputs.property.test.ts`.
 */
import { BuiltInStrategies, CacheAwareStrategy, type Message, PruneRules, Render, Strategy } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { assistant, completed, errored, tool, user } from "./support/build.ts"

const LIMITS = { context: 100_000, output: 32_000 }
const WARM: Strategy.Cache = { lastCallAt: 0, ttl: 10, cold: false, atPivot: false }
const inputOf = (messages: ReadonlyArray<Message.Message>, cache: Strategy.Cache = WARM): Strategy.Input => ({
  messages,
  now: 0,
  cache,
  config: {},
  limits: LIMITS,
  compactionLimits: LIMITS,
  prune: {},
  rates: undefined,
  mayCompact: true,
})

const BIG = "const x = 1\n".repeat(100)
const writeOf = (path: string, extra: Record<string, unknown> = {}) =>
  tool("write", completed("Wrote file successfully.", { input: { filePath: path, content: BIG, ...extra } }))
const editOf = (path: string) =>
  tool("edit", completed("Edit applied.", { input: { filePath: path, oldString: BIG, newString: `${BIG}!` } }))
const readOf = (path: string, extra: Record<string, unknown> = {}, compactedAt?: number) =>
  tool(
    "read",
    completed(`<file>${BIG}</file>`, {
      input: { filePath: path, ...extra },
      ...(compactedAt === undefined ? {} : { compactedAt }),
    }),
  )
const failedRead = (path: string) => tool("read", { status: "error", input: { filePath: path }, error: "ENOENT" })

const superseded = (...steps: ReadonlyArray<ReadonlyArray<ReturnType<typeof tool>>>) => {
  const messages = [
    user("u1", "go"),
    ...steps.map((parts, i) => assistant(`a${i}`, "u1", parts, { finish: "tool-calls" })),
  ]
  return PruneRules.supersededWrites.select(inputOf(messages)).map((p) => p.partId)
}

describe("superseded-writes", () => {
  it("given a write of F and a later whole read of F, then the write's input is cleared with its reason", () => {
    const messages = [
      user("u1", "go"),
      assistant("a0", "u1", [writeOf("src/a.ts")], { finish: "tool-calls" }),
      assistant("a1", "u1", [readOf("src/a.ts")], { finish: "tool-calls" }),
    ]
    expect(PruneRules.supersededWrites.select(inputOf(messages))).toEqual([
      {
        messageId: "msg_a0",
        partId: "prt_a0_0",
        rule: "superseded-writes",
        reason: "write of src/a.ts superseded by the later read prt_a1_0",
        target: "input",
      },
    ])
  })

  it("given an edit, a multiedit-free edit and the text editor's create and str_replace, then each counts", () => {
    expect(superseded([editOf("a.ts")], [readOf("a.ts")])).toEqual(["prt_a0_0"])
    const editor = (command: string, extra: Record<string, unknown>) =>
      tool("str_replace_based_edit_tool", completed("ok", { input: { command, path: "a.ts", ...extra } }))
    expect(
      superseded(
        [editor("create", { file_text: BIG })],
        [editor("str_replace", { old_str: BIG, new_str: BIG })],
        [editor("view", {})],
      ),
    ).toEqual(["prt_a0_0", "prt_a1_0"])
    // A view with a range is not a whole read.
    expect(superseded([editor("create", { file_text: BIG })], [editor("view", { view_range: [1, 5] })])).toEqual([])
  })

  it("given the read before the write, another path, a partial read, a failed read or a cleared read, then nothing", () => {
    expect(superseded([readOf("a.ts")], [writeOf("a.ts")])).toEqual([])
    expect(superseded([writeOf("a.ts")], [readOf("b.ts")])).toEqual([])
    expect(superseded([writeOf("a.ts")], [readOf("./a.ts")])).toEqual([])
    expect(superseded([writeOf("a.ts")], [readOf("a.ts", { offset: 10 })])).toEqual([])
    expect(superseded([writeOf("a.ts")], [readOf("a.ts", { limit: 50 })])).toEqual([])
    expect(superseded([writeOf("a.ts")], [failedRead("a.ts")])).toEqual([])
    expect(superseded([writeOf("a.ts")], [readOf("a.ts", {}, 5)])).toEqual([])
    // offset: null is no offset.
    expect(superseded([writeOf("a.ts")], [readOf("a.ts", { offset: null })])).toEqual(["prt_a0_0"])
  })

  it("given a short write, a failed write or an input cleared already, then nothing; two writes read once, both", () => {
    const short = tool("write", completed("ok", { input: { filePath: "a.ts", content: "x" } }))
    const failed = tool("write", { ...errored("EACCES"), input: { filePath: "a.ts", content: BIG } })
    const done = tool("write", completed("ok", { input: { filePath: "a.ts", content: BIG }, inputClearedAt: 3 }))
    expect(superseded([short, failed, done], [readOf("a.ts")])).toEqual([])
    expect(superseded([writeOf("a.ts"), editOf("a.ts")], [readOf("a.ts")])).toEqual(["prt_a0_0", "prt_a0_1"])
    // A write after the last read is not superseded; the one before it is.
    expect(superseded([writeOf("a.ts")], [readOf("a.ts")], [editOf("a.ts")])).toEqual(["prt_a0_0"])
  })

  it("accessOf: OpenCode's and other agents' names; an unknown tool or text editor command is nothing", () => {
    const of = (name: string, input: Record<string, unknown> = {}) =>
      PruneRules.accessOf({
        type: "tool",
        id: "prt_1" as never,
        callId: "c",
        tool: name,
        state: completed("", { input }) as never,
      })
    expect(["write", "create", "write_file"].map((n) => of(n))).toEqual(["write", "write", "write"])
    expect(["edit", "multiedit", "str_replace", "edit_file"].map((n) => of(n))).toEqual([
      "edit",
      "edit",
      "edit",
      "edit",
    ])
    expect(["read", "view", "read_file"].map((n) => of(n))).toEqual(["read", "read", "read"])
    expect(of("bash")).toBeUndefined()
    expect(of("str_replace_editor", { command: "insert" })).toBe("edit")
    expect(of("str_replace_editor", { command: "undo_edit" })).toBeUndefined()
    expect(of("str_replace_editor")).toBeUndefined()
  })
})

describe("errored-inputs(n)", () => {
  const failedEdit = tool("edit", {
    status: "error",
    input: { filePath: "a.ts", oldString: BIG, newString: "y" },
    error: "oldString not found in content",
  })
  // The failed edit in turn 1, then `later` more turns.
  const sessionWith = (later: number, part = failedEdit) => [
    user("u0", "go"),
    assistant("a0", "u0", [part], { finish: "tool-calls" }),
    ...Array.from({ length: later }, (_, i) => [
      user(`u${i + 1}`, "next"),
      assistant(`b${i + 1}`, `u${i + 1}`, "ok"),
    ]).flat(),
  ]
  const chosen = (n: number, later: number, part = failedEdit) =>
    PruneRules.erroredInputs(n)
      .select(inputOf(sessionWith(later, part)))
      .map((p) => [p.partId, p.target, p.reason])

  it("given n = 2 and n − 1, n and n + 1 turns since the failure, then cleared at n and n + 1 only", () => {
    expect(chosen(2, 1)).toEqual([])
    expect(chosen(2, 2)).toEqual([["prt_a0_0", "input", "edit failed 2 turns ago"]])
    expect(chosen(2, 3)).toEqual([["prt_a0_0", "input", "edit failed 3 turns ago"]])
  })

  it("given n = 0, then at once; the rule's name is errored-inputs", () => {
    expect(chosen(0, 0)).toEqual([["prt_a0_0", "input", "edit failed 0 turns ago"]])
    expect(chosen(1, 1)).toEqual([["prt_a0_0", "input", "edit failed 1 turn ago"]])
    expect(PruneRules.erroredInputs(0).name).toBe("errored-inputs")
  })

  it("given a completed call, an interrupted one, a short input or one cleared already, then nothing", () => {
    expect(chosen(0, 3, editOf("a.ts"))).toEqual([])
    expect(
      chosen(0, 3, { ...failedEdit, state: { ...failedEdit.state, metadata: { interrupted: true } } } as never),
    ).toEqual([])
    expect(chosen(0, 3, tool("bash", { status: "error", input: { command: "npm test" }, error: "exit 1" }))).toEqual([])
    expect(chosen(0, 3, { ...failedEdit, state: { ...failedEdit.state, inputClearedAt: 1 } } as never)).toEqual([])
  })

  it("given a negative or fractional n, then a RangeError in one line", () => {
    expect(() => PruneRules.erroredInputs(-1)).toThrow(/^erroredInputs: turns must be a whole number >= 0, got -1$/)
    expect(() => PruneRules.erroredInputs(1.5)).toThrow(RangeError)
  })
})

describe("the input rules composed, and batched by cache-aware", () => {
  // A write read back, and a failed edit two turns old; outputs far too small for cache-aware's batched walk.
  const messages = [
    user("u0", "go"),
    assistant("a0", "u0", [writeOf("a.ts"), readOf("a.ts")], { finish: "tool-calls" }),
    assistant(
      "a1",
      "u0",
      [
        tool("edit", {
          status: "error",
          input: { filePath: "a.ts", oldString: BIG, newString: "" },
          error: "no match",
        }),
      ],
      { finish: "tool-calls" },
    ),
    assistant("a2", "u0", "done"),
    user("u1", "next"),
    assistant("b1", "u1", "ok"),
    user("u2", "next"),
    assistant("b2", "u2", "ok"),
  ]
  const rules = [PruneRules.supersededWrites, PruneRules.erroredInputs(2)] as const

  it("given OpenCode with the rules, then after a step both inputs are chosen, in window order", () => {
    const decision = Strategy.withRules({ name: "base" }, ...rules).afterStep!(inputOf(messages))
    expect(decision._tag === "Prune" && decision.parts.map((p) => [p.partId, p.rule, p.target])).toEqual([
      ["prt_a0_0", "superseded-writes", "input"],
      ["prt_a1_0", "errored-inputs", "input"],
    ])
  })

  it("given cache-aware on a warm cache whose batched walk clears nothing, then the rules wait", () => {
    const strategy = Strategy.withRules(CacheAwareStrategy.strategy, ...rules)
    const decision = strategy.afterStep!({ ...inputOf(messages), config: { prune: true } })
    expect(decision._tag === "Prune" && decision.parts).toEqual([])
    expect(Strategy.prunesNow({ ...inputOf(messages), config: { prune: true } }, decision)).toBe(false)
  })

  it("given cache-aware on a cold cache or at a pivot, then they apply", () => {
    const strategy = Strategy.withRules(CacheAwareStrategy.strategy, ...rules)
    for (const cache of [
      { ...WARM, cold: true },
      { ...WARM, atPivot: true },
    ]) {
      const decision = strategy.afterStep!({ ...inputOf(messages, cache), config: { prune: true } })
      expect(decision._tag === "Prune" && decision.parts.map((p) => p.partId)).toEqual(["prt_a0_0", "prt_a1_0"])
    }
  })

  it("given cache-aware on a warm cache whose walk clears a batch, then they ride along with it", () => {
    const big = (name: string) => tool("read", completed("o".repeat(4 * 30_000), { input: { filePath: name } }))
    const heavy = [
      user("o0", "old"),
      assistant("oa", "o0", [big("x1"), big("x2"), big("x3"), big("x4")], { finish: "tool-calls" }),
      ...messages,
    ]
    const strategy = Strategy.withRules(CacheAwareStrategy.strategy, ...rules)
    const input = { ...inputOf(heavy), config: { prune: true } }
    const decision = strategy.afterStep!(input)
    expect(Strategy.prunesNow(input, { ...decision, parts: [] } as Strategy.Decision)).toBe(true)
    expect(decision._tag === "Prune" && decision.parts.map((p) => p.partId)).toEqual(["prt_a0_0", "prt_a1_0"])
  })

  it("BuiltInStrategies names the three rules, each found by its name", () => {
    expect(BuiltInStrategies.rules.map((r) => r.name)).toEqual([
      "duplicate-calls",
      "superseded-writes",
      "errored-inputs",
    ])
    expect(BuiltInStrategies.ruleNamed("superseded-writes")).toBe(PruneRules.supersededWrites)
    expect(BuiltInStrategies.ruleNamed("errored-input")).toBeUndefined()
  })

  it("the placeholder the rules lead to names the input's recall id", () => {
    expect(Render.clearedInputText(Render.inputRecallId("prt_a0_0"))).toBe(
      "[Old tool input cleared — recall id: prt_a0_0-input]",
    )
  })
})
