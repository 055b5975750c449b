/**
 * The part of OpenCode's plugin API this plugin uses, typed structurally (OpenCode 1.18, `@opencode-ai/plugin`), so
 * the package needs no OpenCode dependency at run time. OpenCode passes more than this; the plugin reads no further.
 */
import type { Cost } from "./ModelCost.ts"
import type { Listed } from "./Overhead.ts"

/** What an SDK call answers: `data` on success, `error` otherwise (the SDK does not throw by default). */
export interface Answer<A> {
  readonly data?: A | undefined
  readonly error?: unknown
}

/** One stored message with its parts, as `client.session.messages` answers (the export's shape). */
export interface MessageWithParts {
  readonly info: { readonly id: string; readonly role: string; readonly [key: string]: unknown }
  readonly parts: ReadonlyArray<{ readonly type: string; readonly [key: string]: unknown }>
}

/** The SDK client calls the plugin makes (`PluginInput.client`). */
export interface Client {
  readonly session: {
    readonly get: (options: { readonly path: { readonly id: string } }) => Promise<Answer<unknown>>
    readonly messages: (options: {
      readonly path: { readonly id: string }
    }) => Promise<Answer<ReadonlyArray<MessageWithParts>>>
    /**
     * The project's sessions (OpenCode 1.18: `GET /session`, the most recently updated first; `roots` leaves out
     * subagents' sessions, `limit` keeps the first N, 100 when not given); optional, read for a new session's HUD
     * estimate.
     */
    readonly list?:
      | ((options?: {
          readonly query?: { readonly roots?: boolean; readonly limit?: number }
        }) => Promise<Answer<ReadonlyArray<Listed>>>)
      | undefined
    readonly summarize: (options: {
      readonly path: { readonly id: string }
      readonly body: { readonly providerID: string; readonly modelID: string; readonly auto?: boolean }
    }) => Promise<Answer<unknown>>
  }
  /**
   * OpenCode's configured providers with their models whole (OpenCode 1.18: `GET /config/providers`, `{ providers:
   * [{ id, models: { [id]: model } }] }`); optional, read under drive mode for the limits of a model no hook gave whole
   * yet (a continued session's first call in a new process).
   */
  readonly config?:
    | {
        readonly providers: () => Promise<Answer<{ readonly providers?: ReadonlyArray<ConfiguredProvider> }>>
      }
    | undefined
  readonly app?:
    | {
        readonly log: (options: {
          readonly body: {
            readonly service: string
            readonly level: "debug" | "info" | "warn" | "error"
            readonly message: string
            readonly extra?: Record<string, unknown>
          }
        }) => Promise<unknown>
      }
    | undefined
}

/** A provider as `client.config.providers` answers it (the fields used here). */
export interface ConfiguredProvider {
  readonly id: string
  readonly models?: Readonly<Record<string, ModelInfo>> | undefined
}

/** What OpenCode hands a plugin when it loads it (the fields used here). */
export interface PluginInput {
  readonly client: Client
  /** The project folder OpenCode runs in. */
  readonly directory: string
  readonly worktree?: string | undefined
}

/** A bus event (`event` hook): `{ type, properties }`. */
export interface BusEvent {
  readonly type: string
  readonly properties?: { readonly sessionID?: string; readonly info?: unknown; readonly [key: string]: unknown }
}

/** The model OpenCode passes to `experimental.chat.system.transform` (the fields used here). */
export interface ModelInfo {
  readonly id: string
  readonly providerID: string
  readonly limit?: { readonly context?: number; readonly output?: number; readonly input?: number } | undefined
  /** USD per million tokens (models.dev's, or opencode.json's `cost` for a model the user declares; 0: none). */
  readonly cost?: Cost | undefined
}

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  readonly sessionID: string
  readonly messageID: string
  readonly agent?: string | undefined
}

/** A plugin tool: zod argument shapes, a description and `execute`. */
export interface ToolDefinition {
  readonly description: string
  readonly args: Record<string, unknown>
  readonly execute: (args: any, context: ToolContext) => Promise<string>
}

/** The hooks this plugin implements (a subset of OpenCode's `Hooks`). */
export interface Hooks {
  readonly event: (input: { readonly event: BusEvent }) => Promise<void>
  readonly tool: Record<string, ToolDefinition>
  readonly "chat.message": (
    input: { readonly sessionID: string; readonly model?: { readonly providerID: string; readonly modelID: string } },
    output: { readonly parts: Array<{ readonly type: string; text?: unknown }> },
  ) => Promise<void>
  readonly "experimental.text.complete": (
    input: { readonly sessionID: string; readonly messageID: string; readonly partID: string },
    output: { text: string },
  ) => Promise<void>
  readonly "tool.execute.after": (
    input: { readonly tool: string; readonly sessionID: string; readonly callID: string },
    output: { output: unknown },
  ) => Promise<void>
  readonly "experimental.chat.messages.transform": (
    input: Record<string, unknown>,
    output: { messages: Array<MessageWithParts> },
  ) => Promise<void>
  readonly "tool.definition": (
    input: { readonly toolID: string },
    output: { readonly description?: unknown; readonly parameters?: unknown; readonly jsonSchema?: unknown },
  ) => Promise<void>
  readonly "experimental.chat.system.transform": (
    input: { readonly sessionID?: string | undefined; readonly model: ModelInfo },
    output: { system: Array<string> },
  ) => Promise<void>
  readonly "experimental.session.compacting": (
    input: { readonly sessionID: string },
    output: { context: Array<string>; prompt?: string | undefined },
  ) => Promise<void>
  /** After a compaction whose marker is automatic: whether OpenCode adds its continue message (default enabled). */
  readonly "experimental.compaction.autocontinue": (
    input: { readonly sessionID: string },
    output: { enabled: boolean },
  ) => Promise<void>
  readonly dispose: () => Promise<void>
}
