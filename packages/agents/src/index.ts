/** @pivot/agents — imports Claude Code and Codex CLI session transcripts (JSONL) into pivot's events, incrementally. */

export * as ClaudeCode from "./ClaudeCode.ts"
export * as Codex from "./Codex.ts"
export * as Follow from "./Follow.ts"
export { importTranscript } from "./Import.ts"
export * as Transcript from "./Transcript.ts"
export * as Usage from "./Usage.ts"

// The copy of effect this package loaded, so a second copy is named when it breaks a decode (core's EffectCopies).
import { EffectCopies } from "@pivot/core"
import * as Schema from "effect/Schema"

EffectCopies.register("@pivot/agents", Schema.String)
