/** The built-in read models, in the order they are written (one file each). */
import * as audit from "./audit.ts"
import * as compactions from "./compactions.ts"
import * as prunes from "./prunes.ts"
import type { ReadModel } from "./ReadModel.ts"
import * as recall from "./recall.ts"
import * as timeline from "./timeline.ts"
import * as usage from "./usage.ts"
import * as window from "./window.ts"

/** The read models, in the order they are written. */
export const models: ReadonlyArray<ReadModel> = [
  window.model,
  usage.model,
  compactions.model,
  prunes.model,
  audit.model,
  recall.model,
  timeline.model,
]

/** The read models' names and projection versions. */
export const names: ReadonlyArray<{ readonly name: string; readonly version: number }> = models.map((m) => ({
  name: m.projection.name,
  version: m.projection.version,
}))
