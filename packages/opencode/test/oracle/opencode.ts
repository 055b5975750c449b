/**
 * Runs the real OpenCode binary (npm `opencode-ai`, a root devDependency) headless and offline: a scratch git
 * repository, `HOME` and `XDG_*` in a temporary folder, one OpenAI-compatible provider pointing at a loopback
 * scripted model (`model-server.ts`), and OpenCode's network features switched off by its own environment toggles.
 *
 * The one harness of every test and script that runs the binary: the oracle (`capture.ts`), the OpenCode plugin's
 * slow tests (`packages/opencode-plugin/test/support/OpenCode.ts`, which adds its built plugin) and
 * `npm run bench:opencode`.
 */
import { execFileSync, spawn } from "node:child_process"
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

/** The OpenCode version the harness and the fixtures are pinned to (root package.json's `opencode-ai`). */
export const OPENCODE_VERSION = "1.18.33"

/** The provider and model id the scripted model is configured under. */
export const MODEL = "scripted/scripted"

const require = createRequire(import.meta.url)

/**
 * The platform binary. Read from the platform package itself rather than `opencode-ai/bin`, which only a postinstall
 * script fills in (and `npm ci --ignore-scripts` skips it).
 */
export const binaryPath = (): string => {
  const os = process.platform === "win32" ? "windows" : process.platform
  const base = `opencode-${os}-${process.arch}`
  const exe = process.platform === "win32" ? "opencode.exe" : "opencode"
  for (const name of [base, `${base}-baseline`, `${base}-musl`, `${base}-baseline-musl`]) {
    try {
      const candidate = join(dirname(require.resolve(`${name}/package.json`)), "bin", exe)
      if (existsSync(candidate)) return candidate
    } catch {
      // not installed for this platform: try the next build
    }
  }
  const wrapper = join(dirname(require.resolve("opencode-ai/package.json")), "bin", "opencode.exe")
  if (existsSync(wrapper)) return wrapper
  throw new Error(
    `no OpenCode binary for ${process.platform}-${process.arch}: run npm ci (opencode-ai is a devDependency)`,
  )
}

/** The `compaction` section of `opencode.json`. */
export interface CompactionConfig {
  readonly auto?: boolean
  readonly prune?: boolean
  readonly reserved?: number
  readonly tail_turns?: number
  readonly preserve_recent_tokens?: number
}

/** A scratch OpenCode installation around one project. */
export interface Workspace {
  readonly root: string
  /** The project (a git repository with one commit). */
  readonly repo: string
  /** OpenCode's scratch home (`HOME`; the `XDG_*` folders are inside it). */
  readonly home: string
  readonly env: Record<string, string>
  readonly remove: () => void
}

/** A plugin in `opencode.json`: its specifier (a `file://` URL or a package), alone or with its options. */
export type PluginEntry = string | readonly [string, Readonly<Record<string, unknown>>]

/** What the scratch project holds besides `opencode.json`. */
export interface WorkspaceOptions {
  readonly baseURL: string
  readonly context: number
  readonly output: number
  readonly compaction?: CompactionConfig
  readonly files?: Readonly<Record<string, string | Uint8Array>>
  /** The model's input media types besides text (OpenCode replaces the others by an error text). */
  readonly inputs?: ReadonlyArray<"image" | "pdf" | "audio" | "video">
  /**
   * The plugins OpenCode loads. Given (even empty), `OPENCODE_PURE` is left out of the environment: it keeps OpenCode
   * from loading any plugin but its own.
   */
  readonly plugins?: ReadonlyArray<PluginEntry>
  /** Further top-level keys of `opencode.json`. */
  readonly config?: Readonly<Record<string, unknown>>
}

/** The version of `@opencode-ai/plugin` OpenCode 1.18.33 installs into each of its config folders. */
export const PLUGIN_API_VERSION = "1.18.33"

/**
 * Marks OpenCode's global config folder (`$XDG_CONFIG_HOME/opencode`) as holding `@opencode-ai/plugin` already, as
 * OpenCode's own install leaves it on a machine with the npm registry: a `node_modules` folder and a package-lock.json
 * whose root names the package. OpenCode installs that package into each config folder in the background at every
 * start and, when any plugin is configured, waits for the install before it loads the plugins; it skips the install
 * when the lock names the package. Offline (here: the registry behind a dead proxy) the install fails only after npm's
 * retries, ~70 s that every run with a plugin would wait. No plugin this repository tests imports the package at run
 * time, so the folder stays empty.
 */
export const pluginApiInstalled = (xdgConfigHome: string): void => {
  const dir = join(xdgConfigHome, "opencode")
  mkdirSync(join(dir, "node_modules"), { recursive: true })
  const dependencies = { "@opencode-ai/plugin": PLUGIN_API_VERSION }
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ dependencies }, null, 2)}\n`)
  const lock = { name: "opencode", lockfileVersion: 3, requires: true, packages: { "": { dependencies } } }
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`)
}

/**
 * Creates the scratch project and home; `remove()` deletes both. Synchronous (git runs before any OpenCode request
 * reaches the scripted model, so blocking the event loop for it costs nothing).
 */
export const workspace = (options: WorkspaceOptions): Workspace => {
  const root = mkdtempSync(join(tmpdir(), "pivot-oracle-"))
  const home = join(root, "home")
  const repo = join(root, "repo")
  mkdirSync(home)
  mkdirSync(repo)
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: {
      scripted: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: options.baseURL, apiKey: "x" },
        models: {
          scripted: {
            limit: { context: options.context, output: options.output },
            ...(options.inputs ? { modalities: { input: ["text", ...options.inputs], output: ["text"] } } : {}),
          },
        },
      },
    },
    ...(options.compaction ? { compaction: options.compaction } : {}),
    ...(options.plugins === undefined ? {} : { plugin: options.plugins }),
    ...options.config,
  }
  writeFileSync(join(repo, "opencode.json"), `${JSON.stringify(config, null, 2)}\n`)
  for (const [name, text] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(repo, name)), { recursive: true })
    writeFileSync(join(repo, name), text)
  }
  const git = (args: ReadonlyArray<string>) =>
    execFileSync("git", args, { cwd: repo, env: { PATH: process.env.PATH ?? "" }, stdio: "pipe" })
  git(["init", "-q"])
  git(["add", "-A"])
  git(["-c", "user.name=oracle", "-c", "user.email=oracle@example.invalid", "commit", "-qm", "scenario"])
  const pure: Record<string, string> = options.plugins === undefined ? { OPENCODE_PURE: "1" } : {}
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    // Offline and deterministic: no model catalog, no update check, no plugin install (npm), no LSP downloads,
    // nothing read from ~/.claude or external skill folders.
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    ...pure,
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
    // Anything that still tries the network fails at once instead of waiting (the scripted model is on loopback).
    HTTP_PROXY: "http://127.0.0.1:9",
    HTTPS_PROXY: "http://127.0.0.1:9",
    NO_PROXY: "127.0.0.1,localhost",
  }
  pluginApiInstalled(env.XDG_CONFIG_HOME!)
  return { root, repo, home, env, remove: () => rmSync(root, { recursive: true, force: true }) }
}

/** The output of a finished process; `signal` names the one that ended it, if any. */
export interface Ran {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** How a process is run: its folder and environment, its time limit (then SIGKILL; default 300 s), its stdout. */
export interface RunOptions {
  readonly cwd: string
  readonly env: Record<string, string>
  readonly timeoutMs?: number
  /** Send stdout to this file instead of collecting it. */
  readonly stdoutFile?: string
}

/**
 * Runs a process to its end, whatever its exit, without blocking the event loop (the scripted model answers from
 * this process). stdin is closed: `opencode run` reads a piped stdin to the end before it starts.
 */
export const spawned = (command: string, args: ReadonlyArray<string>, options: RunOptions): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const out = options.stdoutFile === undefined ? "pipe" : openSync(options.stdoutFile, "w")
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", out, "pipe"] })
    if (typeof out === "number") closeSync(out)
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 300_000)
    child.on("error", reject)
    child.on("close", (status, signal) => {
      clearTimeout(timer)
      resolve({ status, signal, stdout, stderr })
    })
  })

/** Runs a process as `spawned` does; fails when it exits other than with 0. */
export const run = async (command: string, args: ReadonlyArray<string>, options: RunOptions): Promise<Ran> => {
  const ran = await spawned(command, args, options)
  if (ran.status !== 0)
    throw new Error(`${command} ${args.join(" ")} exited ${ran.status ?? ran.signal}: ${ran.stderr.slice(-2000)}`)
  return ran
}

/** How a turn runs: in the last session (`continue`) or a given one, attached to a running `opencode serve`. */
export interface TurnOptions {
  readonly continue?: boolean
  readonly session?: string
  /** The URL of an `opencode serve` to run the turn in (`--attach`). */
  readonly attach?: string
  /** Further arguments of `opencode run` (`--format json`, `--title …`). */
  readonly args?: ReadonlyArray<string>
  readonly timeoutMs?: number
}

/** The arguments of one `opencode run` turn with the scripted model. */
export const turnArgs = (message: string, options: TurnOptions = {}): Array<string> => [
  "run",
  message,
  "-m",
  MODEL,
  ...(options.continue ? ["--continue"] : []),
  ...(options.session === undefined ? [] : ["--session", options.session]),
  ...(options.attach === undefined ? [] : ["--attach", options.attach]),
  ...(options.args ?? []),
]

/** One `opencode run` turn; `continue` adds the message to the last session instead of a new one. */
export const turn = (ws: Workspace, message: string, options: TurnOptions = {}): Promise<Ran> =>
  run(binaryPath(), turnArgs(message, options), {
    cwd: ws.repo,
    env: ws.env,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  })

/** The id of the newest session (`opencode session list --format json`). */
export const latestSession = async (ws: Workspace): Promise<string> => {
  const listed = await run(binaryPath(), ["session", "list", "--format", "json"], { cwd: ws.repo, env: ws.env })
  const sessions = JSON.parse(listed.stdout) as Array<{ id: string; updated?: number }>
  const first = sessions[0]
  if (first === undefined) throw new Error("opencode session list: no session")
  return first.id
}

/**
 * `opencode export <id>`: the session's export text as OpenCode prints it. Written to a file, not a pipe: into a
 * pipe, OpenCode 1.18.33 exits before a large export is flushed and the text is cut short.
 */
export const exportSession = async (ws: Workspace, sessionId: string): Promise<string> => {
  const file = join(ws.root, `${sessionId}.export.json`)
  await run(binaryPath(), ["export", sessionId], { cwd: ws.repo, env: ws.env, stdoutFile: file })
  return readFileSync(file, "utf8")
}

/** Reads a file of the scratch project (for scenarios that check what a tool wrote). */
export const readProjectFile = (ws: Workspace, name: string): string => readFileSync(join(ws.repo, name), "utf8")

/** A running `opencode serve` (one OpenCode instance for a whole scenario: each turn skips OpenCode's start-up). */
export interface Server {
  readonly url: string
  /** SIGTERM, then waits for the exit (SIGKILL after 5 s). */
  readonly close: () => Promise<void>
  /** SIGKILL: OpenCode dies on the spot, as in a crash (`close` then waits for the exit). */
  readonly kill: () => void
}

/** Starts `opencode serve` on a free loopback port and waits until it listens. */
export const serve = (ws: Workspace, timeoutMs = 120_000): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child = spawn(binaryPath(), ["serve", "--hostname", "127.0.0.1", "--port", "0"], {
      cwd: ws.repo,
      env: ws.env,
      stdio: ["ignore", "pipe", "pipe"],
    })
    let seen = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`opencode serve did not start in ${timeoutMs} ms: ${seen.slice(-2000)}`))
    }, timeoutMs)
    const exited = new Promise<void>((done) => child.on("close", () => done()))
    const onData = (chunk: Buffer) => {
      seen += chunk.toString("utf8")
      const found = /listening on (http:\/\/[\d.]+:\d+)/.exec(seen)
      if (found === null) return
      clearTimeout(timer)
      child.stdout.off("data", onData)
      resolve({
        url: found[1]!,
        // OpenCode 1.18.33's server does not always stop on SIGTERM: give it a few seconds, then kill it.
        close: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
          const forced = setTimeout(() => child.kill("SIGKILL"), 5_000)
          await exited
          clearTimeout(forced)
        },
        kill: () => {
          child.kill("SIGKILL")
        },
      })
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8")
    })
    child.on("error", reject)
  })

/** Only the URL of a running server is needed to talk to it. */
type At = Pick<Server, "url">

const post = async (server: At, path: string, body: unknown): Promise<unknown> => {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(600_000),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`POST ${path}: HTTP ${response.status} ${text.slice(0, 500)}`)
  return text === "" ? undefined : JSON.parse(text)
}

const [providerID, modelID] = MODEL.split("/") as [string, string]

/** Creates a session (`POST /session`); its id. */
export const createSession = async (server: At): Promise<string> =>
  ((await post(server, "/session", {})) as { id: string }).id

/** A file attached to a message: a path in the project and its media type. */
export interface Attachment {
  readonly path: string
  readonly mime: string
}

/** One user turn (`POST /session/:id/message`), answered when OpenCode's loop for it has finished. */
export const prompt = (
  server: At,
  sessionId: string,
  text: string,
  attachments: ReadonlyArray<Attachment> = [],
): Promise<unknown> =>
  post(server, `/session/${sessionId}/message`, {
    model: { providerID, modelID },
    parts: [
      { type: "text", text },
      ...attachments.map((a) => ({
        type: "file",
        mime: a.mime,
        url: `file://${a.path}`,
        filename: a.path.split("/").at(-1),
      })),
    ],
  })

/** Interrupts the session's running turn (`POST /session/:id/abort`, what Esc does in the TUI). */
export const abort = (server: At, sessionId: string): Promise<unknown> =>
  post(server, `/session/${sessionId}/abort`, {})

/** A compaction asked by the user (`POST /session/:id/summarize`, what the TUI's /compact sends). */
export const summarize = (server: At, sessionId: string): Promise<unknown> =>
  post(server, `/session/${sessionId}/summarize`, { providerID, modelID, auto: false })
