// Issue 32, seventh round (ADR 0068): how near OpenCode's first step can a restart get that runs no Effect runtime
// or layer before its first window? Each mode prints one JSON line (`ms`, `cpuMs`, `gcMs` of the span, the window's
// length and hash, `marks`: each stage's wall ms), timed as restart.ts times its children (module loading excluded).
//   stages <file>         pivot's pure pieces on the snapshot and the events after it: SELECT, checksum, parse, the
//                         state decoded, the events decoded and folded, the window rendered.
//   stored <file>         the same, the snapshot's messages taking the renderings the snapshot holds (`augment`):
//                         only what the events after it add or change is rendered.
//   head <file>           the window the snapshot holds (`augment-head`, no event after it): SELECT, checksum, parse;
//                         the state is decoded after the answer, timed apart.
//   augment <file> <to>   a copy whose snapshot also holds each visible message's renderings.
//   augment-head <file> <to> [k]  a copy whose snapshot is at the end and holds the window's model messages; with
//                         `k`, `k` events before the end, holding the renderings (as `augment`).
import * as fs from "node:fs"
import { DatabaseSync } from "node:sqlite"
import * as v8 from "node:v8"
import { IncrementalWindow, type Message, Render, StateSnapshot, ValidWindow, Window } from "@pivot/core"
import { RuntimeState, Sessions } from "@pivot/runtime"
import { Snapshot } from "@pivot/store"
import { Result } from "effect"
import { SESSION } from "./agentLoop.ts"
import { recordedOf, snapshotAndTail } from "./snapshotRows.ts"

const [how, file, to] = process.argv.slice(2)
if (file === undefined)
  throw new Error("usage: restartProbe.ts stages|stored|head|augment|augment-head <file> [to] [k]")
const stream = `session-${SESSION}`

const read = (db: DatabaseSync) => snapshotAndTail(db, stream)

if (how === "augment-head") {
  // A snapshot at the stream's head (no event after it) holding the window's model messages as the fold renders them;
  // with a fourth argument `k`, a snapshot `k` events before the head holding its messages' renderings (as `augment`).
  const tail = Number(process.argv[5] ?? 0)
  fs.copyFileSync(file, to!)
  const db = new DatabaseSync(to!)
  const rows = read(db)
  const raw = JSON.parse(rows[0]!.data)
  const from: Sessions.State = { session: StateSnapshot.decode(raw.session), runtime: RuntimeState.decode(raw.runtime) }
  const events = rows
    .slice(1, rows.length - tail)
    .map((r) => Result.getOrThrow(Sessions.decodeEvent(SESSION, recordedOf(r, stream))))
  const head = Sessions.retain(Sessions.fold(events, from))
  const window = IncrementalWindow.make()
    .render(Window.messages(head.session.window))
    .map((r) => r.message)
  const rendered = Window.messages(head.session.window).map((m) => [m.id, Render.render([m])])
  const data = JSON.stringify({
    ...JSON.parse(Sessions.encodeSnapshot(head)),
    ...(tail === 0 ? { window } : { rendered }),
  })
  db.prepare("UPDATE pivot_snapshots SET data = ?, checksum = ?, stream_version = ? WHERE stream = ?").run(
    data,
    Snapshot.checksum(data),
    head.session.version,
    stream,
  )
  db.close()
  process.exit(0)
}
if (how === "augment") {
  // The snapshot's data with `rendered`: for each visible message, its id and its renderings (as IncrementalWindow keeps them).
  fs.copyFileSync(file, to!)
  const db = new DatabaseSync(to!)
  const row = read(db)[0]!
  const raw = JSON.parse(row.data)
  const session = StateSnapshot.decode(raw.session)
  const rendered = Window.messages(session.window).map((m) => [m.id, Render.render([m])])
  const data = JSON.stringify({ ...raw, rendered })
  db.prepare("UPDATE pivot_snapshots SET data = ?, checksum = ? WHERE stream = ?").run(
    data,
    Snapshot.checksum(data),
    stream,
  )
  db.close()
  process.exit(0)
}

const once = () => {
  const hash = (text: string) => Snapshot.checksum(text)
  // The garbage collections inside the span, as restart.ts counts them.
  const gcs = new v8.GCProfiler()
  gcs.start()
  const gcMs = () => (gcs.stop()?.statistics ?? []).reduce((sum, gc) => sum + gc.cost, 0) / 1000
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  const marks: Record<string, number> = {}
  let at = t0
  const mark = (name: string) => {
    const now = performance.now()
    marks[name] = now - at
    at = now
  }
  const db = new DatabaseSync(file)
  const rows = read(db)
  db.close()
  mark("select")
  const snap = rows[0]!
  if (
    !Snapshot.intact({
      stream,
      version: snap.version,
      format: snap.type,
      checksum: snap.id,
      data: snap.data,
      recordedAt: snap.at,
    })
  )
    throw new Error("checksum")
  mark("checksum")
  const raw = JSON.parse(snap.data) as {
    session: unknown
    runtime: RuntimeState.State
    rendered?: Array<[string, Array<Render.Rendered>]>
    window?: Array<unknown>
  }
  mark("parse")
  if (how === "head" && raw.window !== undefined && rows.length === 1) {
    // The answer is the stored window: the state's decoding is timed after it, apart.
    const answered = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    const gc = gcMs()
    const from = { session: StateSnapshot.decode(raw.session), runtime: RuntimeState.decode(raw.runtime) }
    mark("after: decode-state")
    console.log(
      JSON.stringify({
        ms: answered,
        cpuMs: (cpu.user + cpu.system) / 1000,
        gcMs: gc,
        window: raw.window.length,
        json: hash(JSON.stringify(raw.window)),
        version: from.session.version,
        marks,
      }),
    )
    return
  }
  const from: Sessions.State = { session: StateSnapshot.decode(raw.session), runtime: RuntimeState.decode(raw.runtime) }
  mark("decode-state")
  const events = rows.slice(1).map((r) => Result.getOrThrow(Sessions.decodeEvent(SESSION, recordedOf(r, stream))))
  mark("decode-tail")
  const state = Sessions.fold(events, from)
  mark("fold")
  const visible = Window.messages(state.session.window)
  mark("visible")
  let models: ReadonlyArray<unknown>
  if (how === "stored" && raw.rendered !== undefined) {
    // The snapshot's messages keep their stored renderings; the tail's are rendered; the whole window checked.
    const byId = new Map(raw.rendered)
    const held = new Set<Message.Message>(Window.messages(from.session.window))
    const out: Array<Render.Rendered> = []
    const check = ValidWindow.inputCheck()
    for (const m of visible) {
      const rs = (held.has(m) ? byId.get(m.id) : undefined) ?? Render.render([m])
      for (const r of rs) {
        out.push(r)
        check.add(r)
      }
    }
    models = check.clean() ? out.map((r) => r.message) : ValidWindow.render(visible).map((r) => r.message)
  } else models = IncrementalWindow.make().modelMessages(IncrementalWindow.make().render(visible))
  mark("render")
  const cpu = process.cpuUsage(cpu0)
  const ms = performance.now() - t0
  console.log(
    JSON.stringify({
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      gcMs: gcMs(),
      window: models.length,
      json: hash(JSON.stringify(models)),
      marks,
    }),
  )
}
// PIVOT_BENCH_CPU_PROFILE=FILE: the span sampled every 50 µs, as restart.ts does (the line printed after it included).
const profileTo = process.env.PIVOT_BENCH_CPU_PROFILE
const inspector = profileTo === undefined ? undefined : new (await import("node:inspector/promises")).Session()
if (inspector !== undefined) {
  performance.now()
  inspector.connect()
  await inspector.post("Profiler.enable")
  await inspector.post("Profiler.setSamplingInterval", { interval: 50 })
  await inspector.post("Profiler.start")
}
once()
if (inspector !== undefined && profileTo !== undefined)
  fs.writeFileSync(profileTo, JSON.stringify((await inspector.post("Profiler.stop")).profile))
