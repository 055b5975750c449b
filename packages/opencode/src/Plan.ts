/**
 * The plan of an imported compaction, reconstructed the OpenCode way. OpenCode records no plan: it keeps only the
 * marker's `tail_start_id`, and its window (`filterCompacted`, spec §2.11) shows the stored messages from that id up
 * to the marker after the summary. pivot records the plan explicitly when a compaction starts, so the import rebuilds
 * it from the window at that moment with pivot's rules (`SummaryInput.plan`): the marker and completed pairs are not
 * history, the tail keeps conversation only (no markers, no summaries), and after an overflow the replayed turn and
 * everything after it are neither summarised nor kept. A tail start at or after the marker keeps no tail (OpenCode's
 * window shows no range then; docs/parity.md, deviation 15).
 */
import type { Events, Ids } from "@pivot/core"
import { Message } from "@pivot/core"

/** What the reconstruction needs besides the window. */
export interface Input {
  readonly markerId: Ids.MessageId
  /** The marker's `overflow` flag: the last real user turn before it was replayed after the summary. */
  readonly overflow: boolean
  /** The marker's `tail_start_id` as exported; undefined when the whole history was summarised. */
  readonly tailStartId?: Ids.MessageId | undefined
  /** Every stored message so far, chronological: OpenCode's tail range is taken over these. */
  readonly stored: ReadonlyArray<Message.Message>
}

/** A reconstructed plan and what did not carry over from OpenCode. */
export interface Reconstructed {
  readonly plan: Events.CompactionPlan
  readonly warnings: ReadonlyArray<string>
}

const isRealUser = (m: Message.Message): boolean => m.role === "user" && !Message.isMarker(m)

/** The overflowed turn OpenCode replays (spec §2.8 step 2): the last real user message with another one before it. */
const replayIndex = (window: ReadonlyArray<Message.Message>, parentIndex: number): number | undefined => {
  for (let i = parentIndex - 1; i >= 0; i--) {
    if (!isRealUser(window[i]!)) continue
    return window.slice(0, i).some(isRealUser) ? i : undefined
  }
  return undefined
}

/**
 * Rebuilds the plan of the compaction requested by `input.markerId` from `window`, the messages the model saw when
 * it started (model order, earlier pivots applied). Returns undefined when the marker is not in the window.
 */
export const reconstruct = (window: ReadonlyArray<Message.Message>, input: Input): Reconstructed | undefined => {
  const parentIndex = window.findLastIndex((m) => m.id === input.markerId)
  if (parentIndex === -1) return undefined
  const replay = input.overflow ? replayIndex(window, parentIndex) : undefined
  const messages = replay === undefined ? window : window.slice(0, replay)
  const history = messages.filter((m) => m.id !== input.markerId)

  // Completed pairs (a finished summary answering a marker in the history) are hidden; the last gives the anchor.
  const markers = new Set(history.filter(Message.isMarker).map((m) => m.id))
  const hidden = new Set<string>()
  let previousSummary: string | undefined
  for (const m of history) {
    if (Message.isFinishedSummary(m) && markers.has(m.parentId)) {
      hidden.add(m.id)
      hidden.add(m.parentId)
      previousSummary = Message.summaryText(m)
    }
  }
  const visible = history.filter((m) => !hidden.has(m.id))

  const warnings: Array<string> = []
  const marker = input.markerId
  // OpenCode's tail is the range [tail_start_id, marker): a start at the marker keeps no tail (its window stops at
  // the marker), and a start after it keeps none either (see the warning). Ids sort chronologically, and once
  // completed pairs are hidden the window is chronological too; messages recorded after the marker (while the
  // compaction was pending) are neither summarised nor kept: they stay visible after the pivot in recorded order.
  const before = visible.filter((m) => m.id < marker)
  const start = input.tailStartId !== undefined && input.tailStartId < marker ? input.tailStartId : undefined
  const head = start === undefined ? before : before.filter((m) => m.id < start)
  const kept =
    start === undefined
      ? []
      : before.filter((m) => m.id >= start && !Message.isMarker(m) && !(m.role === "assistant" && m.summary === true))
  const tail = kept.map((m) => m.id)

  if (input.tailStartId !== undefined && input.tailStartId > marker)
    warnings.push(
      `compaction ${marker}: tail_start_id ${input.tailStartId} is not before its marker, so OpenCode's window never meets it and ignores this compaction; pivot keeps no tail: the window is the marker, the summary and the messages after the marker in recorded order`,
    )
  if (start !== undefined) {
    if (!visible.some((m) => m.id === start))
      warnings.push(
        `compaction ${input.markerId}: tail_start_id ${start} is not in the window pivot had then; the tail is taken from the visible messages after it`,
      )
    else if (tail[0] !== start)
      warnings.push(
        `compaction ${input.markerId}: tail_start_id ${start} is not conversation pivot keeps; the kept tail starts at ${tail[0] ?? "nothing"}`,
      )
    // OpenCode shows every stored message in [tail_start_id, marker); say which of them pivot does not keep.
    const keptIds = new Set<string>(tail)
    const dropped = input.stored.filter((m) => m.id >= start && m.id < marker && !keptIds.has(m.id)).map((m) => m.id)
    if (dropped.length > 0)
      warnings.push(
        `compaction ${input.markerId}: OpenCode's tail range also shows ${dropped.join(", ")}; pivot does not keep them (markers, summaries, the replayed turn, or messages an earlier compaction hid)`,
      )
  }

  const replayOf = replay === undefined ? undefined : window[replay]!.id
  return {
    plan: {
      head: head.map((m) => m.id),
      tail,
      ...(tail[0] === undefined ? {} : { tailStartId: tail[0] }),
      ...(previousSummary === undefined ? {} : { previousSummary }),
      ...(replayOf === undefined ? {} : { replayOf }),
    },
    warnings,
  }
}
