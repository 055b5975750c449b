/**
 * Zero-cost prune rules: outputs whose content the window carries anyway, so clearing them loses nothing the model
 * can still use. Each is a `Strategy.Rule` (pure; composed onto any strategy with `Strategy.withRules`) whose choices
 * are recorded as `PartCompacted` with the rule's name and a one-line reason; the window shows pivot's placeholder
 * and `context_recall` gives the original back, as for any pruned output.
 */
import type { PruneTarget } from "./Commands.ts"
import * as Prune from "./Prune.ts"
import { type Call, type Input, outputs, type Rule } from "./Strategy.ts"

/** A value as JSON with its object keys sorted: two calls with the same arguments in another key order are equal. */
export const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** Whether a call's output can be cleared: completed, not cleared yet, and not of a protected tool. */
const clearable = (call: Call, input: Input): boolean =>
  call.part.state.status === "completed" &&
  call.part.state.compactedAt === undefined &&
  !(input.prune.protectedTools ?? Prune.PRUNE_PROTECTED_TOOLS).includes(call.tool)

/**
 * `duplicate-calls`: a completed call of the same tool with the same arguments (whatever their key order) as a newer
 * completed call in the window has its output cleared; the newest output stays. A call that errored, is still
 * running or is protected (`skill`) neither is cleared nor counts as the newer one.
 */
export const duplicateCalls: Rule = {
  name: "duplicate-calls",
  select: (input) => {
    const newest = new Map<string, Call>()
    const out: Array<PruneTarget> = []
    const calls = outputs(input.messages)
    for (let i = calls.length - 1; i >= 0; i--) {
      const call = calls[i]!
      if (
        call.part.state.status !== "completed" ||
        (input.prune.protectedTools ?? Prune.PRUNE_PROTECTED_TOOLS).includes(call.tool)
      )
        continue
      const key = `${call.tool}\u0000${canonical(call.part.state.input)}`
      const kept = newest.get(key)
      if (kept === undefined) {
        newest.set(key, call)
        continue
      }
      if (clearable(call, input))
        out.push({
          messageId: call.messageId,
          partId: call.partId,
          rule: "duplicate-calls",
          reason: `same ${call.tool} call as ${kept.partId}, whose output is newer`,
        })
    }
    return out.reverse()
  },
}
