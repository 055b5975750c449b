/**
 * Probes of a compaction (optional, issue 20 item 5): questions about the span a summary replaced, derived
 * deterministically from its retention check's artifacts ("which files did you edit?"), put to a judge model that
 * sees only the summary, and graded deterministically: an answer finds an artifact when it names it by
 * `ArtifactCheck.names`, the rule the retention check applies to the summary itself.
 *
 * Where the retention check asks whether a path appears anywhere in the summary, a probe asks whether a reader of the
 * summary can tell what happened to it: a file the summary names only as read does not answer "which files did you
 * edit?". Everything here is pure; the runtime makes the call (`Judge`) and records the result (`ProbesAnswered`).
 */
import * as Schema from "effect/Schema"
import { type Artifact, Kind, names } from "./ArtifactCheck.ts"
import * as Facts from "./Facts.ts"
import * as Redaction from "./Redaction.ts"
import * as Text from "./Text.ts"

/** One artifact a question expects, and whether the judge's answer names it. */
export const Expected = Schema.Struct({
  text: Schema.String,
  found: Schema.Boolean,
}).annotate({ identifier: "ProbeExpected" })
export type Expected = typeof Expected.Type

/** One probe: a question about one kind of artifact, the judge's answer, and each artifact it should name. */
export const Probe = Schema.Struct({
  kind: Kind,
  question: Schema.String,
  answer: Schema.String,
  expected: Schema.Array(Expected),
}).annotate({ identifier: "Probe" })
export type Probe = typeof Probe.Type

/** A question before it is answered. */
export interface Question {
  readonly kind: Kind
  readonly question: string
  /** The artifacts of that kind, as the check recorded them. */
  readonly expected: ReadonlyArray<string>
}

/** The longest answer kept (and graded), in characters: a judge's reply is bounded like any recorded text. */
export const ANSWER_CHARS = 2_000

/** The longest excerpt of an artifact a question quotes. */
export const HINT_CHARS = 80

/** The order questions are asked in. */
const ORDER: ReadonlyArray<Kind> = ["request", "file-edited", "file-read", "command", "error"]

const questionOf = (kind: Kind, artifacts: ReadonlyArray<Artifact>): string => {
  switch (kind) {
    case "request":
      return "What did the user ask for? List each request."
    case "file-edited": {
      const error = artifacts.find((a) => a.kind === "error")
      return error === undefined
        ? "Which files did you edit (change or create)? List every path."
        : // The quoted error goes to the judge and into the record: secrets redacted before it is cut.
          `Which files did you edit (change or create), for instance to fix "${Facts.firstLine(Redaction.redact(error.text).text, HINT_CHARS)}"? List every path.`
    }
    case "file-read":
      return "Which files did you read? List every path."
    case "command":
      return "Which commands did you run? Quote each command."
    case "error":
      return "Which errors did you hit? Quote each error message."
  }
}

/** The questions of a check: one per kind of artifact the span had, in a fixed order; none for an empty span. */
export const questions = (artifacts: ReadonlyArray<Artifact>): ReadonlyArray<Question> =>
  ORDER.flatMap((kind) => {
    const expected = artifacts.filter((a) => a.kind === kind).map((a) => a.text)
    return expected.length === 0 ? [] : [{ kind, question: questionOf(kind, artifacts), expected }]
  })

/** The judge's system prompt. */
export const SYSTEM =
  "You answer questions about an earlier part of a conversation, using only the summary you are given. Do not guess: " +
  'when the summary does not say, answer "unknown". Start each answer on a new line with its number in brackets, ' +
  'e.g. "[1] src/app.ts, src/util.ts", and answer every question.'

/** The judge's prompt: the summary, then the numbered questions. */
export const prompt = (summary: string, asked: ReadonlyArray<Question>): string =>
  [
    "The summary:",
    "<summary>",
    summary,
    "</summary>",
    "",
    "The questions:",
    ...asked.map((q, i) => `[${i + 1}] ${q.question}`),
  ].join("\n")

/**
 * The answers in a judge's reply, by number: each answer is the text after its `[n]` up to the next `[m]` at the start
 * of a line (trimmed, cut to `ANSWER_CHARS`); a number answered twice keeps its first answer; an unanswered one is "".
 */
export const parseAnswers = (reply: string, count: number): ReadonlyArray<string> => {
  const answers: Array<string | undefined> = Array.from({ length: count }, () => undefined)
  const marks = [...reply.matchAll(/^[ \t]*\[(\d+)\][ \t]*/gm)]
  marks.forEach((mark, i) => {
    const n = Number(mark[1])
    const end = i + 1 < marks.length ? marks[i + 1]!.index : reply.length
    if (n >= 1 && n <= count && answers[n - 1] === undefined)
      answers[n - 1] = Text.clip(reply.slice(mark.index + mark[0].length, end).trim(), ANSWER_CHARS)
  })
  return answers.map((a) => a ?? "")
}

/** Each question with its answer, graded: every expected artifact found when the answer names it. */
export const grade = (asked: ReadonlyArray<Question>, answers: ReadonlyArray<string>): ReadonlyArray<Probe> =>
  asked.map((q, i) => {
    const answer = answers[i] ?? ""
    return {
      kind: q.kind,
      question: q.question,
      answer,
      expected: q.expected.map((text) => ({ text, found: names(q.kind, text, answer) })),
    }
  })

/** Counts of graded probes: expected artifacts and how many the answers found. */
export const tally = (probes: ReadonlyArray<Probe>): { readonly expected: number; readonly found: number } => {
  let expected = 0
  let found = 0
  for (const p of probes)
    for (const e of p.expected) {
      expected++
      if (e.found) found++
    }
  return { expected, found }
}
