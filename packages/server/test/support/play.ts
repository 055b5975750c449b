/**
 * Sessions for the viewer's tests and benchmark, decided command by command through core's Decider (so they are
 * sessions pivot could have written): user turns with a tool-using step and a closing step whose usage climbs,
 * prunes, auto and manual compactions, a provider overflow error, an extractive fallback, and a tool output that
 * holds an XSS payload. Written into a real SQLite file with the inline read models, as pivot writes.
 */
import { ArtifactCheck, type Commands, type Events, Ids, type Message, Probe, Session } from "@pivot/core"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect, Result } from "effect"

/** Markup in a tool output: inert in the viewer, or the test that looks for `window.__pwned` fails. */
export const XSS_PAYLOAD = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`

/** How to play a session. */
export interface PlayOptions {
  readonly sessionId: string
  readonly turns: number
  /** A compaction every this many turns (manual every third one, a fallback on the second); default 8. */
  readonly compactEvery?: number | undefined
  /** A prune every this many turns; default 5. */
  readonly pruneEvery?: number | undefined
  /** The turn whose model call fails with a provider overflow (then compacts); default 11. */
  readonly overflowTurn?: number | undefined
  /** Characters of each tool output; default 400. */
  readonly outputChars?: number | undefined
  /**
   * Record each pivot's retention check and probes as the runtime does with probes on (`ArtifactsChecked`, then
   * `ProbesAnswered` whose judge answers every question with the summary), from the second pivot on: the first stays
   * as an older log has it. Default false.
   */
  readonly probes?: boolean | undefined
}

const MODEL = { providerId: "test", modelId: "test-model" }
const LIMITS = { context: 200_000, output: 32_000 }

/** The events of a played session. */
export const play = (options: PlayOptions): Array<Events.Event> => {
  const compactEvery = options.compactEvery ?? 8
  const pruneEvery = options.pruneEvery ?? 5
  const overflowTurn = options.overflowTurn ?? 11
  const outputChars = options.outputChars ?? 400
  let state = Session.initialState
  const events: Array<Events.Event> = []
  let n = 0
  let compactions = 0
  let tokens = 1_000
  const at = () => 1_767_000_000_000 + n * 1_000
  const id = (prefix: string) => `${prefix}_${String(++n).padStart(12, "0")}`
  const msg = () => Ids.unsafe.message(id("msg"))
  const prt = () => Ids.unsafe.part(id("prt"))
  const apply = (command: Commands.Command) => {
    const decision = Session.decide(command, state)
    if (Result.isFailure(decision)) throw new Error(`${command._tag}: ${decision.failure._tag}`)
    events.push(...decision.success)
    state = Session.fold(decision.success, state)
  }
  const usage = (input: number) => ({ input, output: 150, reasoning: 0, cacheRead: 2_000, cacheWrite: 0 })
  const assistant = (parentId: Ids.MessageId, parts: Array<Message.AssistantPart>, finish: string) => ({
    role: "assistant" as const,
    id: msg(),
    parentId,
    createdAt: at(),
    model: MODEL,
    tokens: usage(tokens),
    finish,
    parts,
  })

  const compact = (auto: boolean, overflow: boolean) => {
    compactions++
    const markerId = msg()
    // Why, as the runtime records it (`CompactionRequested.reason`).
    const reason = overflow ? "provider-overflow" : auto ? "threshold" : "user"
    apply({ _tag: "CreateCompaction", at: at(), markerId, partId: prt(), auto, overflow, reason })
    apply({
      _tag: "ProcessCompaction",
      at: at(),
      markerId,
      summaryId: msg(),
      model: MODEL,
      compactionLimits: LIMITS,
      config: { tail_turns: 2 },
      prompt: "Summarise the conversation so far.",
    })
    if (compactions === 2) events.push({ _tag: "SummaryFallbackUsed", at: at(), markerId, reason: "failed" })
    apply({
      _tag: "FinishSummary",
      at: at(),
      markerId,
      partId: prt(),
      text: `## Objective\n- Fix the modules\n\n## Facts (from the log)\n### Files read\n- src/module${n % 40}.ts`,
      tokens: { input: 0, output: 400, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      finish: "stop",
    })
    if (options.probes === true && compactions > 1) {
      const head = (Session.compaction(state, markerId)?.plan?.head ?? []).flatMap((id) => {
        const m = Session.message(state, id)
        return m === undefined ? [] : [m]
      })
      const summary = events.findLast((e) => e._tag === "SummaryFinished")
      const text = summary?._tag === "SummaryFinished" ? (summary.summary.parts[0] as { text: string }).text : ""
      const artifacts = ArtifactCheck.check(head, text)
      const asked = Probe.questions(artifacts)
      events.push({ _tag: "ArtifactsChecked", at: at(), markerId, artifacts })
      events.push({
        _tag: "ProbesAnswered",
        at: at(),
        markerId,
        model: { providerId: "test", modelId: "judge" },
        usage: { input: 300, output: 40, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
        probes: Probe.grade(
          asked,
          asked.map(() => text),
        ),
      })
    }
    if (auto) apply({ _tag: "Continue", at: at(), markerId, messageId: msg() })
    tokens = 4_000
  }

  apply({
    _tag: "StartSession",
    sessionId: Ids.unsafe.session(options.sessionId),
    at: at(),
    title: `Session ${options.sessionId}`,
    model: MODEL,
  })
  for (let turn = 1; turn <= options.turns; turn++) {
    const user: Message.UserMessage = {
      role: "user",
      id: msg(),
      createdAt: at(),
      parts: [{ type: "text", id: prt(), text: `Turn ${turn}: look at src/module${turn % 40}.ts and fix the bug.` }],
    }
    apply({ _tag: "AddUserMessage", message: user })
    if (turn === overflowTurn) {
      apply({
        _tag: "ReportProviderError",
        at: at(),
        message: { ...assistant(user.id, [], "error"), tokens: usage(0) },
        error: { name: "ContextOverflowError", message: "prompt is too long: 210000 tokens > 200000 maximum" },
      })
      compact(true, true)
      continue
    }
    tokens += 1_500
    const output =
      turn === 3
        ? `${XSS_PAYLOAD} done`
        : `// module ${turn}\n${"x = compute(y) // line\n".repeat(Math.ceil(outputChars / 23))}`.slice(
            0,
            Math.max(outputChars, 40),
          )
    const tool: Message.AssistantPart = {
      type: "tool",
      id: prt(),
      callId: `call_${n}`,
      tool: "read",
      state: { status: "completed", input: { filePath: `src/module${turn % 40}.ts` }, output, title: "read" },
    }
    apply({
      _tag: "RecordAssistantStep",
      message: assistant(user.id, [{ type: "text", id: prt(), text: "Reading it." }, tool], "tool-calls"),
    })
    tokens += 300
    apply({
      _tag: "RecordAssistantStep",
      message: assistant(user.id, [{ type: "text", id: prt(), text: `Fixed module ${turn}.` }], "stop"),
    })
    if (turn % pruneEvery === 0) apply({ _tag: "Prune", at: at(), protect: 50, minimum: 0 })
    if (turn % compactEvery === 0) compact(turn % (compactEvery * 3) !== 0, false)
  }
  return events
}

/** Writes a session's events into a SQLite store with its inline read models, as pivot does. */
export const writeSqlite = (filename: string, sessionId: string, events: ReadonlyArray<Events.Event>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const log = SessionLog.fromEvents(sessionId, events)
      for (let i = 0; i < log.length; i += 2_000) {
        const batch = log.slice(i, i + 2_000)
        yield* SessionLog.append(
          sessionId,
          i === 0 ? "no-stream" : i,
          batch.map(({ event, meta }) => ({ id: meta.id, event })),
        )
      }
    }).pipe(Effect.provide(ReadModels.layerSqlite({ filename, synchronous: "normal" }))),
  )
