/**
 * The window rendered and checked incrementally (issue 23): what `ValidWindow.render` answers for the same messages,
 * without rendering and checking the whole window again every turn.
 *
 * - Each stored message is rendered once (`Render.render` of it alone): messages are immutable values, so a message
 *   the window still shows, unchanged, keeps its rendering. A prune or a pivot, which replaces some messages or
 *   reorders them, re-renders only the messages it replaced.
 * - When the new window is the previous one with messages appended (a step, a user message), or with messages
 *   replaced by copies the check cannot tell apart (`ValidWindow.sameForCheck`: a prune), only the new messages are
 *   checked, by resuming the previous check (`ValidWindow.inputCheck`); any other change (a pivot) is checked from
 *   the start, which is a scan of the rendered messages (no rendering).
 * - A window that breaks a rule is repaired by `ValidWindow.repair` of the whole rendering, as before.
 *
 * Every rendering it answers is frozen (`Render.freeze`): it is kept and answered again in later windows.
 *
 * A renderer holds one window at a time (keep one per session); it answers the same as `ValidWindow.render` for any
 * sequence of windows, in any order.
 *
 * **Example**
 * ```ts
 * const renderer = IncrementalWindow.make()
 * const first = renderer.render(Window.messages(state.window))
 * const next = renderer.render(Window.messages(later.window)) // renders only what changed
 * ```
 */
import type { Message } from "./Message.ts"
import type * as MM from "./ModelMessage.ts"
import * as Render from "./Render.ts"
import * as ValidWindow from "./ValidWindow.ts"

/** A renderer of one window at a time (see the module comment). */
export interface Renderer {
  /** The window of `messages`, rendered and repaired: equal to `ValidWindow.render(messages, options)`. */
  readonly render: (messages: ReadonlyArray<Message>) => ReadonlyArray<Render.Rendered>
  /** The length of `JSON.stringify(rendered.map((r) => r.message))`, each message's share measured once. */
  readonly jsonLength: (rendered: ReadonlyArray<Render.Rendered>) => number
  /**
   * `rendered.map((r) => r.message)`, kept beside the latest window's rendering (not read from each rendering again):
   * a shared array, to be copied before it is handed out.
   */
  readonly modelMessages: (rendered: ReadonlyArray<Render.Rendered>) => ReadonlyArray<MM.ModelMessage>
}

/** The previous window: its messages, its valid rendering, and the check that can be resumed after it. */
interface Last {
  readonly messages: ReadonlyArray<Message>
  readonly rendered: ReadonlyArray<Render.Rendered>
  /**
   * Where each message's rendering starts in `rendered` (one more entry: its length), when `rendered` is not a
   * repair: an unchanged message of the next window then takes its rendering from here, not from the WeakMap.
   */
  readonly starts: ReadonlyArray<number> | undefined
  /** `rendered`'s model messages, in order. */
  readonly models: ReadonlyArray<MM.ModelMessage>
  check: ValidWindow.InputCheck | undefined
}

/** A renderer with these render options (see `Render.Options`). */
export const make = (options?: Render.Options): Renderer => {
  const perMessage = new WeakMap<Message, ReadonlyArray<Render.Rendered>>()
  const jsonLengths = new WeakMap<MM.ModelMessage, number>()
  let last: Last | undefined

  const renderOne = (message: Message): ReadonlyArray<Render.Rendered> => {
    const known = perMessage.get(message)
    if (known !== undefined) return known
    // Frozen: the same renderings are handed out every turn (ADR 0023).
    const fresh = Object.freeze(Render.render([message], options).map(Render.freeze))
    perMessage.set(message, fresh)
    return fresh
  }

  /**
   * Whether `messages` starts with the messages of `previous`, each the same value or a changed copy of it that the
   * input check cannot tell from it (a pruned output): the check of `previous` then holds for that prefix.
   */
  const NO = 0
  const CHANGED = 1
  const SAME = 2
  /** `SAME` when every message of `previous` is there unchanged (an append), `CHANGED` for a prefix as above. */
  const extends_ = (previous: ReadonlyArray<Message>, messages: ReadonlyArray<Message>) => {
    if (messages.length < previous.length) return NO
    let same = true
    for (let i = 0; i < previous.length; i++) {
      const before = previous[i]!
      const now = messages[i]!
      if (before === now) continue
      if (before.id !== now.id || !ValidWindow.sameForCheck(renderOne(before), renderOne(now))) return NO
      same = false
    }
    return same ? SAME : CHANGED
  }

  const render = (messages: ReadonlyArray<Message>): ReadonlyArray<Render.Rendered> => {
    if (last !== undefined && last.messages === messages) return last.rendered
    // A resumed check goes on from the previous window's end, so only one window may resume it: it moves on.
    const extended = last?.check !== undefined ? extends_(last.messages, messages) : NO
    const resumable = extended !== NO ? last : undefined
    const check = resumable?.check ?? ValidWindow.inputCheck()
    if (resumable !== undefined) resumable.check = undefined
    // The prefix the previous check covered: its messages (changed ones rendered anew), not checked again. An
    // unchanged message keeps its place there, so its rendering is read from the previous one (array reads, not a
    // WeakMap lookup per message: most of a long window's cost per turn); when none changed (an append), the previous
    // arrays are copied whole.
    const checked = resumable?.messages.length ?? 0
    const before = resumable?.starts
    let rendered: Array<Render.Rendered>
    let starts: Array<number>
    let models: Array<MM.ModelMessage>
    if (extended === SAME && before !== undefined) {
      rendered = resumable!.rendered.slice()
      models = resumable!.models.slice()
      starts = before.slice(0, checked)
    } else {
      rendered = []
      models = []
      starts = []
      for (let i = 0; i < checked; i++) {
        starts.push(rendered.length)
        const message = messages[i]!
        if (before !== undefined && message === resumable!.messages[i])
          for (let r = before[i]!; r < before[i + 1]!; r++) {
            const kept = resumable!.rendered[r]!
            rendered.push(kept)
            models.push(kept.message)
          }
        else
          for (const r of renderOne(message)) {
            rendered.push(r)
            models.push(r.message)
          }
      }
    }
    for (let i = checked; i < messages.length; i++) {
      starts.push(rendered.length)
      for (const r of renderOne(messages[i]!)) {
        rendered.push(r)
        models.push(r.message)
        check.add(r)
      }
    }
    starts.push(rendered.length)
    if (check.clean()) {
      last = { messages, rendered, starts, models, check }
      return rendered
    }
    // Broken somewhere: the repair of the whole rendering, as `ValidWindow.render` does (never resumed from).
    const repaired = ValidWindow.repair(rendered).rendered.map(Render.freeze)
    last = { messages, rendered: repaired, starts: undefined, models: repaired.map((r) => r.message), check: undefined }
    return repaired
  }

  const modelMessages = (rendered: ReadonlyArray<Render.Rendered>): ReadonlyArray<MM.ModelMessage> =>
    last !== undefined && last.rendered === rendered ? last.models : rendered.map((r) => r.message)

  const jsonLength = (rendered: ReadonlyArray<Render.Rendered>): number => {
    // `[a,b,c]`: the brackets, the commas, and each message's own JSON.
    let length = 2 + Math.max(0, rendered.length - 1)
    for (const { message } of rendered) {
      let own = jsonLengths.get(message)
      if (own === undefined) {
        own = JSON.stringify(message).length
        jsonLengths.set(message, own)
      }
      length += own
    }
    return length
  }

  return { render, jsonLength, modelMessages }
}
