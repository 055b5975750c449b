/**
 * What a compaction kept: the exact artifacts of the span it summarised — the files read and edited, the commands
 * run, the errors hit (all as `Facts` reads them from the log, uncapped) and the user's requests — and which of them
 * the summary names. Deterministic and model-free: the same span and summary always give the same check, so the
 * runtime records it (`ArtifactsChecked`) and `inspect` can recompute it for logs written before it existed.
 *
 * "Names" is literal, since that is what a later turn can rely on:
 * - a file: the summary contains its path, or its last segment when that is at least 3 characters;
 * - a command: the summary contains its first line (`Facts.firstLine`: white-space runs as one space, on both sides);
 * - an error: the summary contains the error line, or its message (after `tool: `) up to the first 60 characters;
 * - a request: the summary contains at least half of its keywords (lower-cased words of 4+ characters, stop words
 *   left out, the first 12), or, with no keyword, its whole text.
 *
 * An artifact is *in view* when the summary names it, or when a message of the span that the window keeps verbatim
 * after the pivot (a pinned message, `Pins`) names it by the same rules, read as the window shows it
 * (`Recall.shownDocumentsOf`). An artifact is *recallable* when a document `context_recall` gives back for the pivot
 * (`Recall.documentsOf` of a head message: its text, reasoning, tool inputs and results) names it by the same rules — a
 * tool input's document is its JSON, so the strings in it are read as they were written. One neither in view nor
 * recallable is lost: the model can neither see nor re-read it.
 */
import * as Schema from "effect/Schema"
import * as Facts from "./Facts.ts"
import type { Message } from "./Message.ts"
import type { ModelMessage } from "./ModelMessage.ts"

/** The kinds of artifacts checked. */
export const Kind = Schema.Literals(["file-read", "file-edited", "command", "error", "request"])
export type Kind = typeof Kind.Type

/** One artifact of the span and whether the summary names it. */
export const Artifact = Schema.Struct({
  kind: Kind,
  /** The artifact as it appears in the log (a request: its first line, at most 200 characters). */
  text: Schema.String,
  named: Schema.Boolean,
}).annotate({ identifier: "Artifact" })
export type Artifact = typeof Artifact.Type

/** The longest request excerpt kept in a check. */
export const REQUEST_CHARS = 200
/** Keywords of a request that are compared. */
export const MAX_KEYWORDS = 12

const STOP = new Set(
  (
    "this that with from have will would could should there their then than when what which while where your yours " +
    "they them into also just like make sure please about after before being does done each some more most only other " +
    "same such very want need keep file files"
  ).split(" "),
)

/** A request's keywords: lower-cased words of 4+ characters that are not stop words, unique, the first `MAX_KEYWORDS`. */
export const keywords = (text: string): ReadonlyArray<string> => {
  const words = text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_./-]*/gu) ?? []
  const unique: Array<string> = []
  for (const raw of words) {
    const word = raw.replace(/[./-]+$/, "")
    if (word.length < 4 || STOP.has(word) || unique.includes(word)) continue
    unique.push(word)
    if (unique.length === MAX_KEYWORDS) break
  }
  return unique
}

/** The user's requests in a span: the text of each user message that is neither a marker nor synthetic. */
export const requests = (span: ReadonlyArray<Message>): ReadonlyArray<string> =>
  span.flatMap((m) => {
    if (m.role !== "user" || m.parts.some((p) => p.type === "compaction")) return []
    const text = m.parts
      .flatMap((p) => (p.type === "text" && p.synthetic !== true && p.ignored !== true ? [p.text] : []))
      .join("\n")
      .trim()
    return text === "" ? [] : [text]
  })

/**
 * The rule of "names" for one artifact, prepared once (its last path segment, first line, error message or keywords),
 * then applied to any number of texts with their views, each computed once when a rule first reads it.
 */
type Matcher = (text: string, views: Views) => boolean

interface Views {
  /** The text lower-cased (requests). */
  readonly lower: () => string
  /** The text with each run of white space as one space, as `Facts.firstLine` writes a command's first line. */
  readonly spaced: () => string
}

const fileMatcher = (path: string): Matcher => {
  const last =
    path
      .split(/[\\/]/)
      .filter((s) => s !== "")
      .at(-1) ?? ""
  return (text) => text.includes(path) || (last.length >= 3 && text.includes(last))
}

const errorMatcher = (line: string): Matcher => {
  const colon = line.indexOf(": ")
  const message = (colon < 0 ? line : line.slice(colon + 2)).slice(0, 60).trim()
  return (text) => text.includes(line) || (message.length > 0 && text.includes(message))
}

const requestMatcher = (request: string): Matcher => {
  const words = keywords(request)
  if (words.length === 0) {
    const whole = request.toLowerCase()
    return (_, views) => views.lower().includes(whole)
  }
  return (_, views) => {
    const text = views.lower()
    let found = 0
    for (const w of words) if (text.includes(w)) found++
    return found * 2 >= words.length
  }
}

/** The prepared rule of `names` for an artifact of `kind` as it appears in a check (a request: its text as given). */
const matcher = (kind: Kind, artifact: string): Matcher => {
  switch (kind) {
    case "file-read":
    case "file-edited":
      return fileMatcher(artifact)
    case "command": {
      // The first line as `Facts.firstLine` gives it, its white space runs as one space: a summary that writes the
      // command as it was run (`ls  -la`, a tab) names it too.
      const line = Facts.firstLine(artifact, Facts.MAX_ENTRY_CHARS)
      return (text, views) => text.includes(line) || views.spaced().includes(line)
    }
    case "error":
      return errorMatcher(artifact)
    case "request":
      return requestMatcher(artifact)
  }
}

const viewsOf = (text: string): Views => {
  let lower: string | undefined
  let spaced: string | undefined
  return {
    lower: () => (lower ??= text.toLowerCase()),
    spaced: () => (spaced ??= text.replace(/\s+/g, " ")),
  }
}

/**
 * Whether `text` names an artifact of `kind` given as it appears in a check (`Artifact.text`): the rules above, the one
 * home of what "names" means (the probes grade a judge's answers with it too).
 */
export const names = (kind: Kind, artifact: string, text: string): boolean =>
  matcher(kind, artifact)(text, viewsOf(text))

/**
 * The span's artifacts in a fixed order (files read, files edited, commands, errors, requests), each checked; `tools`
 * says which tools read, edit or run commands (OpenCode's names unless told, as for `Facts`).
 */
export const check = (
  span: ReadonlyArray<Message>,
  summary: string,
  tools: Facts.Tools = Facts.OPENCODE_TOOLS,
): ReadonlyArray<Artifact> => {
  const facts = Facts.facts(span, tools, Number.POSITIVE_INFINITY)
  const views = viewsOf(summary)
  const checked = (kind: Kind, text: string, rule: string = text): Artifact => ({
    kind,
    text,
    named: matcher(kind, rule)(summary, views),
  })
  return [
    ...facts.filesRead.map((text) => checked("file-read", text)),
    ...facts.filesEdited.map((text) => checked("file-edited", text)),
    ...facts.commands.map(({ command }) => checked("command", command)),
    ...facts.errors.map((text) => checked("error", text)),
    // A request is judged on its whole text; the check keeps its first line.
    ...requests(span).map((text) => checked("request", Facts.firstLine(text, REQUEST_CHARS), text)),
  ]
}

/** A document the model can re-read after the pivot, as the check reads it (`Recall.Document` has these fields). */
export interface Document {
  /** `input` for a tool call's input: its text is the input as JSON. */
  readonly kind: string
  readonly text: string
}

/** Every string (key or value) in a JSON value, as written (not JSON-escaped), in order. */
const stringsIn = (value: unknown, strings: Array<string> = []): Array<string> => {
  if (typeof value === "string") strings.push(value)
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, strings)
  else if (typeof value === "object" && value !== null)
    for (const [k, v] of Object.entries(value)) {
      strings.push(k)
      stringsIn(v, strings)
    }
  return strings
}

/** The texts of a document the rules are applied to: its text, and for a tool input every string (key or value) in it. */
const textsOf = (document: Document): ReadonlyArray<string> =>
  document.kind !== "input" ? [document.text] : [document.text, ...stringsIn(JSON.parse(document.text))]

/**
 * The text a window shows the model, the one a check of "what the window names" reads: a system prompt, each text and
 * reasoning part, each tool call's name and input (its JSON, then every string in it as written), each tool result's
 * output (its text; a `json` output as JSON, then its strings; a `content` output's text items), one a line. Nothing
 * else of a message: no field name of the message or its parts (`role`, `toolCallId`, a stored message's `cacheRead`),
 * no id, no file data. Takes `ModelMessage`s (`Render`, the AI SDK's: the same shape).
 */
export const shownText = (messages: ReadonlyArray<ModelMessage>): string => {
  const texts: Array<string> = []
  const json = (value: unknown) => {
    if (value === undefined) return
    texts.push(JSON.stringify(value))
    stringsIn(value, texts)
  }
  for (const message of messages) {
    if (typeof message.content === "string") {
      texts.push(message.content)
      continue
    }
    for (const part of message.content)
      switch (part.type) {
        case "text":
        case "reasoning":
          texts.push(part.text)
          break
        case "tool-call":
          texts.push(part.toolName)
          json(part.input)
          break
        case "tool-result": {
          const output = part.output
          if (output.type === "json") json(output.value)
          else if (output.type === "content") {
            for (const item of output.value) if (item.type === "text") texts.push(item.text)
          } else texts.push(output.value)
          break
        }
        case "file":
          break
      }
  }
  return texts.join("\n")
}

/** The texts of documents the rules are applied to (`textsOf` of each), prepared once for a whole check. */
export const textsOfAll = (documents: ReadonlyArray<Document>): ReadonlyArray<string> => documents.flatMap(textsOf)

// The texts' views, once per prepared list (`textsOfAll`), each computed when a rule first reads it.
const viewsOfList = new WeakMap<ReadonlyArray<string>, ReadonlyArray<Views>>()

/** Whether one of the texts (`textsOfAll`) names the artifact (`names`): the one rule of "recallable". */
export const recallableIn = (artifact: Artifact, texts: ReadonlyArray<string>): boolean => {
  const rule = matcher(artifact.kind, artifact.text)
  let views = viewsOfList.get(texts)
  if (views === undefined) {
    views = texts.map(viewsOf)
    viewsOfList.set(texts, views)
  }
  const all = views
  return texts.some((text, i) => rule(text, all[i]!))
}

/**
 * An artifact of a check with whether it is recallable (absent when that is unknown: counted as not recallable) and
 * whether a pinned message the window kept verbatim after the pivot names it (absent when it kept none).
 */
export interface Checked extends Artifact {
  readonly recallable?: boolean | undefined
  readonly pinned?: boolean | undefined
}

/**
 * The artifacts of a check, each marked recallable when a document names it (whether the summary does or not), and,
 * when the window kept pinned messages of the span verbatim (`shown`: their documents as the window shows them), marked
 * pinned when one of those names it.
 */
export const withRecall = (
  artifacts: ReadonlyArray<Artifact>,
  documents: ReadonlyArray<Document>,
  shown: ReadonlyArray<Document> = [],
): ReadonlyArray<Checked> => {
  const texts = textsOfAll(documents)
  const inPins = shown.length === 0 ? undefined : textsOfAll(shown)
  return artifacts.map((a) => ({
    ...a,
    recallable: recallableIn(a, texts),
    ...(inPins === undefined ? {} : { pinned: recallableIn(a, inPins) }),
  }))
}

/** Whether an artifact is in view: the summary names it, or a pinned message the window kept verbatim does. */
export const inView = (a: Checked): boolean => a.named || a.pinned === true

/** Whether an artifact is in view or recallable. */
export const reachable = (a: Checked): boolean => inView(a) || a.recallable === true

/** The counts of one kind (or all): artifacts, named by the summary, in view, in view or recallable. */
export interface Count {
  readonly total: number
  readonly named: number
  readonly inView: number
  readonly reachable: number
}

/**
 * Counts of a check: artifacts, how many the summary names, how many are in view (the summary or a pinned message
 * kept verbatim names them) and how many are in view or recallable.
 */
export interface Tally extends Count {
  readonly byKind: Readonly<Record<Kind, Count>>
}

/** Tallies a check. */
export const tally = (artifacts: ReadonlyArray<Checked>): Tally => {
  const zero = () => ({ total: 0, named: 0, inView: 0, reachable: 0 })
  const byKind = Object.fromEntries(Kind.literals.map((k) => [k, zero()])) as Record<Kind, ReturnType<typeof zero>>
  const all = zero()
  for (const a of artifacts)
    for (const count of [all, byKind[a.kind]]) {
      count.total++
      if (a.named) count.named++
      if (inView(a)) count.inView++
      if (reachable(a)) count.reachable++
    }
  return { ...all, byKind }
}
