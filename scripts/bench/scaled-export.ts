// Builds a large OpenCode export from the real one: its conversation repeated, with fresh ids and later times, until
// it holds the wanted number of messages. The structure, sizes and numbers of every message are the real ones.
//
//   node scripts/bench/scaled-export.ts [--messages N] [--out FILE]

import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

/** Where the real export is: the vendored fixture (with its provenance note beside it). */
export const realExportPath = (): string =>
  fileURLToPath(
    new URL("../../packages/opencode/test/fixtures/real/stunning-memory.v1.16.0.export.shape.json", import.meta.url),
  )

type Json = Record<string, unknown>

/** The real export with its conversation repeated to `messages` messages (ids renumbered, times shifted). */
export const scaledExport = (source: Json, messages: number): Json => {
  const original = source.messages as Array<{ info: Json; parts: Array<Json> }>
  const times = original.map((m) => (m.info.time as { created: number }).created)
  const span = Math.max(...times) - Math.min(...times) + 60_000
  const out: Array<unknown> = []
  for (let copy = 0; out.length < messages; copy++) {
    const ids = new Map<string, string>()
    const idOf = (prefix: string, id: string) => {
      let fresh = ids.get(id)
      if (fresh === undefined) {
        fresh = `${prefix}_${String(copy).padStart(5, "0")}${String(ids.size).padStart(5, "0")}${id.slice(-8)}`
        ids.set(id, fresh)
      }
      return fresh
    }
    const shift = (time: Json | undefined) =>
      time === undefined
        ? undefined
        : Object.fromEntries(Object.entries(time).map(([k, v]) => [k, typeof v === "number" ? v + copy * span : v]))
    for (const message of original) {
      if (out.length >= messages) break
      const info: Json = { ...message.info, id: idOf("msg", message.info.id as string) }
      if (typeof info.parentID === "string") info.parentID = idOf("msg", info.parentID)
      info.time = shift(info.time as Json)
      const parts = message.parts.map((part) => {
        const copied: Json = { ...part, id: idOf("prt", part.id as string), messageID: info.id }
        if (typeof part.callID === "string") copied.callID = `${part.callID}_${copy}`
        if (part.time !== undefined) copied.time = shift(part.time as Json)
        if (typeof part.state === "object" && part.state !== null) {
          const state = part.state as Json
          copied.state = { ...state, ...(state.time === undefined ? {} : { time: shift(state.time as Json) }) }
        }
        return copied
      })
      out.push({ info, parts })
    }
  }
  return { ...source, messages: out }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { messages: { type: "string", default: "20000" }, out: { type: "string", default: "scaled-export.json" } },
  })
  const source = JSON.parse(fs.readFileSync(realExportPath(), "utf8")) as Json
  const text = JSON.stringify(scaledExport(source, Number(values.messages)))
  fs.writeFileSync(values.out, text)
  console.log(
    `${values.out}: ${Number(values.messages).toLocaleString("en-US")} messages, ${(text.length / 1e6).toFixed(1)} MB`,
  )
}
