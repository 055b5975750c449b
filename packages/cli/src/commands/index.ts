/** Every `pivot` command, in the order `pivot help` lists them. Later commands (import, window, prune, inspect) join here. */
import type { Command } from "./Command.ts"
import { demo } from "./demo.ts"

/** The commands. */
export const all: ReadonlyArray<Command> = [demo]
