/** The storage contract: golden fixtures of every event version keep decoding, and re-encode to the same JSON. */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Events } from "@pivot/core"
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { generatedArb } from "./support/sessions.ts"

const dir = join(import.meta.dirname, "fixtures/events")
const fixtures = readdirSync(dir).filter((f) => f.endsWith(".json"))

describe("golden event fixtures", () => {
  it("every event type has a fixture at its current version", () => {
    for (const type of Events.types) expect(fixtures).toContain(`${type}.v${Events.versions[type]}.json`)
  })

  for (const file of fixtures) {
    it(`${file} decodes to its type and re-encodes to the same JSON`, () => {
      const json = JSON.parse(readFileSync(join(dir, file), "utf8"))
      const event = Events.decode(json)
      // `<Type>.v<N>.json`, or `<Type>.v<N>.<variant>.json` for the same version with its optional fields set.
      expect(file.replace(/^(\w+\.v\d+)\.[a-z-]+\.json$/, "$1.json")).toBe(
        `${event._tag}.v${Events.versions[event._tag]}.json`,
      )
      expect(Events.encode(event)).toEqual(json)
    })
  }

  it("a malformed event fails with an error naming the bad path", () => {
    const json = JSON.parse(readFileSync(join(dir, "PartCompacted.v1.json"), "utf8"))
    expect(() => Events.decode({ ...json, tokens: "many" })).toThrow(/tokens/)
    expect(() => Events.decode({ ...json, _tag: "PartDeleted" })).toThrow()
  })
})

// `Events.encode` goes straight to the event's own type's schema; the reference is the union's encoder.
describe("Events.encode", () => {
  const union = Schema.encodeSync(Events.Event)
  const sameAsUnion = (event: Events.Event) => {
    const encoded = Events.encode(event)
    expect(encoded).toStrictEqual(union(event))
    expect(JSON.stringify(encoded)).toBe(JSON.stringify(union(event)))
  }

  it("given every golden fixture, then it encodes what the union's encoder does", () => {
    for (const file of fixtures) sameAsUnion(Events.decode(JSON.parse(readFileSync(join(dir, file), "utf8"))))
  })

  it("property: on the events of generated sessions, it encodes what the union's encoder does", () => {
    fc.assert(
      fc.property(generatedArb(30), (generated) => {
        for (const event of generated.events) sameAsUnion(event)
      }),
      { numRuns: 60 },
    )
  })

  it("given an invalid event, then it fails with the union's error", () => {
    const json = JSON.parse(readFileSync(join(dir, "PartCompacted.v1.json"), "utf8"))
    for (const bad of [
      { ...json, tokens: "many" },
      { ...json, _tag: "PartDeleted" },
      { ...json, _tag: "constructor" },
    ]) {
      const reference = (() => {
        try {
          union(bad)
        } catch (error) {
          return (error as Error).message
        }
        throw new Error("the union encoded an invalid event")
      })()
      expect(() => Events.encode(bad)).toThrow(reference)
    }
  })
})

describe("Events.title", () => {
  const started = (title?: string): Events.Event => ({
    _tag: "SessionStarted",
    sessionId: "ses_t" as never,
    at: 1,
    ...(title === undefined ? {} : { title }),
  })
  const titled = (title: string): Events.Event => ({ _tag: "SessionTitled", at: 2, title })
  const hud: Events.Event = { _tag: "HudShown", at: 3, text: "hud" }

  it("given no title event, then there is no title; given SessionStarted's, then that one", () => {
    expect([hud].reduce(Events.title, undefined)).toBeUndefined()
    expect([started(), hud].reduce(Events.title, undefined)).toBeUndefined()
    expect([started("New session - x"), hud].reduce(Events.title, undefined)).toBe("New session - x")
  })

  it("given SessionTitled events, then the newest stands, whatever comes after it", () => {
    expect([started("New session - x"), titled("Fix it")].reduce(Events.title, undefined)).toBe("Fix it")
    expect([started(), titled("A"), hud, titled("B"), hud].reduce(Events.title, undefined)).toBe("B")
  })
})
