/**
 * Imports a transcript of either agent, told apart by its content (`Transcript.detect`).
 */
import * as ClaudeCode from "./ClaudeCode.ts"
import * as Codex from "./Codex.ts"
import { detect, type ImportResult, type Options } from "./Transcript.ts"

/**
 * The events of a Claude Code or Codex CLI transcript, or undefined when the text is neither (no line of it looks
 * like one of theirs).
 *
 * **Example**
 * ```ts
 * const imported = importTranscript(readFileSync(file, "utf8"), { final: true })
 * if (imported !== undefined) console.log(imported.sessionId, imported.events.length)
 * ```
 */
export const importTranscript = (text: string, options: Options): ImportResult | undefined => {
  switch (detect(text)) {
    case "claude-code":
      return ClaudeCode.importText(text, options)
    case "codex":
      return Codex.importText(text, options)
    default:
      return undefined
  }
}
