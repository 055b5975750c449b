// bench:peers' restart: a new process opens a SQLite file and answers its first call, timed from the opening.
// `restart.ts pivot <file>`: pivot's store and runtime, the first `prepare`; `restart.ts opencode <file>`: OpenCode's
// tables, the first step of its loop. Prints { ms, cpuMs, window } as JSON (`cpuMs`: this process's CPU time over the
// same span, user + system, which a loaded machine stretches less than the wall time).
import { DatabaseSync } from "node:sqlite"
import { Ids } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { PRUNING, runtime, SESSION, SYNCHRONOUS } from "./agentLoop.ts"
import * as OpenCode from "./openCode.ts"

const [who, file] = process.argv.slice(2)
if ((who !== "pivot" && who !== "opencode") || file === undefined) {
  console.error("usage: restart.ts pivot|opencode <file>")
  process.exit(2)
}
const t0 = performance.now()
const cpu0 = process.cpuUsage()
const window =
  who === "pivot"
    ? await Effect.runPromise(
        Effect.gen(function* () {
          return (yield* (yield* ContextManager).prepare(SESSION)).modelMessages.length
        }).pipe(
          Effect.provide(
            runtime(EventStore.layerSqlite({ filename: file, synchronous: SYNCHRONOUS }), Ids.Ids.layer, PRUNING),
          ),
        ),
      )
    : (await OpenCode.step(new OpenCode.OnSqlite(new DatabaseSync(file), SESSION, false).newestFirst())).length
const cpu = process.cpuUsage(cpu0)
console.log(JSON.stringify({ ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, window }))
