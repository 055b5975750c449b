// Preloaded (`node --import`) into each `pivot` process scripts/bench/cli-start.ts starts: when the process exits, it
// writes the CPU time (user + system, all threads) and the peak RSS it used, as one JSON line on file descriptor 3
// (the benchmark's pipe), so the command's own output is left as it is. Plain JavaScript: nothing to strip.
import * as fs from "node:fs"

process.on("exit", () => {
  const usage = process.resourceUsage()
  fs.writeSync(
    3,
    JSON.stringify({ cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, maxRssMb: usage.maxRSS / 1024 }),
  )
})
