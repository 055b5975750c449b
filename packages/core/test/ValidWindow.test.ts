/** The model-input invariant (`ValidWindow`): the checker names each broken rule, the repair fixes it, and every window
 * pivot builds — live, at every version, for any plan — satisfies it without repair. */
import { type Events, type ModelMessage, Render, ValidWindow, Window } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  assistant,
  assistantMessage,
  compactionStarted,
  id,
  marker,
  started,
  summaryFinished,
  user,
  userMessage,
} from "./support/events.ts"
import { runs } from "./support/runs.ts"
import { generatedArb } from "./support/sessions.ts"

const RUNS = runs(1000)
const src = (n: string) => id(`msg_${n}`)
const r = (source: string, message: ModelMessage.ModelMessage): Render.Rendered => ({
  sourceMessageId: src(source),
  message,
})
const u = (source: string, text = "hi") => r(source, { role: "user", content: [{ type: "text", text }] })
const call = (toolCallId: string, providerExecuted?: boolean): ModelMessage.ToolCallPart =>
  providerExecuted
    ? { type: "tool-call", toolCallId, toolName: "bash", input: {}, providerExecuted }
    : { type: "tool-call", toolCallId, toolName: "bash", input: {} }
const result = (toolCallId: string, value = "out"): ModelMessage.ToolResultPart => ({
  type: "tool-result",
  toolCallId,
  toolName: "bash",
  output: { type: "text", value },
})
const a = (source: string, ...content: ModelMessage.AssistantModelMessage["content"]) =>
  r(source, { role: "assistant", content })
const t = (source: string, ...content: Array<ModelMessage.ToolResultPart>) => r(source, { role: "tool", content })
const rules = (rendered: ReadonlyArray<Render.Rendered>) => ValidWindow.inputViolations(rendered).map((v) => v.rule)
const placeholder = (toolCallId: string): ModelMessage.ToolResultPart => ({
  type: "tool-result",
  toolCallId,
  toolName: "bash",
  output: { type: "error-text", value: Render.INTERRUPTED_TEXT },
})

describe("ValidWindow.inputViolations and repair, rule by rule", () => {
  it("given a valid input (a call answered right after its message), then no violation and the repair changes nothing", () => {
    const input = [u("1"), a("2", call("c1")), t("2", result("c1")), a("2", { type: "text", text: "done" })]
    expect(ValidWindow.inputViolations(input)).toEqual([])
    expect(ValidWindow.repair(input)).toEqual({ rendered: input, repaired: [] })
  })

  it("given no message, then empty-input, which the repair leaves alone (only an empty session renders nothing)", () => {
    expect(rules([])).toEqual(["empty-input"])
    expect(ValidWindow.repair([])).toEqual({ rendered: [], repaired: [] })
  })

  it("given an assistant first (a truncated history), then first-not-user naming it; the repair puts the history-start user text first and keeps the answer", () => {
    const input = [a("1", call("c1")), t("1", result("c1")), u("2")]
    expect(ValidWindow.inputViolations(input)[0]).toEqual({
      rule: "first-not-user",
      messageId: src("1"),
      reason: "the input starts with an assistant message",
    })
    expect(ValidWindow.repair(input).rendered).toEqual([u("1", ValidWindow.HISTORY_START_TEXT), ...input])
  })

  it("given a user message that renders to an empty text first, then the repair drops the text and still starts with a user message", () => {
    const input = [u("1", ""), a("2", { type: "text", text: "x" })]
    expect(rules(input)).toEqual(["empty-text"])
    expect(ValidWindow.repair(input).rendered).toEqual([
      u("2", ValidWindow.HISTORY_START_TEXT),
      a("2", { type: "text", text: "x" }),
    ])
  })

  it("given a tool result with no call before it, then orphan-result; the repair drops it", () => {
    const input = [u("1"), a("2", { type: "text", text: "x" }), t("2", result("c9"))]
    expect(rules(input)).toEqual(["orphan-result"])
    expect(ValidWindow.repair(input).rendered).toEqual([u("1"), a("2", { type: "text", text: "x" })])
  })

  it("given a result separated from its call by a user message, then unanswered-call and orphan-result; the repair closes the call with the placeholder and drops the stray result", () => {
    const input = [u("1"), a("2", call("c1")), u("3"), t("4", result("c1"))]
    expect(rules(input)).toEqual(["unanswered-call", "orphan-result"])
    expect(ValidWindow.repair(input).rendered).toEqual([u("1"), a("2", call("c1")), t("2", placeholder("c1")), u("3")])
  })

  it("given a call answered twice, then the second answer is an orphan; the repair keeps the first", () => {
    const input = [u("1"), a("2", call("c1")), t("2", result("c1", "first"), result("c1", "second"))]
    expect(rules(input)).toEqual(["orphan-result"])
    expect(ValidWindow.repair(input).rendered).toEqual([u("1"), a("2", call("c1")), t("2", result("c1", "first"))])
  })

  it("given one call id used by two messages, then duplicate-call; the repair drops the later call and its result", () => {
    const input = [u("1"), a("2", call("c1")), t("2", result("c1")), u("3"), a("4", call("c1")), t("4", result("c1"))]
    expect(rules(input)).toEqual(["duplicate-call"])
    expect(ValidWindow.repair(input).rendered).toEqual([u("1"), a("2", call("c1")), t("2", result("c1")), u("3")])
  })

  it("given a provider-executed call without its result, and a provider result without a call, then both are named; the repair closes one and drops the other", () => {
    const input = [u("1"), a("2", call("p1", true), result("p9"))]
    expect(rules(input)).toEqual(["orphan-result", "unanswered-call"])
    expect(ValidWindow.repair(input).rendered).toEqual([u("1"), a("2", call("p1", true), placeholder("p1"))])
  })

  it("given an empty text part and a message with no content, then empty-text and empty-content; the repair drops both", () => {
    const input = [
      r("1", {
        role: "user",
        content: [
          { type: "text", text: "" },
          { type: "text", text: "q" },
        ],
      }),
      r("2", { role: "assistant", content: [] }),
    ]
    expect(rules(input)).toEqual(["empty-text", "empty-content"])
    expect(ValidWindow.repair(input).rendered).toEqual([u("1", "q")])
  })

  it("runs of user messages and of assistant messages are valid (the AI SDK merges a run for strict providers)", () => {
    expect(rules([u("1"), u("2"), a("3", { type: "text", text: "x" }), a("4", { type: "text", text: "y" })])).toEqual(
      [],
    )
  })
})

// Arbitrary rendered inputs, valid or not: roles, call ids from a small pool, results anywhere, empty parts.
const callIds = fc.constantFrom("c1", "c2", "c3")
const renderedArb: fc.Arbitrary<Array<Render.Rendered>> = fc.array(
  fc.oneof(
    fc.record({ n: fc.nat(9), text: fc.constantFrom("", "x") }).map(({ n, text }) => u(String(n), text)),
    fc
      .record({
        n: fc.nat(9),
        content: fc.array(
          fc.oneof(
            callIds.map((c) => call(c)),
            callIds.map((c) => call(c, true)),
            callIds.map((c) => result(c)),
            fc.constantFrom("", "y").map((text) => ({ type: "text" as const, text })),
          ),
          { maxLength: 4 },
        ),
      })
      .map(({ n, content }) => a(String(n), ...content)),
    fc
      .record({ n: fc.nat(9), ids: fc.array(callIds, { maxLength: 3 }) })
      .map(({ n, ids }) => t(String(n), ...ids.map((c) => result(c)))),
  ),
  { maxLength: 12 },
)

describe("ValidWindow.repair properties", () => {
  it("property: whatever the input, the repaired input breaks no rule (or is empty), and repairing again changes nothing", () => {
    fc.assert(
      fc.property(renderedArb, (input) => {
        const { rendered } = ValidWindow.repair(input)
        expect(ValidWindow.inputViolations(rendered).filter((v) => v.rule !== "empty-input")).toEqual([])
        expect(ValidWindow.repair(rendered)).toEqual({ rendered, repaired: [] })
      }),
      RUNS,
    )
  })

  it("property: the repair only removes, closes or adds the history start — every kept text, call and result was in the input, in the same order", () => {
    fc.assert(
      fc.property(renderedArb, (input) => {
        const flat = (xs: ReadonlyArray<Render.Rendered>) =>
          xs.flatMap((x) =>
            (x.message.content as ReadonlyArray<{ type: string; text?: string; toolCallId?: string; output?: unknown }>)
              .filter((p) => !(p.type === "tool-result" && JSON.stringify(p.output).includes(Render.INTERRUPTED_TEXT)))
              .filter((p) => p.text !== ValidWindow.HISTORY_START_TEXT)
              .map((p) => `${x.message.role}:${p.type}:${p.text ?? p.toolCallId}`),
          )
        const kept = flat(ValidWindow.repair(input).rendered)
        const original = flat(input)
        let i = 0
        for (const item of kept) {
          while (i < original.length && original[i] !== item) i++
          expect(i).toBeLessThan(original.length)
          i++
        }
      }),
      RUNS,
    )
  })
})

describe("ValidWindow over live sessions", () => {
  it("property: at every version of a generated session the window is in recorded order and what is sent breaks no rule; unrepaired it breaks none unless a user message renders to nothing", () => {
    fc.assert(
      fc.property(generatedArb(30), ({ events }) => {
        let window = Window.initial
        for (const event of events) {
          window = Window.evolve(window, event)
          expect(ValidWindow.orderViolations(window)).toEqual([])
          const messages = Window.messages(window)
          const sent = Window.render(window)
          expect(ValidWindow.inputViolations(sent).filter((v) => v.rule !== "empty-input")).toEqual([])
          // An empty user text renders nothing (as in OpenCode): the answer to it may then open the input.
          const silent = messages.some((m) => m.role === "user" && Render.renderMessage(m).length === 0)
          if (silent) continue
          const found = ValidWindow.violations(window)
          if (messages.length === 0) expect(found.map((v) => v.rule)).toEqual(["empty-input"])
          else expect(found).toEqual([])
          expect(sent).toEqual(Render.render(messages))
        }
      }),
      RUNS,
    )
  })
})

describe("ValidWindow.orderViolations: pivots of any plan", () => {
  const pivot = (plan: Partial<Events.CompactionPlan>, between: ReadonlyArray<Events.Event> = []) =>
    Window.fold([
      started(),
      user("u1", "one"),
      assistant("a1", "u1"),
      marker("m"),
      ...between,
      compactionStarted("m", "s", plan),
      summaryFinished("m", "s"),
    ])

  it("given the repro of issue 13 (a tail start recorded after the marker), then the window is marker, summary, then the later messages in recorded order", () => {
    const window = pivot({ tail: [src("a2")], tailStartId: src("a2") }, [user("u2", "two"), assistant("a2", "u2")])
    expect(Window.messages(window).map((m) => m.id)).toEqual([src("m"), src("s"), src("u2"), src("a2")])
    expect(ValidWindow.orderViolations(window)).toEqual([])
  })

  it("given a tail listed out of recorded order, then it is kept in recorded order", () => {
    const window = pivot({ tail: [src("a1"), src("u1")] })
    expect(Window.messages(window).map((m) => m.id)).toEqual([src("m"), src("s"), src("u1"), src("a1")])
  })

  it("given a tail naming unknown ids, the marker or the summary, then only the recorded conversation before the marker is kept", () => {
    const window = pivot({ tail: [src("zz"), src("m"), src("s"), src("a1")] })
    expect(Window.messages(window).map((m) => m.id)).toEqual([src("m"), src("s"), src("a1")])
  })

  it("given an errored summary in a SummaryFinished (a corrupt log), then no pivot forms and the summary keeps its place", () => {
    const errored: Events.Event = {
      _tag: "SummaryFinished",
      at: 99,
      markerId: src("m"),
      summary: assistantMessage("s", "m", "partial", { summary: true, error: { name: "APIError", message: "x" } }),
    }
    const window = Window.fold([started(), user("u1", "one"), marker("m"), compactionStarted("m", "s"), errored])
    expect(window.pivot).toBeUndefined()
    expect(Window.messages(window).map((m) => m.id)).toEqual([src("u1"), src("m"), src("s")])
  })

  it("given a hand-built state out of order, then the checker names the message and a lost message after the marker", () => {
    const good = pivot({ tail: [src("a1")] }, [user("u2", "two")])
    const broken: Window.State = {
      ...good,
      visible: { length: 4, buffer: [src("m"), src("s"), src("u2"), src("a1")] },
    }
    expect(ValidWindow.orderViolations(broken).map((v) => [v.rule, v.messageId])).toEqual([["order", src("a1")]])
    const lost: Window.State = { ...good, visible: { length: 3, buffer: [src("m"), src("s"), src("a1")] } }
    expect(ValidWindow.orderViolations(lost).map((v) => [v.rule, v.messageId])).toEqual([["missing", src("u2")]])
  })

  it("given a plugin's replacement that empties the window or reorders it, then replacementViolations refuses it", () => {
    const original = [userMessage("x1", "a"), assistantMessage("x2", "x1")]
    expect(ValidWindow.replacementViolations(original, []).map((v) => v.rule)).toEqual(["empty-input"])
    expect(ValidWindow.replacementViolations(original, [original[1]!, original[0]!]).map((v) => v.rule)).toEqual([
      "order",
      "first-not-user",
    ])
    expect(ValidWindow.replacementViolations(original, [original[0]!])).toEqual([])
    expect(ValidWindow.replacementViolations([], [])).toEqual([])
  })
})

describe("ValidWindow: each violation is one line naming the message, the problem and the rule", () => {
  const lines = (rendered: ReadonlyArray<Render.Rendered>) =>
    ValidWindow.inputViolations(rendered).map(ValidWindow.format)
  const sys = (source: string, content: string) => r(source, { role: "system", content })

  it("given each broken input, then the formatted violations say exactly what is wrong and where", () => {
    expect(ValidWindow.inputViolations([])).toStrictEqual([
      { rule: "empty-input", reason: "the model input has no message" },
    ])
    expect(lines([])).toEqual(["window: the model input has no message (empty-input)"])
    expect(lines([t("1", result("c1")), u("2")])).toEqual([
      `${src("1")}: the input starts with a tool message (first-not-user)`,
      `${src("1")}: tool result c1 answers no open call before it (orphan-result)`,
    ])
    expect(lines([u("1"), a("2", call("c1")), u("3"), t("4", result("c1"))])).toEqual([
      `${src("2")}: tool call c1 has no result right after its message (unanswered-call)`,
      `${src("4")}: tool result c1 answers no open call before it (orphan-result)`,
    ])
    expect(
      lines([u("1"), a("2", call("c1")), t("2", result("c1")), u("3"), a("4", call("c1")), t("4", result("c1"))]),
    ).toEqual([`${src("4")}: tool call id c1 is used twice in the window (duplicate-call)`])
    expect(lines([u("1"), a("2", call("p1", true), result("p9"))])).toEqual([
      `${src("2")}: tool result p9 answers no provider-executed call (orphan-result)`,
      `${src("2")}: provider-executed tool call p1 has no result (unanswered-call)`,
    ])
    expect(lines([u("1", ""), t("2")])).toEqual([
      `${src("1")}: a user message with an empty text part (empty-text)`,
      `${src("2")}: a tool message with no content (empty-content)`,
    ])
  })

  it("given a call in the last message, then it is unanswered: the input ends before its result", () => {
    expect(lines([u("1"), a("2", call("c1"))])).toEqual([
      `${src("2")}: tool call c1 has no result right after its message (unanswered-call)`,
    ])
  })

  it("given an empty reasoning part, then it is no empty text (only text parts must be non-empty)", () => {
    expect(lines([u("1"), a("2", { type: "reasoning", text: "" }, { type: "text", text: "x" })])).toEqual([])
  })

  it("given system messages, then they are skipped: none counts as the first message, and an empty one breaks nothing", () => {
    expect(lines([sys("0", "rules")])).toEqual([])
    expect(lines([sys("0", "rules"), u("1")])).toEqual([])
    expect(lines([sys("0", ""), u("1")])).toEqual([])
    // the repair keeps the system message first and puts the history start after it
    const input = [sys("0", "rules"), a("1", { type: "text", text: "x" })]
    expect(ValidWindow.repair(input).rendered).toEqual([
      sys("0", "rules"),
      u("1", ValidWindow.HISTORY_START_TEXT),
      a("1", { type: "text", text: "x" }),
    ])
  })

  it("given a valid input, then the repair hands back the very same list (nothing is copied)", () => {
    const input = [u("1"), a("2", call("c1")), t("2", result("c1"))]
    expect(ValidWindow.repair(input).rendered).toBe(input)
  })

  it("given a provider-executed call answered in its own message, when another rule is repaired, then the pair is kept as it is", () => {
    const input = [a("1", call("p1", true), result("p1"), { type: "text", text: "x" })]
    expect(ValidWindow.repair(input).rendered).toEqual([u("1", ValidWindow.HISTORY_START_TEXT), ...input])
  })
})

describe("ValidWindow.orderViolations: a hand-built pivot that breaks the rules", () => {
  const lines = (state: Window.State) => ValidWindow.orderViolations(state).map(ValidWindow.format)
  const seq = (...names: ReadonlyArray<string>) => ({ length: names.length, buffer: names.map(src) })
  // marker m answered by summary s, a1 kept as tail, u2 after the marker: the window is m, s, a1, u2
  const good = Window.fold([
    started(),
    user("u1", "one"),
    assistant("a1", "u1"),
    marker("m"),
    assistant("x", "m"),
    compactionStarted("m", "s", { tail: [src("a1")] }),
    summaryFinished("m", "s"),
    user("u2", "two"),
  ])

  it("given the window as folded, then it breaks nothing", () => {
    expect(Window.messages(good).map((m) => m.id)).toEqual([src("m"), src("s"), src("a1"), src("x"), src("u2")])
    expect(lines(good)).toEqual([])
  })

  it("given a window whose first or second message is not the pivot's, then it is named", () => {
    const start = `the window does not start with the pivot ${src("m")}, ${src("s")} (order)`
    expect(lines({ ...good, visible: seq("s", "m", "a1", "x", "u2") })).toEqual([`${src("s")}: ${start}`])
    expect(lines({ ...good, visible: seq("m", "a1", "s", "x", "u2") })).toEqual([`${src("m")}: ${start}`])
    expect(lines({ ...good, visible: seq("a1", "s", "m", "x", "u2") })).toEqual([`${src("a1")}: ${start}`])
  })

  it("given a pivot whose marker is unknown or not a marker, then the marker is named", () => {
    const line = (name: string) => `${src(name)}: the pivot's marker is not a compaction marker (pivot)`
    expect(lines({ ...good, pivot: { markerId: src("zz"), summaryId: src("s") } })).toContain(line("zz"))
    expect(lines({ ...good, pivot: { markerId: src("u1"), summaryId: src("s") } })).toContain(line("u1"))
  })

  it("given a pivot whose summary is unknown, no summary, or another marker's, then the summary is named", () => {
    const line = (name: string) =>
      `${src(name)}: the pivot's summary is not a finished, error-free summary of its marker (pivot)`
    const withSummary = (name: string) =>
      lines({ ...good, pivot: { markerId: src("m"), summaryId: src(name) }, visible: seq("m", name) })
    expect(withSummary("zz")).toContain(line("zz"))
    // x answers the marker but is an ordinary assistant message
    expect(withSummary("x")).toContain(line("x"))
    const other = Window.fold([
      ...[started(), user("u1", "one"), marker("m"), compactionStarted("m", "s"), summaryFinished("m", "s")],
      ...[user("u2", "two"), marker("m2"), compactionStarted("m2", "s2"), summaryFinished("m2", "s2")],
    ])
    const crossed = { ...other, pivot: { markerId: src("m2"), summaryId: src("s") }, visible: seq("m2", "s", "s2") }
    expect(ValidWindow.orderViolations(crossed).map(ValidWindow.format)).toEqual([line("s")])
  })

  it("given a message never recorded, shown twice, or shown before one recorded earlier, then each is named", () => {
    expect(lines({ ...good, visible: seq("m", "s", "a1", "zz", "x", "u2") })).toEqual([
      `${src("zz")}: the window shows a message that was never recorded (order)`,
    ])
    expect(lines({ ...good, visible: seq("m", "s", "a1", "a1", "x", "u2") })).toEqual([
      `${src("a1")}: the window shows this message twice (order)`,
    ])
    expect(lines({ ...good, visible: seq("m", "s", "x", "a1", "u2") })).toEqual([
      `${src("a1")}: recorded before ${src("x")}, but shown after it (order)`,
    ])
    expect(lines({ ...good, visible: seq("m", "s", "a1", "x") })).toEqual([
      `${src("u2")}: recorded after the pivot's marker but not shown (missing)`,
    ])
  })
})

describe("ValidWindow.replacementViolations: shown twice, or moved", () => {
  const original = [userMessage("x1", "a"), userMessage("x2", "b"), userMessage("x3", "c")]
  const [x1, x2, x3] = original as [(typeof original)[0], (typeof original)[0], (typeof original)[0]]

  it("given a message shown twice, then it is named once as shown twice and not as moved", () => {
    expect(ValidWindow.replacementViolations(original, [x1, x1, x2])).toStrictEqual([
      { rule: "order", messageId: x1.id, reason: "the replacement shows this message twice" },
    ])
  })

  it("given a new message between two reordered ones, then the move is still found", () => {
    const added = userMessage("n1", "new")
    expect(ValidWindow.replacementViolations(original, [x2, added, x1, x3])).toStrictEqual([
      { rule: "order", messageId: x1.id, reason: "the replacement moves this message before one it followed" },
    ])
  })
})

describe("ValidWindow.toJson", () => {
  it("given messages, then the JSON is { messages: the repaired rendering }, indented by two spaces", () => {
    const messages = [userMessage("x1", "hi"), assistantMessage("x2", "x1", "hello")]
    const json = ValidWindow.toJson(messages)
    expect(JSON.parse(json)).toEqual({ messages: ValidWindow.render(messages) })
    expect(json.split("\n")[1]).toBe('  "messages": [')
  })
})
