// Conflict probe: several processes share one session and each executes commands through `Sessions.execute` as
// fast as it can, on SQLite (one file) and on PostgreSQL (one schema). Reports the commands that failed with
// `ConcurrencyConflict`, the retries (appends refused with WrongExpectedVersion) and checks that the stream holds
// exactly the commands that succeeded.
//
//   node scripts/bench/conflicts.ts [--processes 4] [--commands 480] [--backend sqlite,postgres]
//                                   [--attempts 12] [--backoff 5] [--max-backoff 500] [--workload messages,turns]
//
// Workloads: `messages` executes user messages only; `turns` runs agent turns through `ContextManager` (a user
// message, `prepare`, then a step answering that message, its usage the window's estimate) on a small model, so the
// processes compact the shared session again and again and live states drop old messages: a step whose parent
// another process's pivot dropped must still be recorded (issue 18 item 4). Every failed command counts, by error.
//
// `--attempts 5 --backoff 0` reproduces the policy before issue 12 (five immediate retries). PostgreSQL comes from
// $PIVOT_PG_URL, else scripts/postgres.sh.

import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Events, Ids, Tokens } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore, type ReadError } from "@pivot/store"
import { Effect, Layer } from "effect"
import { windowTokens } from "./support/agentLoop.ts"

const { values } = parseArgs({
  options: {
    processes: { type: "string", default: "4" },
    commands: { type: "string", default: "480" },
    backend: { type: "string", default: "sqlite,postgres" },
    attempts: { type: "string" },
    backoff: { type: "string", default: "5" },
    "max-backoff": { type: "string", default: "1000" },
    workload: { type: "string", default: "messages,turns" },
    child: { type: "string" },
    target: { type: "string" },
    tag: { type: "string" },
  },
})

const SESSION = "ses_conflict_probe"
const policy: Sessions.Options = {
  // Unset: the layer's default (a time budget, `conflictTimeout`).
  ...(values.attempts === undefined ? {} : { maxAttempts: Number(values.attempts) }),
  conflictBackoff: `${Number(values.backoff)} millis`,
  maxConflictBackoff: `${Number(values["max-backoff"])} millis`,
}

const storeLayer = (backend: string, target: string): Layer.Layer<EventStore, ReadError> =>
  backend === "sqlite"
    ? EventStore.layerSqlite({ filename: target })
    : EventStore.layerPostgres({ url: target.split("#")[0]!, schema: target.split("#")[1]! })

/** Counts appends refused for a stale expected version: each one is a retry of `execute`. */
const counted = (counter: { retries: number }) =>
  Layer.effect(
    EventStore,
    Effect.gen(function* () {
      const inner = yield* EventStore
      return {
        ...inner,
        append: (stream, expected, events) =>
          inner.append(stream, expected, events).pipe(
            Effect.tapError((error) =>
              Effect.sync(() => {
                if (error._tag === "WrongExpectedVersion") counter.retries++
              }),
            ),
          ),
      }
    }),
  )

interface ChildReport {
  readonly ok: number
  readonly failed: number
  readonly retries: number
  readonly otherErrors: ReadonlyArray<string>
  /** The ids of the messages acknowledged (turns workload). */
  readonly acknowledged?: ReadonlyArray<string>
}

/** A small window, so a few turns of 4 processes fill it and compactions (pivots) come often. */
const TURNS_MODEL = { ref: { providerId: "probe", modelId: "probe" }, limits: { context: 24_000, output: 4_000 } }

const waitForGo = Effect.promise(
  () =>
    new Promise<void>((resolve) => {
      const lines = readline.createInterface({ input: process.stdin })
      lines.once("line", () => {
        lines.close()
        resolve()
      })
    }),
)

/** One process: executes `commands` user messages on the shared session once told to go. */
const child = (backend: string, target: string, tag: string, commands: number) => {
  const counter = { retries: 0 }
  return Effect.gen(function* () {
    const sessions = yield* Sessions.Sessions
    yield* sessions.load(SESSION)
    process.stdout.write("ready\n")
    yield* waitForGo
    let ok = 0
    let failed = 0
    const otherErrors: Array<string> = []
    for (let n = 0; n < commands; n++) {
      const id = `${tag}${String(n).padStart(5, "0")}`
      const result = yield* Effect.result(
        sessions.execute(SESSION, {
          _tag: "AddUserMessage",
          message: {
            role: "user",
            id: Ids.unsafe.message(`msg_${id}`),
            createdAt: n,
            parts: [{ type: "text", id: Ids.unsafe.part(`prt_${id}`), text: `message ${n} from ${tag}` }],
          },
        }),
      )
      if (result._tag === "Success") ok++
      else if (result.failure._tag === "ConcurrencyConflict") failed++
      else otherErrors.push(result.failure.message)
    }
    const report: ChildReport = { ok, failed, retries: counter.retries, otherErrors }
    process.stdout.write(`${JSON.stringify(report)}\n`)
  }).pipe(
    Effect.provide(
      Sessions.Sessions.layer(policy).pipe(
        Layer.provide(Ids.Ids.layer),
        Layer.provide(counted(counter)),
        Layer.provide(storeLayer(backend, target)),
      ),
    ),
  )
}

/**
 * One process of the turns workload: `commands` / 2 turns, each a user message and a step answering it (two
 * commands), with `prepare` before the step (it compacts when the window is full; its failures count too).
 */
const turnsChild = (backend: string, target: string, tag: string, commands: number) => {
  const counter = { retries: 0 }
  return Effect.gen(function* () {
    const cm = yield* ContextManager
    const sessions = yield* Sessions.Sessions
    yield* sessions.load(SESSION)
    process.stdout.write("ready\n")
    yield* waitForGo
    let ok = 0
    let failed = 0
    const otherErrors: Array<string> = []
    const acknowledged: Array<string> = []
    const count = <A, E extends { readonly _tag: string; readonly message: string }, R>(
      effect: Effect.Effect<A, E, R>,
      command = true,
    ) =>
      Effect.gen(function* () {
        const result = yield* Effect.result(effect)
        if (result._tag === "Success") {
          if (command) ok++
          return result.success
        }
        if (result.failure._tag === "ConcurrencyConflict") failed++
        else otherErrors.push(`${result.failure._tag}: ${result.failure.message}`)
        return undefined
      })
    for (let n = 0; n < Math.ceil(commands / 2); n++) {
      const asked = yield* count(cm.recordUserMessage(SESSION, { text: `request ${n} from ${tag}: fix module ${n}` }))
      if (asked?.messageId === undefined) continue
      acknowledged.push(asked.messageId)
      yield* count(cm.prepare(SESSION), false) // not a command of the count, but its failures are
      const window = (yield* sessions.load(SESSION)).session.window
      const answered = yield* count(
        cm.recordAssistantStep(SESSION, {
          parentId: asked.messageId,
          parts: [{ type: "text", text: `fixed module ${n} for ${tag}: ${"export const x = 1\n".repeat(300)}` }],
          usage: { ...Tokens.zero, input: windowTokens(window) },
          finish: "stop",
        }),
      )
      if (answered?.messageId !== undefined) acknowledged.push(answered.messageId)
    }
    const report: ChildReport = { ok, failed, retries: counter.retries, otherErrors, acknowledged }
    process.stdout.write(`${JSON.stringify(report)}\n`)
  }).pipe(
    Effect.provide(
      ContextManager.layer({ model: TURNS_MODEL }).pipe(
        Layer.provide(Ids.Ids.layer),
        Layer.provide(counted(counter)),
        Layer.provide(storeLayer(backend, target)),
      ),
    ),
  )
}

const spawnChild = (backend: string, target: string, tag: string, commands: number, workload: string) => {
  const script = fileURLToPath(import.meta.url)
  const args = [script, "--child", backend, "--target", target, "--tag", tag, "--commands", String(commands)]
  args.push("--workload", workload)
  if (values.attempts !== undefined) args.push("--attempts", values.attempts)
  args.push("--backoff", values.backoff, "--max-backoff", values["max-backoff"])
  return spawn(process.execPath, ["--conditions=@pivot/source", ...args], { stdio: ["pipe", "pipe", "inherit"] })
}

/** Runs the processes against one session and checks the stream against what they acknowledged. */
const probe = async (backend: string, target: string, workload: string) => {
  const processes = Number(values.processes)
  const commands = Number(values.commands)
  await Effect.runPromise(
    Effect.gen(function* () {
      const sessions = yield* Sessions.Sessions
      yield* sessions.execute(SESSION, { _tag: "StartSession", sessionId: Ids.unsafe.session(SESSION), at: 0 })
    }).pipe(
      Effect.provide(
        Sessions.Sessions.layer().pipe(Layer.provide(Ids.Ids.layer), Layer.provide(storeLayer(backend, target))),
      ),
    ),
  )
  const children = Array.from({ length: processes }, (_, i) =>
    spawnChild(backend, target, `p${i}x`, commands, workload),
  )
  let ready = 0
  const started = performance.now()
  const reports = await Promise.all(
    children.map(
      (c) =>
        new Promise<ChildReport>((resolve, reject) => {
          let report: ChildReport | undefined
          readline.createInterface({ input: c.stdout! }).on("line", (line) => {
            if (line === "ready") {
              if (++ready === processes) for (const each of children) each.stdin!.end("go\n")
            } else report = JSON.parse(line)
          })
          c.on("close", (code) =>
            code === 0 && report !== undefined
              ? resolve(report)
              : reject(new Error(`a probe process failed (${code})`)),
          )
        }),
    ),
  )
  const seconds = (performance.now() - started) / 1000
  const recorded = await Effect.runPromise(
    Effect.gen(function* () {
      return yield* (yield* EventStore).read(Events.streamName(SESSION))
    }).pipe(Effect.provide(storeLayer(backend, target))),
  )
  // Messages: the stream is the start and one event per success. Turns: each acknowledged message stored once.
  const storedIds = new Map<string, number>()
  for (const e of recorded) {
    const id = (e.data as { message?: { id?: unknown } }).message?.id
    if ((e.type === "UserMessageAdded" || e.type === "AssistantStepRecorded") && typeof id === "string")
      storedIds.set(id, (storedIds.get(id) ?? 0) + 1)
  }
  const ok = reports.reduce((sum, r) => sum + r.ok, 0)
  const failed = reports.reduce((sum, r) => sum + r.failed, 0)
  const retries = reports.reduce((sum, r) => sum + r.retries, 0)
  const other = reports.flatMap((r) => r.otherErrors)
  const acknowledged = reports.flatMap((r) => r.acknowledged ?? [])
  const storedMatches =
    workload === "turns" ? acknowledged.every((id) => storedIds.get(id) === 1) : recorded.length === 1 + ok
  const byError: Record<string, number> = {}
  for (const message of other) {
    const tag = message.split(":")[0]!
    byError[tag] = (byError[tag] ?? 0) + 1
  }
  if (other.length > 0) console.error(other.slice(0, 5).join("\n"))
  return {
    backend,
    workload,
    processes,
    commands: processes * commands,
    succeeded: ok,
    failed,
    retries,
    otherErrors: other.length,
    byError,
    storedMatches,
    pivots: recorded.filter((e) => e.type === "SummaryFinished").length,
    seconds: Number(seconds.toFixed(1)),
  }
}

const pgUrl = () => {
  const fromEnv = process.env.PIVOT_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../postgres.sh")
  return execFileSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim()
}

const main = async () => {
  if (values.child !== undefined) {
    const run = values.workload === "turns" ? turnsChild : child
    await Effect.runPromise(run(values.child, values.target!, values.tag!, Number(values.commands)))
    return
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-probe-conflicts-"))
  try {
    console.log(`policy: ${JSON.stringify(policy)}`)
    for (const workload of values.workload.split(","))
      for (const backend of values.backend.split(",")) {
        const target =
          backend === "sqlite"
            ? path.join(dir, `shared-${workload}.db`)
            : `${pgUrl()}#probe_${process.pid}_${Math.floor(performance.now())}`
        console.log(JSON.stringify(await probe(backend, target, workload)))
      }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
