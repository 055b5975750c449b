// Records real Claude Code and Codex CLI sessions offline, as fixtures for @pivot/agents: installs the pinned agents
// from npm into a work folder (not the repository), runs each of them non-interactively over several turns in a
// scratch git repository against the scripted model of ./model-server.ts on 127.0.0.1 (no network), so that it reads
// files, runs shell commands, edits, makes a failing call and compacts its own context, and copies the transcript the
// agent wrote (Claude Code: ~/.claude/projects/<dir>/<session>.jsonl; Codex CLI: $CODEX_HOME/sessions/…/rollout-*.jsonl)
// into packages/agents/test/fixtures/recorded/. The one edit made to a transcript is `trim` below: the agents'
// own prompt text (system prompt, tool schemas, skill and agent listings) in bookkeeping lines is cut to a marker.
//
//   npm run record:agents [-- --work /tmp/pivot-record-agents] [--out packages/agents/test/fixtures/recorded]

import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { type Answer, type Ask, startModelServer } from "./model-server.ts"

/** The agents' versions recorded; the fixtures' names carry them. */
export const CLAUDE_CODE = "2.1.332"
export const CODEX = "0.171.0"

const root = fileURLToPath(new URL("../../", import.meta.url))
const { values } = parseArgs({
  options: {
    work: { type: "string", default: path.join(os.tmpdir(), "pivot-record-agents") },
    out: { type: "string", default: path.join(root, "packages/agents/test/fixtures/recorded") },
  },
})
const work = path.resolve(values.work)
const out = path.resolve(values.out)
const scratch = path.join(work, "scratch")
const agents = path.join(work, "agents")

const say = (line: string) => process.stdout.write(`${line}\n`)

/** Installs the pinned agents with npm into the work folder (once). */
const install = () => {
  const claude = path.join(agents, "node_modules/@anthropic-ai/claude-code/package.json")
  const codex = path.join(agents, "node_modules/@openai/codex/package.json")
  const version = (file: string) => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")).version : "")
  if (version(claude) === CLAUDE_CODE && version(codex) === CODEX) return
  fs.mkdirSync(agents, { recursive: true })
  fs.writeFileSync(path.join(agents, "package.json"), '{ "name": "recorded-agents", "private": true }\n')
  say(`installing @anthropic-ai/claude-code@${CLAUDE_CODE} and @openai/codex@${CODEX} into ${agents}`)
  const result = spawnSync(
    "npm",
    ["install", "--no-audit", "--no-fund", `@anthropic-ai/claude-code@${CLAUDE_CODE}`, `@openai/codex@${CODEX}`],
    { cwd: agents, stdio: "inherit" },
  )
  if (result.status !== 0) throw new Error("npm install of the agents failed")
}

/** The native binaries the npm packages carry for this platform (linux-x64 here). */
const binaries = () => {
  const claude = path.join(agents, "node_modules/@anthropic-ai/claude-code-linux-x64/claude")
  const vendor = path.join(agents, "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
  for (const file of [claude, vendor])
    if (!fs.existsSync(file)) throw new Error(`${file} is missing: this recorder runs on linux-x64`)
  return { claude, codex: vendor }
}

const MATH = `// Small arithmetic helpers.
export function add(a, b) {
  return a + b
}

export function sub(a, b) {
  return a + b // sub
}
`
const TEST = `import assert from "node:assert/strict"
import { add, sub } from "./src/math.js"

assert.equal(add(2, 3), 5)
assert.equal(sub(5, 3), 2)
console.log("2 tests passed")
`

/** A fresh scratch repository: a package with a bug the scripted model finds and fixes. */
const makeScratch = () => {
  fs.rmSync(scratch, { recursive: true, force: true })
  fs.mkdirSync(path.join(scratch, "src"), { recursive: true })
  fs.writeFileSync(path.join(scratch, "package.json"), '{ "name": "scratch", "type": "module" }\n')
  fs.writeFileSync(path.join(scratch, "src/math.js"), MATH)
  fs.writeFileSync(path.join(scratch, "test.js"), TEST)
  const git = (...args: Array<string>) =>
    spawnSync("git", args, {
      cwd: scratch,
      env: { ...process.env, GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z", GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z" },
    })
  git("init", "-q", "-b", "main")
  git("-c", "user.name=recorder", "-c", "user.email=recorder@example.invalid", "add", ".")
  git("-c", "user.name=recorder", "-c", "user.email=recorder@example.invalid", "commit", "-q", "-m", "scratch")
}

/** Runs an agent once; fails on a non-zero exit or after 5 minutes. */
const run = (bin: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(bin, args, { cwd: scratch, env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString()
    })
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString()
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), 300_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      if (code === 0) resolve(output)
      else reject(new Error(`${path.basename(bin)} ${args.join(" ")} exited ${code}:\n${output}`))
    })
  })

const SUMMARY = [
  "The user asked what src/math.js exports and to run the tests: it exports add and sub, and node test.js failed",
  "because sub(a, b) returned a + b. Reading src/missing.js failed (no such file). sub was fixed to return a - b and",
  "the tests pass (2 tests passed). Files: src/math.js (add, sub), test.js (node:assert tests). Next: nothing pending.",
].join(" ")

/** A scripted turn: the answers to the prompt, one per tool round, the last one the final text. */
type Turn = ReadonlyArray<Answer>

/** The script both agents run, told apart only by their tools' names and inputs. */
const scripted =
  (turns: ReadonlyArray<readonly [RegExp, Turn]>, compaction: Answer) =>
  (ask: Ask): Answer => {
    if (ask.compaction) return compaction
    if (!ask.tools) return { text: "Fix the sub bug" } // a side request (a title): no tools offered
    const turn = turns.find(([prompt]) => prompt.test(ask.prompt))?.[1]
    if (turn === undefined) return { text: `(no scripted answer to: ${ask.prompt.slice(0, 80)})` }
    return turn[Math.min(ask.results.length, turn.length - 1)]!
  }

/** Extra prompt tokens reported on the last answer of a turn, so that the agent's auto-compact fires next. */
const PAD = 195_000

const recordClaudeCode = async (bin: string) => {
  const file = (name: string) => path.join(scratch, name)
  const server = await startModelServer(
    scripted(
      [
        [
          /^What does src\/math\.js export/,
          [
            { text: "Let me read it.", calls: [{ name: "Read", input: { file_path: file("src/math.js") } }] },
            { calls: [{ name: "Bash", input: { command: "node test.js", description: "Run the tests" } }] },
            { text: "src/math.js exports add and sub. The tests fail: sub(5, 3) returns 8 because sub adds." },
          ],
        ],
        [
          /^Fix sub/,
          [
            {
              text: "Checking for a second module first.",
              calls: [{ name: "Read", input: { file_path: file("src/missing.js") } }],
            },
            { calls: [{ name: "Read", input: { file_path: file("src/math.js") } }] },
            {
              calls: [
                {
                  name: "Edit",
                  input: {
                    file_path: file("src/math.js"),
                    old_string: "return a + b // sub",
                    new_string: "return a - b",
                  },
                },
              ],
            },
            { calls: [{ name: "Bash", input: { command: "node test.js", description: "Run the tests again" } }] },
            { text: "Fixed: sub now returns a - b, and both tests pass." },
          ],
        ],
        [
          /^Add a test/,
          [
            {
              calls: [
                {
                  name: "Edit",
                  input: {
                    file_path: file("test.js"),
                    old_string: "assert.equal(sub(5, 3), 2)",
                    new_string: "assert.equal(sub(5, 3), 2)\nassert.equal(sub(0, 5), -5)",
                  },
                },
              ],
            },
            { calls: [{ name: "Bash", input: { command: "node test.js", description: "Run the tests" } }] },
            { text: "Added the test of sub(0, 5); the tests pass.", padTokens: PAD },
          ],
        ],
        [/^What did we change/, [{ text: "sub in src/math.js now subtracts, and test.js checks sub(0, 5) too." }]],
      ],
      { text: `<summary>\n${SUMMARY}\n</summary>` },
    ),
  )
  const home = path.join(work, "home-claude")
  fs.rmSync(home, { recursive: true, force: true })
  fs.mkdirSync(home, { recursive: true })
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "sk-ant-offline-recording",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  }
  const common = [
    "--model",
    "claude-sonnet-4-6",
    "--allowedTools",
    "Read,Edit,Write,Bash",
    "--permission-mode",
    "acceptEdits",
  ]
  try {
    for (const [i, prompt] of [
      "What does src/math.js export? Then run the tests with node test.js.",
      "Fix sub, then run the tests again.",
      "/compact",
      "Add a test of sub(0, 5) and run the tests.",
      "What did we change?",
    ].entries()) {
      say(`claude -p ${JSON.stringify(prompt)}`)
      await run(bin, ["-p", prompt, ...(i === 0 ? [] : ["--continue"]), ...common], env)
    }
  } finally {
    fs.writeFileSync(path.join(work, "claude-code-requests.json"), JSON.stringify(server.requests, null, 1))
    await server.close()
  }
  const projects = path.join(home, ".claude/projects")
  const files = (fs.readdirSync(projects, { recursive: true, encoding: "utf8" }) as Array<string>)
    .filter((f) => f.endsWith(".jsonl") && !f.includes("subagents"))
    .map((f) => path.join(projects, f))
  if (files.length !== 1) throw new Error(`expected one Claude Code session, found ${files.join(", ") || "none"}`)
  return files[0]!
}

const recordCodex = async (bin: string) => {
  const exec = (cmd: string) => ({ name: "exec_command", input: { cmd } })
  const server = await startModelServer(
    scripted(
      [
        [
          /^What does src\/math\.js export/,
          [
            { text: "Let me read it.", calls: [exec("cat src/math.js")] },
            { calls: [exec("node test.js")] },
            { text: "src/math.js exports add and sub. The tests fail: sub(5, 3) returns 8 because sub adds." },
          ],
        ],
        [
          /^Fix sub/,
          [
            { text: "Checking for a second module first.", calls: [exec("cat src/missing.js")] },
            { calls: [{ name: "shell", input: { command: ["bash", "-lc", "ls src"] } }] },
            { calls: [exec("sed -i 's|return a + b // sub|return a - b|' src/math.js")] },
            { calls: [exec("node test.js")] },
            { text: "Fixed: sub now returns a - b, and both tests pass.", padTokens: PAD },
          ],
        ],
        [
          /^Add a test/,
          [
            { calls: [exec("sed -i 's|^assert.equal(sub(5, 3), 2)$|&\\nassert.equal(sub(0, 5), -5)|' test.js")] },
            { calls: [exec("node test.js")] },
            { text: "Added the test of sub(0, 5); the tests pass.", padTokens: PAD },
          ],
        ],
        [/^What did we change/, [{ text: "sub in src/math.js now subtracts, and test.js checks sub(0, 5) too." }]],
      ],
      { text: SUMMARY },
    ),
  )
  const home = path.join(work, "home-codex")
  const codexHome = path.join(home, ".codex")
  fs.rmSync(home, { recursive: true, force: true })
  fs.mkdirSync(codexHome, { recursive: true })
  fs.writeFileSync(
    path.join(codexHome, "config.toml"),
    [
      'model = "gpt-5.1-codex"',
      'model_provider = "scripted"',
      "model_auto_compact_token_limit = 100000",
      "",
      "[model_providers.scripted]",
      'name = "scripted model on 127.0.0.1"',
      `base_url = "${server.url}/v1"`,
      'wire_api = "responses"',
      'env_key = "SCRIPTED_API_KEY"',
      "",
    ].join("\n"),
  )
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    CODEX_HOME: codexHome,
    SCRIPTED_API_KEY: "offline",
  }
  const common = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
  try {
    for (const [i, prompt] of [
      "What does src/math.js export? Then run the tests with node test.js.",
      "Fix sub, then run the tests again.",
      "Add a test of sub(0, 5) and run the tests.",
      "What did we change?",
    ].entries()) {
      say(`codex exec ${i === 0 ? "" : "resume --last "}${JSON.stringify(prompt)}`)
      await run(bin, i === 0 ? ["exec", ...common, prompt] : ["exec", "resume", "--last", ...common, prompt], env)
    }
  } finally {
    fs.writeFileSync(path.join(work, "codex-requests.json"), JSON.stringify(server.requests, null, 1))
    await server.close()
  }
  const sessions = path.join(codexHome, "sessions")
  const files = (fs.readdirSync(sessions, { recursive: true, encoding: "utf8" }) as Array<string>)
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => path.join(sessions, f))
  if (files.length !== 1) throw new Error(`expected one Codex rollout, found ${files.join(", ") || "none"}`)
  return files[0]!
}

/** Strings longer than this in a trimmed line are cut to a marker. */
const LONG = 240

/**
 * The one edit made to a recorded transcript: in the agents' bookkeeping lines that copy their own prompt text
 * (Claude Code's `attachment` lines and `api-request-shape`; Codex's `session_meta` and `world_state`), each string
 * longer than LONG characters becomes `[trimmed by record-agents: N characters]`. That text is the agent's (its
 * system prompt, tool schemas, skill and agent listings, hundreds of KB per session), not the session's; every line
 * stays, with its type and every other field, and the lines pivot imports are byte for byte as the agent wrote them.
 */
export const trim = (text: string): string =>
  text
    .split("\n")
    .map((raw) => {
      if (raw === "") return raw
      const line = JSON.parse(raw) as Record<string, unknown>
      const bulky =
        line.type === "attachment" ||
        line.type === "api-request-shape" ||
        line.type === "session_meta" ||
        line.type === "world_state"
      if (!bulky) return raw
      const cut = (value: unknown): unknown =>
        typeof value === "string"
          ? value.length > LONG
            ? `[trimmed by record-agents: ${value.length} characters]`
            : value
          : Array.isArray(value)
            ? value.map(cut)
            : typeof value === "object" && value !== null
              ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v)]))
              : value
      return JSON.stringify(cut(line))
    })
    .join("\n")

const main = async () => {
  install()
  const bin = binaries()
  fs.mkdirSync(out, { recursive: true })
  makeScratch()
  const claude = await recordClaudeCode(bin.claude)
  const claudeOut = path.join(out, `claude-code-${CLAUDE_CODE}.jsonl`)
  fs.writeFileSync(claudeOut, trim(fs.readFileSync(claude, "utf8")))
  say(`${claude} → ${path.relative(root, claudeOut)} (${fs.statSync(claudeOut).size} bytes)`)
  makeScratch()
  const codex = await recordCodex(bin.codex)
  const codexOut = path.join(out, `codex-${CODEX}.jsonl`)
  fs.writeFileSync(codexOut, trim(fs.readFileSync(codex, "utf8")))
  say(`${codex} → ${path.relative(root, codexOut)} (${fs.statSync(codexOut).size} bytes)`)
}

await main()
