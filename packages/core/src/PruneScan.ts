/**
 * The prune's choice kept up to date as a conversation grows (issue 23): `select` answers what
 * `Prune.selectNewestFirst(Conversation.newestFirst(conversation), options)` answers, without reading every message
 * the walk passes on every turn. Most turns prune nothing, yet the walk reads each message back to the latest pivot
 * or the outputs pruned last time (80 or so in a long session): objects spread over the heap, read only for that.
 *
 * - The scanner keeps the walk's steps (`Prune.stepsOf`: user turns, summaries, completed tool outputs) of the
 *   conversation's newest messages, oldest first, in one array. When the conversation it is given is the previous
 *   one with messages appended (a step, a user message), only those are read; any other change (a prune, a late tool
 *   result, a pivot, another session's state) reads the messages again, back to the latest summary.
 * - `Prune.selectSteps`, the rule's one home, walks that array newest first.
 * - Steps older than a walk's stop (an output already pruned, outside the newest turns) are dropped: every later walk
 *   with as many or fewer guarded turns stops there too. A walk that would need them (more guarded turns than there
 *   are user turns after the drop) reads the messages again.
 *
 * A scanner holds one conversation at a time (keep one per session); it answers the same as the walk for any
 * sequence of conversations and options, in any order.
 *
 * **Example**
 * ```ts
 * const scanner = PruneScan.make()
 * const selection = scanner.select(state.window.conversation, { protect: 4_800, minimum: 2_400 })
 * ```
 */
import * as Conversation from "./Conversation.ts"
import * as Seq from "./internal/Seq.ts"
import * as Prune from "./Prune.ts"

/** A scanner of one conversation at a time (see the module comment). */
export interface Scanner {
  /** Equal to `Prune.selectNewestFirst(Conversation.newestFirst(conversation), options)`. */
  readonly select: (conversation: Conversation.State, options?: Prune.Options) => Prune.Selection
}

/** More changed keys than this between two conversations: read the messages again rather than compare. */
const APPEND_LIMIT = 256

/** The steps kept, and what they cover. */
interface Kept {
  readonly conversation: Conversation.State
  /** The steps of the newest messages, oldest first. */
  readonly steps: Array<Prune.Step>
  /** User turns in `steps`. */
  readonly users: number
  /**
   * Whether `steps` start after a walk's stop was found: their first step is an output already pruned, and a walk
   * ends there when it does not skip it (it skips no more turns than `users`, and its tool is not protected).
   * Otherwise they start at a summary or at the conversation's first message.
   */
  readonly cut: boolean
}

const isProtected = (step: Prune.Step, options: Prune.Options) =>
  step._tag === "Output" && (options.protectedTools ?? Prune.PRUNE_PROTECTED_TOOLS).includes(step.tool)

/**
 * The steps of the newest messages, read newest first back to the latest summary, the first message, or the first
 * output this walk (`options`) stops at: an output already pruned, outside the guarded turns, of a tool not protected.
 */
const read = (conversation: Conversation.State, options: Prune.Options): Kept => {
  const guarded = options.turns ?? Prune.PRUNE_TURNS
  const newestFirst: Array<Prune.Step> = []
  let users = 0
  let cut = false
  walk: for (let i = conversation.order.length - 1; i >= 0; i--) {
    const steps = Prune.stepsOf(Conversation.get(conversation, Seq.get(conversation.order, i)!)!)
    for (let s = steps.length - 1; s >= 0; s--) {
      const step = steps[s]!
      newestFirst.push(step)
      if (step._tag === "User") users++
      else if (step._tag === "Summary") break walk
      else if (step.compacted && users >= guarded && !isProtected(step, options)) {
        cut = true
        break walk
      }
    }
  }
  return { conversation, steps: newestFirst.reverse(), users, cut }
}

/** How many messages `conversation` appends to `previous`, if that is all that changed; else undefined. */
const appended = (previous: Conversation.State, conversation: Conversation.State): number | undefined => {
  const added = conversation.order.length - previous.order.length
  if (added < 0 || added > APPEND_LIMIT) return undefined
  const changed = conversation.messages.keysChangedSince(previous.messages, APPEND_LIMIT)
  if (changed === undefined) return undefined
  // The changed keys include every appended message (each is new): as many keys means none other changed.
  return new Set(changed).size === added ? added : undefined
}

/** `kept` extended by the messages `conversation` appends to it. */
const extend = (kept: Kept, conversation: Conversation.State, added: number): Kept => {
  let { steps, users, cut } = kept
  for (let i = conversation.order.length - added; i < conversation.order.length; i++) {
    const messageSteps = Prune.stepsOf(Conversation.get(conversation, Seq.get(conversation.order, i)!)!)
    // A summary ends every walk: nothing before it is needed again.
    if (messageSteps[0]?._tag === "Summary") {
      steps = []
      users = 0
      cut = false
    }
    for (const step of messageSteps) {
      steps.push(step)
      if (step._tag === "User") users++
    }
  }
  return { conversation, steps, users, cut }
}

/** A scanner (see the module comment). */
export const make = (): Scanner => {
  let kept: Kept | undefined

  /** The steps of `conversation` for this walk: the kept ones (extended by what it appends), or read again. */
  const stepsFor = (conversation: Conversation.State, options: Prune.Options): Kept => {
    let current: Kept | undefined = kept
    if (current !== undefined && current.conversation !== conversation) {
      const added = appended(current.conversation, conversation)
      current = added === undefined ? undefined : extend(current, conversation, added)
    }
    // Cut at a stop this walk could pass (it skips more turns, or protects that tool): read again.
    if (
      current === undefined ||
      (current.cut && ((options.turns ?? Prune.PRUNE_TURNS) > current.users || isProtected(current.steps[0]!, options)))
    )
      current = read(conversation, options)
    return current
  }

  const select = (conversation: Conversation.State, options: Prune.Options = {}): Prune.Selection => {
    let current = stepsFor(conversation, options)
    const { steps } = current
    let at = steps.length
    const selection = Prune.selectSteps(() => (at === 0 ? undefined : steps[--at]), options)
    // The walk ended at an output already pruned (its last step read, not the first: it broke there): every later
    // walk that does not skip it ends there or before, so the steps older than it are not kept.
    if (at > 0 && steps[at]!._tag === "Output") {
      let dropped = 0
      for (let i = 0; i < at; i++) if (steps[i]!._tag === "User") dropped++
      current = { conversation, steps: steps.slice(at), users: current.users - dropped, cut: true }
    }
    kept = current
    return selection
  }

  return { select }
}
