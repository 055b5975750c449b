/**
 * The hooks on a thread of their own (option `worker`, ADR 0073): pivot's store, runtime and state live in a worker's
 * heap, not in OpenCode's. A plugin's live heap on OpenCode's thread moves OpenCode's own peak memory by far more than
 * it holds (docs/benchmarks.md, "Plugin start"); the same heap on a worker adds what it holds.
 *
 * Two ends over a message port. `serve` (the worker) builds the hooks with `Plugin.make` and runs each call on a copy
 * of its input and output; `connect` (OpenCode's thread) is a `Hooks` whose every hook posts the call and applies what
 * the worker changed to OpenCode's own objects, as the hook would have in place:
 *
 * - the messages transform: the array is refilled in place, OpenCode's objects kept where the hook kept them;
 * - the system prompt and the compaction's context lines: the arrays refilled in place; the prompt, the summary's
 *   text, a tool's output and whether to continue: assigned;
 * - a user message's parts (redaction): only the texts that changed, into OpenCode's part objects.
 *
 * The SDK client stays on OpenCode's thread: the worker's client asks it through the port. A tool's definition
 * crosses as its JSON Schema (a zod schema holds functions). Whatever goes wrong with the worker leaves OpenCode's
 * objects as they were, as a failing hook does on one thread.
 */
import { UNAVAILABLE } from "#tools"
import { heard } from "./BusEvents.ts"
import type { BusEvent, Client, Hooks, PluginInput } from "./OpenCode.ts"
import type { Options } from "./Plugin.ts"

/** What a port offers both ends (`node:worker_threads`' `MessagePort`, `parentPort` and `Worker` alike). */
export interface Port {
  readonly postMessage: (message: unknown) => void
  readonly on: (event: "message", listener: (message: any) => void) => unknown
}

/** The hooks that change their output, with what a call posts of it and what comes back. */
type Changing =
  | "chat.message"
  | "experimental.text.complete"
  | "tool.execute.after"
  | "experimental.chat.messages.transform"
  | "experimental.chat.system.transform"
  | "experimental.session.compacting"
  | "experimental.compaction.autocontinue"

type ToWorker =
  | {
      readonly t: "init"
      readonly id: number
      readonly directory: string
      readonly worktree?: string | undefined
      readonly options: Options
      readonly client: ReadonlyArray<string>
      readonly phases: boolean
    }
  | {
      readonly t: "call"
      readonly id: number
      readonly hook: string
      readonly input: unknown
      readonly output: unknown
    }
  /** A call nothing waits for (a tool's definition): run in its turn, answered by nothing. */
  | { readonly t: "note"; readonly hook: string; readonly input: unknown; readonly output: unknown }
  | {
      readonly t: "tool"
      readonly id: number
      readonly name: string
      readonly args: unknown
      readonly context: unknown
    }
  | { readonly t: "dispose"; readonly id: number }
  | { readonly t: "answer"; readonly id: number; readonly ok: boolean; readonly value: unknown }

type FromWorker =
  | { readonly t: "done"; readonly id: number; readonly ok: boolean; readonly value: unknown }
  | { readonly t: "client"; readonly id: number; readonly path: string; readonly args: ReadonlyArray<unknown> }
  | { readonly t: "phase"; readonly phase: unknown }

/** The client calls the worker may ask for, by path: those OpenCode's client has go into `init`. */
const CLIENT_PATHS = [
  "session.get",
  "session.messages",
  "session.list",
  "session.summarize",
  "config.providers",
  "app.log",
] as const

/** A message posted as is, or, when it holds what cannot be copied (a function), as its JSON. */
const post = (port: Port, message: unknown) => {
  try {
    port.postMessage(message)
  } catch {
    port.postMessage(JSON.parse(JSON.stringify(message)))
  }
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Calls and their answers over one port, by id. */
const calls = (port: Port, onPending?: (pending: number) => void) => {
  let next = 0
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  return {
    ask: <M extends { readonly id: number }>(message: Omit<M, "id">): Promise<unknown> =>
      new Promise((resolve, reject) => {
        const id = ++next
        pending.set(id, { resolve, reject })
        onPending?.(pending.size)
        try {
          post(port, { ...message, id })
        } catch (error) {
          pending.delete(id)
          onPending?.(pending.size)
          reject(error instanceof Error ? error : new Error(String(error)))
        }
      }),
    settle: (id: number, ok: boolean, value: unknown) => {
      const call = pending.get(id)
      if (call === undefined) return
      pending.delete(id)
      onPending?.(pending.size)
      if (ok) call.resolve(value)
      else call.reject(new Error(String(value)))
    },
    failAll: (error: Error) => {
      for (const call of pending.values()) call.reject(error)
      pending.clear()
      onPending?.(0)
    },
  }
}

// ---------------------------------------------------------------------------------------------------------------
// What each changing hook changed, taken on the worker's copy and applied to OpenCode's objects.

type Out = Record<string, unknown>
const arr = (u: unknown): Array<unknown> => (Array.isArray(u) ? u : [])
const sameList = (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) =>
  a.length === b.length && a.every((x, i) => x === b[i])
const refill = (target: unknown, items: ReadonlyArray<unknown>) => {
  if (Array.isArray(target)) target.splice(0, target.length, ...items)
}

interface Change {
  /** Before the hook runs on the worker's copy: what the change is measured against. */
  readonly before: (output: Out) => unknown
  /** After it: what changed (undefined: nothing). */
  readonly diff: (before: never, output: Out) => unknown
  /** On OpenCode's thread: the change applied to OpenCode's output. */
  readonly apply: (output: Out, change: never) => void
}

const assigned = (key: string): Change => ({
  before: (output) => output[key],
  diff: (before: unknown, output) => (output[key] === before ? undefined : { value: output[key] }),
  apply: (output, change: { readonly value: unknown }) => {
    output[key] = change.value
  },
})

const CHANGES: { readonly [K in Changing]: Change } = {
  "chat.message": {
    before: (output) => arr(output.parts).map((part) => (part as { text?: unknown }).text),
    diff: (before: ReadonlyArray<unknown>, output) => {
      const texts = arr(output.parts).flatMap((part, i) => {
        const text = (part as { text?: unknown }).text
        return text === before[i] ? [] : [[i, text] as const]
      })
      return texts.length === 0 ? undefined : texts
    },
    apply: (output, texts: ReadonlyArray<readonly [number, unknown]>) => {
      const parts = arr(output.parts)
      for (const [i, text] of texts) {
        const part = parts[i]
        if (typeof part === "object" && part !== null) (part as { text?: unknown }).text = text
      }
    },
  },
  "experimental.text.complete": assigned("text"),
  "tool.execute.after": assigned("output"),
  // OpenCode's messages the hook kept cross back as their index: OpenCode's own object goes back in its place.
  "experimental.chat.messages.transform": {
    before: (output) => [...arr(output.messages)],
    diff: (before: ReadonlyArray<unknown>, output) => {
      const after = arr(output.messages)
      if (sameList(before, after)) return undefined
      const at = new Map(before.map((message, i) => [message, i]))
      return after.map((message) => at.get(message) ?? { message })
    },
    apply: (output, list: ReadonlyArray<number | { readonly message: unknown }>) => {
      const originals = [...arr(output.messages)]
      refill(
        output.messages,
        list.map((x) => (typeof x === "number" ? originals[x] : x.message)),
      )
    },
  },
  "experimental.chat.system.transform": {
    before: (output) => [...arr(output.system)],
    diff: (before: ReadonlyArray<unknown>, output) =>
      sameList(before, arr(output.system)) ? undefined : [...arr(output.system)],
    apply: (output, system: ReadonlyArray<unknown>) => refill(output.system, system),
  },
  "experimental.session.compacting": {
    before: (output) => ({ context: [...arr(output.context)], prompt: output.prompt }),
    diff: (before: { readonly context: ReadonlyArray<unknown>; readonly prompt: unknown }, output) =>
      sameList(before.context, arr(output.context)) && before.prompt === output.prompt
        ? undefined
        : { context: [...arr(output.context)], prompt: output.prompt, hadPrompt: "prompt" in output },
    apply: (
      output,
      change: { readonly context: ReadonlyArray<unknown>; readonly prompt: unknown; hadPrompt: boolean },
    ) => {
      refill(output.context, change.context)
      if (change.hadPrompt) output.prompt = change.prompt
    },
  },
  "experimental.compaction.autocontinue": assigned("enabled"),
}

const isChanging = (hook: string): hook is Changing => Object.hasOwn(CHANGES, hook)

/**
 * A tool's definition as it crosses: its description and its parameters' JSON Schema (OpenCode's own, else its zod
 * schema's `toJSONSchema()`), which is what the HUD's estimate reads of it (`toolSchemaTokens`).
 */
export const portableDefinition = (output: {
  readonly description?: unknown
  readonly parameters?: unknown
  readonly jsonSchema?: unknown
}): { readonly description?: unknown; readonly jsonSchema?: unknown } => {
  if (output.jsonSchema !== undefined) return { description: output.description, jsonSchema: output.jsonSchema }
  const schema = output.parameters as { readonly toJSONSchema?: unknown } | undefined
  try {
    if (typeof schema?.toJSONSchema === "function")
      return { description: output.description, jsonSchema: (schema.toJSONSchema as () => unknown).call(schema) }
  } catch {
    // Not convertible: counted as its name and description, as on one thread.
  }
  return { description: output.description }
}

// ---------------------------------------------------------------------------------------------------------------
// OpenCode's end.

/**
 * The hooks, served by the worker behind `port`. `unref`/`ref` let the worker keep OpenCode's process alive only while
 * a call waits for it; `close` ends the worker after its `dispose`. `ready` settles once the worker's hooks are made
 * (rejected if they could not be).
 */
export const connect = (
  port: Port,
  input: PluginInput,
  options: Options,
  control: { readonly ref: () => void; readonly unref: () => void; readonly close: () => void },
): { readonly hooks: Hooks; readonly ready: Promise<void>; readonly gone: (error: Error) => void } => {
  const sink = (globalThis as Record<symbol, unknown>)[Symbol.for("pivot.phases")]
  const pending = calls(port, (n) => (n > 0 ? control.ref() : control.unref()))
  let lost: Error | undefined
  const client = input.client as unknown as Record<string, Record<string, unknown> | undefined>
  const clientCall = (path: string) => {
    const [group, name] = path.split(".") as [string, string]
    const owner = client[group]
    const call = owner?.[name]
    return typeof call === "function"
      ? { owner, call: call as (...args: Array<unknown>) => Promise<unknown> }
      : undefined
  }
  port.on("message", (message: FromWorker) => {
    if (message.t === "done") pending.settle(message.id, message.ok, message.value)
    else if (message.t === "phase") {
      if (Array.isArray(sink)) sink.push(message.phase)
    } else if (message.t === "client") {
      const found = clientCall(message.path)
      const answer = (ok: boolean, value: unknown) => post(port, { t: "answer", id: message.id, ok, value })
      if (found === undefined) answer(false, `OpenCode's client has no ${message.path}`)
      else
        found.call.apply(found.owner, [...message.args]).then(
          // An SDK answer holds the request and the response too: only what the hooks read crosses.
          (value) => {
            const sdk = value as { readonly data?: unknown; readonly error?: unknown } | undefined
            answer(true, typeof sdk === "object" && sdk !== null ? { data: sdk.data, error: sdk.error } : undefined)
          },
          (error) => answer(false, errorText(error)),
        )
    }
  })
  const gone = (error: Error) => {
    lost ??= error
    pending.failAll(error)
  }
  const ask = (message: Record<string, unknown>) =>
    lost === undefined ? pending.ask(message as never) : Promise.reject(lost)
  const ready = ask({
    t: "init",
    directory: input.directory,
    worktree: input.worktree,
    options,
    client: CLIENT_PATHS.filter((path) => clientCall(path) !== undefined),
    phases: Array.isArray(sink),
  }).then(() => undefined)
  // A call the worker cannot answer leaves OpenCode's objects as they were (a hook that fails does the same).
  const call = async (hook: string, hookInput: unknown, output: Out | undefined) => {
    try {
      await ready
      const change = await ask({ t: "call", hook, input: hookInput, output })
      if (change !== undefined && output !== undefined && isChanging(hook)) CHANGES[hook].apply(output, change as never)
    } catch {
      // Said once, in the worker's failure log or OpenCode's log (see index.ts): nothing changed here.
    }
  }
  const tool = (name: string, fallback: string) => ({
    execute: async (
      args: unknown,
      context: { readonly sessionID: string; readonly messageID: string; readonly agent?: string },
    ) => {
      try {
        await ready
        const answer = await ask({
          t: "tool",
          name,
          args,
          context: { sessionID: context.sessionID, messageID: context.messageID, agent: context.agent },
        })
        return String(answer)
      } catch {
        return fallback
      }
    },
  })
  const definitions = new Map<
    string,
    { readonly description?: unknown; readonly parameters?: unknown; readonly jsonSchema?: unknown }
  >()
  const hooks = {
    // Only the events the hooks act on cross: most (a streamed part's deltas, plugin and catalog updates) would be
    // copied for nothing.
    event: async (hookInput: { readonly event: BusEvent }) => {
      if (heard(hookInput.event) !== undefined) await call("event", hookInput, undefined)
    },
    "chat.message": (hookInput: unknown, output: Out) => call("chat.message", hookInput, output),
    "experimental.text.complete": (hookInput: unknown, output: Out) =>
      call("experimental.text.complete", hookInput, output),
    "tool.execute.after": (hookInput: unknown, output: Out) => call("tool.execute.after", hookInput, output),
    "experimental.chat.messages.transform": (hookInput: unknown, output: Out) =>
      call("experimental.chat.messages.transform", hookInput, output),
    "experimental.chat.system.transform": (hookInput: unknown, output: Out) =>
      call("experimental.chat.system.transform", hookInput, output),
    "experimental.session.compacting": (hookInput: unknown, output: Out) =>
      call("experimental.session.compacting", hookInput, output),
    "experimental.compaction.autocontinue": (hookInput: unknown, output: Out) =>
      call("experimental.compaction.autocontinue", hookInput, output),
    // OpenCode defines every tool before each request, awaiting each, with the same objects: a definition crosses when
    // it changed, and OpenCode does not wait for the worker (the port keeps it before the call that reads it).
    "tool.definition": async (hookInput: { readonly toolID: string }, output: Out) => {
      const known = definitions.get(hookInput.toolID)
      if (
        known !== undefined &&
        known.description === output.description &&
        known.parameters === output.parameters &&
        known.jsonSchema === output.jsonSchema
      )
        return
      definitions.set(hookInput.toolID, {
        description: output.description,
        parameters: output.parameters,
        jsonSchema: output.jsonSchema,
      })
      if (lost === undefined)
        void ready.then(
          () =>
            post(port, { t: "note", hook: "tool.definition", input: hookInput, output: portableDefinition(output) }),
          () => undefined,
        )
    },
    tool: {
      context_recall: tool("context_recall", UNAVAILABLE.context_recall),
      context_compact: tool("context_compact", UNAVAILABLE.context_compact),
      context_pin: tool("context_pin", UNAVAILABLE.context_pin),
    },
    dispose: async () => {
      try {
        await ready
        await ask({ t: "dispose" })
      } catch {
        // A worker already gone has nothing left to close.
      } finally {
        control.close()
      }
    },
  }
  return { hooks: hooks as unknown as Hooks, ready, gone }
}

// ---------------------------------------------------------------------------------------------------------------
// The worker's end.

/** Serves the hooks `make` builds to the OpenCode thread behind `port`. */
export const serve = (port: Port, make: (input: PluginInput, options: Options) => Promise<Hooks>): void => {
  const pending = calls(port)
  let hooks: Promise<Hooks> | undefined
  const done = (id: number, ok: boolean, value: unknown) => post(port, { t: "done", id, ok, value })
  const answering = (id: number, work: () => Promise<unknown>) =>
    work().then(
      (value) => done(id, true, value),
      (error) => done(id, false, errorText(error)),
    )
  port.on("message", (message: ToWorker) => {
    switch (message.t) {
      case "answer":
        return pending.settle(message.id, message.ok, message.value)
      case "init": {
        if (message.phases) {
          // The bench's phase sink (Phases.ts): each record goes to OpenCode's thread, where the bench reads it.
          const sink: Array<unknown> = []
          sink.push = (...phases: Array<unknown>) => {
            for (const phase of phases) post(port, { t: "phase", phase })
            return 0
          }
          ;(globalThis as Record<symbol, unknown>)[Symbol.for("pivot.phases")] = sink
        }
        const has = new Set(message.client)
        const ask =
          (path: string) =>
          (...args: Array<unknown>) =>
            pending.ask({ t: "client", path, args } as never)
        const at = (path: (typeof CLIENT_PATHS)[number]) => (has.has(path) ? ask(path) : undefined)
        const client = {
          session: {
            get: ask("session.get"),
            messages: ask("session.messages"),
            list: at("session.list"),
            summarize: ask("session.summarize"),
          },
          config: has.has("config.providers") ? { providers: ask("config.providers") } : undefined,
          app: has.has("app.log") ? { log: ask("app.log") } : undefined,
        } as unknown as Client
        hooks = make(
          {
            client,
            directory: message.directory,
            ...(message.worktree === undefined ? {} : { worktree: message.worktree }),
          },
          message.options,
        )
        return answering(message.id, () => hooks!.then(() => undefined))
      }
      case "call":
        return answering(message.id, async () => {
          const made = await hooks!
          const run = made[message.hook as keyof Hooks] as unknown as (
            input: unknown,
            output?: unknown,
          ) => Promise<void>
          const output = message.output as Out | undefined
          if (output === undefined || !isChanging(message.hook)) return run(message.input, output)
          const change = CHANGES[message.hook]
          const before = change.before(output)
          await run(message.input, output)
          return change.diff(before as never, output)
        })
      case "note":
        return void hooks
          ?.then((made) =>
            (made[message.hook as keyof Hooks] as unknown as (input: unknown, output: unknown) => Promise<void>)(
              message.input,
              message.output,
            ),
          )
          .catch(() => undefined)
      case "tool":
        return answering(message.id, async () => {
          const made = await hooks!
          return made.tool[message.name]!.execute(message.args, message.context as never)
        })
      case "dispose":
        return answering(message.id, async () => (await hooks!).dispose())
    }
  })
}
