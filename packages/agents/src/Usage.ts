/**
 * The usage an agent's transcript records for a model call, in pivot's shape (`input` excluding cache reads and
 * writes, `output` excluding reasoning), as the provider billed it. One home for both readers: Claude Code records
 * the Anthropic API's usage, where the four counts are disjoint; Codex CLI records OpenAI's, where cached input and
 * cache writes are counted inside `input_tokens` and reasoning inside `output_tokens`.
 */
import type { Message } from "@pivot/core"
import { isRecord, num } from "./internal/Builder.ts"

/** pivot's usage of one model call. */
export type Tokens = Message.AssistantMessage["tokens"]

/** The counts of a usage record, whatever its provider's field names: each missing or invalid count is 0. */
interface Counts {
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

/**
 * The usage of a call from counts where `input` holds the cache reads and writes and `output` the reasoning (the
 * OpenAI convention): the parts are taken out, each capped at what is left, so no count is ever negative.
 */
const split = (c: Counts): Tokens => {
  const cacheRead = Math.min(c.cacheRead, c.input)
  const cacheWrite = Math.min(c.cacheWrite, c.input - cacheRead)
  const reasoning = Math.min(c.reasoning, c.output)
  return { input: c.input - cacheRead - cacheWrite, output: c.output - reasoning, reasoning, cacheRead, cacheWrite }
}

/**
 * A Claude Code `message.usage` (the Anthropic API's): `input_tokens`, `cache_read_input_tokens` and
 * `cache_creation_input_tokens` are disjoint, so they map one to one.
 */
export const anthropic = (usage: unknown): Tokens => {
  const u = isRecord(usage) ? usage : {}
  return {
    input: num(u.input_tokens),
    output: num(u.output_tokens),
    reasoning: 0,
    cacheRead: num(u.cache_read_input_tokens),
    cacheWrite: num(u.cache_creation_input_tokens),
  }
}

/**
 * A Codex CLI `last_token_usage` (OpenAI's counts): `cached_input_tokens` and (since Codex 0.17x)
 * `cache_write_input_tokens` are part of `input_tokens`, `reasoning_output_tokens` part of `output_tokens`.
 */
export const openai = (usage: unknown): Tokens => {
  const u = isRecord(usage) ? usage : {}
  return split({
    input: num(u.input_tokens),
    output: num(u.output_tokens),
    reasoning: num(u.reasoning_output_tokens),
    cacheRead: num(u.cached_input_tokens),
    cacheWrite: num(u.cache_write_input_tokens),
  })
}
