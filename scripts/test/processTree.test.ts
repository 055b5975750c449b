/** bench:opencode's process-tree memory: each address space counted once (a child before its exec is its parent's). */
import { describe, expect, it } from "vitest"
import { counted, footprint, type Member, spaceOf, statFields } from "../bench/support/processTree.ts"

const MB = 2 ** 20
const member = (pid: number, ppid: number, space: string, rss: number, pss = rss): Member => ({
  pid,
  ppid,
  command: `p${pid}`,
  rss: rss * MB,
  pss: pss * MB,
  cpuMs: 0,
  space,
})

/** A reference: the distinct address spaces reachable as parent → child chains of equal spaces, summed once each. */
const reference = (members: ReadonlyArray<Member>) => {
  const byPid = new Map(members.map((m) => [m.pid, m]))
  const root = (m: Member): Member => {
    const p = byPid.get(m.ppid)
    return p !== undefined && p.space === m.space ? root(p) : m
  }
  const roots = new Map(members.map((m) => [root(m).pid, root(m)]))
  return [...roots.values()].reduce((n, m) => ({ rss: n.rss + m.rss, pss: n.pss + m.pss }), { rss: 0, pss: 0 })
}

describe("footprint", () => {
  it("given a child spawned and not yet exec'd (its parent's address space), then the parent's memory is counted once", () => {
    const tree = [member(10, 1, "A", 500), member(11, 10, "A", 500)]
    expect(footprint(tree)).toEqual({ rss: 500 * MB, pss: 500 * MB })
    expect(counted(tree).map((m) => m.pid)).toEqual([10])
  })

  it("given a child whose space differs from its parent's in one field, then both are counted", () => {
    const tree = [member(10, 1, "100 50 1 2 3", 500), member(11, 10, "100 51 1 2 3", 500)]
    expect(footprint(tree)).toEqual({ rss: 1000 * MB, pss: 1000 * MB })
  })

  it("given an unrelated process with the same space figures (not its parent), then it is counted", () => {
    const tree = [member(10, 1, "A", 300), member(12, 1, "A", 300)]
    expect(footprint(tree).rss).toBe(600 * MB)
  })

  it("given trees of spawned, exec'd and nested children, then it equals the reference's one count per address space", () => {
    const spaces = ["A", "B", "C"]
    for (let seed = 1; seed <= 200; seed++) {
      let x = seed
      const next = () => {
        x = (x * 1103515245 + 12345) % 2 ** 31
        return x
      }
      const tree: Array<Member> = [member(100, 1, spaces[next() % 3]!, 100 + (next() % 400))]
      const size = 1 + (next() % 6)
      for (let i = 1; i <= size; i++) {
        const parent = tree[next() % tree.length]!
        const shares = next() % 2 === 0
        tree.push(
          member(
            100 + i,
            parent.pid,
            shares ? parent.space : spaces[next() % 3]!,
            shares ? parent.rss / MB : next() % 200,
          ),
        )
      }
      expect(footprint(tree)).toEqual(reference(tree))
    }
  })
})

describe("spaceOf", () => {
  it("reads vsize, rss, startcode, endcode and startstack (fields 23, 24, 26, 27, 28 of proc(5)) from a stat line", () => {
    // Fields 1–2 (pid, comm with a space and a parenthesis), then fields 3 … 28 numbered by their own field number.
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3))
    const line = `4242 (opencode (x) run) ${fields.join(" ")}`
    expect(spaceOf(statFields(line))).toBe("23 24 26 27 28")
  })
})
