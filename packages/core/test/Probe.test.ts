/**
 * Probes (issue 20 item 5, optional): questions derived from a retention check's artifacts, the judge's reply parsed
 * by number, and answers graded by the retention check's own naming rule; and the ledger carrying a recorded
 * `ProbesAnswered` beside its pivot, with the judge's call billed as a `probe` call.
 */
import { type ArtifactCheck, type Events, Ledger, Probe, type Tokens } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as E from "./support/events.ts"
import { RUNS } from "./support/runs.ts"
import { SAMPLES } from "./support/secrets.ts"

type Event = Events.Event
const artifact = (kind: ArtifactCheck.Kind, text: string, named = false): ArtifactCheck.Artifact => ({
  kind,
  text,
  named,
})

describe("Probe.questions", () => {
  it("given no artifact, then there is no question", () => {
    expect(Probe.questions([])).toEqual([])
  })

  it("given artifacts of some kinds, then one question per kind present, in a fixed order, each expecting its kind's artifacts", () => {
    const asked = Probe.questions([
      artifact("command", "npm test"),
      artifact("file-edited", "src/a.ts"),
      artifact("file-edited", "src/b.ts"),
      artifact("request", "fix the parser"),
    ])
    expect(asked.map((q) => q.kind)).toEqual(["request", "file-edited", "command"])
    expect(asked[1]!.expected).toEqual(["src/a.ts", "src/b.ts"])
    expect(asked[1]!.question).toBe("Which files did you edit (change or create)? List every path.")
  })

  it("given an error in the span, then the edit question names the first error, cut to its bound", () => {
    const long = `TypeError: ${"x".repeat(200)}`
    const asked = Probe.questions([
      artifact("file-edited", "src/a.ts"),
      artifact("error", long),
      artifact("error", "b"),
    ])
    const edit = asked.find((q) => q.kind === "file-edited")!
    const quoted = edit.question.match(/to fix "(.*)"\?/)?.[1]
    expect(quoted?.startsWith("TypeError: xxx")).toBe(true)
    expect(quoted?.length).toBe(Probe.HINT_CHARS)
  })

  it("given an error holding a secret of any kind, then the question quotes it redacted: the judge never gets the secret", () => {
    for (const sample of SAMPLES) {
      const asked = Probe.questions([artifact("file-edited", "src/a.ts"), artifact("error", `bash: ${sample.text}`)])
      const question = asked.find((q) => q.kind === "file-edited")!.question
      expect(question.includes(sample.secret.slice(0, 40)), sample.kind).toBe(false)
    }
  })

  it("is deterministic: the same artifacts always give the same questions", () => {
    const kinds = fc.constantFrom<ArtifactCheck.Kind>("file-read", "file-edited", "command", "error", "request")
    fc.assert(
      fc.property(fc.array(fc.record({ kind: kinds, text: fc.string(), named: fc.boolean() })), (artifacts) => {
        const asked = Probe.questions(artifacts)
        expect(Probe.questions(artifacts)).toEqual(asked)
        // Every artifact is expected by exactly the question of its kind.
        expect(asked.flatMap((q) => q.expected).length).toBe(artifacts.length)
        expect(new Set(asked.map((q) => q.kind)).size).toBe(asked.length)
      }),
      RUNS,
    )
  })
})

describe("Probe.parseAnswers", () => {
  it("reads each numbered answer up to the next, multi-line answers included", () => {
    expect(Probe.parseAnswers("[1] src/a.ts\n  src/b.ts\n[2] npm test", 2)).toEqual([
      "src/a.ts\n  src/b.ts",
      "npm test",
    ])
  })

  it("given a missing, repeated, out-of-range or mid-line number, then: missing is empty, the first answer wins, the rest is ignored", () => {
    const reply = "preamble\n[2] first\n[2] second\n[3] out of range\n[0] zero\nsee [1] inline"
    expect(Probe.parseAnswers(reply, 2)).toEqual(["", "first"])
  })

  it("given an answer longer than the bound, then it is cut to ANSWER_CHARS; at the bound it is kept whole", () => {
    const at = "a".repeat(Probe.ANSWER_CHARS)
    expect(Probe.parseAnswers(`[1] ${at}`, 1)).toEqual([at])
    expect(Probe.parseAnswers(`[1] ${at}b`, 1)).toEqual([at])
  })

  it("given no question, then no answer", () => {
    expect(Probe.parseAnswers("[1] anything", 0)).toEqual([])
  })
})

describe("Probe.grade", () => {
  const asked = Probe.questions([
    artifact("file-read", "/repo/src/config.json"),
    artifact("file-edited", "/repo/src/parser.ts"),
    artifact("command", "npm test -- parser\nwith a second line"),
    artifact("error", "bash: Expected ';' at 3:14"),
    artifact("request", "Please refactor the tokenizer and keep the public API stable"),
  ])

  it("finds an artifact an answer names by the retention check's rule (path or last segment, first line, message, keywords)", () => {
    const probes = Probe.grade(asked, [
      "The tokenizer refactor, keeping the public API stable.",
      "parser.ts",
      "config.json",
      "npm test -- parser",
      "Expected ';' at 3:14",
    ])
    expect(probes.flatMap((p) => p.expected.map((e) => e.found))).toEqual([true, true, true, true, true])
    expect(Probe.tally(probes)).toEqual({ expected: 5, found: 5 })
  })

  it("given a file named in the wrong answer, then it is not found: the question asks what happened to it", () => {
    // The edited file given as read, and the read file as edited.
    const probes = Probe.grade(asked, ["unknown", "/repo/src/config.json", "/repo/src/parser.ts", "unknown", "unknown"])
    expect(probes.map((p) => p.expected[0]!.found)).toEqual([false, false, false, false, false])
    expect(Probe.tally(probes)).toEqual({ expected: 5, found: 0 })
  })

  it("given fewer answers than questions, then the unanswered find nothing", () => {
    const probes = Probe.grade(asked, ["tokenizer public stable refactor"])
    expect(probes.map((p) => p.answer)).toEqual(["tokenizer public stable refactor", "", "", "", ""])
    expect(Probe.tally(probes).found).toBe(1)
  })

  it("an answer quoting every expected artifact finds them all, whatever the artifacts", () => {
    const kinds = fc.constantFrom<ArtifactCheck.Kind>("file-read", "file-edited", "command", "error", "request")
    // Single spaces: the rule compares a command's first line with its whitespace collapsed.
    const text = fc.stringMatching(/^[a-z][a-z0-9./_-]{2,20}( [a-z0-9./_-]{1,10}){0,3}$/)
    fc.assert(
      fc.property(fc.array(fc.record({ kind: kinds, text, named: fc.boolean() }), { minLength: 1 }), (artifacts) => {
        const questions = Probe.questions(artifacts)
        const probes = Probe.grade(
          questions,
          questions.map((q) => q.expected.join("\n")),
        )
        expect(Probe.tally(probes)).toEqual({ expected: artifacts.length, found: artifacts.length })
      }),
      RUNS,
    )
  })
})

describe("the ledger and ProbesAnswered", () => {
  const usage = (input: number, output: number): Tokens.TokenUsage => ({
    input,
    output,
    reasoning: 0,
    cacheRead: 0,
    cacheWrite: 0,
  })
  const probes: ReadonlyArray<Probe.Probe> = [
    { kind: "request", question: "q", answer: "a", expected: [{ text: "fix the parser", found: false }] },
  ]
  const base: Array<Event> = [
    E.started(),
    E.user("u1", "fix the parser"),
    E.assistant("a1", "u1", "working", { tokens: usage(1_000, 10) }),
    E.marker("m1"),
    E.compactionStarted("m1", "s1", { head: [E.id("msg_u1"), E.id("msg_a1")] }),
    E.summaryFinished("m1", "s1", "the parser"),
  ]
  const answered: Event = {
    _tag: "ProbesAnswered",
    at: 1,
    markerId: E.id("msg_m1"),
    model: { providerId: "anthropic", modelId: "judge" },
    usage: usage(300, 20),
    probes,
  }

  it("given a recorded ProbesAnswered, then its pivot's entry carries it and the judge's call is billed as a probe call, apart from the net saving", () => {
    const without = Ledger.fold(base)
    const withProbes = Ledger.fold([...base, answered, E.assistant("a2", "u1", "ok", { tokens: usage(50, 5) })])
    const entry = Ledger.entries(withProbes)[0]!
    expect(entry.probes).toEqual({ model: { providerId: "anthropic", modelId: "judge" }, probes })
    const probeCall = Ledger.calls(withProbes).find((c) => c.kind === "probe")
    // Anthropic's default multipliers: 300 input + 20 output × 5.
    expect(probeCall).toMatchObject({ messageId: E.id("msg_m1"), cost: 400, input: 0, stablePrefix: 0 })
    expect(Ledger.totals(withProbes).probeCalls).toBe(1)
    expect(Ledger.totals(withProbes).cost).toBe(Ledger.totals(without).cost + 400 + 50 + 25)
    // The net saving is the compaction's: the same as without the probes over the same calls.
    const plain = Ledger.fold([...base, E.assistant("a2", "u1", "ok", { tokens: usage(50, 5) })])
    expect(entry.net).toBe(Ledger.entries(plain)[0]!.net)
    expect(Ledger.entries(without)[0]!.probes).toBeUndefined()
  })

  it("given a judge that failed, then the entry says why and no call is billed", () => {
    const failed: Event = { _tag: "ProbesAnswered", at: 1, markerId: E.id("msg_m1"), probes: [], error: "timeout" }
    const ledger = Ledger.fold([...base, failed])
    expect(Ledger.entries(ledger)[0]!.probes).toEqual({ probes: [], error: "timeout" })
    expect(Ledger.totals(ledger).probeCalls).toBe(0)
  })
})
