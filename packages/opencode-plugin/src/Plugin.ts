/**
 * The OpenCode plugin: OpenCode's hooks, each a thin shell over pivot's store, runtime and importer.
 *
 * - `event`: on each finished message, prune and compaction the session is synced into the store (`Recorder`);
 * - `experimental.chat.system.transform`: syncs what the coming model call answers, then (record mode, option `hud`)
 *   adds the usage HUD (the runtime's `Status.hudOf` of `ContextManager.usage`) to the system prompt, recorded as
 *   `HudShown` when it changes;
 * - `experimental.chat.messages.transform` (drive mode): the messages become pivot's window (`Drive.rewrite`), the
 *   HUD their last message (`Drive.withHud`), so OpenCode's cached prefix survives it; with `driveCompaction`, OpenCode
 *   is asked to compact when pivot's strategy says so (`DriveCompaction`), and `experimental.compaction.autocontinue`
 *   lets the agent go on after that compaction only when the turn was in progress;
 * - `tool`: `context_recall` (the runtime's recall: exact originals of everything before a pivot, pruned
 *   outputs and summaries, search, what a pivot dropped),
 *   `context_pin` (pins a message: after OpenCode's compaction it comes back verbatim — in the messages under
 *   drive, in the system prompt otherwise — and the summariser is told) and `context_compact` (asks OpenCode for a compaction through its SDK);
 * - `experimental.session.compacting` and `experimental.text.complete`: the facts block as a context line of
 *   OpenCode's summariser prompt, and appended to the summary it writes (OpenCode anchors the previous summary);
 * - `chat.message` and `tool.execute.after` (option `redactOnRecord`): secrets redacted from what OpenCode records,
 *   so they never reach its summariser (1.18 has no hook over the summariser's input alone).
 *
 * Every hook is guarded: a failure is written to the log file beside the store and to OpenCode's log, and the hook
 * returns as if the plugin were absent. OpenCode's session never sees a pivot error.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  Facts,
  Ids,
  type Ledger,
  Message,
  type Model,
  Pins,
  Prompt,
  Redaction,
  type Strategy,
  Tokens,
  Window,
} from "@pivot/core"
import {
  Config,
  ContextManager,
  type ContextManagerShape,
  Hud,
  LiveLedger,
  Pins as PinOps,
  Sessions,
  Status,
} from "@pivot/runtime"
import { type EventStore, ReadModels } from "@pivot/store"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { z } from "zod"
import { heard, sessionOf } from "./BusEvents.ts"
import * as Coalesce from "./Coalesce.ts"
import * as Drive from "./Drive.ts"
import * as DriveCompaction from "./DriveCompaction.ts"
import * as DriveStrategy from "./DriveStrategy.ts"
import * as FirstPin from "./FirstPin.ts"
import * as ModelCost from "./ModelCost.ts"
import type { Client, ConfiguredProvider, Hooks, ModelInfo, PluginInput } from "./OpenCode.ts"
import * as Overhead from "./Overhead.ts"
import * as Phases from "./Phases.ts"
import * as Recorder from "./Recorder.ts"
import {
  COMPACT_DESCRIPTION,
  PIN_DESCRIPTION,
  type PinArgs,
  pinArgs,
  RECALL_DESCRIPTION,
  type RecallArgs,
  recallArgs,
  UNAVAILABLE,
} from "./Tools.ts"
import * as Turns from "./Turns.ts"

/** The plugin's options (`"plugin": [["@pivot/opencode-plugin", { … }]]` in opencode.json). */
export interface Options {
  /**
   * Where to record: a SQLite file (relative to the project) or a `postgres://` URL (`?schema=NAME` for a schema other
   * than `public`). Default `PIVOT_DB`, else `.pivot/opencode.db`.
   */
  readonly db?: string | undefined
  /**
   * Show the model the usage HUD. In drive mode (default on) it is the request's last message, after the
   * conversation, so the provider's cached prefix survives it (`Drive.withHud`); in record mode (default off) it is in
   * the system prompt, whose cache it breaks whenever its numbers change (docs/opencode.md, "The HUD").
   */
  readonly hud?: boolean | undefined
  /**
   * Add the cost line to the HUD (default false): the session's spend so far, the last compaction's net saving and
   * the cache hit ratio, from pivot's ledger (prices: the model's own `cost` as OpenCode gives it, else pivot's
   * built-in defaults, then the models.dev catalog). Its numbers change with every call, and the system prompt with
   * them.
   */
  readonly hudCost?: boolean | undefined
  /** Add pivot's context lines (previous summary anchored, facts block) to OpenCode's compaction; default true. */
  readonly compaction?: boolean | undefined
  /**
   * Redact secrets as OpenCode records them (default false): the user's text (`chat.message`) and tool outputs
   * (`tool.execute.after`) are stored with `[REDACTED:<kind>]` in place of each secret, so neither the summariser, nor
   * the model, nor the store ever holds them. OpenCode 1.18 gives no hook over its summariser's input alone.
   */
  readonly redactOnRecord?: boolean | undefined
  /**
   * Drive mode (default false): before each model call, OpenCode's messages (a copy) are rewritten to pivot's window
   * of the session (`Drive.rewrite`): pruned outputs carry pivot's placeholder with their recall id, and what pivot
   * pivoted away is left out. Off: OpenCode sends what it decided, and pivot records it.
   */
  readonly drive?: boolean | undefined
  /**
   * Pin the session's first user message (the task and its constraints) so that it stays verbatim after every
   * compaction (`FirstPin`); default: on under drive mode, off without it.
   */
  readonly pinFirstMessage?: boolean | undefined
  /**
   * The context strategy (docs/strategies.md): a built-in one by name (`"cache-aware"`, …) or a `Strategy.Strategy`
   * value from a plugin file of your own. In drive mode, pivot runs its prune before each agent call and the model
   * sees the result (`DriveStrategy`); default none: OpenCode decides, pivot records.
   */
  readonly strategy?: Strategy.Strategy | string | undefined
  /** Zero-cost prune rules by name (`DriveStrategy.RULES`: `duplicate-calls`), added to the strategy. */
  readonly rules?: ReadonlyArray<string> | undefined
  /**
   * With `drive` and a `strategy`: ask OpenCode to compact when the strategy says so (its trigger, e.g. cache-aware's
   * 75% of the usable window, or its rent-or-buy rule), before OpenCode's own limit (`DriveCompaction`, ADR 0035).
   * Default false: OpenCode's summariser request is not the cache-safe form the strategy's economics assume.
   */
  readonly driveCompaction?: boolean | undefined
  /**
   * Run the hooks, with pivot's store and runtime, on a worker thread (ADR 0073): default true in OpenCode (Bun),
   * false elsewhere. OpenCode's thread then holds only the entry; what pivot holds stays out of OpenCode's heap. A
   * `strategy` given as a value runs on OpenCode's thread (a function cannot cross to a worker).
   */
  readonly worker?: boolean | undefined
}

/** The store a project records into by default (relative to the project folder). */
export const DEFAULT_DB = ".pivot/opencode.db"

/** How long after OpenCode's last pruned part the session is synced (its prune updates parts one at a time). */
export const PRUNE_SETTLE_MS = 500

/**
 * A tool's definition as a provider receives it (name, description, JSON Schema of its parameters), in estimated
 * tokens. OpenCode gives the JSON Schema, or only a zod schema (converted here); what cannot be converted counts as
 * its name and description.
 */
export const toolSchemaTokens = (
  toolID: string,
  definition: { readonly description?: unknown; readonly parameters?: unknown; readonly jsonSchema?: unknown },
): number => {
  let parameters: unknown = definition.jsonSchema
  if (parameters === undefined && definition.parameters !== undefined)
    try {
      parameters = z.toJSONSchema(definition.parameters as z.ZodType)
    } catch {
      parameters = undefined
    }
  const description = typeof definition.description === "string" ? definition.description : ""
  return Tokens.estimate(JSON.stringify({ type: "function", function: { name: toolID, description, parameters } }))
}

/** A tool's definition as OpenCode hands it to `tool.definition`: a JSON Schema, or a zod schema only. */
type ToolDefinition = Parameters<Hooks["tool.definition"]>[1]

/** What a request carries besides the messages, in estimated tokens: the system prompt and the tools' schemas. */
export const requestOverhead = (system: ReadonlyArray<string>, tools: Iterable<number>): number => {
  let tokens = Tokens.estimate(system.join("\n"))
  for (const tool of tools) tokens += tool
  return tokens
}

/** The log file of plugin failures, beside a SQLite store (or in the project's `.pivot/` for PostgreSQL). */
export const LOG_FILE = "opencode-plugin.log"

/**
 * Where the store is: `options.db`, else `PIVOT_DB`, else `.pivot/opencode.db` in the project. A value that names no
 * store is `Invalid` (options come from opencode.json unchecked): the plugin then loads, and reports it as a store
 * it cannot open, rather than throwing while OpenCode loads it.
 */
export const resolveDb = (
  directory: string,
  options: Options,
  env: Readonly<Record<string, string | undefined>>,
):
  | { readonly _tag: "Sqlite"; readonly file: string }
  | { readonly _tag: "Postgres"; readonly url: string; readonly schema: string }
  | { readonly _tag: "Invalid"; readonly reason: string } => {
  // An empty PIVOT_DB (`PIVOT_DB=` in a shell profile) is unset, as for most variables.
  const db: unknown = options.db ?? (env.PIVOT_DB || undefined) ?? DEFAULT_DB
  if (typeof db !== "string" || db.trim() === "")
    return { _tag: "Invalid", reason: `db must be a SQLite file or a postgres:// URL, got ${JSON.stringify(db)}` }
  if (!/^postgres(ql)?:\/\//.test(db)) return { _tag: "Sqlite", file: Path.resolve(directory, db) }
  // `?schema=NAME` picks the schema holding pivot's tables, as `pivot serve` reads it.
  if (!URL.canParse(db))
    return { _tag: "Invalid", reason: "db is not a valid postgres:// URL (not shown: it may hold a password)" }
  const url = new URL(db)
  const schema = url.searchParams.get("schema") ?? "public"
  url.searchParams.delete("schema")
  return { _tag: "Postgres", url: url.toString(), schema }
}

/** The model pivot assumes before OpenCode names one (only the HUD reads its limits). */
const FALLBACK_MODEL = {
  ref: { providerId: "opencode", modelId: "unknown" },
  limits: { context: 200_000, output: 32_000 },
}

const modelSpec = (model: ModelInfo) => ({
  ref: { providerId: model.providerID, modelId: model.id },
  limits: {
    context: Math.max(1, model.limit?.context ?? FALLBACK_MODEL.limits.context),
    output: Math.max(0, Math.min(model.limit?.output ?? 0, Math.max(0, (model.limit?.context ?? 0) - 1))),
    ...(model.limit?.input === undefined || model.limit.input <= 0 ? {} : { input: model.limit.input }),
  },
  // The model's own price (opencode.json's `cost` for a custom provider's model): rent-or-buy prices with it.
  ...ModelCost.spec(model.cost),
})

const storeLayer = (where: ReturnType<typeof resolveDb>): Layer.Layer<ReadModels.ReadModels | EventStore, unknown> => {
  if (where._tag === "Invalid") return Layer.effectContext(Effect.fail(new Error(where.reason)))
  if (where._tag === "Postgres")
    return ReadModels.layerPostgres({ url: Redacted.make(where.url), schema: where.schema })
  const folder = Path.dirname(where.file)
  // A folder the plugin makes is kept out of git (and out of OpenCode's snapshots of the project).
  if (Fs.mkdirSync(folder, { recursive: true }) !== undefined) Fs.writeFileSync(Path.join(folder, ".gitignore"), "*\n")
  // The ledger projection is not kept here: its state grows with the session and each batch rewrites it whole
  // (ADR 0018), which a long OpenCode session would pay at every step; readers fold the log instead.
  return ReadModels.layerSqlite({ filename: where.file })
}

const describe = (error: unknown): string => {
  const text = error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error)
  return (text ?? String(error)).split("\n")[0]!
}

/** The store could not be opened (a path that cannot be written, a bad URL, a server that is down). */
export class StoreUnavailable extends Error {
  /** The store's file, or which store it is when it has no file. */
  readonly where: string
  constructor(where: string, cause: unknown) {
    super(`cannot open the store ${where}: ${describe(cause)}`)
    this.where = where
  }
}

/**
 * How OpenCode's own helper calls begin their system prompt (1.18): its title generator and its summariser. They get
 * no HUD — it is for the agent — and the system transform has no other way to tell which call it serves.
 */
export const HELPER_PROMPTS: ReadonlyArray<string> = [
  "You are a title generator.",
  "You are a context summarization agent.",
]

export { COMPACT_DESCRIPTION, RECALL_DESCRIPTION } from "./Tools.ts"

/** The plugin's options that take `true` or `false`. */
const BOOLEAN_OPTIONS = [
  "hud",
  "hudCost",
  "compaction",
  "redactOnRecord",
  "drive",
  "pinFirstMessage",
  "driveCompaction",
  "worker",
] as const
/** Every option the plugin reads. */
export const OPTION_NAMES: ReadonlyArray<string> = ["db", ...BOOLEAN_OPTIONS, "strategy", "rules"]

/** The edit distance of two short names (a misspelt option's closest known one). */
const distance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++)
      next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)))
    row = next
  }
  return row[b.length]!
}

/**
 * The options as the plugin uses them, and what is wrong with the given ones: an option it does not know (a misspelt
 * one would otherwise be ignored without a word) and a switch that is not `true` or `false` (`"hud": "yes"`), which
 * is left at its default. `strategy`, `rules` and `db` are checked where they are read.
 */
export const checkOptions = (given: unknown): { readonly options: Options; readonly problems: Array<string> } => {
  if (given === null || typeof given !== "object" || Array.isArray(given))
    return {
      options: {},
      problems: given === undefined ? [] : [`options must be an object, got ${JSON.stringify(given)}: defaults used`],
    }
  const problems: Array<string> = []
  const options: Record<string, unknown> = { ...given }
  for (const key of Object.keys(given)) {
    if (OPTION_NAMES.includes(key)) continue
    const near = OPTION_NAMES.find((name) => name.toLowerCase() === key.toLowerCase() || distance(name, key) <= 2)
    problems.push(
      `unknown option ${JSON.stringify(key)}${near === undefined ? "" : ` (did you mean ${JSON.stringify(near)}?)`}, ignored; the options are ${OPTION_NAMES.join(", ")}`,
    )
  }
  for (const key of BOOLEAN_OPTIONS) {
    const value = options[key]
    if (value === undefined || typeof value === "boolean") continue
    problems.push(`${key} must be true or false, got ${JSON.stringify(value)}: its default is used`)
    delete options[key]
  }
  return { options: options as Options, problems }
}

/**
 * How long a call's messages transform under drive mode waits for OpenCode's configured providers before using pivot's
 * fallback limits; once per process.
 */
export const CONFIG_WAIT_MS = 2_000

/**
 * Builds the hooks. `env` is a parameter for tests; OpenCode calls the default export (see index.ts).
 */
export const make = async (
  input: PluginInput,
  given: Options = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<Hooks> => {
  const { options, problems } = checkOptions(given)
  const client: Client = input.client
  const where = resolveDb(input.directory, options, env)
  const logFile =
    where._tag === "Sqlite"
      ? Path.join(Path.dirname(where.file), LOG_FILE)
      : Path.join(input.directory, ".pivot", LOG_FILE)
  const driveOn = options.drive ?? false
  const hudOn = options.hud ?? driveOn
  const hudCost = options.hudCost ?? false
  // The cost line's ledger per session, caught up from the log (made on first use, over the runtime's sessions).
  let ledgerAt: ReturnType<typeof LiveLedger.make> | undefined
  const compactionOn = options.compaction ?? true
  const redactOn = options.redactOnRecord ?? false
  const chosen = DriveStrategy.resolve(options)
  const strategy = chosen._tag === "Strategy" ? chosen.strategy : undefined
  const pinFirstOn = FirstPin.enabled(options)
  const driveCompactionOn = driveOn && strategy !== undefined && options.driveCompaction === true

  // Stores that could not be opened, already reported: every hook would hit the same failure again.
  const unavailable = new Set<string>()

  /** Records a failure: a line in the log file and OpenCode's log (a store it cannot open: once). Never throws. */
  const report = async (what: string, error: unknown, sessionId?: string) => {
    if (error instanceof StoreUnavailable) {
      if (unavailable.has(error.where)) return
      unavailable.add(error.where)
    }
    const line = { at: new Date().toISOString(), what, sessionId, error: describe(error) }
    try {
      Fs.mkdirSync(Path.dirname(logFile), { recursive: true })
      Fs.appendFileSync(logFile, `${JSON.stringify(line)}\n`)
    } catch {
      // Nowhere to write: OpenCode's log below is the last resort.
    }
    try {
      await client.app?.log({
        body: { service: "pivot", level: "warn", message: `${what}: ${line.error}`, extra: { sessionId } },
      })
    } catch {
      // OpenCode's log failing is not the session's problem either.
    }
  }

  // A strategy or rule opencode.json names that pivot does not know: said once, and OpenCode decides as without one.
  if (chosen._tag === "Invalid") await report("options", new Error(chosen.reason))
  // An option misspelt or of the wrong type: said once, at start, and the plugin goes on without it.
  if (problems.length > 0) await report("options", new Error(problems.join("; ")))

  // Each session's model as OpenCode last named it (the HUD's limits).
  const models = new Map<string, ReturnType<typeof modelSpec>>()
  // Each model as OpenCode last gave it whole (the system transform: limits and its own price, `cost`), by ref.
  const named = new Map<string, ReturnType<typeof modelSpec>>()
  const nameOf = (ref: Model.ModelRef) => `${ref.providerId}/${ref.modelId}`
  /** The price the HUD's cost line bills a model's steps at: its own when OpenCode gave one, else pivot's catalog. */
  const priceOf: Ledger.PriceOf = (ref) => Config.priceFor(named.get(nameOf(ref)) ?? { ...FALLBACK_MODEL, ref })
  /** Remembers a model OpenCode gave whole; a price the cost line's ledger did not bill with yet makes it fold again. */
  const name = (spec: ReturnType<typeof modelSpec>) => {
    const before = named.get(nameOf(spec.ref))
    named.set(nameOf(spec.ref), spec)
    if (JSON.stringify(before?.price) !== JSON.stringify(spec.price)) ledgerAt = undefined
    return spec
  }
  // OpenCode's configured providers, asked once per process (under drive mode): the model of a session's first call
  // whole, before any hook gave it (OpenCode gives it whole in the system transform only, after drive's HUD is made).
  let configured: Promise<ReadonlyArray<ConfiguredProvider>> | undefined
  let configuredAnswer: ReadonlyArray<ConfiguredProvider> | undefined
  // A wait that ran out: no later call waits again (OpenCode may never answer); an answer that comes later is used.
  let configuredLate = false
  const askConfiguration = () => {
    if (client.config === undefined) return
    configured ??= client.config.providers().then(
      (answer) => (configuredAnswer = answer.data?.providers ?? []),
      () => (configuredAnswer = []),
    )
  }
  /**
   * The model `ref` names as a hook gave it whole, else as OpenCode's configuration has it, waiting CONFIG_WAIT_MS at
   * most for that answer; undefined when neither says.
   */
  const wholeModel = async (ref: { readonly providerID: string; readonly modelID: string }) => {
    const known = named.get(`${ref.providerID}/${ref.modelID}`)
    if (known !== undefined) return known
    askConfiguration()
    let providers = configuredAnswer
    if (providers === undefined && configured !== undefined && !configuredLate) {
      let timer: ReturnType<typeof setTimeout> | undefined
      providers = await Promise.race([
        configured,
        new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), CONFIG_WAIT_MS)
        }),
      ])
      clearTimeout(timer)
      if (providers === undefined) configuredLate = true
    }
    const model = providers?.find((p) => p.id === ref.providerID)?.models?.[ref.modelID]
    return model?.limit?.context === undefined
      ? undefined
      : name(modelSpec({ ...model, id: ref.modelID, providerID: ref.providerID }))
  }
  // Each session OpenCode named the model of by its ref only (chat.message), until its next messages transform makes
  // it whole (`byRef`: the spec made of the ref meanwhile; replaced only if no hook gave the model whole since).
  const namedByRef = new Map<
    string,
    {
      readonly ref: { readonly providerID: string; readonly modelID: string }
      readonly byRef: ReturnType<typeof modelSpec>
    }
  >()
  const recorder = Recorder.make()

  /**
   * Asks OpenCode for a compaction of a session with its model, without waiting (it runs once the step has ended).
   * `refused`: called when OpenCode answers with an error.
   */
  const summarize = (
    what: string,
    sessionId: string,
    model: ReturnType<typeof modelSpec>,
    auto?: boolean,
    refused?: () => void,
  ) => {
    const failed = (error: unknown) => {
      refused?.()
      return report(what, error, sessionId)
    }
    void client.session
      .summarize({
        path: { id: sessionId },
        body: { providerID: model.ref.providerId, modelID: model.ref.modelId, ...(auto === undefined ? {} : { auto }) },
      })
      .then((answer) => (answer.error === undefined ? undefined : failed(answer.error)), failed)
  }

  let runtime:
    | ManagedRuntime.ManagedRuntime<ContextManager | Sessions.Sessions | EventStore | ReadModels.ReadModels, unknown>
    | undefined
  const open = () => {
    if (runtime === undefined) {
      const manager = ContextManager.layer({
        model: FALLBACK_MODEL,
        session: (sessionId) => {
          const model = models.get(sessionId)
          return model === undefined ? undefined : { model }
        },
        hud: true,
        recall: true,
        // Recorded as OpenCode stored it: pivot's window must equal what OpenCode sends.
        redactOnRecord: false,
        // A strategy named: pivot prunes as it says (prune on), before each agent call under drive mode.
        ...(strategy === undefined
          ? {}
          : { strategy: DriveStrategy.atCall(strategy, { compacts: driveCompactionOn }), config: { prune: true } }),
      })
      runtime = ManagedRuntime.make(
        manager.pipe(Layer.provide(Ids.Ids.layer), Layer.provideMerge(storeLayer(where))) as Layer.Layer<
          ContextManager | Sessions.Sessions | EventStore | ReadModels.ReadModels,
          unknown
        >,
      )
    }
    return runtime
  }
  const storeName = where._tag === "Sqlite" ? where.file : where._tag === "Postgres" ? "the postgres:// store" : "db"
  /** The runtime with its store open; a store that cannot be opened fails as `StoreUnavailable`, retried next time. */
  const ready = async () => {
    try {
      const opening = runtime === undefined
      const current = open()
      // The first use builds the store's layers (a new file: its schema and migrations).
      await (opening
        ? Phases.timed("store.open", () => current.runPromise(Effect.void))
        : current.runPromise(Effect.void))
      return current
    } catch (error) {
      const failed = runtime
      runtime = undefined
      await failed?.dispose().catch(() => undefined)
      throw new StoreUnavailable(storeName, error)
    }
  }
  const run = async <A>(
    effect: Effect.Effect<A, unknown, ContextManager | Sessions.Sessions | EventStore | ReadModels.ReadModels>,
  ) => (await ready()).runPromise(effect)

  // One store operation per session at a time: syncs compute what to append from the version they read.
  const queues = new Map<string, Promise<unknown>>()
  const queued = <A>(sessionId: string, task: () => Promise<A>): Promise<A> => {
    const previous = queues.get(sessionId) ?? Promise.resolve()
    const next = previous.then(task, task)
    const settled = next.catch(() => undefined)
    queues.set(sessionId, settled)
    void settled.then(() => {
      if (queues.get(sessionId) === settled) queues.delete(sessionId)
    })
    return next
  }

  const fetchSession = async (sessionId: string) => {
    const [info, messages] = await Promise.all([
      client.session.get({ path: { id: sessionId } }),
      client.session.messages({ path: { id: sessionId } }),
    ])
    if (info.data === undefined) throw new Error(`OpenCode has no session ${sessionId}: ${describe(info.error)}`)
    if (messages.data === undefined)
      throw new Error(`cannot read the messages of ${sessionId}: ${describe(messages.error)}`)
    return { info: info.data, messages: messages.data }
  }

  const turns = Turns.make()

  // Sessions synced in this process (their stream is known to the recorder, or being read).
  const synced = new Set<string>()
  // A session's title changed (`session.updated`) and no sync has read it since: the next sync records it.
  const titlePending = new Set<string>()

  /**
   * The sync queued for each session that has not started yet. A later request it covers joins it, so a burst of
   * bus events costs one read of the session and one import (`Coalesce.join`).
   */
  const waiting = new Map<string, { request: Coalesce.Request; readonly done: Promise<Recorder.Synced> }>()

  /**
   * Syncs a session into the store; a version conflict (another writer) is retried once on fresh data. `turn`: the
   * count of begun turns when the session went idle (`Turns`), for an `idle` sync. A request that a sync queued and
   * not started yet covers joins it (see `waiting`).
   */
  const sync = (sessionId: string, asked: Recorder.Moment, turn?: number): Promise<Recorder.Synced> => {
    const asking: Coalesce.Request = { moment: asked, turn }
    const pending = waiting.get(sessionId)
    const joined = pending === undefined ? undefined : Coalesce.join(pending.request, asking)
    if (pending !== undefined && joined !== undefined) {
      pending.request = joined
      return pending.done
    }
    const entry: { request: Coalesce.Request; done: Promise<Recorder.Synced> } = {
      request: asking,
      done: undefined as never,
    }
    entry.done = queued(sessionId, () => {
      if (waiting.get(sessionId) === entry) waiting.delete(sessionId)
      return syncNow(sessionId, entry.request)
    })
    waiting.set(sessionId, entry)
    return entry.done
  }

  const syncNow = async (sessionId: string, request: Coalesce.Request): Promise<Recorder.Synced> => {
    synced.add(sessionId)
    // The title read now is the one recorded: a later change marks it pending again.
    titlePending.delete(sessionId)
    const exported = await Phases.timed("sync.read", () => fetchSession(sessionId))
    const moment = turns.moment(sessionId, request.moment, request.turn)
    const result = await Phases.timed(`sync.record ${request.moment}`, () =>
      run(
        recorder.sync(sessionId, exported, moment).pipe(
          Effect.catchTag("WrongExpectedVersion", () =>
            Effect.suspend(() => {
              recorder.forget(sessionId)
              return recorder.sync(sessionId, exported, moment)
            }),
          ),
        ),
      ),
    )
    if (pinFirstOn && result.firstUserMessage !== undefined) await run(FirstPin.pin(sessionId, result.firstUserMessage))
    // A compaction pivot asked for: its request is recorded once its marker is (`CompactionRequestedByStrategy`).
    const linked = result.markers === undefined ? undefined : asker.link(sessionId, result.markers)
    if (linked !== undefined)
      await run(
        Effect.flatMap(Sessions.Sessions, (sessions) =>
          sessions.execute(sessionId, { _tag: "Record", events: [linked] }),
        ),
      )
    return result
  }

  /** Runs a hook's body; on failure reports it and returns `fallback`. */
  const guard = async <A>(what: string, sessionId: string | undefined, body: () => Promise<A>, fallback: A) => {
    try {
      return await body()
    } catch (error) {
      await report(what, error, sessionId)
      return fallback
    }
  }

  // Sessions' titles as OpenCode last announced them (`session.updated`), to sync only when one changes.
  const titles = new Map<string, string>()
  // Sessions with a turn running (from `chat.message` or `session.status` busy to `session.idle`).
  const running = new Set<string>()

  /**
   * OpenCode's prune (after a turn, in the background) updates the pruned parts one by one: the session is synced
   * once they stop coming (`PRUNE_SETTLE_MS` after the last), or when the plugin is disposed, whichever is first.
   */
  const prunes = new Map<string, ReturnType<typeof setTimeout>>()
  const syncPruned = (sessionId: string) => {
    const timer = prunes.get(sessionId)
    if (timer !== undefined) clearTimeout(timer)
    prunes.delete(sessionId)
    return guard("prune", sessionId, () => sync(sessionId, "step"), undefined)
  }
  const schedulePruned = (sessionId: string) => {
    const timer = prunes.get(sessionId)
    if (timer !== undefined) clearTimeout(timer)
    prunes.set(
      sessionId,
      setTimeout(() => void syncPruned(sessionId), PRUNE_SETTLE_MS),
    )
  }

  // Each tool as OpenCode last defined it (`tool.definition`, 15 calls before every request, each awaited): only noted
  // there. Its size in tokens is estimated when a HUD needs it, and again only when the definition changed (a zod
  // schema's conversion costs; OpenCode hands the same objects each time).
  const toolDefinitions = new Map<string, ToolDefinition>()
  const toolSizes = new Map<string, ToolDefinition & { readonly tokens: number }>()
  const toolTokens = (): Array<number> =>
    Array.from(toolDefinitions, ([toolID, definition]) => {
      const known = toolSizes.get(toolID)
      if (
        known !== undefined &&
        known.description === definition.description &&
        known.parameters === definition.parameters &&
        known.jsonSchema === definition.jsonSchema
      )
        return known.tokens
      const tokens = toolSchemaTokens(toolID, definition)
      toolSizes.set(toolID, { ...definition, tokens })
      return tokens
    })
  // Each session's system prompt as its last agent call had it: drive's HUD is rendered before OpenCode builds it.
  const systems = new Map<string, ReadonlyArray<string>>()
  // Sessions whose next messages transform is OpenCode's summariser history (no HUD there).
  const compacting = new Set<string>()
  // Drive mode's compaction requests (option `driveCompaction`): the strategy's decision read before each agent call.
  const asker = DriveCompaction.make({
    due: (sessionId) => queued(sessionId, () => run(Effect.flatMap(ContextManager, (m) => m.compactionDue(sessionId)))),
    limits: (sessionId) => models.get(sessionId)?.limits,
    ask: (sessionId) =>
      summarize("driveCompaction", sessionId, models.get(sessionId)!, true, () => asker.failed(sessionId)),
    strategy: strategy?.name,
  })

  /**
   * What a session's coming agent call carries besides its window (OpenCode's system prompt and the tools' schemas),
   * for the estimates made in the messages transform, before OpenCode builds the system prompt: the fixed prompt the
   * session's recorded calls measured (its first call's reported prompt, less the messages it was sent); else the
   * session's system prompt as this process last saw it, with the tools' schemas OpenCode defined for this call; else
   * the fixed prompt the project's newest session measured at a first call of the same agent and model (a new
   * session's first call in a process); else the tools' schemas alone (`Overhead`, ADR 0052).
   */
  const overheadOf = async (sessionId: string): Promise<number> => {
    const state = await queued(sessionId, () =>
      run(Effect.flatMap(Sessions.Sessions, (sessions) => sessions.load(sessionId))),
    )
    const own = Overhead.measuredOf(state)
    if (own !== undefined) return own
    const system = systems.get(sessionId)
    if (system !== undefined) return requestOverhead(system, toolTokens())
    const listed =
      client.session.list === undefined
        ? undefined
        : await Phases.timed("hud.list", () => client.session.list!({ query: Overhead.LIST_QUERY }))
    const caller = Overhead.callerOf(state)
    for (const other of Overhead.candidates(listed?.data ?? [], sessionId)) {
      const first = await Phases.timed("hud.other", () =>
        run(Effect.flatMap(Sessions.Sessions, (sessions) => sessions.events(other, { to: Overhead.FIRST_EVENTS }))),
      )
      const theirs = Overhead.measuredIn(first, caller)
      if (theirs !== undefined) return theirs
    }
    return requestOverhead([], toolTokens())
  }

  /**
   * The HUD for a session, recorded as `HudShown` when its text changed. `overhead`: what the request carries besides
   * the window (system prompt, tool schemas), added when no usage measured the window yet (the first call, right
   * after a pivot or a prune); a reported usage counted them already.
   */
  const hudFor = (sessionId: string, overhead: number) =>
    run(
      Effect.gen(function* () {
        const manager = yield* ContextManager
        const sessions = yield* Sessions.Sessions
        const state = yield* sessions.load(sessionId)
        if (state.session.sessionId === undefined) return undefined
        const usage = yield* manager.usage(sessionId)
        if (hudCost && ledgerAt === undefined) ledgerAt = LiveLedger.make(sessions, priceOf)
        const cost = ledgerAt === undefined ? undefined : Hud.costOf(yield* ledgerAt(sessionId, state.session.version))
        const text = Status.hudOf(state, usage, { recall: true }, cost, overhead)
        if (text !== state.runtime.hud) {
          const at = Date.now()
          // Under drive the HUD is the request's last message (the messages transform), else in the system prompt.
          const shown = { _tag: "HudShown" as const, at, text, ...(driveOn ? { last: true } : {}) }
          yield* sessions.execute(sessionId, { _tag: "Record", events: [shown] })
        }
        return text
      }),
    )

  /**
   * The facts of a session's window (files read and edited, commands and their outcomes, from the log), merged with
   * the block the previous summary carries. OpenCode (1.18) anchors the previous summary itself (`<prior-summary>`),
   * so pivot adds only the facts.
   */
  const factsOf = (sessionId: string) =>
    run(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        const state = yield* sessions.load(sessionId)
        const messages = Window.messages(state.session.window)
        const previous = messages.findLast(Message.isFinishedSummary)
        const previousText = previous === undefined ? "" : (Message.summaryText(previous) ?? "")
        return {
          facts: Facts.merge(Facts.parse(previousText), Facts.facts(messages)),
          previousSummary: previous === undefined ? undefined : previousText,
        }
      }),
    )

  // The facts a compaction of each session started with, for its summary's text once it is written.
  const pendingFacts = new Map<string, Facts.Facts>()

  const redacted = (text: string) => Redaction.redact(text).text

  /**
   * The store is opened as soon as the hooks are made (the first event about a session: OpenCode announces a session
   * before it builds its first request), without waiting: a new file's schema is made while OpenCode still prepares
   * the call, instead of inside the messages transform OpenCode awaits (ADR 0051). A store that cannot be opened
   * fails here silently; the first hook that needs it opens it again and reports it.
   */
  let disposed = false
  const warming = new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() =>
    runtime === undefined && !disposed
      ? ready().then(
          () => undefined,
          () => undefined,
        )
      : undefined,
  )

  return {
    event: ({ event }) =>
      guard(
        `event ${event.type}`,
        sessionOf(event),
        async () => {
          const sessionId = sessionOf(event)
          const kind = heard(event)
          if (sessionId === undefined || kind === undefined) return
          if (kind === "idle") {
            running.delete(sessionId)
            await sync(sessionId, "idle", turns.count(sessionId))
          } else if (kind === "busy") {
            running.add(sessionId)
            turns.begin(sessionId)
          }
          // Not idle: after an automatic compaction OpenCode is already writing the continue call's answer.
          else if (kind === "compacted") {
            pendingFacts.delete(sessionId)
            asker.compacted(sessionId)
            await sync(sessionId, "step")
          } else if (kind === "finished") await sync(sessionId, "step")
          else if (kind === "pruned") schedulePruned(sessionId)
          else {
            const title = (event.properties?.info as { readonly title?: unknown } | undefined)?.title
            if (typeof title !== "string" || titles.get(sessionId) === title) return
            titles.set(sessionId, title)
            titlePending.add(sessionId)
            // Recorded by the next sync, which reads the session's info: during a turn (the call's or the idle
            // sync), or for a session not recorded yet in this process (its first sync takes the title then, and
            // OpenCode announces a session before its first request); else now. Before exit at the latest (dispose).
            if (running.has(sessionId) || !synced.has(sessionId)) return
            await sync(sessionId, "step")
          }
        },
        undefined,
      ),

    "chat.message": (input, output) =>
      guard(
        "chat.message",
        input.sessionID,
        async () => {
          running.add(input.sessionID)
          turns.begin(input.sessionID)
          if (input.model !== undefined && !models.has(input.sessionID)) {
            const ref = input.model
            const given = named.get(`${ref.providerID}/${ref.modelID}`)
            const byRef = given ?? modelSpec({ id: ref.modelID, providerID: ref.providerID })
            models.set(input.sessionID, byRef)
            // Under drive mode the HUD of this call is made before OpenCode gives the model whole: its limits from
            // OpenCode's configuration, not pivot's fallback (a 200,000-token context, 32,000 of output), asked by the
            // call's messages transform unless a hook gave the model whole by then. Not asked here: OpenCode is still
            // loading its providers (~2 s into a first run), and the question then costs it CPU beside that.
            if (driveOn && given === undefined) namedByRef.set(input.sessionID, { ref, byRef })
          }
          if (redactOn)
            for (const part of output.parts)
              if (part.type === "text" && typeof part.text === "string") part.text = redacted(part.text)
        },
        undefined,
      ),

    // The summary's text, as OpenCode finishes it: the facts block appended, as pivot's own summaries carry it.
    "experimental.text.complete": (input, output) =>
      guard(
        "text.complete",
        input.sessionID,
        async () => {
          const facts = pendingFacts.get(input.sessionID)
          if (facts === undefined) return
          pendingFacts.delete(input.sessionID)
          output.text = redacted(Facts.withBlock(output.text, facts))
        },
        undefined,
      ),

    "tool.execute.after": (input, output) =>
      guard(
        "tool.execute.after",
        input.sessionID,
        async () => {
          if (redactOn && typeof output.output === "string") output.output = redacted(output.output)
        },
        undefined,
      ),

    // Drive mode: the messages of the coming call (or of the summariser's history) become pivot's window.
    "experimental.chat.messages.transform": (_input, output) =>
      guard(
        "messages.transform",
        Drive.sessionOf(output.messages),
        async () => {
          const sessionId = Drive.sessionOf(output.messages)
          if (!driveOn || sessionId === undefined) return
          // The session's model whole, when chat.message named it by its ref only: as a hook gave it since (the title's
          // call, when it has the same model), else from OpenCode's configuration (CONFIG_WAIT_MS at most).
          const byRef = namedByRef.get(sessionId)
          if (byRef !== undefined) {
            namedByRef.delete(sessionId)
            const whole = models.get(sessionId) === byRef.byRef ? await wholeModel(byRef.ref) : undefined
            if (whole !== undefined && models.get(sessionId) === byRef.byRef) models.set(sessionId, whole)
          }
          // The summariser's history: no prune of pivot's and no HUD.
          const forSummary = compacting.delete(sessionId)
          await sync(sessionId, "call")
          // pivot's strategy prunes before the call (batched: when its rules say the cache makes it pay).
          if (strategy !== undefined && !forSummary)
            await guard(
              "strategy",
              sessionId,
              () =>
                queued(sessionId, () =>
                  Phases.timed("strategy", () => run(Effect.flatMap(ContextManager, (m) => m.prune(sessionId)))),
                ),
              undefined,
            )
          const overhead =
            forSummary || !(hudOn || driveCompactionOn)
              ? 0
              : await guard(
                  "overhead",
                  sessionId,
                  () => Phases.timed("hud.overhead", () => overheadOf(sessionId)),
                  requestOverhead([], toolTokens()),
                )
          // pivot's strategy says compact: OpenCode is asked, and compacts once this call has ended.
          if (driveCompactionOn && !forSummary)
            await guard("driveCompaction", sessionId, () => asker.beforeCall(sessionId, overhead), undefined)
          const window = await queued(sessionId, () =>
            Phases.timed("window", () =>
              run(
                Effect.gen(function* () {
                  const state = yield* (yield* Sessions.Sessions).load(sessionId)
                  return Window.messages(state.session.window)
                }),
              ),
            ),
          )
          if (window.length === 0) return
          const rewritten = Drive.rewrite(output.messages, window)
          // The summariser's history: tool inputs cut as OpenCode cuts the outputs there.
          const driven = forSummary ? Drive.forSummariser(rewritten) : rewritten
          // An agent call gets the HUD last, where the cached prefix survives it.
          const hud =
            !hudOn || forSummary
              ? undefined
              : await guard(
                  "hud",
                  sessionId,
                  () => queued(sessionId, () => Phases.timed("hud", () => hudFor(sessionId, overhead))),
                  undefined,
                )
          // In place: OpenCode reads the array it passed. The objects in it are copies; its own stay untouched.
          output.messages.splice(
            0,
            output.messages.length,
            ...(hud === undefined ? driven : Drive.withHud(driven, hud)),
          )
        },
        undefined,
      ),

    // OpenCode defines every tool before a call: the schemas' size goes into the HUD's estimate (`toolTokens`).
    "tool.definition": async (input, output) => {
      toolDefinitions.set(input.toolID, {
        description: output.description,
        parameters: output.parameters,
        jsonSchema: output.jsonSchema,
      })
    },

    "experimental.chat.system.transform": (input, output) =>
      guard(
        "system.transform",
        input.sessionID,
        async () => {
          const sessionId = input.sessionID
          if (sessionId === undefined) return
          const spec = name(modelSpec(input.model))
          // OpenCode's helper calls (the title, the summariser) need nothing recorded: the agent's next call, the
          // compaction hooks and the idle sync record the session. Their model (a small one for titles) is not the
          // session's: its limits must not reach the agent's HUD.
          if (HELPER_PROMPTS.some((prefix) => output.system[0]?.startsWith(prefix) === true)) return
          models.set(sessionId, spec)
          // Drive mode: OpenCode (1.18) builds the messages first, and the messages transform synced for this call.
          if (driveOn) {
            systems.set(sessionId, [...output.system])
            return
          }
          await sync(sessionId, "call")
          systems.set(sessionId, [...output.system])
          // Drive mode shows the HUD at the end of the messages instead (the messages transform).
          if (hudOn) {
            const overhead = requestOverhead(output.system, toolTokens())
            const hud = await queued(sessionId, () => hudFor(sessionId, overhead))
            if (hud !== undefined) output.system.push(hud)
          }
          // OpenCode's own compaction drops the pinned messages: they come back verbatim in the system prompt (under
          // drive, in the messages, where pivot's window has them: returned above).
          const pinned = await queued(sessionId, () =>
            run(
              Effect.map(
                Effect.flatMap(Sessions.Sessions, (s) => s.load(sessionId)),
                PinOps.pinnedBlock,
              ),
            ),
          )
          if (pinned !== undefined) output.system.push(pinned)
        },
        undefined,
      ),

    "experimental.session.compacting": (input, output) =>
      guard(
        "session.compacting",
        input.sessionID,
        async () => {
          // OpenCode passes the summariser's history through the messages transform next.
          if (driveOn) compacting.add(input.sessionID)
          if (!compactionOn) return
          await sync(input.sessionID, "call")
          const { facts, previousSummary } = await queued(input.sessionID, () => factsOf(input.sessionID))
          pendingFacts.set(input.sessionID, facts)
          const block = redacted(Facts.factsBlock(facts))
          // The summariser is told what stays verbatim (the pinned messages come back in the system prompt).
          const pinLine = await queued(input.sessionID, () =>
            run(
              Effect.map(
                Effect.flatMap(Sessions.Sessions, (s) => s.load(input.sessionID)),
                (state) =>
                  Pins.promptLine(
                    Pins.messageIds(state.session.window.pins).flatMap((id) => {
                      const m = state.session.window.conversation.messages.get(id)
                      return m === undefined ? [] : [m]
                    }),
                  ),
              ),
            ),
          )
          const context = pinLine === undefined ? [block] : [block, redacted(pinLine)]
          // Drive mode: pivot's summariser prompt replaces OpenCode's template (OpenCode appends the history, which
          // the messages transform made pivot's window), anchored on pivot's previous summary.
          if (driveOn)
            output.prompt = Prompt.buildPrompt({
              previousSummary: previousSummary === undefined ? undefined : redacted(previousSummary),
              context,
            })
          else output.context.push(...context)
        },
        undefined,
      ),

    // After a compaction pivot asked for, the agent goes on only if the turn was in progress (no unprompted work).
    "experimental.compaction.autocontinue": (input, output) =>
      guard(
        "compaction.autocontinue",
        input.sessionID,
        async () => {
          if (!asker.asked(input.sessionID)) return
          await sync(input.sessionID, "call")
          const transcript = await queued(input.sessionID, () =>
            run(Effect.flatMap(ContextManager, (m) => m.transcript(input.sessionID))),
          )
          if (!DriveCompaction.goesOn(transcript)) output.enabled = false
        },
        undefined,
      ),

    tool: {
      context_recall: {
        description: RECALL_DESCRIPTION,
        args: recallArgs.shape,
        execute: (args: RecallArgs, context) =>
          guard(
            "context_recall",
            context.sessionID,
            async () => {
              await sync(context.sessionID, "step")
              const recalled = await queued(context.sessionID, () =>
                run(
                  Effect.gen(function* () {
                    const manager = yield* ContextManager
                    return yield* manager.recall(context.sessionID, {
                      ...(args.id === undefined ? {} : { id: args.id }),
                      ...(args.query === undefined ? {} : { query: args.query }),
                      ...(args.offset === undefined ? {} : { offset: args.offset }),
                      ...(args.pivot === undefined ? {} : { pivot: args.pivot }),
                    })
                  }),
                ),
              )
              return recalled.text
            },
            UNAVAILABLE.context_recall,
          ),
      },
      context_pin: {
        description: PIN_DESCRIPTION,
        args: pinArgs.shape,
        execute: (args: PinArgs, context) =>
          guard(
            "context_pin",
            context.sessionID,
            async () => {
              await sync(context.sessionID, "step")
              const sessionId = context.sessionID
              const via = <A, E>(use: (manager: ContextManagerShape) => Effect.Effect<A, E>) =>
                queued(sessionId, () => run(Effect.flatMap(ContextManager, use)))
              return PinOps.answer(
                {
                  pin: (target, by) => via((m) => m.pin(sessionId, target, by)),
                  unpin: (target, by) => via((m) => m.unpin(sessionId, target, by)),
                  pins: () => via((m) => m.pins(sessionId)),
                },
                args,
              )
            },
            UNAVAILABLE.context_pin,
          ),
      },
      context_compact: {
        description: COMPACT_DESCRIPTION,
        args: {},
        execute: (_args: unknown, context) =>
          guard(
            "context_compact",
            context.sessionID,
            async () => {
              const model = models.get(context.sessionID)
              if (model === undefined) return "No model is known for this session yet; compaction was not requested."
              // OpenCode compacts once this step ends; the summary replaces the history before the next call.
              summarize("context_compact", context.sessionID, model)
              return "Compaction requested: OpenCode summarises the conversation when this step ends."
            },
            UNAVAILABLE.context_compact,
          ),
      },
    },

    dispose: async () => {
      disposed = true
      await warming
      // A prune still settling, and a title no sync has read yet, are recorded before the store closes.
      await Promise.allSettled([
        ...[...prunes.keys()].map(syncPruned),
        ...[...titlePending].map((sessionId) => guard("title", sessionId, () => sync(sessionId, "step"), undefined)),
      ])
      const current = runtime
      runtime = undefined
      await Promise.allSettled([...queues.values()])
      if (current !== undefined) await current.dispose()
    },
  }
}
