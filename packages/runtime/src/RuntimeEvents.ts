/**
 * The runtime's own events — bounded compaction, budgeted summariser input, the extractive fallback, secret
 * redaction, plugin outcomes, the auto-continue decision, the model's recalls — as a view over core's one event catalog (`Events`), where
 * they are defined. The runtime records them directly (they are observations, not Decider decisions).
 */
import { Events } from "@pivot/core"

/** Why the extractive summary replaced the model's. */
export type FallbackReason = Events.FallbackReason
/** A plugin hook. */
export type PluginHook = Events.PluginHook
/** Where a secret was found (never the secret). */
export type RedactionFinding = Events.RedactionFinding

const TYPES = [
  "CompactionAbandoned",
  "SummaryInputBudgeted",
  "SummaryFallbackUsed",
  "SecretsRedacted",
  "PluginFailed",
  "PluginContributed",
  "AutoContinueSkipped",
  "SecretsRedactedOnRecord",
  "CompactionRequestedByModel",
  "HudShown",
  "ContextRecalled",
  "SessionForked",
  "ArtifactsChecked",
  "ProbesAnswered",
  "SessionTitled",
  "CompactionRequestedByStrategy",
] as const

/** A runtime event type name. */
export type Type = (typeof TYPES)[number]

/** A runtime event. */
export type Event = Extract<Events.Event, { readonly _tag: Type }>

/** Whether an event is one the runtime records itself. */
export const isRuntimeEvent = (event: { readonly _tag: string }): event is Event =>
  (TYPES as ReadonlyArray<string>).includes(event._tag)

/** The runtime event types. */
export const types: ReadonlyArray<Type> = TYPES

/** Encodes an event (any of core's catalog) to JSON-safe data. */
export const encode = Events.encode
