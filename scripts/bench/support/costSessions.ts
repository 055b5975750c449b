// The sessions `bench:cost` generates (issue 20, part 6; issue 30): requests naming a module, 2–5 steps each reading
// files of 0.5–4k tokens, editing, running tests, 15% of test runs failing; 1–3 minutes between turns. With `returns`,
// that share of turns (from the third on) also comes back to the file an earlier turn worked on: its first step needs
// that file's content again, which the scripted model reads only when the prompt no longer shows it (`returnsTo`).

/** A tool call as it ended. */
export interface Tool {
  readonly tool: string
  readonly input: Record<string, unknown>
  readonly output: string
  readonly error?: string
}

/** A model step: its tool calls, its text, when it ended. */
export interface Step {
  readonly tools: ReadonlyArray<Tool>
  readonly text: string
  readonly at: number
}

/** A user turn: its request, when it was sent, and the steps that answered it. */
export interface Turn {
  readonly request: string
  readonly at: number
  readonly steps: ReadonlyArray<Step>
  /**
   * A returning turn: the read of an earlier turn's file (the same path and content as that turn read it), which the
   * turn's first step needs again. The bench reads it in that step only when the prompt no longer shows the content.
   */
  readonly returnsTo?: Tool | undefined
  /** The turn (0-based) whose file it returns to. */
  readonly returnsToTurn?: number | undefined
}

/** The bench's seeded generator (mulberry32). */
export const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const AREAS = ["parser", "router", "limiter", "scheduler", "cache", "billing", "auth", "exporter", "indexer", "mailer"]
const VERBS = ["Fix", "Refactor", "Speed up", "Document", "Add tests for", "Harden"]

/** The first turn (0-based) that may return to an earlier one: two turns before it, so there is an older one. */
export const FIRST_RETURN = 2

/** What a generated session is drawn with. */
export interface Options {
  readonly turns: number
  /** Share of turns after an 8-minute break (past the cache's 5 minutes). */
  readonly breaks: number
  /** Share of turns from `FIRST_RETURN` on that come back to an earlier turn's file; default 0. */
  readonly returns?: number | undefined
}

/**
 * A generated session. The returning turns are drawn from a generator of their own (seeded from `seed`), after the
 * session's own draws, so a session with `returns` is the same session as without — the same turns, steps, files and
 * times — with some turns also returning to an earlier file. The turn returned to is any turn before the previous one
 * (uniformly), so what it read is at least one turn old.
 */
export const generate = (seed: number, options: Options): ReadonlyArray<Turn> => {
  const random = mulberry32(seed)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!
  const code = (file: string, chars: number) => {
    const lines: Array<string> = []
    for (let n = 0; lines.join("\n").length < chars; n++)
      lines.push(`export const ${file.replace(/\W/g, "_")}_${n} = (x${n}: number) => x${n} * ${n} // ${file}`)
    return lines.join("\n")
  }
  let at = 1_767_000_000_000
  const turns: Array<Turn> = []
  for (let t = 0; t < options.turns; t++) {
    const area = pick(AREAS)
    const file = `src/${area}/${area}${t}.ts`
    // Between turns: a minute to three; with `breaks`, that share of turns after an 8-minute break (past the cache's
    // 5 minutes, which favours a strategy that clears the window on a cold cache). The draw is made either way, so
    // the sessions are the same but for their gaps.
    const pause = random() < options.breaks
    at += pause ? 8 * 60_000 : 60_000 + Math.floor(random() * 120_000)
    const request = `${pick(VERBS)} the ${area} module: ${file} mishandles case${t}x${seed}; keep the public API of ${area}${t}`
    const steps: Array<Step> = []
    const count = 2 + Math.floor(random() * 4)
    for (let s = 0; s < count; s++) {
      at += 10_000 + Math.floor(random() * 30_000)
      const last = s === count - 1
      const tools: Array<Tool> = last
        ? []
        : [
            {
              tool: "read",
              input: { filePath: s === 0 ? file : `src/${area}/helper${t}_${s}.ts` },
              output: code(file, 2_000 + Math.floor(random() * 14_000)),
            },
            ...(random() < 0.6
              ? [
                  {
                    tool: "edit",
                    input: { filePath: file, oldString: `case${t}`, newString: `case${t}Fixed` },
                    output: "Edit applied.",
                  },
                ]
              : []),
            random() < 0.15
              ? {
                  tool: "bash",
                  input: { command: `npm test -- ${area}${t}` },
                  output: "",
                  error: `TypeError: ${area}${t} is not a function`,
                }
              : {
                  tool: "bash",
                  input: { command: `npm test -- ${area}${t}` },
                  output: `PASS test/${area}${t}.test.ts\n${"  ✓ case\n".repeat(40)}`,
                },
          ]
      steps.push({ tools, text: last ? "Done; the change is in place and the tests pass." : "Looking into it.", at })
    }
    turns.push({ request, at, steps })
  }
  return withReturns(turns, seed, options.returns ?? 0)
}

/**
 * The turns with `share` of those from `FIRST_RETURN` on returning to an earlier turn's file (drawn from their own
 * generator): the request names the file, and `returnsTo` is that turn's first read (its path and content).
 */
export const withReturns = (turns: ReadonlyArray<Turn>, seed: number, share: number): ReadonlyArray<Turn> => {
  if (share <= 0) return turns
  const random = mulberry32(seed ^ 0x5e55_1011)
  return turns.map((turn, t) => {
    // Both draws are made for every turn, so the turns that return do not shift with the share.
    const returns = random() < share
    const to = Math.floor(random() * Math.max(1, t - 1))
    const read = turns[to]?.steps[0]?.tools[0]
    if (!returns || t < FIRST_RETURN || read === undefined || read.tool !== "read") return turn
    const path = String(read.input.filePath)
    return {
      ...turn,
      request: `${turn.request}; it calls ${path} again, which turn ${to + 1} changed: check the two still agree`,
      returnsTo: read,
      returnsToTurn: to,
    }
  })
}
