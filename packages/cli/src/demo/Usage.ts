/**
 * How the scripted model counts tokens. Nothing is hard-coded: a call's input is the estimate of the JSON of the
 * rendered window plus the fixed cost of the system prompt and tool definitions; its output is the estimate of what
 * the model wrote (text and tool-call inputs; reasoning is counted apart, as providers report it).
 */
import { Tokens, Window } from "@pivot/core"
import type { Step } from "./Example.ts"

/** Estimated tokens of the window's model messages as they would be sent (`Window.render`, JSON). */
export const windowTokens = (window: Window.State): number =>
  Tokens.estimate(JSON.stringify(Window.render(window).map((rendered) => rendered.message)))

/** Input tokens of the next call: the rendered window plus the system prompt and tool definitions. */
export const inputTokens = (window: Window.State, systemPromptTokens: number): number =>
  windowTokens(window) + systemPromptTokens

/** Output tokens of a step: its text and the inputs of its tool calls (as sent, with list values joined). */
export const outputTokens = (step: Step, toolInputs: ReadonlyArray<Readonly<Record<string, unknown>>>): number =>
  Tokens.estimate(step.text ?? "") + toolInputs.reduce((sum, input) => sum + Tokens.estimate(JSON.stringify(input)), 0)

/** Reasoning tokens of a step. */
export const reasoningTokens = (step: Step): number => Tokens.estimate(step.reasoning ?? "")
