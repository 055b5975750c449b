// Run by Lazy.slow.test.ts in a Node process of its own (`node --conditions=@pivot/source LoadProbe.ts DIR`): loads the
// plugin's entry as OpenCode does, calls its hooks one by one, and prints (JSON lines) which of pivot's modules and
// effect's were loaded after each step, as Node's module loader saw them. With `built` after DIR (and no condition),
// the entry is the built one users load, dist/index.js, whose hooks are the bundle (ADR 0033).
import { registerHooks } from "node:module"
import * as Path from "node:path"

const built = process.argv[3] === "built"
const loaded: Array<string> = []
registerHooks({
  load(url, context, next) {
    loaded.push(url)
    return next(url, context)
  },
})

const snapshot = (step: string, extra: Record<string, unknown> = {}) =>
  console.log(
    JSON.stringify({
      step,
      plugin: loaded.some((u) => u.endsWith("/opencode-plugin/src/Plugin.ts")),
      store: loaded.some((u) => u.includes("/store/src/")),
      effect: loaded.some((u) => u.includes("/node_modules/effect/")),
      ...(built
        ? {
            bundle: loaded.some((u) => u.endsWith("/opencode-plugin/dist/bundle/Plugin.js")),
            // Files of pivot's packages other than the entry (with its per-phase counters, Phases.js: ADR 0056, and its
            // worker's port, Thread.js and BusEvents.js: ADR 0073) and the bundle's, and any under node_modules: none,
            // built.
            unbundled: loaded.filter(
              (u) =>
                (/\/packages\/[^/]+\/(src|dist)\//.test(u) &&
                  !/\/opencode-plugin\/dist\/(index\.js|Phases\.js|Thread\.js|BusEvents\.js|bundle\/)/.test(u)) ||
                u.includes("/node_modules/"),
            ),
          }
        : {}),
      ...extra,
    }),
  )

const directory = process.argv[2]!
const { default: plugin } = (await import(
  built ? "../../dist/index.js" : "../../src/index.ts"
)) as typeof import("../../src/index.ts")
const client = {
  session: {
    get: async () => ({ data: { id: "ses_probe" } }),
    messages: async () => ({ data: [] }),
    summarize: async () => ({ data: true }),
  },
}
const hooks = await plugin({ client, directory }, { db: Path.join(directory, "probe.db") })
snapshot("init", { tools: Object.keys(hooks.tool) })
await hooks.event({ event: { type: "server.connected", properties: {} } })
snapshot("event without a session")
// OpenCode defines its tools before each request (15 calls, each awaited): noted, nothing loaded (ADR 0051).
for (const toolID of ["read", "edit", "bash"])
  await hooks["tool.definition"]({ toolID }, { description: `The ${toolID} tool.`, jsonSchema: { type: "object" } })
snapshot("tool definitions")
const answer = await hooks.tool.context_compact!.execute({}, { sessionID: "ses_probe", messageID: "msg_probe" })
snapshot("tool call", { answer })
await hooks.event({ event: { type: "server.heartbeat", properties: {} } })
await hooks.dispose()
snapshot("disposed")
