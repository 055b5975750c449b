/**
 * A scripted judge's reading: it answers each numbered question of a probes prompt (`Probe.prompt`) with the
 * summary's lines of the matching kind ("Edited …", "Read …", "Ran …", "Error: …", "Asked: …"), else "unknown" —
 * as a model answering from the prompt it receives would, with no knowledge of the expected artifacts.
 */
export const answerFromPrompt = (prompt: string): string => {
  const summary = prompt.split("<summary>\n")[1]?.split("\n</summary>")[0] ?? ""
  const lines = summary.split("\n")
  return [...prompt.matchAll(/^\[(\d+)\] (.*)$/gm)]
    .map(([, n, question]) => {
      const q = question ?? ""
      const prefix = /\bedit\b/.test(q)
        ? "Edited "
        : /\bread\b/.test(q)
          ? "Read "
          : /commands/.test(q)
            ? "Ran "
            : /errors/.test(q)
              ? "Error: "
              : /user ask/.test(q)
                ? "Asked: "
                : undefined
      const found =
        prefix === undefined ? [] : lines.filter((l) => l.startsWith(prefix)).map((l) => l.slice(prefix.length))
      return `[${n}] ${found.length === 0 ? "unknown" : found.join(", ")}`
    })
    .join("\n")
}
