// The plugin's hooks over a fake OpenCode client, as the fast tests make them: OpenCode's client answers from one
// exported session (a fixture), the hooks record into a scratch folder's `.pivot/opencode.db`, and both are
// disposed and removed after each test.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach } from "vitest"
import type { Client, Hooks, MessageWithParts } from "../../src/OpenCode.ts"
import * as Plugin from "../../src/Plugin.ts"

/** A session as `opencode export` prints it: what the fake client serves. */
export interface Session {
  info: { id: string }
  messages: Array<MessageWithParts>
}

/** OpenCode's client, answering from `data`: the session, its messages, and a summarise that succeeds. */
export const client = (data: Session): Client => ({
  session: {
    get: async () => ({ data: data.info }),
    messages: async () => ({ data: data.messages }),
    summarize: async () => ({ data: true }),
  },
  app: { log: async () => {} },
})

/** Hooks made by `plugged`, with their session and store. */
export interface Plugged {
  readonly hooks: Hooks
  readonly data: Session
  /** The plugin's store in the scratch folder. */
  readonly db: string
}

/**
 * Registers, at a test file's top level, the `afterEach` that disposes the hooks and removes the folders; answers the
 * maker: the plugin's hooks (with `options`) over the exported session in `fixture`, in a fresh folder named `prefix…`.
 */
export const plugged = (prefix: string) => {
  const folders: Array<string> = []
  const opened: Array<Hooks> = []
  afterEach(async () => {
    for (const hooks of opened.splice(0)) await hooks.dispose()
    for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
  })
  return async (fixture: string, options: Plugin.Options = {}): Promise<Plugged> => {
    const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
    folders.push(directory)
    const data = JSON.parse(Fs.readFileSync(fixture, "utf8")) as Session
    const hooks = await Plugin.make({ client: client(data), directory }, options, {})
    opened.push(hooks)
    return { hooks, data, db: Path.join(directory, ".pivot/opencode.db") }
  }
}
