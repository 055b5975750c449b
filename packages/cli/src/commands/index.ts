/** Every `pivot` command, in the order `pivot help` lists them. */
import type { Command } from "./Command.ts"
import { demo } from "./demo.ts"
import { forget } from "./forget.ts"
import { importCommand } from "./import.ts"
import { inspect } from "./inspect.ts"
import { prune } from "./prune.ts"
import { serve } from "./serve.ts"
import { window } from "./window.ts"

/** The commands. */
export const all: ReadonlyArray<Command> = [demo, importCommand, window, prune, inspect, forget, serve]
