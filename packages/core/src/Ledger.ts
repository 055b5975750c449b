/**
 * The ledger: what every model call was billed, how stable each call's input was against the previous one (what a
 * provider's prompt cache could reuse), and for every compaction and prune what it shed from the window, what it
 * cost, what cached prefix it invalidated and what it saved up to the next pivot. A pure fold over the events with
 * the window folded alongside; prices come from the caller (`priceOf`), so the log alone decides every token figure.
 *
 * Definitions (docs/ledger.md says why):
 * - a call's *input* is the window as it stood when the call's step was recorded, rendered and serialised the
 *   project's way (`JSON.stringify` of the model messages), after the newest HUD text; its tokens are `Tokens.estimate`
 *   of that string. System prompt and tool definitions are not in the log, so they are left out of every estimate;
 * - a call's *stable prefix* is the estimate of the longest common prefix (in characters) of its input and the
 *   previous call's input: an upper bound on what an exact-prefix cache could reuse;
 * - an entry's *shed* is the window's estimate before it minus after it; *rewritten* is the window after it minus the
 *   part it shares with the previous call's input (what the next call writes to the cache again); *invalidated* is
 *   the previous call's input minus that shared part (the cached prefix lost);
 * - an entry's *net saving*, in input-token equivalents at each call's rates: over the model calls after it up to
 *   the next pivot, `shed × read rate` per call (the shed tokens would otherwise have been read from the cache on
 *   each call), less the summary call (all its tokens at their rates) and, on the first call after it,
 *   `rewritten × (write rate − read rate)` (those tokens were written instead of read). It leaves out that without a
 *   compaction the window would not have fit.
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as ArtifactCheck from "./ArtifactCheck.ts"
import * as Conversation from "./Conversation.ts"
import type { Event } from "./Events.ts"
import type { MessageId } from "./Ids.ts"
import * as Seq from "./internal/Seq.ts"
import { type Message, summaryText } from "./Message.ts"
import type { ModelRef } from "./Model.ts"
import * as Pricing from "./Pricing.ts"
import type * as Probe from "./Probe.ts"
import * as Recall from "./Recall.ts"
import * as Render from "./Render.ts"
import * as StateSnapshot from "./StateSnapshot.ts"
import { estimateLength, type TokenUsage } from "./Tokens.ts"
import * as ValidWindow from "./ValidWindow.ts"
import * as Window from "./Window.ts"

/** Where a call's price comes from; undefined: the provider's default multipliers. */
export type PriceOf = (ref: ModelRef) => Pricing.Price | undefined

/** One model call as billed. */
export interface Call {
  /** Stream version of the event that recorded it. */
  readonly version: number
  /** The step's or summary's message; a probe call's compaction marker. */
  readonly messageId: MessageId
  /** `step`: a conversation call; `summary`: the summariser's call; `probe`: the judge's call probing a summary. */
  readonly kind: "step" | "summary" | "probe"
  readonly model: ModelRef | undefined
  readonly usage: TokenUsage
  /** Input as billed, in input-token equivalents (uncached input + cache reads and writes at their rates). */
  readonly billed: number
  /** The whole call (output at its rate too), in input-token equivalents. */
  readonly cost: number
  /** USD, when the model has a price. */
  readonly dollars: number | undefined
  /** Estimated tokens of the call's input (0 for a summary call: its input is not the window). */
  readonly input: number
  /** Estimated tokens of the longest prefix identical to the previous conversation call's input. */
  readonly stablePrefix: number
}

/** One compaction (a pivot) or one prune (a batch of pruned outputs). */
export interface Entry {
  readonly kind: "compaction" | "prune"
  /** Stream version of the event that formed the pivot, or of the batch's last pruned output. */
  readonly version: number
  /** The compaction's marker. */
  readonly markerId?: MessageId | undefined
  /** Outputs the prune cleared. */
  readonly parts: number
  /** Estimated tokens the window lost. */
  readonly shed: number
  /** Estimated tokens the next call writes to the cache again. */
  readonly rewritten: number
  /** Estimated tokens of the previous call's input (the cached prefix) no longer reusable. */
  readonly invalidated: number
  /** The summary call's cost in input-token equivalents (0 for a prune or a summary written without a model). */
  readonly summaryCost: number
  readonly summaryDollars: number | undefined
  /** Model calls counted for the saving: those after the entry up to the next pivot. */
  readonly calls: number
  /** `shed × read rate` summed over those calls. */
  readonly saved: number
  /** `rewritten × (write rate − read rate)` at the first of those calls (0 before it). */
  readonly rewriteCost: number
  /** `saved − summaryCost − rewriteCost`. */
  readonly net: number
  /**
   * A compaction's retention check (`ArtifactCheck`): the one the log recorded (`ArtifactsChecked`), else computed from
   * the plan's head and the summary as stored (`recorded: false`); each artifact is marked recallable or not from the
   * head's recallable documents, and pinned or not from the head's pinned messages the window kept verbatim
   * (`ArtifactCheck.withRecall`), on read: no event carries either.
   */
  readonly retention?: Retention | undefined
  /** A compaction's probes, when a judge answered them (`ProbesAnswered`; optional, never computed). */
  readonly probes?: Probes | undefined
}

/** A compaction's probes as recorded: the judge's graded answers, or why it gave none. */
export interface Probes {
  readonly model?: ModelRef | undefined
  readonly probes: ReadonlyArray<Probe.Probe>
  readonly error?: string | undefined
}

/** What a compaction's summary kept of the span it replaced. */
export interface Retention {
  readonly recorded: boolean
  readonly artifacts: ReadonlyArray<ArtifactCheck.Checked>
}

/**
 * A recorded check's artifacts marked recallable (and pinned) as the computed check (`computed`, from the same head)
 * marked the same artifact (same kind and text); one the computed check lacks (other tool names) stays unknown.
 */
const recallOfRecorded = (
  recorded: ReadonlyArray<ArtifactCheck.Artifact>,
  computed: ReadonlyArray<ArtifactCheck.Checked>,
): ReadonlyArray<ArtifactCheck.Checked> => {
  const byKey = new Map(computed.map((a) => [`${a.kind}\u0000${a.text}`, a]))
  return recorded.map((a) => {
    const known = byKey.get(`${a.kind}\u0000${a.text}`)
    if (known?.recallable === undefined) return a
    return { ...a, recallable: known.recallable, ...(known.pinned === undefined ? {} : { pinned: known.pinned }) }
  })
}

/** The head's pinned messages that the window after the pivot (`after`) kept verbatim (`Window`'s pivot rule decides). */
const keptPinned = (
  head: ReadonlyArray<Message>,
  before: Window.State,
  after: Window.State,
): ReadonlyArray<Message> => {
  if (before.pins.length === 0) return []
  const pinned = new Set(before.pins.map((p) => p.messageId))
  const candidates = head.filter((m) => pinned.has(m.id))
  if (candidates.length === 0) return []
  const visible = new Set(Seq.toArray(after.visible))
  return candidates.filter((m) => visible.has(m.id))
}

/** Sums over the session. */
export interface Totals {
  readonly calls: number
  readonly summaryCalls: number
  /** The judge's calls probing summaries (`ProbesAnswered`). */
  readonly probeCalls: number
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cacheRead: number
  readonly cacheWrite: number
  /** Input as billed, in input-token equivalents, over every call (summary calls included). */
  readonly billed: number
  /** Every call's cost in input-token equivalents. */
  readonly cost: number
  /** USD over the priced calls. */
  readonly dollars: number
  /** Calls whose model had no price (their dollars are not in `dollars`). */
  readonly unpriced: number
  /** Cache reads over all input tokens reported (0 when none was reported). */
  readonly hitRatio: number
  /** Conversation calls' stable prefixes over their inputs (estimates; 0 with no input). */
  readonly prefixStability: number
  readonly compactions: number
  readonly prunes: number
  readonly shed: number
  readonly rewritten: number
  readonly invalidated: number
  readonly summaryCost: number
  readonly net: number
}

export interface OpenPrune {
  readonly version: number
  readonly parts: number
  /** The window's serialised length before the batch. */
  readonly before: number
}

/**
 * A call's input as the pieces of its serialisation (`serialize`): the HUD text, then each model message's JSON, kept
 * per message object. Two inputs are compared piece by piece, so a call costs a walk over its messages, not the
 * building and comparing of the whole string.
 */
export interface Input {
  readonly hud: string
  /** The HUD is the request's last message (`HudShown.last`): serialised after the messages, not before them. */
  readonly last?: boolean
  readonly pieces: ReadonlyArray<string>
  /** The serialisation's length in characters. */
  readonly length: number
}

/** The ledger's state: the window folded alongside, the last call's input, and what was accounted so far. */
export interface State {
  readonly window: Window.State
  readonly hud: string | undefined
  /** The newest `HudShown` was the request's last message (its `last`). */
  readonly hudLast?: boolean | undefined
  /** The input of the newest conversation call. */
  readonly lastInput: Input | undefined
  /** Every call so far (`calls` reads them). */
  readonly callLog: Seq.Seq<Call>
  /** Entries before the newest pivot: they no longer accrue savings. */
  readonly closed: Seq.Seq<Entry>
  /** Entries since the newest pivot (inclusive), still accruing savings. */
  readonly open: ReadonlyArray<Entry>
  readonly pruning: OpenPrune | undefined
}

/** The ledger of an empty session. */
export const initial: State = {
  window: Window.initial,
  hud: undefined,
  lastInput: undefined,
  callLog: Seq.empty(),
  closed: Seq.empty(),
  open: [],
  pruning: undefined,
}

/** Every call accounted, in order. */
export const calls = (state: State): ReadonlyArray<Call> => Seq.toArray(state.callLog)

/** Every compaction and prune accounted, in order. */
export const entries = (state: State): ReadonlyArray<Entry> => [...Seq.toArray(state.closed), ...state.open]

// Each stored message renders on its own, and a valid window's repair changes nothing: rendering and JSON are kept
// per (immutable) message and model message, so a call costs a join, not a re-render of the whole window.
const renderedOf = new WeakMap<Message, ReadonlyArray<Render.Rendered>>()
const jsonOf = new WeakMap<object, string>()

const rendered = (message: Message): ReadonlyArray<Render.Rendered> => {
  let out = renderedOf.get(message)
  if (out === undefined) {
    out = Render.render([message])
    renderedOf.set(message, out)
  }
  return out
}

const json = (message: object): string => {
  let out = jsonOf.get(message)
  if (out === undefined) {
    out = JSON.stringify(message)
    jsonOf.set(message, out)
  }
  return out
}

/** The window as a call would send it, in pieces (see `Input`). */
export const inputOf = (window: Window.State, hud: string | undefined, last?: boolean): Input => {
  const pieces = ValidWindow.repair(Window.messages(window).flatMap(rendered)).rendered.map((r) => json(r.message))
  let length = (hud ?? "").length + 2 + Math.max(0, pieces.length - 1)
  for (const piece of pieces) length += piece.length
  return { hud: hud ?? "", pieces, length, ...(last === true ? { last: true } : {}) }
}

const textOf = (input: Input): string =>
  input.last === true ? `[${input.pieces.join(",")}]${input.hud}` : `${input.hud}[${input.pieces.join(",")}]`

/**
 * The window as a call would send it: the HUD text, then the rendered, repaired model messages as JSON — the same
 * bytes as `JSON.stringify(Window.render(window).map((r) => r.message))`.
 */
export const serialize = (window: Window.State, hud: string | undefined, last?: boolean): string =>
  textOf(inputOf(window, hud, last))

/** The input a call would send from `state`: its window (or `window`) with its HUD where it was shown. */
const inputIn = (state: State, window: Window.State = state.window): Input => inputOf(window, state.hud, state.hudLast)

/** Characters two strings share from their start. */
export const commonPrefix = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  let i = 0
  // Whole chunks first (native string comparison), then characters inside the first chunk that differs.
  for (const chunk of [4_096, 64])
    while (i + chunk <= n && a.substring(i, i + chunk) === b.substring(i, i + chunk)) i += chunk
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

/** An input's serialisation as the strings it joins: the HUD, "[", each message's JSON between ",", then "]". */
const segmentsOf = (input: Input): ReadonlyArray<string> => {
  const out: Array<string> = input.last === true ? ["["] : [input.hud, "["]
  input.pieces.forEach((piece, i) => {
    if (i > 0) out.push(",")
    out.push(piece)
  })
  out.push("]")
  if (input.last === true) out.push(input.hud)
  return out
}

/**
 * `commonPrefix` of two inputs' serialisations, without building them: equal segments at the same offset are skipped
 * whole (a message's JSON is kept per message, so an unchanged message is the same string), and characters are
 * compared only from the first segment that differs.
 */
export const sharedLength = (a: Input, b: Input): number => {
  const sa = segmentsOf(a)
  const sb = segmentsOf(b)
  let i = 0
  let j = 0
  let oa = 0
  let ob = 0
  let shared = 0
  while (i < sa.length && j < sb.length) {
    const x = sa[i]!
    const y = sb[j]!
    if (oa === 0 && ob === 0 && x === y) {
      shared += x.length
      i++
      j++
      continue
    }
    const n = Math.min(x.length - oa, y.length - ob)
    const c = commonPrefix(x.substring(oa, oa + n), y.substring(ob, ob + n))
    shared += c
    if (c < n) return shared
    oa += n
    ob += n
    if (oa === x.length) {
      i++
      oa = 0
    }
    if (ob === y.length) {
      j++
      ob = 0
    }
  }
  return shared
}

const ratesOf = (priceOf: PriceOf, model: ModelRef | undefined) => {
  const price = model === undefined ? undefined : priceOf(model)
  return { price, rates: Pricing.ratesFor(model, price) }
}

const billedCall = (
  priceOf: PriceOf,
  version: number,
  message: { readonly id: MessageId; readonly model?: ModelRef | undefined; readonly tokens: TokenUsage },
  kind: Call["kind"],
  input: number,
  stablePrefix: number,
): Call => {
  const { price, rates } = ratesOf(priceOf, message.model)
  return {
    version,
    messageId: message.id,
    kind,
    model: message.model,
    usage: message.tokens,
    billed: Pricing.inputEquivalent(message.tokens, rates),
    cost: Pricing.equivalent(message.tokens, rates),
    dollars: price === undefined ? undefined : Pricing.dollars(message.tokens, price),
    input,
    stablePrefix,
  }
}

const spent = (usage: TokenUsage): boolean =>
  usage.input + usage.output + usage.reasoning + usage.cacheRead + usage.cacheWrite > 0

/** What an entry invalidates and re-writes: the window after it against the newest call's input. */
const cacheEffect = (after: Input, lastInput: Input | undefined) => {
  if (lastInput === undefined) return { rewritten: 0, invalidated: 0 }
  const shared = estimateLength(sharedLength(after, lastInput))
  return {
    rewritten: estimateLength(after.length) - shared,
    invalidated: estimateLength(lastInput.length) - shared,
  }
}

const closePrune = (state: State): State => {
  const open = state.pruning
  if (open === undefined) return state
  const after = inputIn(state)
  const entry: Entry = {
    kind: "prune",
    version: open.version,
    parts: open.parts,
    shed: estimateLength(open.before) - estimateLength(after.length),
    ...cacheEffect(after, state.lastInput),
    summaryCost: 0,
    summaryDollars: undefined,
    calls: 0,
    saved: 0,
    rewriteCost: 0,
    net: 0,
  }
  return { ...state, pruning: undefined, open: [...state.open, entry] }
}

/** Credits a conversation call at `rates` to every entry still accruing. */
const accrue = (open: ReadonlyArray<Entry>, rates: Pricing.Rates): ReadonlyArray<Entry> =>
  open.map((e) => {
    const saved = e.saved + e.shed * rates.read
    const rewriteCost = e.calls === 0 ? e.rewritten * (rates.write - rates.read) : e.rewriteCost
    return { ...e, calls: e.calls + 1, saved, rewriteCost, net: saved - e.summaryCost - rewriteCost }
  })

/** Folds one event; `version` is its stream version. */
export const evolve = (state: State, event: Event, version: number, priceOf: PriceOf = () => undefined): State => {
  if (event._tag === "PartCompacted") {
    const pruning = state.pruning ?? {
      version,
      parts: 0,
      before: inputIn(state).length,
    }
    return {
      ...state,
      window: Window.evolve(state.window, event),
      pruning: { ...pruning, version, parts: pruning.parts + 1 },
    }
  }
  const settled = closePrune(state)
  switch (event._tag) {
    case "HudShown":
      return { ...settled, hud: event.text, hudLast: event.last === true ? true : undefined }
    case "AssistantStepRecorded": {
      const message = event.message
      const window = Window.evolve(settled.window, event)
      if (message.summary === true) return { ...settled, window }
      const input = inputIn(settled)
      const stable = settled.lastInput === undefined ? 0 : estimateLength(sharedLength(input, settled.lastInput))
      const call = billedCall(priceOf, version, message, "step", estimateLength(input.length), stable)
      return {
        ...settled,
        window,
        lastInput: input,
        callLog: Seq.append(settled.callLog, call),
        open: accrue(settled.open, ratesOf(priceOf, message.model).rates),
      }
    }
    case "SummaryFailed":
    case "SummaryFinished": {
      const window = Window.evolve(settled.window, event)
      const summary = event.summary
      // A summary written without a model (the extractive one) reports no usage: no call was billed.
      const call = spent(summary.tokens) ? billedCall(priceOf, version, summary, "summary", 0, 0) : undefined
      const callLog = call === undefined ? settled.callLog : Seq.append(settled.callLog, call)
      const pivoted =
        event._tag === "SummaryFinished" &&
        window.pivot?.summaryId === summary.id &&
        settled.window.pivot?.summaryId !== summary.id
      if (!pivoted) return { ...settled, window, callLog }
      const after = inputIn(settled, window)
      const plan = Option.getOrUndefined(HashMap.get(settled.window.plans, event.markerId))
      const head = (plan?.head ?? []).flatMap((id) => {
        const m = Conversation.get(settled.window.conversation, id)
        return m === undefined ? [] : [m]
      })
      const entry: Entry = {
        kind: "compaction",
        version,
        markerId: event.markerId,
        parts: 0,
        shed: estimateLength(inputIn(settled).length) - estimateLength(after.length),
        ...cacheEffect(after, settled.lastInput),
        summaryCost: call?.cost ?? 0,
        summaryDollars: call?.dollars,
        calls: 0,
        saved: 0,
        rewriteCost: 0,
        net: -(call?.cost ?? 0),
        retention: {
          recorded: false,
          artifacts: ArtifactCheck.withRecall(
            ArtifactCheck.check(head, summaryText(summary) ?? ""),
            head.flatMap((m) => Recall.documentsOf(m, summary.id)),
            keptPinned(head, settled.window, window).flatMap(Recall.shownDocumentsOf),
          ),
        },
      }
      // A pivot ends what earlier entries save: what they shed is now summarised anyway.
      let closed = settled.closed
      for (const e of settled.open) closed = Seq.append(closed, e)
      return { ...settled, window, callLog, closed, open: [entry] }
    }
    case "ArtifactsChecked": {
      // Recorded right after its summary: it replaces the check computed then.
      const open = settled.open.map((e) =>
        e.kind === "compaction" && e.markerId === event.markerId
          ? {
              ...e,
              retention: { recorded: true, artifacts: recallOfRecorded(event.artifacts, e.retention?.artifacts ?? []) },
            }
          : e,
      )
      return { ...settled, window: Window.evolve(settled.window, event), open }
    }
    case "ProbesAnswered": {
      // The judge's call is billed like any other; it is an audit's cost, not the compaction's, so no net changes.
      const usage = event.usage
      const call =
        usage === undefined || !spent(usage)
          ? undefined
          : billedCall(priceOf, version, { id: event.markerId, model: event.model, tokens: usage }, "probe", 0, 0)
      const probes: Probes = {
        ...(event.model === undefined ? {} : { model: event.model }),
        probes: event.probes,
        ...(event.error === undefined ? {} : { error: event.error }),
      }
      // Recorded right after its pivot formed, so its entry is still open.
      const open = settled.open.map((e) =>
        e.kind === "compaction" && e.markerId === event.markerId ? { ...e, probes } : e,
      )
      return {
        ...settled,
        window: Window.evolve(settled.window, event),
        open,
        callLog: call === undefined ? settled.callLog : Seq.append(settled.callLog, call),
      }
    }
    case "SessionForgotten": {
      // Every text of the log before this event now reads "[ERASED]": a check computed from it would count the
      // placeholder as naming itself. Only a recorded check (its verdicts kept) still says what the summary kept; nothing
      // of the span can be recalled any more.
      const known = (e: Entry): Entry => {
        if (e.retention === undefined) return e
        if (e.retention.recorded)
          return {
            ...e,
            retention: {
              ...e.retention,
              artifacts: e.retention.artifacts.map((a) => ({
                ...a,
                recallable: false,
                ...(a.pinned === undefined ? {} : { pinned: false }),
              })),
            },
          }
        const { retention: _dropped, ...rest } = e
        return rest
      }
      return {
        ...settled,
        window: Window.evolve(settled.window, event),
        closed: Seq.fromIterable(Seq.toArray(settled.closed).map(known)),
        open: settled.open.map(known),
      }
    }
    default:
      return { ...settled, window: Window.evolve(settled.window, event) }
  }
}

/** The state with a prune batch still open at the end of the log accounted. */
export const settle = (state: State): State => closePrune(state)

/** Folds events (numbered from 1) from the empty ledger. */
export const fold = (events: Iterable<Event>, priceOf: PriceOf = () => undefined, from: State = initial): State => {
  let state = from
  let version = 0
  for (const event of events) state = evolve(state, event, ++version, priceOf)
  return settle(state)
}

/** Per-session sums of a settled state. */
export const totals = (state: State): Totals => {
  let input = 0
  let output = 0
  let reasoning = 0
  let cacheRead = 0
  let cacheWrite = 0
  let billed = 0
  let cost = 0
  let dollars = 0
  let unpriced = 0
  let stepInput = 0
  let stable = 0
  let summaryCalls = 0
  let probeCalls = 0
  for (const c of calls(state)) {
    input += c.usage.input
    output += c.usage.output
    reasoning += c.usage.reasoning
    cacheRead += c.usage.cacheRead
    cacheWrite += c.usage.cacheWrite
    billed += c.billed
    cost += c.cost
    if (c.dollars === undefined) unpriced++
    else dollars += c.dollars
    if (c.kind === "summary") summaryCalls++
    else if (c.kind === "probe") probeCalls++
    else {
      stepInput += c.input
      stable += c.stablePrefix
    }
  }
  const all = entries(state)
  const sum = (f: (e: Entry) => number) => all.reduce((acc, e) => acc + f(e), 0)
  const reported = input + cacheRead + cacheWrite
  return {
    calls: state.callLog.length,
    summaryCalls,
    probeCalls,
    input,
    output,
    reasoning,
    cacheRead,
    cacheWrite,
    billed,
    cost,
    dollars,
    unpriced,
    hitRatio: reported === 0 ? 0 : cacheRead / reported,
    prefixStability: stepInput === 0 ? 0 : stable / stepInput,
    compactions: all.filter((e) => e.kind === "compaction").length,
    prunes: all.filter((e) => e.kind === "prune").length,
    shed: sum((e) => e.shed),
    rewritten: sum((e) => e.rewritten),
    invalidated: sum((e) => e.invalidated),
    summaryCost: sum((e) => e.summaryCost),
    net: sum((e) => e.net),
  }
}

/**
 * The state re-priced at `priceOf`: every call's billed, cost and dollars and every entry's summary cost and savings
 * recomputed from the facts the state holds that no price changes (usage, inputs, stable prefixes, shed, …).
 * `price(fold(events, a), b)` equals `fold(events, b)`: a ledger folded once without prices (the store's ledger
 * projection) is priced when read, at the reader's prices.
 */
export const price = (state: State, priceOf: PriceOf): State => {
  const repriced = calls(state).map((c) =>
    billedCall(
      priceOf,
      c.version,
      { id: c.messageId, model: c.model, tokens: c.usage },
      c.kind,
      c.input,
      c.stablePrefix,
    ),
  )
  const summaries = new Map(repriced.flatMap((c) => (c.kind === "summary" ? [[c.version, c] as const] : [])))
  const steps = repriced.filter((c) => c.kind === "step")
  let closed = Seq.empty<Entry>()
  let open: ReadonlyArray<Entry> = []
  let s = 0
  // The conversation calls before `version` accrue to the entries open then, as they did in the fold.
  const accrueBefore = (version: number) => {
    for (; s < steps.length && steps[s]!.version < version; s++)
      open = accrue(open, ratesOf(priceOf, steps[s]!.model).rates)
  }
  for (const e of entries(state)) {
    accrueBefore(e.version)
    const reset = { calls: 0, saved: 0, rewriteCost: 0 }
    if (e.kind === "prune") {
      open = [...open, { ...e, ...reset, summaryCost: 0, summaryDollars: undefined, net: 0 }]
      continue
    }
    const call = summaries.get(e.version)
    for (const o of open) closed = Seq.append(closed, o)
    open = [{ ...e, ...reset, summaryCost: call?.cost ?? 0, summaryDollars: call?.dollars, net: -(call?.cost ?? 0) }]
  }
  accrueBefore(Number.POSITIVE_INFINITY)
  return { ...state, callLog: Seq.fromIterable(repriced), closed, open }
}

/** The version of `Encoded`; a decoder refuses any other. */
export const FORMAT = 1

/** A ledger state as JSON-safe data (the window as a snapshot encodes it). */
export interface Encoded {
  readonly format: number
  readonly window: StateSnapshot.EncodedWindow
  readonly hud: string | null
  /** The state's `hudLast` (absent: false). */
  readonly hudLast?: boolean
  readonly lastInput: Input | null
  readonly calls: ReadonlyArray<Call>
  readonly closed: ReadonlyArray<Entry>
  readonly open: ReadonlyArray<Entry>
  readonly pruning: OpenPrune | null
}

/** Encodes a state. O(window + calls + entries). */
export const encode = (state: State): Encoded => ({
  format: FORMAT,
  window: StateSnapshot.encodeWindow(state.window),
  hud: state.hud ?? null,
  ...(state.hudLast === true ? { hudLast: true } : {}),
  lastInput: state.lastInput ?? null,
  calls: calls(state),
  closed: Seq.toArray(state.closed),
  open: state.open,
  pruning: state.pruning ?? null,
})

/** Decodes a state; throws on another format or a window of the wrong shape. */
export const decode = (e: Encoded): State => {
  if (e?.format !== FORMAT) throw new Error(`ledger state format ${String(e?.format)}, expected ${FORMAT}`)
  return {
    window: StateSnapshot.decodeWindow(e.window),
    hud: e.hud ?? undefined,
    ...(e.hudLast === true ? { hudLast: true } : {}),
    lastInput: e.lastInput ?? undefined,
    callLog: Seq.fromIterable(e.calls),
    closed: Seq.fromIterable(e.closed),
    open: e.open,
    pruning: e.pruning ?? undefined,
  }
}
