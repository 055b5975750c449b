// Run by `plugin-open.ts` in OpenCode's own Bun (the binary with BUN_BE_BUN=1): imports the plugin's entry (argv[2]),
// makes its hooks over a stub client with the store in argv[3], sends `session.created` (the hooks' bundle loads,
// then the store opens a macrotask later, ADR 0051), waits for the store's phase and disposes. Prints the CPU ms of
// the entry's import and of the plugin's own phases (Phases.ts) as one JSON line.
const phases = []
globalThis[Symbol.for("pivot.phases")] = phases
const cpu = () => {
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}
const before = cpu()
const plugin = await import(process.argv[2])
const entry = cpu() - before
const dir = process.argv[3]
const client = {
  session: {
    get: async () => ({ data: { id: "ses_probe" } }),
    messages: async () => ({ data: [] }),
    list: async () => ({ data: [] }),
  },
}
const hooks = await plugin.default({ client, directory: dir }, { db: `${dir}/probe.db` })
await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_probe" } } } })
for (let i = 0; i < 4000 && !phases.some((p) => p.name === "store.open"); i++)
  await new Promise((r) => setTimeout(r, 5))
await hooks.dispose()
const of = (name) => phases.find((p) => p.name === name)?.cpuMs ?? Number.NaN
console.log(
  JSON.stringify({
    entry,
    bundle: of("bundle"),
    make: of("make"),
    storeOpen: of("store.open"),
    rss: process.memoryUsage().rss,
  }),
)
