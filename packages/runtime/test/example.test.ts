/** The embedding example in docs/embed.md runs as documented: a pivot forms, the plugin's context is in the prompt. */
import { Sessions } from "@pivot/runtime"
import { Effect } from "effect"
import { expect, it } from "vitest"
import { layer, program } from "../examples/embed.ts"

it("examples/embed.ts: nine turns on a 24k model end with one pivot whose recorded prompt holds the plugin's line", async () => {
  const { lines, events } = await Effect.runPromise(
    Effect.gen(function* () {
      const lines = yield* program
      const events = yield* (yield* Sessions.Sessions).events("ses_embedded")
      return { lines, events }
    }).pipe(Effect.provide(layer)),
  )
  expect(lines[6]).toMatch(/turn 7: \d+ tokens .* 0 pivot/)
  expect(lines[7]).toMatch(/turn 8: \d+ tokens .* 1 pivot/)
  expect(lines.at(-1)).toBe(`events: ${events.length}, tool outputs recorded: 9`)
  const started = events.find((e) => e._tag === "CompactionStarted")
  expect(started?._tag === "CompactionStarted" && started.prompt).toContain("never edit dist/")
  expect(events.some((e) => e._tag === "PluginContributed")).toBe(true)
})
