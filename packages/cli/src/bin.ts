#!/usr/bin/env node
/**
 * The `pivot` command's entry. Installed, `bin.mjs` checks the Node version and loads its bundle (`dist/bundle/`); in
 * the repository, `node --conditions=@pivot/source packages/cli/src/bin.ts <command>` runs it from source (`npm start`).
 * The help and the version are answered from the texts effect/cli made at build time, beside the bundle's entry
 * (`Precomputed.ts`, ADR 0037), without loading the command line; a read command with plain arguments runs its handler
 * without effect/cli (`Fast.ts`, ADR 0048); anything else loads the command line (`RunMain.ts`).
 */
import * as Precomputed from "./Precomputed.ts"

// `pivot demo | head` closes the pipe early: that is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0)
  throw error
})
const argv = process.argv.slice(2)
const table = Precomputed.read(new URL("./precomputed.json", import.meta.url))
const known = Precomputed.answer(table, argv)
// A read command whose flags the table declares runs without effect/cli when its arguments are plain (ADR 0048).
const declared = Precomputed.declared(table, argv[0])
if (known !== undefined) Precomputed.print(known)
else if (declared !== undefined) await (await import("./Fast.ts")).runMain(declared, argv)
else (await import("./RunMain.ts")).runMain(argv)
