/** The commands of one manual pivot (`msg_m<n>` marker, `msg_s<n>` summary `summary <n>`), for Decider-driven tests. */
import type { Commands, Config, Model } from "@pivot/core"
import { id, part } from "./events.ts"

export const pivotCommands = (
  n: number,
  limits: Model.ModelLimits,
  config: Config.CompactionConfig,
): ReadonlyArray<Commands.Command> => {
  const markerId = id(`msg_m${n}`)
  return [
    { _tag: "CreateCompaction", at: 1, markerId, partId: part(`prt_m${n}`), auto: false },
    {
      _tag: "ProcessCompaction",
      at: 2,
      markerId,
      summaryId: id(`msg_s${n}`),
      model: { providerId: "x", modelId: "y" },
      compactionLimits: limits,
      config,
    },
    {
      _tag: "FinishSummary",
      at: 3,
      markerId,
      partId: part(`prt_s${n}`),
      text: `summary ${n}`,
      tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    },
  ]
}
