// An OpenCode plugin that only holds memory, a control of `bench:opencode --startup --before` (docs/benchmarks.md,
// "What the plugin holds"): at the first hook about a session (as pivot's hooks load) it allocates 120,000 small
// objects — ~18 MB of JavaScriptCore's heap after a full collection, little code, ~0.3 s of CPU in OpenCode's Bun (the
// allocation and the collections it triggers) — and keeps them to the end: what a plugin's live heap does to OpenCode's
// peak and CPU without pivot's code. Like nullPlugin.mjs, its tool is not enumerable: OpenCode registers none.
const ENTRIES = 120_000
const held = []
const fill = () => {
  if (held.length > 0) return
  for (let i = 0; i < ENTRIES; i++) held.push({ id: `x${i}`.padEnd(40, "y"), n: i, list: [i, i + 1, i + 2] })
}
export default async function BallastPlugin() {
  const tool = {}
  Object.defineProperty(tool, "context_compact", { enumerable: false, value: { execute: async () => "" } })
  return {
    tool,
    event: async ({ event }) => {
      if (event?.properties?.info?.id !== undefined || event?.properties?.sessionID !== undefined) fill()
    },
    "chat.message": async () => fill(),
    dispose: async () => {
      held.length = 0
    },
  }
}
