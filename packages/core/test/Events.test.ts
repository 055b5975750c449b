/** The storage contract: golden fixtures of every event version keep decoding, and re-encode to the same JSON. */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Events } from "@pivot/core"
import { describe, expect, it } from "vitest"

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
      expect(`${event._tag}.v${Events.versions[event._tag]}.json`).toBe(file)
      expect(Events.encode(event)).toEqual(json)
    })
  }

  it("a malformed event fails with an error naming the bad path", () => {
    const json = JSON.parse(readFileSync(join(dir, "PartCompacted.v1.json"), "utf8"))
    expect(() => Events.decode({ ...json, tokens: "many" })).toThrow(/tokens/)
    expect(() => Events.decode({ ...json, _tag: "PartDeleted" })).toThrow()
  })
})
