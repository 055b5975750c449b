/**
 * The example-session file the demo plays: a scripted coding-agent session written for people to read and edit.
 *
 * Shape (JSON): `title`, `model` (`providerId`, `modelId`, `limits`), `system` (the agent's system prompt, as lines),
 * `config` (the `compaction` settings), optional `pruneThresholds`, `summaries` (what the scripted compaction model
 * answers, in order, each as a list of Markdown lines; once they run out the runtime's extractive fallback writes the
 * summary) and `turns`: each a user request and the assistant steps that answer it. A step has optional `reasoning`
 * and `text` and the tool calls it made; a tool call has the tool's `input` and either an `output` or an `error`.
 *
 * Two conveniences keep the file small and readable:
 * - an `output` may be `{ "lines": 1800, "sample": "…", "tail": "…" }`, expanded deterministically into that many
 *   realistic lines (see `Expand`);
 * - an input value written as a list of strings (e.g. an edit's `newString`) is joined with newlines.
 */
import { readFileSync } from "node:fs"
import { Config, Model } from "@pivot/core"
import * as Schema from "effect/Schema"
import { packageFile } from "../PackageFiles.ts"

const Count = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))
const Lines = Schema.Array(Schema.String)

/** A large tool output described instead of pasted: how many lines, how it starts and ends, what kind of text. */
export const OutputSpec = Schema.Struct({
  lines: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)),
  sample: Schema.optionalKey(Schema.String),
  tail: Schema.optionalKey(Schema.String),
  style: Schema.optionalKey(Schema.Literals(["code", "prose", "matches", "paths", "log", "tests", "diff"])),
})
export type OutputSpec = typeof OutputSpec.Type

/** One tool call of a step: exactly one of `output` and `error`. */
export const ToolCall = Schema.Struct({
  tool: Schema.String,
  input: Schema.Record(Schema.String, Schema.Unknown),
  output: Schema.optionalKey(Schema.Union([Schema.String, OutputSpec])),
  error: Schema.optionalKey(Schema.String),
})
export type ToolCall = typeof ToolCall.Type

/** One model call of the scripted assistant. A step without tool calls ends the turn. */
export const Step = Schema.Struct({
  reasoning: Schema.optionalKey(Schema.String),
  text: Schema.optionalKey(Schema.String),
  tools: Schema.optionalKey(Schema.Array(ToolCall)),
})
export type Step = typeof Step.Type

/** A user request and the steps that answer it. */
export const Turn = Schema.Struct({
  user: Schema.String,
  steps: Schema.Array(Step).check(Schema.isMinLength(1)),
})
export type Turn = typeof Turn.Type

/** Overrides of OpenCode's prune thresholds (40,000 protected, 20,000 minimum), e.g. scaled to a small model. */
export const PruneThresholds = Schema.Struct({
  protect: Schema.optionalKey(Count),
  minimum: Schema.optionalKey(Count),
  protectedTools: Schema.optionalKey(Schema.Array(Schema.String)),
})
export type PruneThresholds = typeof PruneThresholds.Type

/** A whole example session. */
export const Example = Schema.Struct({
  title: Schema.String,
  notes: Schema.optionalKey(Schema.String),
  model: Schema.Struct({ providerId: Schema.String, modelId: Schema.String, limits: Model.ModelLimits }),
  system: Lines,
  config: Config.CompactionConfig,
  pruneThresholds: Schema.optionalKey(PruneThresholds),
  summaries: Schema.Array(Lines),
  turns: Schema.Array(Turn).check(Schema.isMinLength(1)),
})
export type Example = typeof Example.Type

/** The example bundled with the package. */
export const bundledPath: string = packageFile("examples/coding-session.json")

const decodeExample = Schema.decodeUnknownSync(Example)

/**
 * What the schema cannot say: a tool call has exactly one of `output` and `error`; every step of a turn but the last
 * calls tools (a step without tool calls ends the agent loop) and the last calls none (it answers the user).
 */
const problem = (example: Example): string | undefined => {
  for (const [t, turn] of example.turns.entries())
    for (const [s, step] of turn.steps.entries()) {
      const where = `turn ${t + 1}, step ${s + 1}`
      const last = s === turn.steps.length - 1
      const calls = step.tools ?? []
      if (last && calls.length > 0) return `${where}: the last step of a turn answers the user and calls no tools`
      if (!last && calls.length === 0) return `${where}: only the last step of a turn may end without tool calls`
      for (const [c, call] of calls.entries())
        if ((call.output === undefined) === (call.error === undefined))
          return `${where}, tool call ${c + 1} (${call.tool}): needs exactly one of "output" and "error"`
    }
  return undefined
}

/** Checks parsed JSON against the example shape; throws an `Error` naming what is wrong. */
export const decode = (json: unknown): Example => {
  const example = decodeExample(json)
  const bad = problem(example)
  if (bad !== undefined) throw new Error(bad)
  return example
}

/** Reads and checks an example file; throws an `Error` that names the file and the problem. */
export const load = (path: string): Example => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (cause) {
    throw new Error(`cannot read example ${path}: ${(cause as Error).message}`)
  }
  try {
    return decode(JSON.parse(text))
  } catch (cause) {
    throw new Error(`invalid example ${path}: ${(cause as Error).message}`)
  }
}

/** A summary's (or the system prompt's) text from its lines. */
export const summaryText = (lines: ReadonlyArray<string>): string => lines.join("\n")

/** A tool input as the tool receives it: lists of strings joined with newlines. */
export const toolInput = (input: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input))
    out[key] = Array.isArray(value) && value.every((v) => typeof v === "string") ? value.join("\n") : value
  return out
}
