// Deterministic file contents for the real-binary tests: large enough that OpenCode prunes their reads.

/** ~45 KB of distinct, deterministic words (OpenCode's read returns at most 50 KB); `word` inserted in file 1. */
export const fileText = (n: number, word?: string): string => {
  const lines: Array<string> = []
  let seed = n * 7919
  for (let line = 0; line < 600; line++) {
    const words: Array<string> = []
    for (let w = 0; w < 10; w++) {
      seed = (seed * 1103515245 + 12345) % 2147483648
      words.push(`w${n}x${seed.toString(36)}`)
    }
    if (word !== undefined && n === 1 && line === 300) words.push(word)
    lines.push(words.join(" "))
  }
  return `${lines.join("\n")}\n`
}

/** `count` such files by name, `f1.txt` … (`word` in f1.txt). */
export const files = (count: number, word?: string): Record<string, string> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i + 1}.txt`, fileText(i + 1, word)]))
