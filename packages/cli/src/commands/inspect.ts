/**
 * `pivot inspect <export.json | --db FILE --session ID> [--format text|json] [--prices FILE]`: a session at a glance
 * for an audit — its events by type, every pivot (what it summarised and kept, tokens before → after, the summariser
 * and prompt, the `--at` version to replay it, its ledger line and retention check), compactions that formed no
 * pivot, the prune index, context usage over time with each call's prefix stability, the ledger's totals, and what
 * the model re-read through context_recall. Its handler: the flags effect/cli declares are in `inspectCommand.ts`;
 * this module does not import effect/cli, so the plain command line runs it without loading effect/cli (`Fast.ts`,
 * ADR 0048).
 */
import {
  ArtifactCheck,
  CompactionHistory,
  Conversation,
  Events,
  Ledger,
  type Pricing,
  Probe,
  PruneIndex,
  Recall,
  Redaction,
  Render,
  Tokens,
} from "@pivot/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Args from "./Args.ts"
import { listing } from "./Catalog.ts"
import { CliIo, type Fast, report } from "./Command.ts"
import { type LimitOptions, type Limits, omitted, parseLimits, select } from "./Limits.ts"
import { droppedOf } from "./PivotDrop.ts"
import { pricesOf } from "./Prices.ts"
import { estimateTokens, type Opened, orCliError, parseSource, type SourceOptions, withSession } from "./Source.ts"
import { columns, countByType, excerpt, num, plural } from "./Text.ts"
import { windowAt } from "./window.ts"

/** One pivot as the audit shows it. */
export interface PivotView {
  readonly number: number
  readonly markerId: string
  readonly summaryId: string
  readonly auto: boolean
  /** Why it was asked for (`Events.CompactionReason`), when the log recorded it (not in older logs nor imports). */
  readonly reason?: Events.CompactionReason | undefined
  /** Asked for by the model (`context_compact`), with its focus note when it gave one. */
  readonly requestedByModel?: { readonly focus?: string } | undefined
  /** Asked of the host by pivot's strategy (drive mode): why, what it measured, and the host's limit it came before. */
  readonly requestedByStrategy?: CompactionHistory.Entry["requestedByStrategy"]
  readonly overflow: boolean
  readonly status: string
  /** Replay with `--at` this version to see the window right after the pivot. */
  readonly at: number
  /** Replay with `--at` this version to see the window just before it was requested. */
  readonly before: number
  /** Messages the summary replaced (sent to the summariser), oldest first. */
  readonly summarised: ReadonlyArray<string>
  /** Messages kept verbatim after the summary, oldest first. */
  readonly kept: ReadonlyArray<string>
  readonly tokensBefore: number | undefined
  readonly tokensAfter: number | undefined
  readonly model: string | undefined
  readonly promptChars: number | undefined
  readonly summaryTokens: number | undefined
  readonly continuation: string | undefined
  readonly continueSkipped: string | undefined
  readonly fallback: string | undefined
  /** Why the model's summary was replaced (its error), when that was recorded. */
  readonly fallbackError: string | undefined
  readonly budgetedOut: number
  readonly redactions: number
  /** What the compaction cost and saved (docs/ledger.md); undefined for a pivot the ledger did not see form. */
  readonly ledger?: Ledger.Entry | undefined
  /** What the summary kept of the span it replaced (`ArtifactsChecked`, or checked now for an older log). */
  readonly retention?: RetentionView | undefined
  /** The judge's answers to the pivot's probes (`ProbesAnswered`; optional, recorded only when probes are on). */
  readonly probes?: ProbesView | undefined
}

/** A pivot's probes: what the judge, reading only the summary, could answer about the span. */
export interface ProbesView {
  /** The judge's model (`provider/model`), when it answered. */
  readonly model: string | undefined
  /** Why the judge gave no answer. */
  readonly error: string | undefined
  /** Artifacts the questions expected, and how many the answers named. */
  readonly expected: number
  readonly found: number
  readonly probes: ReadonlyArray<Probe.Probe>
}

const probesView = (p: Ledger.Probes): ProbesView => {
  const tally = Probe.tally(p.probes)
  return {
    model: p.model === undefined ? undefined : `${p.model.providerId}/${p.model.modelId}`,
    error: p.error,
    expected: tally.expected,
    found: tally.found,
    probes: p.probes,
  }
}

/** A pivot's retention check. */
export interface RetentionView {
  /** Whether the log recorded the check (false: computed now from the plan's head and the summary). */
  readonly recorded: boolean
  readonly total: number
  /** The summary names them. */
  readonly named: number
  /** In view: the summary or a pinned message the window kept verbatim names them (`ArtifactCheck.inView`). */
  readonly inView: number
  /** In view or recallable (`ArtifactCheck.reachable`). */
  readonly reachable: number
  readonly byKind: ArtifactCheck.Tally["byKind"]
  readonly artifacts: ReadonlyArray<ArtifactCheck.Checked>
}

const retentionView = (artifacts: ReadonlyArray<ArtifactCheck.Checked>, recorded: boolean): RetentionView => {
  const tally = ArtifactCheck.tally(artifacts)
  return {
    recorded,
    total: tally.total,
    named: tally.named,
    inView: tally.inView,
    reachable: tally.reachable,
    byKind: tally.byKind,
    artifacts,
  }
}

/** The ledger as `inspect` reports it: per-session totals, every compaction and prune, every call. */
export interface LedgerView {
  readonly totals: Ledger.Totals
  readonly entries: ReadonlyArray<Ledger.Entry>
  readonly calls: ReadonlyArray<Ledger.Call>
}

/** Everything `inspect` reports. */
export interface Inspection {
  readonly sessionId: string
  /** Where the session was forked from, oldest ancestor first (empty for a session that was not forked). */
  readonly lineage: ReadonlyArray<{ readonly session: string; readonly version: number }>
  readonly title: string | undefined
  readonly source: string
  readonly version: number
  readonly events: Readonly<Record<string, number>>
  readonly messages: { readonly user: number; readonly assistant: number }
  readonly window: { readonly messages: number; readonly modelMessages: number; readonly tokens: number }
  readonly pivots: ReadonlyArray<PivotView>
  readonly otherCompactions: ReadonlyArray<{
    readonly markerId: string
    readonly status: string
    readonly reason?: Events.CompactionReason | undefined
    readonly requestedVersion: number
    readonly settledVersion: number | undefined
    readonly error: string | undefined
  }>
  readonly pruned: {
    readonly tokensFreed: number
    readonly entries: ReadonlyArray<{
      readonly version: number
      readonly partId: string
      readonly messageId: string
      readonly tokens: number
    }>
  }
  readonly usage: ReadonlyArray<{
    readonly version: number
    readonly messageId: string
    readonly tokens: number
    /** Share of the call's input (estimated) identical to the previous call's: what a prompt cache could reuse. */
    readonly stablePrefix?: number | undefined
  }>
  readonly ledger: LedgerView
  /** What the model re-read through `context_recall`: by id or by query, what came back, how big, whether cut. */
  readonly recalls: ReadonlyArray<{
    readonly version: number
    readonly id: string | undefined
    readonly query: string | undefined
    readonly found: ReadonlyArray<string>
    readonly chars: number
    readonly truncated: boolean
  }>
  /** Pins and unpins (`ContextPinned` / `ContextUnpinned`), in log order: who pinned what, and why a pin went. */
  readonly pins: ReadonlyArray<{
    readonly version: number
    readonly action: "pinned" | "unpinned"
    readonly messageId: string
    readonly partId?: string | undefined
    /** Who pinned (`user`, `model`, `default`), or why it was unpinned (`user`, `model`, `budget`). */
    readonly why: string
    readonly tokens?: number | undefined
    /** For a budget unpin: the pin that needed the room. */
    readonly for?: string | undefined
  }>
}

const pivotView = (
  entry: CompactionHistory.Entry,
  number: number,
  ledger?: Ledger.Entry,
  retention?: RetentionView,
  probes?: ProbesView,
): PivotView => ({
  number,
  markerId: entry.markerId,
  summaryId: entry.summaryId ?? "",
  auto: entry.auto,
  ...(entry.reason === undefined ? {} : { reason: entry.reason }),
  // The model's own words: printed redacted, also when an older pivot stored them raw.
  ...(entry.requestedByModel === undefined
    ? {}
    : {
        requestedByModel:
          entry.requestedByModel.focus === undefined
            ? entry.requestedByModel
            : { focus: Redaction.redact(entry.requestedByModel.focus).text },
      }),
  ...(entry.requestedByStrategy === undefined ? {} : { requestedByStrategy: entry.requestedByStrategy }),
  overflow: entry.overflow,
  status: entry.status,
  at: entry.settledVersion ?? entry.requestedVersion,
  before: entry.requestedVersion - 1,
  summarised: entry.plan?.head ?? [],
  kept: entry.plan?.tail ?? [],
  tokensBefore: entry.tokensBefore,
  tokensAfter: entry.tokensAfter,
  model: entry.model === undefined ? undefined : `${entry.model.providerId}/${entry.model.modelId}`,
  // An imported compaction has no prompt: OpenCode does not store the prompt it sent.
  promptChars: entry.prompt === undefined || entry.prompt === "" ? undefined : entry.prompt.length,
  summaryTokens: entry.summaryTokens,
  continuation: entry.continuation,
  continueSkipped: entry.continueSkipped,
  fallback: entry.fallback,
  fallbackError: entry.fallbackError,
  budgetedOut: entry.budgetedOut?.length ?? 0,
  redactions: entry.redactions ?? 0,
  ...(ledger === undefined ? {} : { ledger }),
  ...(retention === undefined ? {} : { retention }),
  ...(probes === undefined ? {} : { probes }),
})

// The check and the probes are shown beside the pivot, not again inside its ledger line.
const entryOnly = ({ retention: _retention, probes: _probes, ...entry }: Ledger.Entry): Ledger.Entry => entry

/** Builds the inspection from the log and the read models (or their folds when reading an export). */
export const inspection = (opened: Opened, prices: Readonly<Record<string, Pricing.Price>> = {}) =>
  Effect.gen(function* () {
    const log = yield* opened.log
    const events = log.map((l) => l.event)
    let conversation = Conversation.initial
    let history = CompactionHistory.initial
    let pruned = PruneIndex.projection.initial
    let ledger = Ledger.initial
    // Loaded on use: the runtime's model catalog would cost every other command its start-up time.
    const { Config } = yield* Effect.promise(() => import("@pivot/runtime"))
    const priceOf: Ledger.PriceOf = (ref) => Config.priceOf(ref, prices)
    const usage: Array<{ version: number; messageId: string; tokens: number }> = []
    const recalls: Array<Inspection["recalls"][number]> = []
    const pins: Array<Inspection["pins"][number]> = []
    for (const { event, meta } of log) {
      if (event._tag === "ContextPinned" || event._tag === "ContextUnpinned")
        pins.push({
          version: meta.version,
          action: event._tag === "ContextPinned" ? "pinned" : "unpinned",
          messageId: event.messageId,
          ...(event.partId === undefined ? {} : { partId: event.partId }),
          why: event._tag === "ContextPinned" ? event.by : event.reason,
          ...(event._tag === "ContextPinned" ? { tokens: event.tokens } : {}),
          ...(event._tag === "ContextUnpinned" && event.for !== undefined ? { for: event.for } : {}),
        })
      if (event._tag === "ContextRecalled")
        recalls.push({
          version: meta.version,
          id: event.id,
          query: event.query === undefined ? undefined : Redaction.redact(event.query).text,
          found: event.found,
          chars: event.chars,
          truncated: event.truncated,
        })
      conversation = Conversation.evolve(conversation, event)
      history = CompactionHistory.evolve(history, event, meta.version)
      pruned = PruneIndex.projection.evolve(pruned, event, meta)
      ledger = Ledger.evolve(ledger, event, meta.version, priceOf)
      if (event._tag === "AssistantStepRecorded" && event.message.summary !== true) {
        const tokens = Tokens.contextCount(event.message.tokens)
        if (tokens > 0) usage.push({ version: meta.version, messageId: event.message.id, tokens })
      }
    }
    // A database answers from its read models; they must agree with the fold above (the tests check they do).
    const entries =
      opened.readModels === undefined
        ? history.entries
        : yield* orCliError(opened.readModels.compactions(opened.sessionId))
    const prunedState =
      opened.readModels === undefined ? pruned : yield* orCliError(opened.readModels.pruned(opened.sessionId))
    const window = yield* windowAt(opened, opened.head)
    const rendered = Render.render(window)
    const pivots = CompactionHistory.pivots({ entries, lastCallTokens: undefined })
    ledger = Ledger.settle(ledger)
    const stability = new Map(
      Ledger.calls(ledger).flatMap((c) =>
        c.kind === "step" && c.input > 0 ? [[c.version, c.stablePrefix / c.input]] : [],
      ),
    )
    const compactions = new Map(
      Ledger.entries(ledger).flatMap((e) => (e.markerId === undefined ? [] : [[e.markerId, e]])),
    )
    const all = Conversation.messages(conversation)
    const lineage = events.flatMap((e) =>
      e._tag === "SessionForked" ? [{ session: e.parent, version: e.parentVersion }] : [],
    )
    const result: Inspection = {
      sessionId: opened.sessionId,
      lineage,
      title: events.reduce(Events.title, undefined),
      source: opened.where,
      version: opened.head,
      events: Object.fromEntries(countByType(events)),
      messages: {
        user: all.filter((m) => m.role === "user").length,
        assistant: all.filter((m) => m.role === "assistant").length,
      },
      window: { messages: window.length, modelMessages: rendered.length, tokens: estimateTokens(rendered) },
      pivots: pivots.map((entry, i) => {
        // The ledger's entry carries the retention check (recorded, or computed from the plan and the summary).
        const found = compactions.get(entry.markerId)
        const retention = found?.retention
        return pivotView(
          entry,
          i + 1,
          found === undefined ? undefined : entryOnly(found),
          retention === undefined ? undefined : retentionView(retention.artifacts, retention.recorded),
          found?.probes === undefined ? undefined : probesView(found.probes),
        )
      }),
      otherCompactions: entries
        .filter((e) => !pivots.includes(e))
        .map((e) => ({
          markerId: e.markerId,
          status: e.status,
          ...(e.reason === undefined ? {} : { reason: e.reason }),
          requestedVersion: e.requestedVersion,
          settledVersion: e.settledVersion,
          error: e.error,
        })),
      pruned: {
        tokensFreed: prunedState.tokensFreed,
        entries: prunedState.entries.map((e) => ({
          version: e.version,
          partId: e.partId,
          messageId: e.messageId,
          tokens: e.tokens,
        })),
      },
      usage: usage.map((u) => {
        const stable = stability.get(u.version)
        return stable === undefined ? u : { ...u, stablePrefix: Math.round(stable * 1000) / 1000 }
      }),
      ledger: { totals: Ledger.totals(ledger), entries: Ledger.entries(ledger), calls: Ledger.calls(ledger) },
      recalls,
      pins,
    }
    return result
  })

const span = (ids: ReadonlyArray<string>) =>
  ids.length === 0 ? "" : ids.length === 1 ? ` (${ids[0]})` : ` (${ids[0]} … ${ids[ids.length - 1]})`

const tokensChange = (before: number | undefined, after: number | undefined) =>
  `tokens ${before === undefined ? "?" : num(before)} → ${after === undefined ? "? (no call since)" : num(after)}`

const percent = (ratio: number): string => `${Math.round(ratio * 100)}%`
const eq = (value: number): string => `${value < 0 ? "-" : ""}${num(Math.round(Math.abs(value)))}`
const usd = (value: number | undefined): string => (value === undefined ? "" : ` ($${value.toFixed(4)})`)

/** One compaction's or prune's line: what it shed, cost, invalidated and saved (input-token equivalents). */
const ledgerLine = (e: Ledger.Entry): string =>
  `ledger: shed ~${num(e.shed)} tokens · ` +
  (e.kind === "compaction" ? `summary call ${eq(e.summaryCost)} eq${usd(e.summaryDollars)} · ` : "") +
  `cache ~${num(e.invalidated)} invalidated, ~${num(e.rewritten)} re-written · ` +
  `net saving ${eq(e.net)} eq over ${plural(e.calls, "call")}`

const KIND_NAMES: ReadonlyArray<readonly [ArtifactCheck.Kind, string]> = [
  ["file-read", "files read"],
  ["file-edited", "edited"],
  ["command", "commands"],
  ["error", "errors"],
  ["request", "requests"],
]

/**
 * A pivot's retention lines: how many artifacts of its span the summary names, by kind, how many are in view with the
 * pinned messages the window kept (when they add any), how many are in view or recallable, the first the summary does
 * not name and the first lost (neither in view nor recallable).
 */
const retentionLines = (r: RetentionView): Array<string> => {
  if (r.total === 0) return [`     kept: the span had no artifacts${r.recorded ? "" : " (checked now)"}`]
  const kinds = KIND_NAMES.filter(([k]) => r.byKind[k].total > 0)
    .map(([k, name]) => `${name} ${r.byKind[k].named}/${r.byKind[k].total}`)
    .join(", ")
  const lines = [
    `     kept: the summary names ${r.named} of ${plural(r.total, "artifact")} of its span (${kinds}); ${r.inView > r.named ? `${r.inView} of ${r.total} in view with the pinned messages; ` : ""}${r.reachable} of ${r.total} in view or recallable${r.recorded ? "" : " · checked now, not recorded"}`,
  ]
  const listed = (label: string, artifacts: ReadonlyArray<ArtifactCheck.Checked>) => {
    if (artifacts.length > 0)
      lines.push(
        `     ${label}: ${artifacts
          .slice(0, 4)
          .map((a) => `${a.kind} ${JSON.stringify(excerpt(a.text, 50))}`)
          .join(" · ")}${artifacts.length > 4 ? ` · … ${artifacts.length - 4} more` : ""}`,
      )
  }
  listed(
    "not named",
    r.artifacts.filter((a) => !a.named),
  )
  listed(
    "lost",
    r.artifacts.filter((a) => !ArtifactCheck.reachable(a)),
  )
  return lines
}

/** A pivot's probe lines: how many artifacts the judge found from the summary alone, by kind, and the first it missed. */
const probeLines = (p: ProbesView): Array<string> => {
  if (p.error !== undefined) return [`     probes: the judge gave no answer (${excerpt(p.error, 80)})`]
  const kinds = KIND_NAMES.flatMap(([k, name]) => {
    const of = p.probes.filter((q) => q.kind === k).flatMap((q) => q.expected)
    return of.length === 0 ? [] : [`${name} ${of.filter((e) => e.found).length}/${of.length}`]
  }).join(", ")
  const lines = [
    `     probes: the judge ${p.model ?? "?"} answered from the summary alone, naming ${p.found} of ${plural(p.expected, "artifact")} (${kinds})`,
  ]
  const missed = p.probes.flatMap((q) =>
    q.expected.filter((e) => !e.found).map((e) => ({ kind: q.kind, text: e.text })),
  )
  if (missed.length > 0)
    lines.push(
      `     not answered: ${missed
        .slice(0, 4)
        .map((a) => `${a.kind} ${JSON.stringify(excerpt(a.text, 50))}`)
        .join(" · ")}${missed.length > 4 ? ` · … ${missed.length - 4} more` : ""}`,
    )
  return lines
}

/** Why a compaction was asked for, as the pivot's heading says it (nothing when the log did not record it). */
const why = (reason: Events.CompactionReason | undefined): string => (reason === undefined ? "" : ` (${reason})`)

/** The ledger section: session totals and every prune (the compactions are shown beside their pivots). */
const ledgerText = (ledger: LedgerView): Array<string> => {
  const t = ledger.totals
  if (t.calls === 0) return ["ledger: no model call recorded"]
  const lines = [
    "ledger (input-token equivalents at each model's cache rates; estimates marked ~; see docs/ledger.md)",
    `  ${plural(t.calls, "call")} (${num(t.summaryCalls)} summary${t.probeCalls > 0 ? `, ${num(t.probeCalls)} probe` : ""}) · billed input ${eq(t.billed)} eq · all tokens ${eq(t.cost)} eq` +
      `${t.unpriced < t.calls ? ` · $${t.dollars.toFixed(4)}${t.unpriced > 0 ? ` (${t.unpriced} calls unpriced)` : ""}` : ""}`,
    `  cache: ${num(t.cacheRead)} read, ${num(t.cacheWrite)} written, hit ratio ${percent(t.hitRatio)} · ` +
      `prefix stability ~${percent(t.prefixStability)}`,
    `  ${plural(t.compactions, "compaction")}, ${plural(t.prunes, "prune")}: shed ~${num(t.shed)} · ` +
      `invalidated ~${num(t.invalidated)} · summary calls ${eq(t.summaryCost)} eq · net saving ${eq(t.net)} eq`,
  ]
  for (const e of ledger.entries)
    if (e.kind === "prune") lines.push(`  v${e.version} prune of ${plural(e.parts, "output")} · ${ledgerLine(e)}`)
  return lines
}

/**
 * The inspection as text. `full` is the inspection before the limits cut its listings (`limitInspection`): the
 * headings count the whole session, and the command notes what each listing left out.
 */
export const formatText = (report: Inspection, width: number, full: Inspection = report): Array<string> => {
  const lines: Array<string> = []
  const title = report.title === undefined ? "" : ` "${excerpt(report.title, 60)}"`
  lines.push(
    `session ${report.sessionId}${title} · ${report.source} · ${plural(report.version, "event")} · ` +
      `${plural(report.messages.user + report.messages.assistant, "message")} ` +
      `(${num(report.messages.user)} user, ${num(report.messages.assistant)} assistant)`,
  )
  if (report.lineage.length > 0)
    lines.push(
      `forked from ${report.lineage.map((l) => `${l.session} at version ${l.version}`).join(" → ")} → this session`,
    )
  lines.push(
    `window now: ${plural(report.window.messages, "stored message")} → ` +
      `${plural(report.window.modelMessages, "model message")} · ~${num(report.window.tokens)} tokens`,
  )
  lines.push("", "events")
  lines.push(...columns(Object.entries(report.events).map(([type, n]) => [type, num(n).padStart(6)])))
  lines.push("", full.pivots.length === 0 ? "pivots: none" : `pivots (${full.pivots.length})`)
  for (const p of report.pivots) {
    const byStrategy = p.requestedByStrategy
    const asked =
      p.requestedByModel !== undefined
        ? `, asked by the model${p.requestedByModel.focus === undefined ? "" : ` (focus: ${JSON.stringify(p.requestedByModel.focus)})`}`
        : byStrategy !== undefined
          ? `, asked of the host by pivot's strategy (${byStrategy.reason}: ${num(byStrategy.tokens)} tokens measured` +
            `${byStrategy.trigger === undefined ? "" : `, trigger ${num(byStrategy.trigger)}`}, host's limit ${num(byStrategy.usable)})`
          : ""
    // "asked by the model" already says why a model's request was made.
    const kind = `${p.auto ? "auto" : "manual"}${asked === "" ? why(p.reason) : ""}${asked}${p.overflow && p.reason !== "provider-overflow" ? ", overflow" : ""}`
    const then =
      p.continuation === undefined ? "" : `, then ${p.continuation === "replay" ? "replayed the turn" : "continued"}`
    lines.push(`  #${p.number} ${kind} · finished${then} · replay with --at ${p.at} (before it: --at ${p.before})`)
    lines.push(
      `     summarised ${plural(p.summarised.length, "message")}${span(p.summarised)} · ` +
        `kept ${plural(p.kept.length, "message")}${span(p.kept)}`,
    )
    lines.push(`     ${tokensChange(p.tokensBefore, p.tokensAfter)} · marker ${p.markerId} · summary ${p.summaryId}`)
    const writer =
      p.fallback === undefined
        ? `summariser ${p.model ?? "?"}`
        : `extractive fallback (${p.fallback}${p.fallbackError === undefined ? "" : `: ${p.fallbackError}`})`
    lines.push(
      `     ${writer} · ${p.promptChars === undefined ? "prompt not recorded" : `prompt ${num(p.promptChars)} chars`} · ` +
        `summary ${p.summaryTokens === undefined ? "?" : num(p.summaryTokens)} tokens`,
    )
    const beyond = [
      p.budgetedOut > 0 ? `${plural(p.budgetedOut, "message")} budgeted out of the summariser call` : undefined,
      p.redactions > 0 ? `${plural(p.redactions, "secret")} redacted` : undefined,
      p.continueSkipped === undefined ? undefined : `no continue message (${p.continueSkipped})`,
    ].filter((s) => s !== undefined)
    if (beyond.length > 0) lines.push(`     ${beyond.join(" · ")}`)
    if (p.ledger !== undefined) lines.push(`     ${ledgerLine(p.ledger)}`)
    if (p.retention !== undefined) lines.push(...retentionLines(p.retention))
    if (p.probes !== undefined) lines.push(...probeLines(p.probes))
  }
  if (full.otherCompactions.length > 0) {
    lines.push("", `compactions without a pivot (${full.otherCompactions.length})`)
    for (const c of report.otherCompactions)
      lines.push(
        `  ${c.markerId} ${c.status}${why(c.reason)} (requested at version ${c.requestedVersion}` +
          `${c.settledVersion === undefined ? "" : `, settled at ${c.settledVersion}`})` +
          `${c.error === undefined ? "" : `: ${excerpt(c.error, 80)}`}`,
      )
  }
  lines.push(
    "",
    full.pruned.entries.length === 0
      ? "pruned outputs: none"
      : `pruned outputs (${full.pruned.entries.length}, ~${num(report.pruned.tokensFreed)} tokens freed)`,
  )
  if (report.pruned.entries.length > 0)
    lines.push(
      ...columns([
        ["version", "part", "message", "tokens"],
        ...report.pruned.entries.map((e) => [String(e.version), e.partId, e.messageId, num(e.tokens)]),
      ]),
    )
  lines.push("", ...ledgerText(report.ledger))
  lines.push(
    "",
    full.usage.length === 0
      ? "usage over time: no model call reported usage"
      : "usage over time (context tokens reported by each model call)",
  )
  const max = Math.max(1, ...report.usage.map((u) => u.tokens))
  const pivotsAt = [...report.pivots]
  const bar = Math.max(10, Math.min(40, width - 70))
  const rows: Array<Array<string>> = []
  for (const u of report.usage) {
    while (pivotsAt.length > 0 && pivotsAt[0]!.at < u.version)
      rows.push([`v${pivotsAt[0]!.at}`, `── pivot #${pivotsAt.shift()!.number}`, "", "", ""])
    rows.push([
      `v${u.version}`,
      u.messageId,
      num(u.tokens).padStart(9),
      u.stablePrefix === undefined ? "" : `prefix ${percent(u.stablePrefix).padStart(4)}`,
      "█".repeat(Math.max(1, Math.round((u.tokens / max) * bar))),
    ])
  }
  for (const p of pivotsAt) rows.push([`v${p.at}`, `── pivot #${p.number}`, "", "", ""])
  lines.push(...columns(rows))
  // Only sessions whose model had the context_recall tool have this section.
  if (full.recalls.length > 0) {
    lines.push("", `recalls (${full.recalls.length}: what the model re-read through context_recall)`)
    lines.push(
      ...columns([
        ["version", "asked", "found", "chars"],
        ...report.recalls.map((r) => [
          String(r.version),
          r.id ?? `query ${JSON.stringify(excerpt(r.query ?? "", 40))}`,
          r.found.length === 0 ? "nothing" : r.found.length === 1 ? r.found[0]! : `${r.found.length} ids`,
          `${num(r.chars)}${r.truncated ? " (cut)" : ""}`,
        ]),
      ]),
    )
  }
  if (full.pins.length > 0) {
    const inForce = new Map<string, string>()
    for (const p of full.pins)
      if (p.action === "pinned") inForce.set(p.partId ?? p.messageId, p.messageId)
      else inForce.delete(p.partId ?? p.messageId)
    lines.push(
      "",
      `pins (${plural(inForce.size, "pin")} in force, ${plural(new Set(inForce.values()).size, "message")}: kept verbatim after every pivot)`,
    )
    lines.push(
      ...columns([
        ["version", "event", "pin", "by / why"],
        ...report.pins.map((p) => [
          String(p.version),
          p.action,
          p.partId === undefined ? p.messageId : `${p.partId} of ${p.messageId}`,
          `${p.why}${p.tokens === undefined ? "" : `, ~${num(p.tokens)} tokens`}${p.for === undefined ? "" : `, for ${p.for}`}`,
        ]),
      ]),
    )
  }
  return lines
}

/** The inspection with only the pivots, compactions, pruned outputs and usage rows whose version the limits keep. */
export const limitInspection = (report: Inspection, limits: Limits): Inspection => ({
  ...report,
  pivots: select(report.pivots, (p) => p.at, limits),
  otherCompactions: select(report.otherCompactions, (c) => c.requestedVersion, limits),
  pruned: { ...report.pruned, entries: select(report.pruned.entries, (e) => e.version, limits) },
  usage: select(report.usage, (u) => u.version, limits),
  ledger: {
    ...report.ledger,
    entries: select(report.ledger.entries, (e) => e.version, limits),
    calls: select(report.ledger.calls, (c) => c.version, limits),
  },
  recalls: select(report.recalls, (r) => r.version, limits),
  pins: select(report.pins, (r) => r.version, limits),
})

const { synopsis } = listing("inspect")

/** The options of `pivot inspect`, as effect/cli hands them to the handler (`inspectCommand.ts` declares them). */
export interface InspectOptions extends SourceOptions, LimitOptions {
  readonly format: "text" | "json"
  readonly prices: Option.Option<string>
  readonly pivot: Option.Option<number>
}

/** `pivot inspect`: prints the audit (or a usage or read error, as one line). */
export const run = (options: InspectOptions) =>
  report(
    "inspect",
    synopsis,
    Effect.gen(function* () {
      const io = yield* CliIo
      const source = yield* parseSource(options)
      const limits = yield* parseLimits(options)
      const prices = yield* pricesOf(options.prices)
      const pivot = Option.getOrUndefined(options.pivot)
      yield* withSession(source, (opened) =>
        Effect.gen(function* () {
          if (pivot !== undefined) {
            const dropped = yield* droppedOf(opened, pivot)
            io.out(options.format === "json" ? JSON.stringify(dropped, null, 2) : Recall.droppedText(dropped))
            return
          }
          const full = yield* inspection(opened, prices)
          const shown = limitInspection(full, limits)
          if (options.format === "json") {
            io.out(JSON.stringify(shown, null, 2))
            return
          }
          for (const line of formatText(shown, io.columns ?? 120, full)) io.out(line)
          const prunes = (view: Inspection) => view.ledger.entries.filter((e) => e.kind === "prune").length
          const notes = [
            omitted(shown.pivots.length, full.pivots.length, "pivots"),
            omitted(shown.otherCompactions.length, full.otherCompactions.length, "compactions without a pivot"),
            omitted(shown.pruned.entries.length, full.pruned.entries.length, "pruned outputs"),
            omitted(shown.usage.length, full.usage.length, "usage rows"),
            omitted(prunes(shown), prunes(full), "prunes in the ledger"),
            omitted(shown.recalls.length, full.recalls.length, "recalls"),
            omitted(shown.pins.length, full.pins.length, "pin events"),
          ].filter((note) => note !== undefined)
          if (notes.length > 0) io.out("")
          for (const note of notes) io.out(note)
        }),
      )
    }),
  )

/** The handler, and the options for arguments read in a plain form (`Args.ts` mirrors each flag's declaration). */
export const fast: Fast<InspectOptions> = {
  options: (parsed) =>
    Args.read(parsed, (args) => ({
      ...Args.source(args),
      format: args.choice("format", ["text", "json"] as const, "text"),
      prices: args.string("prices"),
      ...Args.limits(args),
      pivot: args.count("pivot"),
    })),
  run,
}
