// The consumer check's viewer run: `npx pivot serve <db> --port 0` from the installed packages, then the sessions page
// and the JSON API over real HTTP. Prints "serve ok" and exits 0, or says what failed and exits 1.
import { spawn } from "node:child_process"

const db = process.argv[2]
// Its own process group, so that stopping it stops the server itself and not only npx.
const child = spawn("npx", ["--no-install", "pivot", "serve", db, "--port", "0"], {
  stdio: ["ignore", "pipe", "pipe"],
  detached: true,
})
const stop = () => {
  try {
    process.kill(-child.pid, "SIGTERM")
  } catch {}
}
let output = ""
let answered = false
const fail = (why) => {
  stop()
  console.log(`serve FAILED: ${why}; it printed: ${output.split("\n").slice(0, 3).join(" | ")}`)
  process.exit(1)
}
const timer = setTimeout(() => fail("no address within 60 s"), 60_000)
child.stderr.on("data", (chunk) => {
  output += chunk
})
child.stdout.on("data", async (chunk) => {
  output += chunk
  const url = /on (http:\/\/\S+)/.exec(output)?.[1]
  if (url === undefined || answered) return
  answered = true
  clearTimeout(timer)
  try {
    const page = await fetch(new URL("/", url))
    if (page.status !== 200) return fail(`GET / answered ${page.status}`)
    const api = await fetch(new URL("/api/sessions", url))
    const { sessions } = await api.json()
    if (!Array.isArray(sessions) || sessions.length === 0) return fail("GET /api/sessions listed no session")
    stop()
    console.log(`serve ok (${sessions.length} session, ${sessions[0].pivots} pivots)`)
    process.exit(0)
  } catch (error) {
    fail(String(error?.message ?? error))
  }
})
child.on("exit", (code) => {
  if (!answered) fail(`the server exited (${code}) before answering`)
})
