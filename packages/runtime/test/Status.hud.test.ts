/**
 * `Status.hudOf`, the one home of the HUD's inputs (the AI SDK's `prepare` and OpenCode's plugin both call it): the
 * request's overhead (system prompt, tool schemas) is added to an estimated usage and never to a reported one.
 */
import { Hud, Sessions, Status } from "@pivot/runtime"
import { describe, expect, it } from "vitest"

const usage = (tokens: number, source: "reported" | "estimated") => ({
  tokens,
  source,
  usable: 10_000,
  trigger: 10_000,
  percent: 0,
  status: "ok" as const,
  pivots: 2,
  streak: 0,
  suspended: false,
})

const contextLine = (hud: string) => hud.split("\n").find((line) => line.startsWith("context: "))

describe("Status.hudOf", () => {
  const state = Sessions.initialState

  it("given an estimated usage, then the overhead is added to its tokens", () => {
    expect(contextLine(Status.hudOf(state, usage(1_000, "estimated"), {}, undefined, 2_474))).toBe(
      "context: 3,474 / 10,000 tokens (34%), level ok",
    )
  })

  it("given a reported usage, then the overhead is not added: the call counted it", () => {
    expect(contextLine(Status.hudOf(state, usage(1_000, "reported"), {}, undefined, 2_474))).toBe(
      "context: 1,000 / 10,000 tokens (10%), level ok",
    )
  })

  it("given no overhead, then the text is Hud.render's of the usage and the state's prunes and pins", () => {
    expect(Status.hudOf(state, usage(1_000, "estimated"), { recall: true }, undefined)).toBe(
      Hud.render(
        {
          tokens: 1_000,
          usable: 10_000,
          pivots: 2,
          prunedParts: 0,
          prunedTokens: 0,
          pinned: { messages: 0, tokens: 0 },
        },
        { recall: true },
      ),
    )
  })
})
