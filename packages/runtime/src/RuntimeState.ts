/**
 * What the runtime folds from a session's events beside core's session state: how many automatic compactions ran
 * without progress (bounded compaction), the compaction in flight and what its summariser input was (to resume it
 * after a restart), whether a finished compaction still owes its continue step, and the latest usage for the HUD.
 * A pure fold, O(1) per event.
 */
import { type Events, FixedPrompt, type Ids, Message, Tokens, Usage } from "@pivot/core"

/** Any event of a session stream (core's catalog holds the runtime's events too). */
export type Event = Events.Event

/** The compaction in flight, as far as the runtime needs it to resume. */
export interface InFlight {
  readonly markerId: Ids.MessageId
  readonly auto: boolean
  /** The newest conversation message before the marker: whether the agent was mid-task is read from it. */
  readonly lastReal: Ids.MessageId | undefined
  /** The exact prompt recorded when the compaction started; undefined while only requested. */
  readonly prompt?: string
  /** Head messages budgeted out of the model call. */
  readonly dropped: ReadonlyArray<Ids.MessageId>
  /** Set when the model asked for this compaction (`context_compact`): its focus note, possibly empty. */
  readonly focus?: string | undefined
}

/** The latest model call of the session (not a summary). */
export interface LastCall {
  readonly messageId: Ids.MessageId
  readonly tokens: number
  readonly overflow: boolean
}

/** The runtime's fold state. */
export interface State {
  /** Automatic compactions since the last model step that stayed under the trigger (or the last user message). */
  readonly streak: number
  /** A model step since the last automatic compaction request is known to have stayed under the trigger. */
  readonly progressed: boolean
  /** The newest model step, until an overflow is reported for it (then it made no progress). */
  readonly unconfirmed: Ids.MessageId | undefined
  /** Automatic compaction is suspended (`CompactionAbandoned`) until progress is made. */
  readonly suspended: boolean
  readonly inFlight: InFlight | undefined
  /** A finished automatic compaction whose continue step (continue, replay or skip) is not recorded yet. */
  readonly awaitingContinue: Ids.MessageId | undefined
  /** The newest conversation message before the marker of `awaitingContinue`. */
  readonly awaitingLastReal: Ids.MessageId | undefined
  /** The newest conversation message: a user's (not a marker nor a continue) or a model step (not a summary). */
  readonly lastReal: Ids.MessageId | undefined
  /** The newest user message that is not a compaction marker: the parent of the next model step. */
  readonly lastUserId: Ids.MessageId | undefined
  readonly lastCall: LastCall | undefined
  /** Pivots formed so far. */
  readonly pivots: number
  /** Compactions that failed. */
  readonly failures: number
  /** Extractive fallbacks used. */
  readonly fallbacks: number
  /** The model asked for a compaction since the newest user message (it may ask once per user turn). */
  readonly modelCompacted: boolean
  /** Tool outputs cleared from the model input so far, and the tokens that freed. */
  readonly pruned: { readonly parts: number; readonly tokens: number }
  /** The text of the newest `HudShown`. */
  readonly hud: string | undefined
  /**
   * How many times the session was forgotten (`SessionForgotten`): text derived from a state with a smaller count was
   * read before an erasure and must not be written (see `Sessions.execute`'s `basis`).
   */
  readonly forgotten: number
  /** Core's usage fold: whether the last call's count still measures the window (`Usage.measured`). */
  readonly usage: Usage.State
  /** Core's fixed-prompt fold: the system prompt's and tools' tokens, measured from the first call (`FixedPrompt`). */
  readonly fixed: FixedPrompt.State
}

/** The state of an empty stream. */
export const initial: State = {
  streak: 0,
  progressed: false,
  unconfirmed: undefined,
  suspended: false,
  inFlight: undefined,
  awaitingContinue: undefined,
  awaitingLastReal: undefined,
  lastReal: undefined,
  lastUserId: undefined,
  lastCall: undefined,
  pivots: 0,
  failures: 0,
  fallbacks: 0,
  modelCompacted: false,
  pruned: { parts: 0, tokens: 0 },
  hud: undefined,
  forgotten: 0,
  usage: Usage.initial,
  fixed: FixedPrompt.initial,
}

/** The version of this state's shape in snapshots; bumped whenever a field is added or changes meaning. */
export const FORMAT = 4

/** A state read back from its JSON (the undefined fields JSON leaves out come back undefined). */
export const decode = (raw: unknown): State => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error("runtime state is not an object")
  const given = raw as Partial<State>
  const state = {
    ...initial,
    ...given,
    usage: { ...Usage.initial, ...given.usage },
    fixed: { ...FixedPrompt.initial, ...given.fixed },
  }
  for (const key of ["streak", "pivots", "failures", "fallbacks", "forgotten"] as const)
    if (!Number.isSafeInteger(state[key])) throw new Error(`runtime state: ${key} is not a whole number`)
  return state
}

const isRealUser = (message: Message.UserMessage): boolean =>
  Message.compactionPartOf(message) === undefined &&
  !message.parts.some((part) => part.type === "text" && part.metadata?.compaction_continue === true)

/** Whether a model step under the trigger was seen since the last automatic compaction request. */
const healthy = (state: State): boolean => state.progressed || state.unconfirmed !== undefined

/** Folds one event. */
export const evolve = (state: State, event: Event): State => {
  const own = evolveOwn(state, event)
  const usage = Usage.evolve(state.usage, event)
  const fixed = FixedPrompt.evolve(state.fixed, event)
  return usage === own.usage && fixed === own.fixed ? own : { ...own, usage, fixed }
}

const evolveOwn = (state: State, event: Event): State => {
  switch (event._tag) {
    case "UserMessageAdded":
      // A person's new message starts a new run: a fresh compaction budget.
      return isRealUser(event.message)
        ? {
            ...state,
            lastUserId: event.message.id,
            lastReal: event.message.id,
            streak: 0,
            suspended: false,
            progressed: false,
            unconfirmed: undefined,
            modelCompacted: false,
          }
        : { ...state, lastUserId: event.message.id }
    case "TurnReplayed":
      return { ...state, lastUserId: event.message.id, lastReal: event.message.id, awaitingContinue: undefined }
    case "ContinueRequested":
      return { ...state, lastUserId: event.message.id, awaitingContinue: undefined }
    case "AssistantStepRecorded":
      if (event.message.summary === true) return state
      return {
        ...state,
        // The previous step was not followed by an overflow: it stayed under the trigger.
        progressed: healthy(state),
        unconfirmed: event.message.id,
        lastReal: event.message.id,
        lastCall: { messageId: event.message.id, tokens: Tokens.contextCount(event.message.tokens), overflow: false },
      }
    case "ProviderErrorReported":
      if (event.message.summary === true) return state
      return {
        ...state,
        progressed: healthy(state),
        unconfirmed: event.overflow ? undefined : state.unconfirmed,
        lastReal: event.message.id,
        lastCall: { messageId: event.message.id, tokens: 0, overflow: event.overflow },
      }
    case "OverflowDetected":
      return {
        ...state,
        unconfirmed: state.unconfirmed === event.messageId ? undefined : state.unconfirmed,
        lastCall:
          state.lastCall?.messageId === event.messageId
            ? { ...state.lastCall, overflow: true }
            : { messageId: event.messageId, tokens: event.tokens, overflow: true },
      }
    case "CompactionRequested": {
      const part = Message.compactionPartOf(event.marker)
      const auto = part?.auto === true
      const inFlight: InFlight = { markerId: event.marker.id, auto, lastReal: state.lastReal, dropped: [] }
      if (!auto) return { ...state, inFlight }
      // Only automatic compactions count towards the bound; a model step under the trigger resets it.
      const progress = healthy(state)
      return {
        ...state,
        inFlight,
        streak: progress ? 1 : state.streak + 1,
        suspended: progress ? false : state.suspended,
        progressed: false,
        unconfirmed: undefined,
      }
    }
    case "CompactionStarted":
      return state.inFlight?.markerId === event.markerId
        ? { ...state, inFlight: { ...state.inFlight, prompt: event.prompt } }
        : state
    case "SummaryInputBudgeted":
      return state.inFlight?.markerId === event.markerId
        ? { ...state, inFlight: { ...state.inFlight, dropped: event.dropped } }
        : state
    case "SummaryFinished": {
      const owed = state.inFlight?.markerId === event.markerId && state.inFlight.auto
      return {
        ...state,
        pivots: state.pivots + 1,
        awaitingContinue: owed ? event.markerId : undefined,
        awaitingLastReal: owed ? state.inFlight?.lastReal : undefined,
        inFlight: undefined,
      }
    }
    case "SummaryFailed":
      return { ...state, failures: state.failures + 1, inFlight: undefined }
    case "SummaryFallbackUsed":
      return { ...state, fallbacks: state.fallbacks + 1 }
    case "AutoContinueSkipped":
      return state.awaitingContinue === event.markerId ? { ...state, awaitingContinue: undefined } : state
    case "CompactionAbandoned":
      return { ...state, suspended: true }
    case "CompactionRequestedByModel":
      return {
        ...state,
        modelCompacted: true,
        inFlight:
          state.inFlight?.markerId === event.markerId
            ? { ...state.inFlight, focus: event.focus ?? "" }
            : state.inFlight,
      }
    case "PartCompacted":
      return { ...state, pruned: { parts: state.pruned.parts + 1, tokens: state.pruned.tokens + event.tokens } }
    case "HudShown":
      return { ...state, hud: event.text }
    case "SessionForgotten":
      return { ...state, forgotten: state.forgotten + 1 }
    default:
      return state
  }
}

/** Folds events onto a state. */
export const fold = (events: Iterable<Event>, from: State = initial): State => {
  let state = from
  for (const event of events) state = evolve(state, event)
  return state
}

/**
 * Whether another automatic compaction may run: always after a model step under the trigger; otherwise not while
 * suspended, and not when `limit` consecutive automatic compactions already ran without progress (`limit` ≥ 1).
 */
export const mayAutoCompact = (state: State, limit: number): boolean =>
  healthy(state) || (!state.suspended && state.streak < limit)
