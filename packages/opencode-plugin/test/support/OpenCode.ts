// The real OpenCode (npm `opencode-ai`, its linux binary) run headless and offline: a scratch git repository, HOME and
// XDG_* in a temporary folder, an opencode.json whose only provider is the scripted model, and this package's built
// plugin loaded from a file:// URL.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { pluginApiInstalled } from "../../../opencode/test/oracle/opencode.ts"

const here = Path.dirname(fileURLToPath(import.meta.url))
/** The repository root. */
export const ROOT = Path.resolve(here, "../../../..")
/** The built plugin OpenCode loads. */
export const PLUGIN = Path.join(ROOT, "packages/opencode-plugin/dist/index.js")

/** The OpenCode binary of the `opencode-ai` devDependency (its platform package). */
export const binary = (): string => {
  const require = createRequire(import.meta.url)
  const pkg = `opencode-${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`
  return Path.join(Path.dirname(require.resolve(`${pkg}/package.json`)), "bin", "opencode")
}

/** Builds the packages' dist/ (the plugin is loaded from there, as a user's OpenCode would). */
export const build = () => execFileSync(process.execPath, [Path.join(ROOT, "scripts/build.mjs")], { stdio: "pipe" })

/** A scratch project with its own OpenCode home. */
export interface Project {
  readonly dir: string
  readonly home: string
  readonly env: NodeJS.ProcessEnv
}

/** A scratch git repository configured for the scripted model at `port`, with the plugin (and its options) and `config`. */
export const project = (
  port: number,
  config: Record<string, unknown> = {},
  pluginOptions?: Record<string, unknown>,
  options: { readonly pluginApi?: boolean } = {},
): Project => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-opencode-"))
  const dir = Path.join(root, "project")
  const home = Path.join(root, "home")
  Fs.mkdirSync(dir, { recursive: true })
  Fs.mkdirSync(home, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: dir })
  Fs.writeFileSync(
    Path.join(dir, "opencode.json"),
    JSON.stringify(
      {
        $schema: "https://opencode.ai/config.json",
        provider: {
          scripted: {
            npm: "@ai-sdk/openai-compatible",
            options: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "x" },
            models: { model: { limit: { context: 200_000, output: 4_000 } } },
          },
        },
        plugin: [
          pluginOptions === undefined ? pathToFileURL(PLUGIN).href : [pathToFileURL(PLUGIN).href, pluginOptions],
        ],
        ...config,
      },
      null,
      2,
    ),
  )
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: Path.join(home, ".config"),
    XDG_DATA_HOME: Path.join(home, ".local/share"),
    XDG_CACHE_HOME: Path.join(home, ".cache"),
    XDG_STATE_HOME: Path.join(home, ".local/state"),
    OPENCODE_DISABLE_AUTOUPDATE: "1",
  }
  // What OpenCode installs on its first start with network: without it, each run waits ~70 s for a failing install.
  if (options.pluginApi !== false) pluginApiInstalled(env.XDG_CONFIG_HOME!)
  return { dir, home, env }
}

/** What a run printed. */
export interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `opencode ARGS` in the project; `started` receives the child (to kill it). */
export const opencode = (
  p: Project,
  args: ReadonlyArray<string>,
  started?: (child: ChildProcess) => void,
): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn(binary(), args, { cwd: p.dir, env: p.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8")
    })
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString("utf8")
    })
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
    started?.(child)
  })

/** A running `opencode serve` (the plugin lives in it; runs attach to it, so its background work, e.g. prune, ends). */
export interface Server {
  readonly url: string
  /** SIGTERM, then waits for the exit. */
  readonly stop: () => Promise<void>
  /** SIGKILL: OpenCode dies on the spot, as in a crash. */
  readonly kill: () => void
}

/** Starts `opencode serve` on a free loopback port. */
export const serve = (p: Project): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child = spawn(binary(), ["serve", "--port", "0", "--hostname", "127.0.0.1"], {
      cwd: p.dir,
      env: p.env,
      stdio: ["ignore", "pipe", "pipe"],
    })
    let out = ""
    const exited = new Promise<void>((done) => child.on("close", () => done()))
    const timer = setTimeout(() => reject(new Error(`opencode serve did not start: ${out}`)), 120_000)
    child.on("error", reject)
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8")
      const url = /listening on (http:\/\/[^\s]+)/.exec(out)?.[1]
      if (url !== undefined) {
        clearTimeout(timer)
        resolve({
          url,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
            await exited
          },
          kill: () => {
            child.kill("SIGKILL")
          },
        })
      }
    })
    child.stderr.resume()
  })

/** `opencode run MESSAGE` with the scripted model, in session `session` when given; fails on a non-zero exit. */
export const run = async (p: Project, message: string, session?: string, attach?: string): Promise<Ran> => {
  const ran = await opencode(p, [
    "run",
    message,
    "-m",
    "scripted/model",
    "--title",
    "scripted",
    "--format",
    "json",
    ...(session === undefined ? [] : ["--session", session]),
    ...(attach === undefined ? [] : ["--attach", attach]),
  ])
  if (ran.code !== 0) throw new Error(`opencode run exited ${ran.code}: ${ran.stderr.slice(-2000)}`)
  return ran
}

/** The session id a `--format json` run printed. */
export const sessionOf = (ran: Ran): string => {
  const found = /"sessionID"\s*:\s*"(ses_[A-Za-z0-9]+)"/.exec(ran.stdout)
  if (found === null) throw new Error(`no session id in: ${ran.stdout.slice(0, 500)}`)
  return found[1]!
}

/** `opencode export SESSION`, parsed. Written to a file: through a pipe, the binary's exit cuts long output short. */
export const exportSession = async (p: Project, session: string): Promise<unknown> => {
  const file = Path.join(p.home, `export-${session}.json`)
  const out = Fs.openSync(file, "w")
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(binary(), ["export", session], { cwd: p.dir, env: p.env, stdio: ["ignore", out, "ignore"] })
      child.on("error", reject)
      child.on("close", resolve)
    })
    if (code !== 0) throw new Error(`opencode export exited ${code}`)
  } finally {
    Fs.closeSync(out)
  }
  const text = Fs.readFileSync(file, "utf8")
  return JSON.parse(text.slice(text.indexOf("{")))
}
