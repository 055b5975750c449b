/** Every `pivot` command, in the order `pivot --help` lists them. Adding a command is one entry here. */

import type { Entry } from "./Command.ts"
import { check } from "./check.ts"
import { demo } from "./demo.ts"
import { forget } from "./forget.ts"
import { fork } from "./fork.ts"
import { importCommand } from "./import.ts"
import { inspect } from "./inspect.ts"
import { pin, unpin } from "./pin.ts"
import { projections } from "./projections.ts"
import { prune } from "./prune.ts"
import { rebuild } from "./rebuild.ts"
import { serve } from "./serve.ts"
import { window } from "./window.ts"

/** The commands. */
export const all: ReadonlyArray<Entry> = [
  demo,
  importCommand,
  window,
  prune,
  inspect,
  fork,
  pin,
  unpin,
  rebuild,
  projections,
  check,
  forget,
  serve,
]
