/** The fold's persistent structures behave as immutable values, whichever version is read or extended. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { PersistentMap } from "../src/internal/PersistentMap.ts"
import * as Seq from "../src/internal/Seq.ts"
import { RUNS } from "./support/runs.ts"

type Op = { readonly from: number; readonly key: number; readonly value: number }

/** Each op extends an earlier version (`from`, modulo the count); beside each version, a reference Map of its contents. */
const versionsOf = (ops: ReadonlyArray<Op>) => {
  const versions = [PersistentMap.empty<number, number>()]
  const models = [new Map<number, number>()]
  for (const op of ops) {
    const at = op.from % versions.length
    versions.push(versions[at]!.set(op.key, op.value))
    models.push(new Map(models[at]!).set(op.key, op.value))
  }
  return { versions, models }
}

describe("PersistentMap", () => {
  it("every version keeps its own contents, even after older versions are read and extended (a reference Map per version)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ from: fc.nat(), key: fc.nat(20), value: fc.integer() }), { maxLength: 60 }),
        (ops: ReadonlyArray<Op>) => {
          const { versions, models } = versionsOf(ops)
          // Read versions in a scrambled order: each read may move the shared map.
          for (let i = versions.length - 1; i >= 0; i -= 2) expect(snapshot(versions[i]!)).toEqual(models[i])
          for (let i = 0; i < versions.length; i++) {
            expect(snapshot(versions[i]!)).toEqual(models[i])
            expect(versions[i]!.size).toBe(models[i]!.size)
          }
        },
      ),
      RUNS,
    )
  })
})

describe("PersistentMap.keysChangedSince", () => {
  it("lists every key whose value differs between two versions, whichever version holds the map (a reference Map per version)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ from: fc.nat(), key: fc.nat(20), value: fc.integer() }), { maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 70 }),
        (ops: ReadonlyArray<Op>, reads, a, b, limit) => {
          const { versions, models } = versionsOf(ops)
          // Some versions read first: the shared map moves there.
          for (const r of reads) versions[r % versions.length]!.get(0)
          const older = versions[a % versions.length]!
          const newer = versions[b % versions.length]!
          const changed = newer.keysChangedSince(older, limit)
          if (changed === undefined) return
          expect(changed.length).toBeLessThanOrEqual(2 * limit)
          const before = models[a % versions.length]!
          const after = models[b % versions.length]!
          for (let key = 0; key <= 20; key++)
            if (before.get(key) !== after.get(key) || before.has(key) !== after.has(key)) expect(changed).toContain(key)
        },
      ),
      RUNS,
    )
  })

  it("answers the keys set since along one lineage, and undefined past the limit or across lineages", () => {
    const v0 = PersistentMap.empty<string, number>().set("a", 1)
    const v1 = v0.set("b", 2)
    const v2 = v1.set("a", 3)
    expect(v2.keysChangedSince(v0, 10)?.sort()).toEqual(["a", "b"])
    expect(v2.keysChangedSince(v2, 10)).toEqual([])
    expect(v2.keysChangedSince(v0, 1)).toBeUndefined()
    expect(v2.keysChangedSince(PersistentMap.empty<string, number>().set("a", 3), 10)).toBeUndefined()
    // Reading the old version moves the map there: the answer is found from the other side.
    expect(v0.get("a")).toBe(1)
    expect(v2.keysChangedSince(v0, 10)?.sort()).toEqual(["a", "b"])
  })
})

const snapshot = (map: PersistentMap<number, number>) => {
  const out = new Map<number, number>()
  for (let key = 0; key <= 20; key++) if (map.has(key)) out.set(key, map.get(key)!)
  return out
}

describe("Seq", () => {
  it("appending to an old version never changes a newer one (branches copy their prefix)", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ from: fc.nat(), value: fc.integer() }), { maxLength: 60 }), (ops) => {
        const versions = [Seq.empty<number>()]
        const models: Array<Array<number>> = [[]]
        for (const op of ops) {
          const at = op.from % versions.length
          versions.push(Seq.append(versions[at]!, op.value))
          models.push([...models[at]!, op.value])
        }
        for (let i = 0; i < versions.length; i++) expect(Seq.toArray(versions[i]!)).toEqual(models[i])
      }),
      RUNS,
    )
  })
})

describe("PersistentMap sharing", () => {
  it("two folds from the same empty initial state do not share a map (each extends its own newest version)", () => {
    const initial = PersistentMap.empty<number, number>()
    let a = initial
    let b = initial
    for (let i = 0; i < 1000; i++) {
      a = a.set(i, i)
      b = b.set(i, -i)
    }
    expect(a.get(999)).toBe(999)
    expect(b.get(999)).toBe(-999)
    expect(initial.size).toBe(0)
    expect(initial.has(0)).toBe(false)
  })
})
