/**
 * @pivot/opencode-plugin — pivot inside OpenCode. The default export is the OpenCode plugin: one line in
 * opencode.json (`"plugin": ["@pivot/opencode-plugin"]`, or a `file://` URL of this file) records the live session as
 * pivot events, adds the usage HUD, `context_recall` and `context_compact`, and pivot's additions to OpenCode's own
 * compaction. See docs/opencode.md.
 *
 * Only the plugin is exported (and types): OpenCode may treat a module's function exports as plugins.
 *
 * Loaded lazily: OpenCode loads every plugin before anything else, so this entry imports only the tools' descriptions
 * and argument shapes (Tools.ts). The hooks (Plugin.ts, with pivot's store, runtime and importer) are imported on the
 * first call of a hook that has work to do — the first event about a session, the first message, system prompt or
 * tool call; a tool's definition is only noted until then — and every later call goes straight to them. A process
 * that never reaches a session (`opencode export`, `opencode models`, a TUI left idle) never loads them. Built, they
 * load as one tree-shaken bundle (dist/bundle/Plugin.js: pivot's packages and the part of `effect` they use) instead
 * of hundreds of modules.
 */

// `#tools` (package.json "imports"): src/Tools.ts from source, else its bundle with the part of zod it uses (ADR 0033).
import { COMPACT_DESCRIPTION, PIN_DESCRIPTION, pinArgs, RECALL_DESCRIPTION, recallArgs } from "#tools"
import type { Hooks, PluginInput, ToolContext } from "./OpenCode.ts"
// The bench's per-phase counters (a few lines, no dependency; off without the bench's sink: ADR 0056).
import * as Phases from "./Phases.ts"
import type { Options } from "./Plugin.ts"
import * as Thread from "./Thread.ts"

export type { Hooks, PluginInput } from "./OpenCode.ts"
export type { Options } from "./Plugin.ts"

type Forwarded = Exclude<keyof Hooks, "tool" | "dispose" | "event" | "tool.definition">

/** Every hook forwarded as is (a hook added to `Hooks` must be listed here: the type checks it). */
const FORWARDED: { readonly [K in Forwarded]: true } = {
  "chat.message": true,
  "experimental.text.complete": true,
  "tool.execute.after": true,
  "experimental.chat.system.transform": true,
  "experimental.session.compacting": true,
  "experimental.compaction.autocontinue": true,
  "experimental.chat.messages.transform": true,
}

/** Whether an event concerns a session (events before any session, e.g. at OpenCode's start, need no store). */
const aboutSession = (event: Parameters<Hooks["event"]>[0]["event"]): boolean => {
  const props = event.properties
  if (props === undefined) return false
  const info = props.info as { readonly sessionID?: unknown; readonly id?: unknown } | undefined
  return typeof props.sessionID === "string" || typeof info?.sessionID === "string" || typeof info?.id === "string"
}

/**
 * Whether the hooks run on a worker thread (option `worker`, ADR 0073): by default in OpenCode's Bun, where OpenCode's
 * own heap is the one to keep small; never with a strategy given as a value (its functions cannot cross to a worker).
 */
const onWorker = (options: Options | undefined): boolean =>
  typeof options?.strategy === "object"
    ? false
    : typeof options?.worker === "boolean"
      ? options.worker
      : typeof (process.versions as { readonly bun?: string }).bun === "string"

/**
 * The hooks served by a worker (Thread.ts): started, and its hooks made, before the first call goes to it. A worker
 * that cannot start leaves the hooks on OpenCode's thread; one that dies later is said once in OpenCode's log, and
 * every hook then leaves OpenCode's objects as they were.
 */
const onThread = async (input: PluginInput, options: Options): Promise<Hooks> => {
  const { Worker } = await import("node:worker_threads")
  const worker = new Worker(new URL(import.meta.resolve("#worker")))
  // The worker keeps OpenCode's process alive only while a call waits for it.
  worker.unref()
  // Said once; and not at all once the hooks' dispose ended it (its exit is then the expected one).
  let said = false
  const remote = Thread.connect(worker, input, options, {
    ref: () => worker.ref(),
    unref: () => worker.unref(),
    close: () => {
      said = true
      void worker.terminate()
    },
  })
  const gone = (error: Error) => {
    remote.gone(error)
    if (said) return
    said = true
    void input.client.app
      ?.log({ body: { service: "pivot", level: "warn", message: `pivot's worker stopped: ${error.message}` } })
      .catch(() => undefined)
  }
  worker.on("error", gone)
  worker.on("exit", (code) => gone(new Error(`it exited with code ${code}`)))
  // Hooks the worker could not make: it is ended, and the hooks load on OpenCode's thread instead (below).
  await remote.ready.catch((error: unknown) => {
    said = true
    void worker.terminate()
    throw error
  })
  return remote.hooks
}

/** The plugin, as OpenCode calls it: `(input, options) => hooks`. */
const PivotPlugin = async (input: PluginInput, options?: Options): Promise<Hooks> => {
  let loading: Promise<Hooks> | undefined
  let loaded: Hooks | undefined
  // The tools' definitions OpenCode gave before the hooks loaded, handed to them when they do (ADR 0051).
  const definitions = new Map<string, Parameters<Hooks["tool.definition"]>>()
  const hooks = (): Promise<Hooks> =>
    (loading ??= (onWorker(options) ? Phases.timed("worker", () => onThread(input, options ?? {})) : Promise.reject())
      .catch(() =>
        // `#hooks` (package.json "imports"): src/Plugin.ts from source, else its bundle in dist/bundle/ (ADR 0033).
        Phases.timed("bundle", () => import("#hooks")).then((plugin) =>
          Phases.timed("make", () => plugin.make(input, options ?? {})),
        ),
      )
      .then(async (made) => {
        loaded = made
        for (const args of definitions.values()) await made["tool.definition"](...args)
        definitions.clear()
        return made
      }))
  const forward = Object.fromEntries(
    (Object.keys(FORWARDED) as Array<Forwarded>).map((name) => [
      name,
      async (hookInput: never, output: never) => {
        const real = await hooks()
        return (real[name] as (i: never, o: never) => Promise<void>)(hookInput, output)
      },
    ]),
  ) as Pick<Hooks, Forwarded>
  const tool =
    (name: "context_recall" | "context_compact" | "context_pin") => async (args: unknown, context: ToolContext) => {
      const real = await hooks()
      return real.tool[name]!.execute(args, context)
    }
  return {
    ...forward,
    // A message with nothing to change in it (no redaction asked) does not wait for the hooks to load: on `--continue`
    // it is the first hook about the session. The hooks take it once loaded, before any call that came after it.
    "chat.message": async (hookInput, output) => {
      if (loaded !== undefined || options?.redactOnRecord === true) return forward["chat.message"](hookInput, output)
      void hooks().then(
        (real) => real["chat.message"](hookInput, output),
        () => undefined,
      )
    },
    // OpenCode defines every tool before each request, awaiting each call: noted without loading the hooks (a tool's
    // definition is only read for the HUD's estimate).
    "tool.definition": async (hookInput, output) => {
      if (loaded !== undefined) return loaded["tool.definition"](hookInput, output)
      definitions.set(hookInput.toolID, [hookInput, output])
    },
    event: async (hookInput) => {
      if (loaded === undefined && !aboutSession(hookInput.event)) return
      return (await hooks()).event(hookInput)
    },
    tool: {
      context_recall: { description: RECALL_DESCRIPTION, args: recallArgs.shape, execute: tool("context_recall") },
      context_compact: { description: COMPACT_DESCRIPTION, args: {}, execute: tool("context_compact") },
      context_pin: { description: PIN_DESCRIPTION, args: pinArgs.shape, execute: tool("context_pin") },
    },
    // Nothing to release when the hooks were never loaded.
    dispose: async () => {
      if (loading !== undefined) await (await loading).dispose()
    },
  }
}

export default PivotPlugin
