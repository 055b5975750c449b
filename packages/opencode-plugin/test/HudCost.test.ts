// The plugin's HUD cost line (issue 20, option hudCost): off by default; on, the HUD's last line is the ledger of the
// session as recorded from OpenCode (anthropic/claude-sonnet-4: the catalog's prices), equal to the ledger folded
// from the stored log, and every call's spend in it counted by hand from the fixture.
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type Events, Ledger, type Pricing } from "@pivot/core"
import { Config, Hud } from "@pivot/runtime"
import { describe, expect, it } from "vitest"
import type { ModelInfo } from "../src/OpenCode.ts"
import type * as Plugin from "../src/Plugin.ts"
import { storedEvents } from "./support/Compare.ts"
import { plugged } from "./support/Plugged.ts"

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")
const MODEL = { id: "claude-sonnet-4", providerID: "anthropic", limit: { context: 20_000, output: 4_000 } }

const plug = plugged("pivot-plugin-cost-")

const hudOf = async (options: Plugin.Options, model: ModelInfo = MODEL) => {
  // Record mode, the HUD asked for: it is in the system prompt.
  const { hooks, data, db } = await plug(fixture, { hud: true, ...options })
  const output = { system: ["You are opencode."] }
  await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model }, output)
  return { hud: output.system[1], events: await storedEvents(db, data.info.id) }
}

const costLineOf = (hud: string | undefined) => hud?.split("\n").find((line) => line.startsWith("cost: "))

/** By hand: every step's usage at `price`, in input-token equivalents (no summary in this session). */
const spentAt = (events: ReadonlyArray<Events.Event>, price: Pricing.Price) =>
  events.reduce((n, e) => {
    if (e._tag !== "AssistantStepRecorded" || e.message.summary === true) return n
    const t = e.message.tokens
    return (
      n +
      t.input +
      (t.cacheRead * price.cacheRead + t.cacheWrite * price.cacheWrite + (t.output + t.reasoning) * price.output) /
        price.input
    )
  }, 0)

const spentLine = (spent: number) => new RegExp(`^cost: ${Math.round(spent).toLocaleString("en-US")} input-token eq`)

// The model's own price as opencode.json's `cost` gives it (USD per million tokens), other ratios than the catalog's.
const COST = { input: 2, output: 20, cache: { read: 1, write: 4 } }
const OWN = { input: 2, output: 20, cacheRead: 1, cacheWrite: 4 }

describe("the plugin's HUD cost line", () => {
  it("is off by default", async () => {
    const { hud } = await hudOf({})
    expect(hud).toContain(Hud.HEADER)
    expect(costLineOf(hud)).toBeUndefined()
  })

  it("given hudCost, then the HUD ends with the ledger's cost line of the session as recorded", async () => {
    const { hud, events } = await hudOf({ hudCost: true })
    expect(hud?.split("\n").at(-1)).toBe(costLineOf(hud))
    // The ledger folded from the stored log, up to the HUD's own event.
    const at = events.findIndex((e) => e._tag === "HudShown")
    const priceOf: Ledger.PriceOf = (ref) => Config.priceOf(ref)
    const want = Hud.costOf(Ledger.fold(events.slice(0, at), priceOf))
    expect(costLineOf(hud)).toBe(
      costLineOf(Hud.render({ tokens: 0, usable: 1, pivots: 0, prunedParts: 0, prunedTokens: 0, cost: want })),
    )
    const price = Config.priceOf({ providerId: "anthropic", modelId: "claude-sonnet-4" })!
    expect(costLineOf(hud)).toMatch(spentLine(spentAt(events, price)))
  })

  it("given a model's own cost (opencode.json), then the cost line prices its steps with it, not the catalog", async () => {
    const { hud, events } = await hudOf({ hudCost: true }, { ...MODEL, cost: COST })
    const catalog = Config.priceOf({ providerId: "anthropic", modelId: "claude-sonnet-4" })!
    expect(Math.round(spentAt(events, OWN))).not.toBe(Math.round(spentAt(events, catalog)))
    expect(costLineOf(hud)).toMatch(spentLine(spentAt(events, OWN)))
  })

  it("under drive, prices with the model's own cost from the call after OpenCode first gave it", async () => {
    // OpenCode gives the model whole only in the system transform, after drive's HUD of the process's first call.
    const { hooks, data, db } = await plug(fixture, { drive: true, hudCost: true })
    const call = async () => {
      const output = { messages: structuredClone(data.messages) }
      await hooks["experimental.chat.messages.transform"]({}, output)
      await hooks["experimental.chat.system.transform"](
        { sessionID: data.info.id, model: { ...MODEL, cost: COST } },
        { system: ["You are opencode."] },
      )
      return (output.messages.at(-1)!.parts[0] as unknown as { text: string }).text
    }
    await call()
    const second = await call()
    expect(costLineOf(second)).toMatch(spentLine(spentAt(await storedEvents(db, data.info.id), OWN)))
  })
})
