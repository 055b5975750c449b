// The real OpenCode (npm `opencode-ai`, its linux binary) run headless and offline with this package's built plugin
// loaded from a file:// URL: the oracle's harness (packages/opencode/test/oracle/opencode.ts, the one harness of every
// test that runs the binary: scratch git repository, HOME and XDG_* in a temporary folder, an opencode.json whose only
// provider is the scripted model) with the plugin added, in the calls these tests make.
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Oracle from "../../../opencode/test/oracle/opencode.ts"
import { type Captured, type Reply, type ScriptedModel, start } from "./ScriptedModel.ts"

const here = Path.dirname(fileURLToPath(import.meta.url))
/** The repository root. */
export const ROOT = Path.resolve(here, "../../../..")
/** The built plugin OpenCode loads. */
export const PLUGIN = Path.join(ROOT, "packages/opencode-plugin/dist/index.js")

/** Builds the packages' dist/ (the plugin is loaded from there, as a user's OpenCode would). */
export const build = () => execFileSync(process.execPath, [Path.join(ROOT, "scripts/build.mjs")], { stdio: "pipe" })

/** A scratch project with its own OpenCode home; `dir` is the project (the oracle's `repo`). */
export interface Project extends Oracle.Workspace {
  readonly dir: string
}

/** The plugin's entry in `opencode.json`, with its options when given. */
export const pluginEntry = (options?: Record<string, unknown>): Oracle.PluginEntry =>
  options === undefined ? pathToFileURL(PLUGIN).href : [pathToFileURL(PLUGIN).href, options]

/**
 * A scratch project configured for the scripted model at `port` (a 200,000-token context, 4,000 of output), with the
 * plugin (and its options) and `config`'s further keys of `opencode.json`.
 */
export const project = (
  port: number,
  config: Record<string, unknown> = {},
  pluginOptions?: Record<string, unknown>,
): Project => {
  const ws = Oracle.workspace({
    baseURL: `http://127.0.0.1:${port}/v1`,
    context: 200_000,
    output: 4_000,
    plugins: [pluginEntry(pluginOptions)],
    config,
  })
  return { ...ws, dir: ws.repo }
}

/** What a run printed, and how it ended. */
export type Ran = Oracle.Ran

/** How long one `opencode` command may take here (the slow lane runs on a loaded machine); then it is killed. */
const TIMEOUT_MS = 900_000

/** Runs `opencode ARGS` in the project, to its end, whatever its exit (a run whose server is killed exits non-zero). */
export const opencode = (p: Project, args: ReadonlyArray<string>): Promise<Ran> =>
  Oracle.spawned(Oracle.binaryPath(), args, { cwd: p.dir, env: p.env, timeoutMs: TIMEOUT_MS })

/** A running `opencode serve` (the plugin lives in it; runs attach to it, so its background work, e.g. prune, ends). */
export interface Server {
  readonly url: string
  /** SIGTERM, then waits for the exit. */
  readonly stop: () => Promise<void>
  /** SIGKILL: OpenCode dies on the spot, as in a crash. */
  readonly kill: () => void
}

/** Starts `opencode serve` on a free loopback port (waiting up to 300 s for it: the slow lane's machine is loaded). */
export const serve = async (p: Project): Promise<Server> => {
  const server = await Oracle.serve(p, 300_000)
  return { url: server.url, stop: server.close, kill: server.kill }
}

/**
 * `opencode run MESSAGE` with the scripted model and `--format json`, in session `session` when given, attached to
 * `attach` when given; fails on a non-zero exit.
 */
export const run = (p: Project, message: string, session?: string, attach?: string): Promise<Ran> =>
  Oracle.turn(p, message, {
    args: ["--title", "scripted", "--format", "json"],
    timeoutMs: TIMEOUT_MS,
    ...(session === undefined ? {} : { session }),
    ...(attach === undefined ? {} : { attach }),
  })

/** The arguments of `opencode run MESSAGE` with the scripted model (in a session, attached to a server…). */
export const turnArgs = Oracle.turnArgs

/** The session id a `--format json` run printed. */
export const sessionOf = (ran: Ran): string => {
  const found = /"sessionID"\s*:\s*"(ses_[A-Za-z0-9]+)"/.exec(ran.stdout)
  if (found === null) throw new Error(`no session id in: ${ran.stdout.slice(0, 500)}`)
  return found[1]!
}

/** `opencode export SESSION`, parsed (from its first `{`: OpenCode may print a line before the JSON). */
export const exportSession = async (p: Project, session: string): Promise<unknown> => {
  const text = await Oracle.exportSession(p, session)
  return JSON.parse(text.slice(text.indexOf("{")))
}

/** What a real-OpenCode test runs: the scripted model, a scratch project with the plugin, `opencode serve` in it. */
export interface Running {
  readonly model: ScriptedModel
  readonly project: Project
  /** The running `opencode serve` (a new one after `restart`). */
  readonly server: Server
  /** `run` attached to the server: one turn, in `session` when given (a new session otherwise). */
  readonly turn: (message: string, session?: string) => Promise<Ran>
  /** Starts `opencode serve` again (after `server.kill()`, say); it becomes `server`. */
  readonly restart: () => Promise<Server>
  /** Stops the server, then the model. */
  readonly stop: () => Promise<void>
}

/** What to run: the model's script (it is handed the project, whose folder holds `files`), the config, the plugin's options. */
export interface RunningOptions {
  readonly script: (request: Captured, project: Project) => Reply
  /** Further keys of `opencode.json`. */
  readonly config?: Record<string, unknown>
  /** The plugin's options (none: its defaults). */
  readonly plugin?: Record<string, unknown>
  /** Files written into the project before OpenCode starts, by name. */
  readonly files?: Readonly<Record<string, string>>
}

/**
 * Builds the packages (the plugin is loaded from its dist/), starts the scripted model (every request appended to
 * `$PIVOT_DUMP_REQUESTS` when set), makes the project and starts `opencode serve` in it.
 */
export const running = async (options: RunningOptions): Promise<Running> => {
  build()
  let scratch: Project | undefined
  const model = await start((request) => {
    if (scratch === undefined) throw new Error("a request before the project was made")
    return options.script(request, scratch)
  }, process.env.PIVOT_DUMP_REQUESTS)
  const made = project(model.port, options.config, options.plugin)
  scratch = made
  for (const [name, text] of Object.entries(options.files ?? {})) Fs.writeFileSync(Path.join(made.dir, name), text)
  let server = await serve(made)
  return {
    model,
    project: made,
    get server() {
      return server
    },
    turn: (message, session) => run(made, message, session, server.url),
    restart: async () => {
      server = await serve(made)
      return server
    },
    stop: async () => {
      await server.stop()
      await model.close()
    },
  }
}
