/**
 * The OpenCode plugin: OpenCode's hooks, each a thin shell over pivot's store, runtime and importer.
 *
 * - `event`: on each finished message, prune and compaction the session is synced into the store (`Recorder`);
 * - `experimental.chat.system.transform`: syncs what the coming model call answers, then adds the usage HUD (the
 *   runtime's `Hud.render` of `ContextManager.usage`) to the system prompt, recorded as `HudShown` when it changes;
 * - `tool`: `context_recall` (the runtime's recall: exact originals of pruned outputs and summaries, search) and
 *   `context_compact` (asks OpenCode for a compaction through its SDK);
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
import { Facts, Ids, Message, Redaction, type Strategy, Window } from "@pivot/core"
import { Config, ContextManager, Hud, LiveLedger, Sessions } from "@pivot/runtime"
import { type EventStore, ReadModels } from "@pivot/store"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { z } from "zod"
import type { BusEvent, Client, Hooks, ModelInfo, PluginInput } from "./OpenCode.ts"
import * as Recorder from "./Recorder.ts"

/** The plugin's options (`"plugin": [["@pivot/opencode-plugin", { … }]]` in opencode.json). */
export interface Options {
  /**
   * Where to record: a SQLite file (relative to the project) or a `postgres://` URL (`?schema=NAME` for a schema other
   * than `public`). Default `PIVOT_DB`, else `.pivot/opencode.db`.
   */
  readonly db?: string | undefined
  /** Add the usage HUD to the system prompt; default true. */
  readonly hud?: boolean | undefined
  /**
   * Add the cost line to the HUD (default false): the session's spend so far, the last compaction's net saving and
   * the cache hit ratio, from pivot's ledger (prices: built-in defaults, then the models.dev catalog). Its numbers
   * change with every call, and the system prompt with them.
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
  /** The context strategy (`Strategy.Strategy`, docs/strategies.md), from a plugin file of your own; default OpenCode's. */
  readonly strategy?: Strategy.Strategy | undefined
}

/** The store a project records into by default (relative to the project folder). */
export const DEFAULT_DB = ".pivot/opencode.db"

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

/**
 * How OpenCode's own helper calls begin their system prompt (1.18): its title generator and its summariser. They get
 * no HUD — it is for the agent — and the system transform has no other way to tell which call it serves.
 */
export const HELPER_PROMPTS: ReadonlyArray<string> = [
  "You are a title generator.",
  "You are a context summarization agent.",
]

/** The recall tool's description (the runtime's, adapted: OpenCode's placeholders carry no recall id). */
export const RECALL_DESCRIPTION =
  'Get back the exact original of earlier context that was cleared ("[Old tool result content cleared]") or ' +
  "summarised away. Search old tool outputs and earlier summaries with `query` (words to look for) to get ranked " +
  "snippets with their ids, then pass an id (prt_… or msg_…) as `id` for the exact original. Long originals are " +
  "cut; the note says which `offset` reads on."

/** The compaction tool's description. */
export const COMPACT_DESCRIPTION =
  "Compact the conversation now: when this step ends, OpenCode summarises the history into a working-memory summary " +
  "and the turn ends; the next one starts from the summary. Use it at a good stopping point when the context status " +
  "says the context is filling up."

/**
 * Builds the hooks. `env` is a parameter for tests; OpenCode calls the default export (see index.ts).
 */
export const make = async (
  input: PluginInput,
  options: Options = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<Hooks> => {
  const client: Client = input.client
  const where = resolveDb(input.directory, options, env)
  const logFile =
    where._tag === "Sqlite"
      ? Path.join(Path.dirname(where.file), LOG_FILE)
      : Path.join(input.directory, ".pivot", LOG_FILE)
  const hudOn = options.hud ?? true
  const hudCost = options.hudCost ?? false
  // The cost line's ledger per session, caught up from the log (made on first use, over the runtime's sessions).
  let ledgerAt: ReturnType<typeof LiveLedger.make> | undefined
  const compactionOn = options.compaction ?? true
  const redactOn = options.redactOnRecord ?? false

  /** Records a failure: a line in the log file and OpenCode's log. Never throws. */
  const report = async (what: string, error: unknown, sessionId?: string) => {
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

  // Each session's model as OpenCode last named it (the HUD's limits).
  const models = new Map<string, ReturnType<typeof modelSpec>>()
  const recorder = Recorder.make()

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
        ...(options.strategy === undefined ? {} : { strategy: options.strategy }),
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
  const run = <A>(
    effect: Effect.Effect<A, unknown, ContextManager | Sessions.Sessions | EventStore | ReadModels.ReadModels>,
  ) => open().runPromise(effect)

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

  /** Syncs a session into the store; a version conflict (another writer) is retried once on fresh data. */
  const sync = (sessionId: string, moment: Recorder.Moment) =>
    queued(sessionId, async () => {
      const exported = await fetchSession(sessionId)
      return run(
        recorder.sync(sessionId, exported, moment).pipe(
          Effect.catchTag("WrongExpectedVersion", () =>
            Effect.suspend(() => {
              recorder.forget(sessionId)
              return recorder.sync(sessionId, exported, moment)
            }),
          ),
        ),
      )
    })

  /** Runs a hook's body; on failure reports it and returns `fallback`. */
  const guard = async <A>(what: string, sessionId: string | undefined, body: () => Promise<A>, fallback: A) => {
    try {
      return await body()
    } catch (error) {
      await report(what, error, sessionId)
      return fallback
    }
  }

  const sessionOf = (event: BusEvent): string | undefined => {
    const props = event.properties
    if (props === undefined) return undefined
    if (typeof props.sessionID === "string") return props.sessionID
    const info = props.info as { readonly sessionID?: unknown } | undefined
    return typeof info?.sessionID === "string" ? info.sessionID : undefined
  }

  const finishedMessage = (event: BusEvent): boolean => {
    const info = event.properties?.info as
      | { readonly role?: unknown; readonly time?: { readonly completed?: unknown }; readonly error?: unknown }
      | undefined
    return info?.role === "assistant" && (typeof info.time?.completed === "number" || info.error !== undefined)
  }

  /** The HUD for a session, recorded as `HudShown` when its text changed. */
  const hudFor = (sessionId: string) =>
    run(
      Effect.gen(function* () {
        const manager = yield* ContextManager
        const sessions = yield* Sessions.Sessions
        const state = yield* sessions.load(sessionId)
        if (state.session.sessionId === undefined) return undefined
        const usage = yield* manager.usage(sessionId)
        if (hudCost && ledgerAt === undefined) ledgerAt = LiveLedger.make(sessions, (ref) => Config.priceOf(ref))
        const cost = ledgerAt === undefined ? undefined : Hud.costOf(yield* ledgerAt(sessionId, state.session.version))
        const text = Hud.render(
          {
            tokens: usage.tokens,
            usable: usage.usable,
            pivots: usage.pivots,
            prunedParts: state.runtime.pruned.parts,
            prunedTokens: state.runtime.pruned.tokens,
            ...(cost === undefined ? {} : { cost }),
          },
          { recall: true },
        )
        if (text !== state.runtime.hud) {
          const at = Date.now()
          yield* sessions.execute(sessionId, { _tag: "Record", events: [{ _tag: "HudShown", at, text }] })
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
        return Facts.merge(Facts.parse(previousText), Facts.facts(messages))
      }),
    )

  // The facts a compaction of each session started with, for its summary's text once it is written.
  const pendingFacts = new Map<string, Facts.Facts>()

  const redacted = (text: string) => Redaction.redact(text).text

  const recall = z.object({
    query: z.string().optional().describe("Words to search cleared tool outputs and earlier summaries for."),
    id: z.string().optional().describe("A recall id: prt_… (a cleared tool output) or msg_… (a summary)."),
    offset: z.number().int().min(0).optional().describe("With id: the character to start from (read on)."),
  })

  return {
    event: ({ event }) =>
      guard(
        `event ${event.type}`,
        sessionOf(event),
        async () => {
          const sessionId = sessionOf(event)
          if (sessionId === undefined) return
          if (event.type === "session.idle") await sync(sessionId, "idle")
          // Not idle: after an automatic compaction OpenCode is already writing the continue call's answer.
          else if (event.type === "session.compacted") {
            pendingFacts.delete(sessionId)
            await sync(sessionId, "step")
          } else if (event.type === "message.updated" && finishedMessage(event)) await sync(sessionId, "step")
        },
        undefined,
      ),

    "chat.message": (input, output) =>
      guard(
        "chat.message",
        input.sessionID,
        async () => {
          if (input.model !== undefined && !models.has(input.sessionID))
            models.set(input.sessionID, modelSpec({ id: input.model.modelID, providerID: input.model.providerID }))
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

    "experimental.chat.system.transform": (input, output) =>
      guard(
        "system.transform",
        input.sessionID,
        async () => {
          const sessionId = input.sessionID
          if (sessionId === undefined) return
          models.set(sessionId, modelSpec(input.model))
          await sync(sessionId, "call")
          if (!hudOn || HELPER_PROMPTS.some((prefix) => output.system[0]?.startsWith(prefix) === true)) return
          const hud = await queued(sessionId, () => hudFor(sessionId))
          if (hud !== undefined) output.system.push(hud)
        },
        undefined,
      ),

    "experimental.session.compacting": (input, output) =>
      guard(
        "session.compacting",
        input.sessionID,
        async () => {
          if (!compactionOn) return
          await sync(input.sessionID, "call")
          const facts = await queued(input.sessionID, () => factsOf(input.sessionID))
          pendingFacts.set(input.sessionID, facts)
          output.context.push(redacted(Facts.factsBlock(facts)))
        },
        undefined,
      ),

    tool: {
      context_recall: {
        description: RECALL_DESCRIPTION,
        args: recall.shape,
        execute: (args: z.infer<typeof recall>, context) =>
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
                    })
                  }),
                ),
              )
              return recalled.text
            },
            "context_recall is unavailable right now (pivot could not read its store); go on without it.",
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
              void client.session
                .summarize({
                  path: { id: context.sessionID },
                  body: { providerID: model.ref.providerId, modelID: model.ref.modelId },
                })
                .then(
                  (answer) =>
                    answer.error === undefined ? undefined : report("context_compact", answer.error, context.sessionID),
                  (error) => report("context_compact", error, context.sessionID),
                )
              return "Compaction requested: OpenCode summarises the conversation when this step ends."
            },
            "context_compact is unavailable right now; go on, OpenCode still compacts on its own when the context fills.",
          ),
      },
    },

    dispose: async () => {
      const current = runtime
      runtime = undefined
      await Promise.allSettled([...queues.values()])
      if (current !== undefined) await current.dispose()
    },
  }
}
