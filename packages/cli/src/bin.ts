#!/usr/bin/env node
/**
 * The `pivot` command's entry. Installed, `bin.mjs` checks the Node version and loads its bundle (`dist/bundle/`); in
 * the repository, `node --conditions=@pivot/source packages/cli/src/bin.ts <command>` runs it from source (`npm start`).
 * `NodeRuntime.runMain` interrupts the command on Ctrl-C / SIGTERM (closing the database cleanly).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import { main, processIo } from "./Cli.ts"

// `pivot demo | head` closes the pipe early: that is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0)
  throw error
})
NodeRuntime.runMain(
  Effect.flatMap(main(process.argv.slice(2), processIo()), (code) =>
    Effect.sync(() => {
      process.exitCode = code
    }),
  ),
)
