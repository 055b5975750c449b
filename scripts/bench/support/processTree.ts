/**
 * A process tree's memory, each address space counted once (bench:opencode --startup, ADR 0056).
 *
 * Bun starts a child process with `posix_spawn`, which clones the parent with its address space shared (`CLONE_VM`)
 * until the child calls `exec`. In that window /proc shows the child with the parent's command line and the parent's
 * memory — its `smaps_rollup` reads the same pages, PSS included — so a sample that sums the tree counts the parent
 * twice. OpenCode spawns helpers (git, ripgrep, its own binary) throughout a run, and a 50 ms sampler catches such a
 * child now and then: the runs' "two `opencode run` processes" peaks of ~1 GB were that, not a second process.
 *
 * A process whose mapping of memory is its parent's (the same virtual size, resident pages, code and stack addresses
 * in /proc/PID/stat) shares its parent's address space, and is left out of the sums.
 */

/** One process at a sample: what /proc gives of it. */
export interface Member {
  readonly pid: number
  readonly ppid: number
  readonly command: string
  readonly rss: number
  readonly pss: number
  readonly cpuMs: number
  /** Its address space as /proc/PID/stat shows it: vsize, rss (pages), startcode, endcode, startstack. */
  readonly space: string
}

/** The fields of a /proc/PID/stat line after the command (the first is the state, field 3 of proc(5)). */
export const statFields = (stat: string): ReadonlyArray<string> => stat.slice(stat.lastIndexOf(")") + 2).split(" ")

/** A process's address space from its stat fields (`statFields`): vsize, rss, startcode, endcode, startstack. */
export const spaceOf = (fields: ReadonlyArray<string>): string => [20, 21, 23, 24, 25].map((i) => fields[i]).join(" ")

/** Whether a member shares its parent's address space (a child between its spawn and its `exec`). */
export const sharesParent = (member: Member, byPid: ReadonlyMap<number, Member>): boolean =>
  byPid.get(member.ppid)?.space === member.space

/** The members counted in the tree's memory: each address space once. */
export const counted = (members: ReadonlyArray<Member>): ReadonlyArray<Member> => {
  const byPid = new Map(members.map((m) => [m.pid, m]))
  return members.filter((m) => !sharesParent(m, byPid))
}

/** The tree's summed RSS and PSS, each address space once. */
export const footprint = (members: ReadonlyArray<Member>): { readonly rss: number; readonly pss: number } => {
  let rss = 0
  let pss = 0
  for (const m of counted(members)) {
    rss += m.rss
    pss += m.pss
  }
  return { rss, pss }
}
