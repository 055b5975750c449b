// bench:peers' restart: a new process opens a SQLite file and answers its first call, timed from the opening.
// `restart.ts pivot <file>`: pivot's store and runtime, the first `prepare`; `restart.ts opencode <file>`: OpenCode's
// tables, the first step of its loop. Prints { ms, cpuMs, window, loadMs, loadCpuMs } as JSON (`cpuMs`: this
// process's CPU time over the same span, user + system, which a loaded machine stretches less than the wall time;
// `loadMs` / `loadCpuMs`: the process's life before the opening — Node's start and the modules' loading — which `ms`
// excludes for both). `restart.ts pivot-phases <file>` does pivot's restart in its steps, each timed (bench:restart
// `--phases`): the store's layer built (file checks, connection, schema check), the runtime's layers, the session's
// first load (snapshot + the events after it, decoded and folded), the first `prepare`; `phases` in the JSON.
import { DatabaseSync } from "node:sqlite"
import { Ids } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"
import { PRUNING, runtime, SESSION, SYNCHRONOUS } from "./agentLoop.ts"
import * as OpenCode from "./openCode.ts"

const [who, file] = process.argv.slice(2)
if ((who !== "pivot" && who !== "pivot-phases" && who !== "opencode") || file === undefined) {
  console.error("usage: restart.ts pivot|pivot-phases|opencode <file>")
  process.exit(2)
}
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000
const t0 = performance.now()
const cpu0 = process.cpuUsage()
const store = () => EventStore.layerSqlite({ filename: file, synchronous: SYNCHRONOUS })

/** The same restart as `pivot`, step by step: each step's wall and CPU ms. */
const phased = (phases: Record<string, { ms: number; cpuMs: number }>) => {
  let at = { ms: t0, cpu: cpu0 }
  const mark = (name: string) =>
    Effect.sync(() => {
      const now = { ms: performance.now(), cpu: process.cpuUsage() }
      phases[name] = { ms: now.ms - at.ms, cpuMs: cpuMs(process.cpuUsage(at.cpu)) }
      at = { ms: performance.now(), cpu: process.cpuUsage() }
    })
  return Effect.scoped(
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      const opened = yield* Layer.buildWithScope(store(), scope)
      yield* mark("store")
      const built = yield* Layer.buildWithScope(runtime(Layer.succeedContext(opened), Ids.Ids.layer, PRUNING), scope)
      yield* mark("runtime")
      return yield* Effect.gen(function* () {
        yield* (yield* Sessions.Sessions).load(SESSION)
        yield* mark("resume")
        const window = (yield* (yield* ContextManager).prepare(SESSION)).modelMessages.length
        yield* mark("prepare")
        return window
      }).pipe(Effect.provideContext(built))
    }),
  )
}

const phases: Record<string, { ms: number; cpuMs: number }> = {}
const window =
  who === "pivot"
    ? await Effect.runPromise(
        Effect.gen(function* () {
          return (yield* (yield* ContextManager).prepare(SESSION)).modelMessages.length
        }).pipe(Effect.provide(runtime(store(), Ids.Ids.layer, PRUNING))),
      )
    : who === "pivot-phases"
      ? await Effect.runPromise(phased(phases))
      : (await OpenCode.step(new OpenCode.OnSqlite(new DatabaseSync(file), SESSION, false).newestFirst())).length
const cpu = process.cpuUsage(cpu0)
console.log(
  JSON.stringify({
    ms: performance.now() - t0,
    cpuMs: cpuMs(cpu),
    window,
    loadMs: t0,
    loadCpuMs: cpuMs(cpu0),
    ...(who === "pivot-phases" ? { phases } : {}),
  }),
)
