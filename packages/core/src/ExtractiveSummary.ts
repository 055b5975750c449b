/**
 * A deterministic summariser built from the log, with no model (spec §5, "beyond OpenCode"). It is the fallback when
 * the model fails, hangs, returns nothing or returns a summary larger than what it replaces, and the default when no
 * model is configured, so it accepts any input and never throws.
 *
 * It writes the TEMPLATE sections of `Prompt.ts` from what the log shows: the user's requests, the constraints they
 * stated, the errors hit, the edits and commands that succeeded or are still failing, the last unfinished thing and
 * whether the assistant was still working or waiting for the user, then the facts block. Given the previous summary,
 * it keeps that summary's objective and still-true details and adds the new ones without repeating lines. The tail
 * (kept verbatim after the summary) is read only to reconcile state, so that a failure fixed in the tail is not
 * reported as blocked and the next move is not stale.
 */
import * as Facts from "./Facts.ts"
import { attachedPlaceholder, compactionPartOf, isMedia, type Message, type ToolPart } from "./Message.ts"
import { CONTINUE_TEXT, continueText } from "./Prompt.ts"
import * as Render from "./Render.ts"
import * as Text from "./Text.ts"

/** What to summarise. */
export interface Input {
  /** The messages the summary replaces, in order. */
  readonly head: ReadonlyArray<Message>
  /** The text of the summary this one updates. */
  readonly previousSummary?: string | undefined
  /** The messages kept verbatim after the summary; read to reconcile the work state, not summarised. */
  readonly tail?: ReadonlyArray<Message> | undefined
  /** Your tool names mapped to read / edit / command, over OpenCode's (`Facts.toolsOf`). */
  readonly toolKinds?: Facts.ToolKinds | undefined
  /** Whether to write the facts block (default true); without it, its room goes to the reach index (ADR 0065). */
  readonly factsBlock?: boolean | undefined
  /**
   * Keep the whole text, the failures' index included, within `MAX_CHARS` whatever it replaces: for a digest that
   * stands in a prompt whose room reserves exactly `MAX_CHARS` (the runtime's budgeted summariser input).
   */
  readonly withinMaxChars?: boolean | undefined
}

/**
 * The room of a summary that does not name everything it summarises: the output a summary is billed at
 * (`CacheEconomy.DEFAULT_SUMMARY_TOKENS`, 2,000 tokens at the project's four characters a token). The sections keep
 * within `SECTIONS_MAX_CHARS`; the rest is the reach index's (ADR 0060). A summary that names every file, command and
 * error passes it, never past what it replaces (`replacedChars`, ADR 0072); else only the index of what failed may
 * (ADR 0070).
 */
export const MAX_CHARS = 8_000

/** The most characters the sections and the facts block take, before the reach index. */
export const SECTIONS_MAX_CHARS = 6_000

/** How an index line of Relevant Files or Completed starts (`Also in \`dir/\`: …`, `Also ran: …`, `Also edited: …`). */
export const ALSO = "Also"

/** What a section with nothing to say holds. */
export const NONE = "(none)"

/** The next move when the assistant had finished and was waiting for the user. */
export const WAIT_FOR_USER = "(none): the assistant had finished; wait for the user's next request."

// Character budgets of each section's lines; with the headings they stay under MAX_CHARS.
const BUDGET = {
  objective: 1_100,
  details: 1_000,
  completed: 600,
  active: 260,
  blocked: 500,
  next: 450,
  files: 650,
  facts: 1_200,
} as const

/** The longest line of a section (an index line too: a previous summary's lines are read back cut to it). */
export const LINE_MAX = 240

// ---------------------------------------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------------------------------------

/** One line, whitespace collapsed, cut to `max` characters; only the start of a huge text is read. */
const oneLine = (text: string, max = LINE_MAX): string => {
  const line = Text.clip(text, 4 * max)
    .replace(/\s+/g, " ")
    .trim()
  return Text.ellipsis(line, max)
}

const normalise = (line: string): string => line.replace(/\s+/g, " ").trim().toLowerCase()

/** Unique lines in order (compared without case and spacing). */
const unique = (lines: ReadonlyArray<string>): Array<string> => {
  const seen = new Set<string>()
  const out: Array<string> = []
  for (const line of lines) {
    const key = normalise(line)
    if (key === "" || seen.has(key)) continue
    seen.add(key)
    out.push(line)
  }
  return out
}

const bullets = (lines: ReadonlyArray<string>): Array<string> => lines.map((l) => `- ${l}`)

/** Bulleted lines within `budget`, newest (last) kept, or `(none)`. */
const newest = (lines: ReadonlyArray<string>, budget: number): Array<string> => {
  const kept = Facts.newestWithin(bullets(unique(lines)), budget)
  return kept.length > 0 ? kept : [NONE]
}

/** Bulleted lines within `budget`: the first always, then the newest that fit, the rest counted. */
const firstAndNewest = (lines: ReadonlyArray<string>, budget: number): Array<string> => {
  const all = bullets(unique(lines))
  const first = all[0]
  if (first === undefined) return [NONE]
  const rest = Facts.newestWithin(all.slice(1), Math.max(0, budget - first.length - 1))
  return [first, ...rest]
}

// ---------------------------------------------------------------------------------------------------------------------
// Reading the log
// ---------------------------------------------------------------------------------------------------------------------

const SYNTHETIC_TEXTS = new Set([CONTINUE_TEXT, continueText(true)].map(normalise))

/** The user's request in a message, or undefined for markers, synthetic continues and empty messages. */
const requestOf = (message: Message): string | undefined => {
  if (message.role !== "user" || compactionPartOf(message) !== undefined) return undefined
  const pieces: Array<string> = []
  for (const part of message.parts) {
    if (part.type === "text") {
      if (part.synthetic === true || part.ignored === true) continue
      const text = Text.clip(part.text, 20_000)
      if (text.trim() !== "" && !SYNTHETIC_TEXTS.has(normalise(text))) pieces.push(text)
    } else if (part.type === "subtask") pieces.push(`Subtask for ${part.agent}: ${part.description}`)
    else if (part.type === "file" && isMedia(part.mime)) pieces.push(attachedPlaceholder(part))
  }
  const text = pieces.join("\n").trim()
  return text === "" ? undefined : text
}

// Sentences that state a rule or a decision: what to do, not do, keep or prefer.
const CONSTRAINT =
  /\b(?:must|mustn't|never|always|don't|do not|should|shouldn't|avoid|only|prefer|make sure|ensure|without|keep|instead of|required?|important)\b/i

const constraintsOf = (request: string): Array<string> => {
  const text = Text.clip(request, 4_000)
  const sentences = text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s !== "")
  // A one-sentence request is the objective already.
  if (sentences.length < 2) return []
  return sentences.filter((s) => CONSTRAINT.test(s)).map((s) => oneLine(s, 200))
}

/** Whether a message is conversation (not a marker, a summary or a synthetic continue). */
const isReal = (message: Message): boolean =>
  message.role === "assistant" ? message.summary !== true : requestOf(message) !== undefined

const UNFINISHED_REASONS = new Set(["tool-calls", "tool_calls", "tool_use", "length", "max_tokens", "unknown"])

/** Whether the assistant was still working at the end of `messages` (or a user request was unanswered). */
export const midTask = (messages: ReadonlyArray<Message>): boolean => {
  const last = messages.findLast(isReal)
  if (last === undefined) return false
  if (last.role === "user") return true
  if (last.error !== undefined) return !/abort/i.test(last.error.name)
  if (last.parts.some((p) => p.type === "tool" && (p.state.status === "pending" || p.state.status === "running")))
    return true
  return last.finish === undefined || UNFINISHED_REASONS.has(last.finish)
}

const tools = (messages: ReadonlyArray<Message>): Array<ToolPart> => {
  const out: Array<ToolPart> = []
  for (const message of messages)
    if (message.role === "assistant") for (const part of message.parts) if (part.type === "tool") out.push(part)
  return out
}

/** The last non-empty line of a (possibly huge) output. */
const lastLine = (output: string): string => {
  const end = output.length > 2_000 ? output.slice(-2_000) : output
  const lines = end.split("\n").filter((l) => l.trim() !== "")
  return oneLine(lines[lines.length - 1] ?? "", 160)
}

/**
 * A path or command as a code span that names it (ADR 0072): its first line whole, as `ArtifactCheck` looks for it, up
 * to `Facts.MAX_ENTRY_CHARS`; what follows the first line is cut at `min` characters. Two commands that differ only
 * after 160 characters stay two names.
 */
const name = (text: string, min = 160): string => {
  const first = text.trim().split(/\r\n|[\r\n\u2028\u2029]/)[0] ?? ""
  return Facts.code(text, Math.min(Facts.MAX_ENTRY_CHARS, Math.max(min, first.length + 1)))
}

/** What a tool call is about, as a line fragment: the command or path in a code span, else the tool name. */
const subject = (part: ToolPart, kinds: Facts.Tools): string => {
  const target = Facts.targetOf(part, kinds)
  return target === undefined ? `\`${part.tool}\`` : name(target)
}

// A key that identifies "the same thing" across calls: a command, or a path for edits.
const keyOf = (part: ToolPart, kinds: Facts.Tools): string | undefined => {
  const target = Facts.targetOf(part, kinds)
  if (target === undefined) return undefined
  const kind = kinds.kindOf(part.tool)
  if (kind === "command") return `command:${target}`
  if (kind === "edit") return `edit:${target}`
  return undefined
}

interface Failure {
  readonly key: string
  readonly line: string
  readonly target: string
}

const failureOf = (part: ToolPart, kinds: Facts.Tools): Failure | undefined => {
  const key = keyOf(part, kinds)
  const target = Facts.targetOf(part, kinds)
  if (key === undefined || target === undefined) return undefined
  const state = part.state
  if (state.status === "error") {
    if (Facts.isInterrupted(part)) return undefined
    const verb = kinds.kindOf(part.tool) === "command" ? "" : `${part.tool} of `
    return { key, target, line: `${verb}${subject(part, kinds)} failed: ${Facts.firstLine(state.error, 160)}` }
  }
  if (state.status === "completed" && kinds.kindOf(part.tool) === "command") {
    const outcome = Facts.commandOutcome(part)
    if (outcome?.failed !== true) return undefined
    const why = lastLine(state.output)
    return {
      key,
      target,
      line: `${subject(part, kinds)} failed (exit ${outcome.exitCode ?? "?"})${why === "" ? "" : `: ${why}`}`,
    }
  }
  return undefined
}

const succeeded = (part: ToolPart, kinds: Facts.Tools): boolean =>
  part.state.status === "completed" && failureOf(part, kinds) === undefined

const isOpen = (part: ToolPart): boolean =>
  part.state.status === "pending" || part.state.status === "running" || Facts.isInterrupted(part)

/** The work state over `messages`: failures not followed by a success of the same thing, and what was resolved. */
const workState = (messages: ReadonlyArray<Message>, kinds: Facts.Tools) => {
  const open = new Map<string, Failure>()
  const resolved = new Set<string>()
  for (const part of tools(messages)) {
    const key = keyOf(part, kinds)
    const failure = failureOf(part, kinds)
    if (failure !== undefined) {
      // Re-inserted so that the map stays in order of the latest failure.
      open.delete(failure.key)
      open.set(failure.key, failure)
    } else if (key !== undefined && succeeded(part, kinds)) {
      open.delete(key)
      resolved.add(Facts.targetOf(part, kinds) ?? "")
    }
  }
  return { blocked: [...open.values()], resolved }
}

/**
 * The files `messages` read or edited, in the order each was last read or edited (message by message, as `Facts`
 * reads them, uncapped), with what was done to each.
 */
const lastTouched = (messages: ReadonlyArray<Message>, kinds: Facts.Tools) => {
  const files = new Map<string, { path: string; read: boolean; edited: boolean }>()
  for (const message of messages) {
    if (message.role !== "assistant") continue
    const step = Facts.facts([message], kinds, Number.POSITIVE_INFINITY)
    const touch = (path: string, kind: "read" | "edited") => {
      const file = files.get(path) ?? { path, read: false, edited: false }
      files.delete(path)
      files.set(path, { ...file, [kind]: true })
    }
    for (const path of step.filesRead) touch(path, "read")
    for (const path of step.filesEdited) touch(path, "edited")
  }
  return [...files.values()]
}

// ---------------------------------------------------------------------------------------------------------------------
// The previous summary
// ---------------------------------------------------------------------------------------------------------------------

type Section = "objective" | "details" | "completed" | "active" | "blocked" | "next" | "files" | "facts"

const ALIASES: ReadonlyArray<readonly [RegExp, Section]> = [
  [/^(?:objective|goals?|task|aim)$/, "objective"],
  [/^(?:completed|accomplished|done|finished)$/, "completed"],
  [/^(?:active|in progress|current work|current)$/, "active"],
  [/^(?:blocked|blockers|blocking)$/, "blocked"],
  [/^(?:next moves?|next steps?|next)$/, "next"],
  [/^(?:relevant files|files|key files)$/, "files"],
  [/^facts/, "facts"],
]

const NONE_LINE = /^\(none\)/i
const MORE_LINE = /^… and \d+ more/

/** The lines of the previous summary, by section; unknown sections count as details. */
const sectionsOf = (summary: string): Map<Section, Array<string>> => {
  const out = new Map<Section, Array<string>>()
  let section: Section = "details"
  let inFacts = false
  for (const raw of summary.split("\n")) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(raw.trim())
    if (heading !== null) {
      const level = heading[1]!.length
      const name = (heading[2] ?? "")
        .toLowerCase()
        .replace(/[^a-z ]+/g, " ")
        .replace(/\s+/g, " ")
        .trim()
      if (level <= 2) inFacts = false
      const found = ALIASES.find(([pattern]) => pattern.test(name))?.[1]
      if (found === "facts") inFacts = true
      section = inFacts ? "facts" : (found ?? "details")
      continue
    }
    const line = oneLine(raw.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, ""))
    if (line === "" || NONE_LINE.test(line) || MORE_LINE.test(line) || line.startsWith("#")) continue
    const lines = out.get(section) ?? []
    lines.push(line)
    out.set(section, lines)
  }
  return out
}

/** The contents of the code spans in a line. */
const codeSpans = (line: string): Array<string> => {
  const out: Array<string> = []
  const re = /(`+) ?(.+?) ?\1(?!`)/g
  for (let m = re.exec(line); m !== null; m = re.exec(line)) out.push(m[2] ?? "")
  return out
}

/** The path a Relevant Files line is about: its first code span, else the text before `: `. */
const pathOf = (line: string): string => codeSpans(line)[0] ?? line.split(": ")[0] ?? line

// ---------------------------------------------------------------------------------------------------------------------
// Reach (ADR 0060): what the section budgets leave out, kept as an index
// ---------------------------------------------------------------------------------------------------------------------
//
// A section keeps its newest lines within its budget. Without more, each summary of a summary names fewer of the
// session's older files and commands: what the budget left out of one summary is gone from every later one. The reach
// index keeps them by name only — the older files grouped by folder, the older commands and edits as code spans — in
// the room the sections leave under `MAX_CHARS`, the newest first when even that is short. A later summary reads the
// index back (`fromIndex`) and folds it again with what it adds, so the index carries forward across compactions.

const ALSO_IN = new RegExp(`^${ALSO} in `)
const ALSO_RAN = new RegExp(`^${ALSO} ran: `)
const ALSO_EDITED = new RegExp(`^${ALSO} edited: `)
const ALSO_EDITED_IN = new RegExp(`^${ALSO} edited in `)
const ALSO_HIT = new RegExp(`^${ALSO} hit: `)
const ALSO_FAILED = new RegExp(`^${ALSO} failed: `)

// A name written without a code span in a folder's list (ADR 0065: two characters a name fewer); any other is a span.
const PLAIN_NAME = /^[\w.@+-]+$/

/** A path's folder (with its last `/`, or empty) and its name. */
const folderOf = (path: string): readonly [string, string] => {
  const cut = path.lastIndexOf("/") + 1
  return [path.slice(0, cut), path.slice(cut)]
}

/**
 * `spans` as lines `head` + comma-separated code spans, each line at most `LINE_MAX` characters (one span always);
 * with `plain`, a name of letters, digits and `._@+-` is written bare.
 */
const packed = (head: string, spans: ReadonlyArray<string>, plain = false): Array<string> => {
  const out: Array<string> = []
  let line = ""
  for (const span of spans) {
    const code = plain && PLAIN_NAME.test(span) ? span : name(span)
    if (line !== "" && line.length + 2 + code.length > LINE_MAX) {
      out.push(line)
      line = ""
    }
    line = line === "" ? `${head}${code}` : `${line}, ${code}`
  }
  if (line !== "") out.push(line)
  return out
}

/** `paths` grouped by folder (folders in the order of their newest path), as lines `${verb} in \`dir/\`: a.ts, b.ts`. */
const byFolder = (verb: string, paths: ReadonlyArray<string>): Array<string> => {
  // A set keeps insertion order: a name seen again is deleted and added, so it moves to its newest place.
  const groups = new Map<string, Set<string>>()
  for (const path of paths) {
    const [folder, name] = folderOf(path)
    const names = groups.get(folder) ?? new Set<string>()
    groups.delete(folder)
    names.delete(name)
    groups.set(folder, names.add(name))
  }
  return [...groups].flatMap(([folder, names]) =>
    packed(folder === "" ? `${verb} in the root: ` : `${verb} in ${name(folder)}: `, [...names], true),
  )
}

/** Index lines of older Relevant Files: one group per folder, folders in the order of their newest file. */
export const filesIndex = (paths: ReadonlyArray<string>): Array<string> => byFolder(ALSO, paths)

/** Index lines of older Completed lines (`Ran \`c\``, `Edited \`p\``); other lines are left out. */
export const completedIndex = (lines: ReadonlyArray<string>): Array<string> => {
  const ran: Array<string> = []
  const edited: Array<string> = []
  for (const line of lines) {
    const span = codeSpans(line)[0]
    if (span === undefined) continue
    if (/^Ran /.test(line)) ran.push(span)
    else if (/^Edited /.test(line)) edited.push(span)
  }
  return [...byFolder(`${ALSO} edited`, edited), ...packed(`${ALSO} ran: `, [...new Set(ran)])]
}

/** The paths of a folder's index line (`… in \`dir/\`: a.ts, \`b c.ts\``, or `… in the root: …`), in order. */
const folderPaths = (line: string): Array<string> => {
  const root = / in the root: /.exec(line)
  const folder = root === null ? (codeSpans(line)[0] ?? "") : ""
  // The list starts after the first `: ` that follows the folder's span (or `the root`).
  const from =
    root === null ? line.indexOf(": ", line.indexOf(`\``) + folder.length + 2) : root.index + root[0].length - 2
  const list = from < 0 ? "" : line.slice(from + 2)
  const names: Array<string> = []
  const re = /(`+) ?(.+?) ?\1(?!`)|[^,\s][^,]*/g
  for (let m = re.exec(list); m !== null; m = re.exec(list)) names.push((m[2] ?? m[0]).trim())
  return names.filter((n) => n !== "").map((n) => `${folder}${n}`)
}

/**
 * A previous summary's lines of a section with its index lines read back: files as `\`path\`: seen earlier` lines,
 * commands and edits as `Ran` and `Edited` lines, in the index's order, before the section's other lines.
 */
export const fromIndex = (lines: ReadonlyArray<string>): Array<string> => {
  const index: Array<string> = []
  const rest: Array<string> = []
  for (const line of lines) {
    const spans = codeSpans(line)
    if (ALSO_IN.test(line)) for (const path of folderPaths(line)) index.push(`${name(path, 200)}: seen earlier`)
    else if (ALSO_EDITED_IN.test(line)) for (const path of folderPaths(line)) index.push(`Edited ${name(path)}`)
    else if (ALSO_RAN.test(line)) for (const span of spans) index.push(`Ran ${name(span)}`)
    else if (ALSO_EDITED.test(line)) for (const span of spans) index.push(`Edited ${name(span)}`)
    else if (ALSO_HIT.test(line)) for (const span of spans) index.push(`Error: ${span}`)
    else if (ALSO_FAILED.test(line)) for (const span of spans) index.push(`${name(span)} failed`)
    else rest.push(line)
  }
  return [...index, ...rest]
}

const INDEX_LINE = new RegExp(`^- ${ALSO} (?:in |ran: |edited: |edited in |hit: |failed: )`)

// ---------------------------------------------------------------------------------------------------------------------
// What failed (ADR 0070): Important Details keeps every error of the head and Blocked every failure still open, the
// newest lines within their budgets as before; what the budgets leave out is kept by name in an index that later
// summaries read back, so that an error or a failed command is not lost two summaries later. That index is outside
// the room of `MAX_CHARS`, bounded by what the summary replaces (`replacedChars`).
// ---------------------------------------------------------------------------------------------------------------------

/** Index lines of older Important Details: their errors (`Error: …` lines) as code spans; other lines are left out. */
export const errorsIndex = (lines: ReadonlyArray<string>): Array<string> =>
  packed(`${ALSO} hit: `, [...new Set(lines.flatMap((l) => (/^Error: /.test(l) ? [l.slice(7)] : [])))])

/** Index lines of older Blocked lines: what failed (each line's first code span); other lines are left out. */
export const failedIndex = (lines: ReadonlyArray<string>): Array<string> =>
  packed(`${ALSO} failed: `, [...new Set(lines.flatMap((l) => codeSpans(l).slice(0, 1)))])

/** `lines` with each key once, at its last place: a failure seen again (or its index entry read back) moves there. */
const latest = (lines: ReadonlyArray<string>, key: (line: string) => string): Array<string> => {
  const keys = lines.map(key)
  const last = new Map(keys.map((k, i) => [k, i]))
  return lines.filter((_, i) => last.get(keys[i]!) === i)
}

// An error is the same one by its first 150 characters: an index entry read back is its first 159 and an ellipsis.
const errorKey = (line: string) => normalise(line).slice(0, 150)
// A failure is the same one by what failed: its first code span.
const failureKey = (line: string) => codeSpans(line)[0] ?? normalise(line)

/**
 * The characters of what a summary replaces: the previous summary and the head as the model saw it (rendered, in
 * JSON). The errors' and failed commands' index may take a summary past `MAX_CHARS`, never past this (ADR 0070).
 */
export const replacedChars = (input: Input): number =>
  (input.previousSummary?.length ?? 0) +
  input.head.reduce((n, m) => n + JSON.stringify(Render.renderMessage(m)).length, 0)

/** A summary without its reach index lines (what it names by its sections and facts block alone). */
export const withoutIndex = (summary: string): string =>
  summary
    .split("\n")
    .filter((line) => !INDEX_LINE.test(line))
    .join("\n")

const sizeOfLines = (lines: ReadonlyArray<string>) => lines.reduce((n, l) => n + l.length + 3, 0)

/**
 * The newest of `older` (oldest first) whose index lines (`index`, bulleted) and the `… and N more` line counting the
 * rest fit `room` characters (ADR 0066): the oldest entries go first, whatever their folder, where cutting the index's
 * lines would drop a folder's every name, its newest too.
 */
export const newestFitting = <A>(
  older: ReadonlyArray<A>,
  index: (entries: ReadonlyArray<A>) => ReadonlyArray<string>,
  room: number,
): ReadonlyArray<A> => {
  const fits = (n: number) => {
    const more = n < older.length ? Facts.moreLine(older.length - n).length + 1 : 0
    return sizeOfLines(index(older.slice(older.length - n))) + more <= room
  }
  if (fits(older.length)) return older
  // Below all of them, an entry more adds a name to the index and takes at most a digit off the more-line, so what
  // fits grows with the count and halving finds the most (an entry that adds no name can only make it keep fewer).
  let lo = 0
  let hi = older.length - 1
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (fits(mid)) lo = mid
    else hi = mid - 1
  }
  return older.slice(older.length - lo)
}

/** The newest lines of `lines` within `budget` (bulleted), and the older ones it leaves out (not bulleted). */
const newestAndOlder = (lines: ReadonlyArray<string>, budget: number) => {
  const all = unique(lines)
  const kept = Facts.newestWithin(bullets(all), budget).filter((l) => !MORE_LINE.test(l.slice(2)))
  return { kept, older: all.slice(0, all.length - kept.length) }
}

// ---------------------------------------------------------------------------------------------------------------------
// The summary
// ---------------------------------------------------------------------------------------------------------------------

const sectionBudgets = (scale: number) => ({
  objective: Math.floor(BUDGET.objective * scale),
  details: Math.floor(BUDGET.details * scale),
  completed: Math.floor(BUDGET.completed * scale),
  active: Math.floor(BUDGET.active * scale),
  blocked: Math.floor(BUDGET.blocked * scale),
  next: Math.floor(BUDGET.next * scale),
  files: Math.floor(BUDGET.files * scale),
  facts: Math.floor(BUDGET.facts * scale),
})

/**
 * A summary of `head` in the TEMPLATE structure followed by the facts block, every section present (`(none)` when
 * empty). It names every file, command, edit and error of what it summarises (its reach index whole) when that keeps
 * it within what it replaces (`replacedChars`, ADR 0072); else it keeps within `MAX_CHARS` but for the index of what
 * failed, never past what it replaces (ADR 0070). With `withinMaxChars`, always within `MAX_CHARS`. The same input
 * always gives the same text.
 *
 * **Example**
 * ```ts
 * const text = ExtractiveSummary.summarize({ head, previousSummary, tail })
 * ```
 */
export const summarize = (input: Input): string => {
  const head = input.head
  const tail = input.tail ?? []
  const all = [...head, ...tail]
  const previous =
    input.previousSummary === undefined ? new Map<Section, Array<string>>() : sectionsOf(input.previousSummary)
  const prev = (section: Section): Array<string> => previous.get(section) ?? []
  const requestsIn = (messages: ReadonlyArray<Message>) =>
    messages.flatMap((m) => {
      const r = requestOf(m)
      return r === undefined ? [] : [r]
    })

  const headRequests = requestsIn(head)
  const lastRequest = requestsIn(all).at(-1)
  const kinds = Facts.toolsOf(input.toolKinds)
  const headFacts = Facts.facts(head, kinds)
  const previousFacts = input.previousSummary === undefined ? Facts.empty : Facts.parse(input.previousSummary)
  const facts = Facts.merge(previousFacts, headFacts)
  const state = workState(all, kinds)
  const lastReal = all.findLast(isReal)
  const working = midTask(all)

  // Objective: the previous objective, then every request of the head.
  const objectiveLines = [...prev("objective"), ...headRequests.map((r) => oneLine(r))]

  // Important details: what still holds from before (its errors' index read back), the user's constraints, every error
  // of the head (ADR 0070), an error hit again at its newest place.
  const detailLines = latest(
    [
      ...fromIndex(prev("details")),
      ...headRequests.slice(-20).flatMap(constraintsOf),
      ...Facts.facts(head, kinds, Number.POSITIVE_INFINITY).errors.map((e) => `Error: ${oneLine(e, 200)}`),
    ],
    errorKey,
  )

  // Completed: successful edits and commands of the head (after the previous summary's, its index read back).
  const doneLines = [...fromIndex(prev("completed"))]
  for (const part of tools(head)) {
    const target = Facts.targetOf(part, kinds)
    if (target === undefined || !succeeded(part, kinds)) continue
    const kind = kinds.kindOf(part.tool)
    if (kind === "edit") doneLines.push(`Edited ${name(target)}`)
    else if (kind === "command") doneLines.push(`Ran ${name(target)}`)
  }

  // Active: calls the last assistant left open, else the request being worked on.
  const openCalls =
    lastReal?.role === "assistant" ? lastReal.parts.flatMap((p) => (p.type === "tool" && isOpen(p) ? [p] : [])) : []
  const activeLines =
    lastReal === undefined
      ? prev("active")
      : openCalls.length > 0
        ? openCalls.map((p) => `${subject(p, kinds)} was started and did not finish`)
        : working && lastRequest !== undefined
          ? [`Working on: ${oneLine(lastRequest, 200)}`]
          : []

  // Blocked: earlier blockers not since resolved, the failures still open, a failed last model call.
  const modelError =
    lastReal?.role === "assistant" && lastReal.error !== undefined && working
      ? [`The last model call failed: ${lastReal.error.name}: ${Facts.firstLine(lastReal.error.message, 160)}`]
      : []
  // Earlier blockers (their index read back) leave once resolved; every failure still open is kept (ADR 0070).
  const blockedLines = latest(
    [
      ...fromIndex(prev("blocked")).filter((line) => !codeSpans(line).some((span) => state.resolved.has(span))),
      ...state.blocked.map((f) => f.line),
      ...modelError,
    ],
    failureKey,
  )

  // Next move: only when the assistant was mid-task; when it had finished, it waits for the user.
  const steps: Array<string> = []
  if (working) {
    if (lastRequest !== undefined)
      steps.push(
        `${lastReal?.role === "user" ? "Answer" : "Continue"} the user's latest request: ${oneLine(lastRequest, 200)}`,
      )
    for (const p of openCalls.slice(-2)) steps.push(`Re-run ${subject(p, kinds)}, which did not finish`)
    const blocker = state.blocked.at(-1)
    if (blocker !== undefined) steps.push(`Fix the failure of ${Facts.code(blocker.target, 120)} and run it again`)
    if (modelError.length > 0) steps.push("Retry the step that failed")
    if (steps.length === 0) steps.push("Continue the work in progress")
  } else if (lastReal === undefined) steps.push(...prev("next"))

  // Relevant files, oldest first (ADR 0066): the previous list's files in its own order, then those only the previous
  // facts block names, then the head's files in the order of their last read or edit. Each path once, at its newest
  // place, so that the section keeps the files last worked on and the index drops the oldest (a file moved to its
  // place in the facts' read-then-edited lists would be ranked by its kind, not by when it was used).
  const headFiles = lastTouched(head, kinds)
  const inHead = new Set(headFiles.map((f) => f.path))
  const read = new Set(facts.filesRead)
  const edited = new Set(facts.filesEdited)
  const lineOf = (path: string, wasRead: boolean, wasEdited: boolean) =>
    `${name(path, 200)}: ${wasEdited ? (wasRead ? "read, edited" : "edited") : "read"}`
  const previousFiles = fromIndex(prev("files")).filter((line) => !inHead.has(pathOf(line)))
  const listed = new Set(previousFiles.map(pathOf))
  const older = previousFiles.map((line) => {
    const path = pathOf(line)
    return read.has(path) || edited.has(path) ? lineOf(path, read.has(path), edited.has(path)) : line
  })
  const fileLines = [
    // A path once: its newest line (an index entry read back may repeat a path a later line of the summary gives).
    ...older.filter((line, i) => older.findLastIndex((l) => pathOf(l) === pathOf(line)) === i),
    ...[...facts.filesRead.filter((p) => !edited.has(p)), ...facts.filesEdited]
      .filter((p) => !listed.has(p) && !inHead.has(p))
      .map((p) => lineOf(p, read.has(p), edited.has(p))),
    ...headFiles.map((f) => lineOf(f.path, f.read || read.has(f.path), f.edited || edited.has(f.path))),
  ]

  // The sections' newest lines within `budget`, the older ones as index lines: Relevant Files' and Completed's within
  // `reach` characters, the errors' and failures' within `failRoom` (ADR 0070), each room split between its sections in
  // proportion to what each would need, the newest entries kept (`newestFitting`).
  type Part = ReturnType<typeof withReach>
  const withReach = (
    lines: ReadonlyArray<string>,
    budget: number,
    index: (older: ReadonlyArray<string>) => ReadonlyArray<string>,
  ) => {
    const { kept, older } = newestAndOlder(lines, budget)
    return { kept, older, index }
  }
  const shares = (parts: ReadonlyArray<Part>, room: number) => {
    const need = parts.reduce((n, part) => n + sizeOfLines(part.index(part.older)), 0)
    return (part: Part) => {
      const size = sizeOfLines(part.index(part.older))
      return size === 0 ? 0 : Math.floor((room * size) / need)
    }
  }

  // A summary, and its characters outside the failures' index (its lines and `… and N more` lines).
  const render = (scale: number, reach: number, failRoom: number) => {
    const budget = sectionBudgets(scale)
    const done = withReach(doneLines, budget.completed, completedIndex)
    const files = withReach(fileLines, budget.files, (older) => filesIndex(older.map(pathOf)))
    const details = withReach(detailLines, budget.details, errorsIndex)
    const blocked = withReach(blockedLines, budget.blocked, failedIndex)
    const reachShare = shares([done, files], reach)
    const failShare = shares([details, blocked], failRoom)
    let failures = 0
    const section = (part: Part) => {
      const failing = part === details || part === blocked
      const shown = newestFitting(part.older, part.index, failing ? failShare(part) : reachShare(part))
      const index = shown.length < part.older.length ? [Facts.moreLine(part.older.length - shown.length)] : []
      if (shown.length > 0) index.push(...bullets(part.index(shown)))
      if (failing) failures += index.reduce((n, line) => n + line.length + 1, 0)
      const all = [...index, ...part.kept]
      return all.length > 0 ? all : [NONE]
    }
    const next =
      steps.length > 0
        ? Facts.newestWithin(
            steps.map((s, i) => `${i + 1}. ${s}`),
            budget.next,
          )
        : [WAIT_FOR_USER]
    const text = [
      ["## Objective", ...firstAndNewest(objectiveLines, budget.objective)].join("\n"),
      ["## Important Details", ...section(details)].join("\n"),
      [
        "## Work State",
        "### Completed",
        ...section(done),
        "### Active",
        ...newest(activeLines, budget.active),
        "### Blocked",
        ...section(blocked),
      ].join("\n"),
      ["## Next Move", ...(next.length > 0 ? next : [NONE])].join("\n"),
      ["## Relevant Files", ...section(files)].join("\n"),
      ...(input.factsBlock === false ? [] : [Facts.factsBlock(facts, budget.facts)]),
    ].join("\n\n")
    return { text, outside: text.length - failures }
  }
  // The budgets keep the sections under SECTIONS_MAX_CHARS; shrinking them is a guard, not the rule. The failures'
  // index is outside both rooms (ADR 0070): it is measured apart, whole.
  const WHOLE = Number.POSITIVE_INFINITY
  let scale = 1
  let text = render(scale, 0, WHOLE)
  while (text.outside > SECTIONS_MAX_CHARS && scale > 0.1) {
    scale *= 0.8
    text = render(scale, 0, WHOLE)
  }
  // Every name (ADR 0072): the sections and every index whole, when that stays within what the summary replaces.
  const limit = input.withinMaxChars === true ? MAX_CHARS : Math.max(MAX_CHARS, replacedChars(input))
  const every = render(scale, WHOLE, WHOLE)
  if (every.text.length <= limit) return every.text
  // Else the reach index takes the room left under MAX_CHARS (a `… and N more` line may cost a little more: then less).
  let reach = MAX_CHARS - text.outside
  let reached = render(scale, reach, WHOLE)
  while (reached.outside > MAX_CHARS && reach > 0) {
    reach = Math.max(0, reach - (reached.outside - MAX_CHARS + 40))
    reached = render(scale, reach, WHOLE)
  }
  if (reached.outside > MAX_CHARS) {
    reach = 0
    reached = text
  }
  // The failures' index then takes what the summary needs past that, never past what it replaces: whole when it fits,
  // else its newest names in the room left (the rest of the summary is the same whatever that room).
  if (reached.text.length <= limit) return reached.text
  const cut = render(scale, reach, limit - reached.outside).text
  return cut.length <= limit ? cut : render(scale, 0, 0).text
}
