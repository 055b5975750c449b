/** Crash tests' shared harness: run a writer process, SIGKILL it at a random point, answer the "ack …" lines it printed. */
import { spawn } from "node:child_process"

/** When to kill: after this many acks (0: during start-up), then after this many milliseconds. */
export interface KillPlan {
  readonly acks: number
  readonly delay: number
}

/** Runs `node --conditions=@pivot/source <args>` and kills it by plan; resolves with the fields of each acknowledged line (after "ack"). */
export const runAndKill = (
  args: ReadonlyArray<string>,
  plan: KillPlan,
  safetyMs: number,
): Promise<ReadonlyArray<ReadonlyArray<string>>> =>
  runAndKillPrinting(args, plan, safetyMs).then((lines) =>
    lines.filter((line) => line[0] === "ack").map((line) => line.slice(1)),
  )

/** As `runAndKill` (the kill counted in "ack" lines), resolving with every line the writer printed, split in fields. */
export const runAndKillPrinting = (
  args: ReadonlyArray<string>,
  plan: KillPlan,
  safetyMs: number,
): Promise<ReadonlyArray<ReadonlyArray<string>>> =>
  new Promise((resolve, reject) => {
    // The child runs the sources, as the tests do: `@pivot/*` imports resolve through the "@pivot/source" condition.
    const child = spawn(process.execPath, ["--conditions=@pivot/source", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    })
    let out = ""
    let err = ""
    let scheduled = false
    const kill = () => child.kill("SIGKILL")
    const safety = setTimeout(kill, safetyMs)
    const schedule = () => {
      scheduled = true
      setTimeout(kill, plan.delay)
    }
    const acked = () => out.split("\n").filter((line) => line.startsWith("ack "))
    if (plan.acks === 0) schedule()
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      out += chunk
      if (!scheduled && acked().length >= plan.acks) schedule()
    })
    child.stderr.on("data", (chunk) => {
      err += chunk
    })
    child.on("close", (code, signal) => {
      clearTimeout(safety)
      if (signal !== "SIGKILL")
        return reject(new Error(`writer ${args.join(" ")} ended by itself (code ${code}): ${err}`))
      // The last line may be cut by the kill: only whole lines count.
      const whole = out.slice(0, out.lastIndexOf("\n") + 1)
      resolve(
        whole
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => line.split(" ")),
      )
    })
  })
