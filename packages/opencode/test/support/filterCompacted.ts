/**
 * OpenCode's window over the stored messages (spec §2.11, `filterCompacted`), written from the spec over raw export
 * messages, to compare pivot's imported window with what OpenCode showed the model.
 */
import type { RawMessage } from "./fixtures.ts"

const compactionPart = (m: RawMessage) =>
  m.info.role === "user" ? m.parts.find((p) => p.type === "compaction") : undefined

/** The ids OpenCode's model input holds, in its order, for messages given chronologically. */
export const filterCompacted = (chronological: ReadonlyArray<RawMessage>): Array<string> => {
  const newestFirst = [...chronological].reverse()
  // Pass 1: walk newest to oldest until the boundary of the latest completed compaction.
  const completed = new Set<string>()
  let retain: string | undefined
  const result: Array<RawMessage> = []
  for (const m of newestFirst) {
    result.push(m)
    if (retain !== undefined) {
      if (m.info.id === retain) break
      continue
    }
    if (m.info.role === "user" && completed.has(m.info.id)) {
      const part = compactionPart(m)
      if (part !== undefined) {
        if (part.tail_start_id === undefined) break
        retain = part.tail_start_id
        if (retain === m.info.id) break
        continue
      }
    }
    if (m.info.role === "assistant" && m.info.summary && m.info.finish && !m.info.error) completed.add(m.info.parentID)
  }
  result.reverse()
  // Pass 2: marker, summary, then the tail, then what came after the summary.
  const ci = result.findLastIndex((m) => compactionPart(m)?.tail_start_id !== undefined)
  if (ci === -1) return result.map((m) => m.info.id)
  const marker = result[ci]!
  const si = result.findIndex(
    (m, i) => i > ci && m.info.role === "assistant" && m.info.summary && m.info.parentID === marker.info.id,
  )
  const ti = result.findIndex((m) => m.info.id === compactionPart(marker)?.tail_start_id)
  if (ti >= 0 && ti < ci && si > ci)
    return [...result.slice(ci, si + 1), ...result.slice(ti, ci), ...result.slice(si + 1)].map((m) => m.info.id)
  return result.map((m) => m.info.id)
}
