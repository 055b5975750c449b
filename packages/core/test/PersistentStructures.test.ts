/** The fold's persistent structures behave as immutable values, whichever version is read or extended. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { PersistentMap } from "../src/internal/PersistentMap.ts"
import * as Seq from "../src/internal/Seq.ts"
import { RUNS } from "./support/runs.ts"

type Op = { readonly from: number; readonly key: number; readonly value: number }

describe("PersistentMap", () => {
  it("every version keeps its own contents, even after older versions are read and extended (a reference Map per version)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ from: fc.nat(), key: fc.nat(20), value: fc.integer() }), { maxLength: 60 }),
        (ops: ReadonlyArray<Op>) => {
          const versions = [PersistentMap.empty<number, number>()]
          const models = [new Map<number, number>()]
          for (const op of ops) {
            const at = op.from % versions.length
            versions.push(versions[at]!.set(op.key, op.value))
            models.push(new Map(models[at]!).set(op.key, op.value))
          }
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
