// The viewer over real HTTP: a real server on an ephemeral loopback port, over a real SQLite file written as pivot
// writes it. Every route and every error, checked against the played events (an independent count), never against
// the server's own folds.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import * as zlib from "node:zlib"
import { Conversation, type Events, ValidWindow, Window } from "@pivot/core"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Pages, Serve } from "../src/index.ts"
import { play, writeSqlite, XSS_PAYLOAD } from "./support/play.ts"

const SESSION = "ses_http"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-serve-http-"))
const db = path.join(dir, "pivot.db")
const liveDb = path.join(dir, "live.db")
const events = play({ sessionId: SESSION, turns: 40 })
const hash = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex")
const count = (tag: string) => events.filter((e) => e._tag === tag).length

let server: Serve.Started
let base: string
let before: string

/** A raw GET (or other method) with the path sent exactly as given (fetch would normalise `..`). */
const raw = (method: string, rawPath: string, port = server.port, headers: http.OutgoingHttpHeaders = {}) =>
  new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path: rawPath, headers }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (c) => (body += c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on("error", reject)
    req.end()
  })

const html404 = (response: Response) => {
  expect(response.status).toBe(404)
  return response.text()
}

const getJson = async (url: string) => {
  const response = await fetch(`${base}${url}`)
  return { status: response.status, body: (await response.json()) as any }
}

beforeAll(async () => {
  await writeSqlite(db, SESSION, events)
  before = hash(db)
  server = await Serve.start({ source: db, port: 0 })
  base = `http://127.0.0.1:${server.port}`
})

afterAll(async () => {
  await server?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("pages", () => {
  it("serves the sessions page and each page of a session as HTML with a strict content security policy", async () => {
    for (const url of [
      "/",
      `/sessions/${SESSION}`,
      `/sessions/${SESSION}/versions/10`,
      `/sessions/${SESSION}/diff?from=1&to=20`,
      `/sessions/${SESSION}/pivots/1`,
      `/sessions/${SESSION}/events?type=PartCompacted`,
    ]) {
      const response = await fetch(`${base}${url}`)
      expect(response.status, url).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/^text\/html/)
      expect(response.headers.get("content-security-policy")).toContain("script-src 'self'")
      const html = await response.text()
      expect(html).toContain('<script src="/assets/app.js"></script>')
      expect(html).not.toContain("<script>")
      // An empty icon of its own (the policy allows data: images): a browser never asks for /favicon.ico, a 404.
      expect(html, url).toContain('<link rel="icon" href="data:,">')
    }
    expect(await html404(await fetch(`${base}/no/such/page`))).toContain('<link rel="icon" href="data:,">')
  })

  it("answers an unknown session or version with a 404 page and a malformed one with a 400 page", async () => {
    const cases: Array<[string, number]> = [
      ["/sessions/ses_nope", 404],
      [`/sessions/${SESSION}/versions/${events.length + 1}`, 404],
      [`/sessions/${SESSION}/pivots/99`, 404],
      [`/sessions/${SESSION}/pivots/0`, 404],
      [`/sessions/${SESSION}/versions/abc`, 400],
      [`/sessions/${SESSION}/versions/-1`, 400],
      [`/sessions/${SESSION}/diff?from=x`, 400],
      ["/sessions/bad%20id%3Cscript%3E", 400],
      ["/no/such/page", 404],
      [`/sessions/${SESSION}/nothing`, 404],
    ]
    for (const [url, status] of cases) {
      const response = await fetch(`${base}${url}`)
      expect(response.status, url).toBe(status)
      const html = await response.text()
      expect(html, url).toContain(`<h1>${status}</h1>`)
      expect(html, url).not.toContain("<script>")
    }
  })

  it("escapes what it echoes into an error page", async () => {
    const response = await fetch(`${base}/sessions/${encodeURIComponent("<img src=x>")}`)
    expect(response.status).toBe(400)
    const html = await response.text()
    expect(html).not.toContain("<img src=x>")
    expect(html).toContain("&#60;img src=x&#62;")
  })
})

describe("the JSON API", () => {
  it("lists the sessions with their figures", async () => {
    const { status, body } = await getJson("/api/sessions")
    expect(status).toBe(200)
    expect(body.sessions).toHaveLength(1)
    const s = body.sessions[0]
    expect(s.sessionId).toBe(SESSION)
    expect(s.events).toBe(events.length)
    // Every stored message, markers and summaries included: what `pivot inspect` counts.
    expect(s.messages).toBe(Conversation.messages(events.reduce(Conversation.evolve, Conversation.initial)).length)
    expect(s.pivots).toBe(count("SummaryFinished"))
    expect(s.prunes).toBe(count("PartCompacted"))
    const lastStep = events.findLast(
      (e): e is Extract<Events.Event, { _tag: "AssistantStepRecorded" }> =>
        e._tag === "AssistantStepRecorded" && e.message.summary !== true,
    )!
    const t = lastStep.message.tokens
    expect(s.usage).toBe(t.input + t.output + t.cacheRead + t.cacheWrite)
  })

  it("answers a session's figures, pivots and event types", async () => {
    const { body } = await getJson(`/api/sessions/${SESSION}`)
    expect(body.head).toBe(events.length)
    expect(body.pivots).toHaveLength(count("SummaryFinished"))
    const finishedAt = events.flatMap((e, i) => (e._tag === "SummaryFinished" ? [i + 1] : []))
    expect(body.pivots.map((p: { version: number }) => p.version)).toEqual(finishedAt)
    for (const tag of new Set(events.map((e) => e._tag))) expect(body.types[tag], tag).toBe(count(tag))
  })

  it("answers the ledger: every call billed, a compaction entry per pivot and a prune entry per prune batch", async () => {
    const { status, body } = await getJson(`/api/sessions/${SESSION}/ledger`)
    expect(status).toBe(200)
    expect(body.head).toBe(events.length)
    const steps = events.filter((e) => e._tag === "AssistantStepRecorded" && e.message.summary !== true).length
    expect(body.calls.filter((c: { kind: string }) => c.kind === "step")).toHaveLength(steps)
    const kinds = (kind: string) => body.entries.filter((e: { kind: string }) => e.kind === kind).length
    expect(kinds("compaction")).toBe(count("SummaryFinished"))
    const runs = events.filter((e, i) => e._tag === "PartCompacted" && events[i - 1]?._tag !== "PartCompacted").length
    expect(kinds("prune")).toBe(runs)
    // Each step reads 2,000 cached tokens (the played usage); no price given: Anthropic's 0.1× read.
    const reads = events.reduce(
      (n, e) => n + (e._tag === "AssistantStepRecorded" && e.message.summary !== true ? e.message.tokens.cacheRead : 0),
      0,
    )
    expect(body.totals.cacheRead).toBeGreaterThanOrEqual(reads)
    expect(body.totals.compactions).toBe(count("SummaryFinished"))
    expect((await getJson(`/api/sessions/ses_nope/ledger`)).status).toBe(404)
  })

  it("answers what the pages draw of the ledger: the cost chart, and entries by range, kind or pivot", async () => {
    const whole = (await getJson(`/api/sessions/${SESSION}/ledger`)).body
    type Entry = { kind: string; version: number; markerId?: string }
    const { status, body: chart } = await getJson(`/api/sessions/${SESSION}/ledger/chart`)
    expect(status).toBe(200)
    expect(chart.totals).toEqual(whole.totals)
    // Fewer steps than the chart's points: every step, as columns.
    const steps = whole.calls.filter((c: { kind: string }) => c.kind === "step")
    expect(chart.steps).toBe(steps.length)
    expect(chart.calls.version).toEqual(steps.map((c: { version: number }) => c.version))
    expect(chart.calls.billed).toEqual(steps.map((c: { billed: number }) => c.billed))
    expect(chart.calls.stablePrefix).toEqual(steps.map((c: { stablePrefix: number }) => c.stablePrefix))
    // Where every entry stands, and nothing else of it.
    expect(chart.marks.version).toEqual(whole.entries.map((e: Entry) => e.version))
    expect(chart.marks.kind).toEqual(whole.entries.map((e: Entry) => e.kind))
    expect(chart.marks.markerId).toEqual(whole.entries.map((e: Entry) => e.markerId ?? null))
    expect(JSON.stringify(chart).length).toBeLessThan(JSON.stringify(whole).length / 3)
    // A range: its steps and entries only.
    const mid = Math.floor(events.length / 2)
    const ranged = (await getJson(`/api/sessions/${SESSION}/ledger/chart?from=${mid}&to=${events.length}`)).body
    expect(ranged.calls.version).toEqual(
      steps.filter((c: { version: number }) => c.version >= mid).map((c: { version: number }) => c.version),
    )
    expect(ranged.marks.version).toEqual(
      whole.entries.filter((e: Entry) => e.version >= mid).map((e: Entry) => e.version),
    )
    // Entries: by kind and range, paged; one pivot's by its marker.
    const compactions = whole.entries.filter((e: Entry) => e.kind === "compaction")
    const page = (await getJson(`/api/sessions/${SESSION}/ledger/entries?kind=compaction&offset=1&limit=2`)).body
    expect(page.total).toBe(compactions.length)
    expect(page.entries).toEqual(compactions.slice(1, 3))
    const second = compactions[1] as Entry
    const one = (await getJson(`/api/sessions/${SESSION}/ledger/entries?marker=${second.markerId}`)).body
    expect(one.entries).toEqual([second])
    const inRange = (await getJson(`/api/sessions/${SESSION}/ledger/entries?from=${mid}&limit=500`)).body
    expect(inRange.limit).toBe(200)
    expect(inRange.entries).toEqual(whole.entries.filter((e: Entry) => e.version >= mid).slice(0, 200))
    // Malformed queries: one line each.
    for (const [query, error] of [
      ["kind=pivot", /^kind must be compaction or prune, got "pivot"$/],
      ["from=9&to=3", /^from \(9\) must be at most to \(3\)$/],
      ["limit=-1", /^limit must be an integer ≥ 0/],
      ["marker=a%20b", /^marker must be a message id$/],
    ] as const) {
      const bad = await getJson(`/api/sessions/${SESSION}/ledger/entries?${query}`)
      expect(bad.status, query).toBe(400)
      expect(bad.body.error, query).toMatch(error)
    }
    expect((await getJson(`/api/sessions/${SESSION}/ledger/more`)).status).toBe(404)
  })

  it("answers the timeline: one point per model step that reported usage, and every mark", async () => {
    const { body } = await getJson(`/api/sessions/${SESSION}/timeline`)
    const steps = events.flatMap((e, i) =>
      e._tag === "AssistantStepRecorded" && e.message.summary !== true ? [i + 1] : [],
    )
    expect(body.points.version).toEqual(steps)
    expect(body.steps).toBe(steps.length)
    const { body: range } = await getJson(`/api/sessions/${SESSION}/timeline?from=20&to=60`)
    expect(range.points.version).toEqual(steps.filter((v) => v >= 20 && v <= 60))
    expect((await getJson(`/api/sessions/${SESSION}/timeline?from=x`)).status).toBe(400)
    const kinds = (kind: string) => body.marks.filter((m: { kind: string }) => m.kind === kind).length
    expect(kinds("pivot")).toBe(count("SummaryFinished"))
    // A prune's consecutive PartCompacted events are one mark, counting them.
    const runs = events.filter((e, i) => e._tag === "PartCompacted" && events[i - 1]?._tag !== "PartCompacted").length
    expect(kinds("prune")).toBe(runs)
    expect(kinds("prune")).toBeGreaterThan(0)
    const pruneMarks = body.marks.filter((m: { kind: string }) => m.kind === "prune")
    expect(pruneMarks.reduce((n: number, m: { count: number }) => n + m.count, 0)).toBe(count("PartCompacted"))
    expect(kinds("fallback")).toBe(1)
    expect(kinds("provider-overflow")).toBe(1)
    expect(kinds("manual-compaction")).toBe(1)
    for (const mark of body.marks) expect(mark.label.length).toBeGreaterThan(0)
  })

  it("answers the window at every version with the bytes of the CLI's rendering of the replayed window", async () => {
    // The reference: a plain fold of the prefix from zero (the CLI's replay must equal it) through ValidWindow.toJson.
    for (let version = 0; version <= events.length; version += 7) {
      const response = await fetch(`${base}/api/sessions/${SESSION}/window/${version}/raw`)
      expect(response.status).toBe(200)
      expect(await response.text()).toBe(ValidWindow.toJson(Window.messages(Window.fold(events.slice(0, version)))))
    }
  })

  it("answers each window entry with its kind, source events and pruned originals", async () => {
    const { body } = await getJson(`/api/sessions/${SESSION}/window/${events.length}`)
    const kinds = body.entries.map((e: { kind: string }) => e.kind)
    expect(kinds).toContain("marker")
    expect(kinds).toContain("summary")
    for (const entry of body.entries) expect(entry.eventIds.length).toBeGreaterThan(0)
    const summary = body.entries.find((e: { kind: string }) => e.kind === "summary")
    expect(summary.summary.facts).toMatch(/^## Facts \(from the log\)/)
    // Right after each pivot, the entries marked as the retained tail are exactly its plan's tail.
    for (const [i, e] of events.entries()) {
      if (e._tag !== "SummaryFinished") continue
      const started = events.find((s) => s._tag === "CompactionStarted" && s.markerId === e.markerId)!
      const { body: after } = await getJson(`/api/sessions/${SESSION}/window/${i + 1}`)
      const tail = after.entries
        .filter((x: { kind: string }) => x.kind === "tail")
        .map((x: { messageId: string }) => x.messageId)
      expect(tail).toEqual(started._tag === "CompactionStarted" ? started.plan.tail : [])
    }
    const pruned = body.entries.flatMap((e: { pruned: Array<{ original: string }> }) => e.pruned)
    for (const p of pruned) expect(p.original.length).toBeGreaterThan(0)
  })

  it("gives each pivot the reason its request recorded", async () => {
    const { body: session } = await getJson(`/api/sessions/${SESSION}`)
    const reasons = new Map(
      events.flatMap((e) => (e._tag === "CompactionRequested" ? [[e.marker.id as string, e.reason]] : [])),
    )
    expect(session.pivots.length).toBeGreaterThan(0)
    for (const pivot of session.pivots as Array<{ markerId: string; reason?: string }>) {
      expect(pivot.reason).toBeDefined()
      expect(pivot.reason).toBe(reasons.get(pivot.markerId))
    }
  })

  it("keeps the XSS payload as plain data in the JSON", async () => {
    const version = events.findIndex((e) => JSON.stringify(e).includes("__pwned")) + 1
    const text = await (await fetch(`${base}/api/sessions/${SESSION}/window/${version}`)).text()
    expect(text).toContain(JSON.stringify(XSS_PAYLOAD).slice(1, -1))
  })

  it("diffs two versions: the summary enters, the head leaves", async () => {
    const { body: session } = await getJson(`/api/sessions/${SESSION}`)
    const pivot = session.pivots[0]
    const { status, body } = await getJson(
      `/api/sessions/${SESSION}/diff?from=${pivot.requestedVersion - 1}&to=${pivot.version}`,
    )
    expect(status).toBe(200)
    expect(
      body.rows.some(
        (r: { change: string; sourceMessageId: string }) =>
          r.change === "entered" && r.sourceMessageId === pivot.summaryId,
      ),
    ).toBe(true)
    expect(body.counts.left).toBeGreaterThan(0)
    const { body: same } = await getJson(`/api/sessions/${SESSION}/diff?from=9&to=9`)
    expect(same.counts).toMatchObject({ entered: 0, left: 0, replaced: 0, changed: 0 })
  })

  it("diffs across a prune: the pruned output is replaced by a placeholder", async () => {
    const at = events.findIndex((e) => e._tag === "PartCompacted") + 1
    const { body } = await getJson(`/api/sessions/${SESSION}/diff?from=${at - 1}&to=${at}`)
    expect(body.counts.replaced).toBeGreaterThan(0)
  })

  it("reports each pivot: what it replaced, its summary and facts, the summariser or fallback, the tail", async () => {
    const started = events.filter((e) => e._tag === "CompactionStarted")
    for (let n = 1; n <= started.length; n++) {
      const { status, body } = await getJson(`/api/sessions/${SESSION}/pivots/${n}`)
      expect(status).toBe(200)
      expect(body.replaced.messages).toBe(started[n - 1]!.plan.head.length)
      expect(body.tail).toEqual(started[n - 1]!.plan.tail)
      expect(body.summary.facts).toMatch(/^## Facts/)
      expect(body.summariser.model).toBe("test/test-model")
      expect(body.summariser.fallback).toBe(n === 2 ? "failed" : undefined)
    }
    expect((await getJson(`/api/sessions/${SESSION}/pivots/${started.length + 1}`)).status).toBe(404)
  })

  it("pages the event log, filtered by type, never more than 500 at once", async () => {
    const { body: first } = await getJson(`/api/sessions/${SESSION}/events?offset=0&limit=10`)
    expect(first.total).toBe(events.length)
    expect(first.events.map((e: { version: number }) => e.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(first.events[0].data).toEqual(events[0])
    const { body: prunes } = await getJson(`/api/sessions/${SESSION}/events?type=PartCompacted&offset=2&limit=3`)
    expect(prunes.total).toBe(count("PartCompacted"))
    const at = events.flatMap((e, i) => (e._tag === "PartCompacted" ? [i + 1] : []))
    expect(prunes.events.map((e: { version: number }) => e.version)).toEqual(at.slice(2, 5))
    const { body: capped } = await getJson(`/api/sessions/${SESSION}/events?limit=100000`)
    expect(capped.limit).toBe(500)
    const { body: none } = await getJson(`/api/sessions/${SESSION}/events?type=NoSuchType`)
    expect(none.total).toBe(0)
  })

  it("answers unknown and malformed requests with 404 and 400 as JSON", async () => {
    const cases: Array<[string, number]> = [
      ["/api/sessions/ses_nope", 404],
      ["/api/sessions/ses_nope/timeline", 404],
      [`/api/sessions/${SESSION}/window/${events.length + 1}`, 404],
      [`/api/sessions/${SESSION}/window/${events.length + 1}/raw`, 404],
      [`/api/sessions/${SESSION}/window/1.5`, 400],
      [`/api/sessions/${SESSION}/diff?from=1`, 400],
      [`/api/sessions/${SESSION}/diff?from=1&to=99999`, 404],
      [`/api/sessions/${SESSION}/events?type=%3Cb%3E`, 400],
      [`/api/sessions/${SESSION}/events?offset=-3`, 400],
      [`/api/sessions/${SESSION}/pivots/x`, 400],
      ["/api/sessions/%E0%A4%A", 400],
      ["/api/nothing", 404],
      [`/api/sessions/${SESSION}/nothing`, 404],
    ]
    for (const [url, status] of cases) {
      const { status: got, body } = await getJson(url)
      expect(got, url).toBe(status)
      expect(typeof body.error, url).toBe("string")
    }
  })
})

describe("the JSON API's 400 messages", () => {
  it("say what was malformed: a count is not called a stream version", async () => {
    const cases: Array<[string, string]> = [
      [`/api/sessions/${SESSION}/events?offset=-3`, 'offset must be an integer ≥ 0, got "-3"'],
      [`/api/sessions/${SESSION}/events?limit=abc`, 'limit must be an integer ≥ 0, got "abc"'],
      [`/api/sessions/${SESSION}/pivots/x`, 'the pivot number must be an integer ≥ 1, got "x"'],
      [`/api/sessions/${SESSION}/window/1.5`, 'the version must be a stream version (an integer ≥ 0), got "1.5"'],
      // A range the wrong way round (it answered a chart of one empty row).
      [`/api/sessions/${SESSION}/timeline?from=50&to=10`, "from (50) must be at most to (10)"],
    ]
    for (const [url, message] of cases) {
      const { status, body } = await getJson(url)
      expect(status, url).toBe(400)
      expect(body.error, url).toBe(message)
    }
  })
})

describe("compression", () => {
  /** A GET whose body is kept as bytes (node's http does not decode it, as fetch would). */
  const bytes = (url: string, headers: http.OutgoingHttpHeaders) =>
    new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: server.port, path: url, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
      })
      req.on("error", reject)
      req.end()
    })

  it("encodes API answers and assets as Accept-Encoding asks, decoding to the same bytes", async () => {
    for (const url of [`/api/sessions/${SESSION}/ledger`, `/api/sessions/${SESSION}/timeline`, "/assets/app.js"]) {
      const plain = await bytes(url, {})
      expect(plain.headers["content-encoding"], url).toBeUndefined()
      expect(plain.headers.vary, url).toBe("accept-encoding")
      for (const [accept, decode] of [
        ["gzip", zlib.gunzipSync],
        ["br", zlib.brotliDecompressSync],
        ["gzip, deflate, br", zlib.brotliDecompressSync],
      ] as const) {
        const encoded = await bytes(url, { "accept-encoding": accept })
        expect(encoded.headers["content-encoding"], `${url} ${accept}`).toBe(accept.includes("br") ? "br" : "gzip")
        expect(decode(encoded.body).equals(plain.body), `${url} ${accept}`).toBe(true)
        if (plain.body.length > 10_000) expect(encoded.body.length, url).toBeLessThan(plain.body.length / 3)
      }
      expect((await bytes(url, { "accept-encoding": "gzip;q=0, br;q=0" })).headers["content-encoding"]).toBeUndefined()
    }
  })
})

describe("security", () => {
  it("answers every method but GET and HEAD with 405 and Allow: GET, HEAD", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
      for (const url of ["/", "/api/sessions", `/api/sessions/${SESSION}/window/3`]) {
        const response = await raw(method, url)
        expect(response.status, `${method} ${url}`).toBe(405)
        expect(response.headers.allow).toBe("GET, HEAD")
      }
  })

  it("given HEAD of any GET route, then it answers as GET does (status and headers) without a body", async () => {
    // What a response says about itself, without the clock's and the connection's headers.
    const described = (response: { status: number; headers: http.IncomingHttpHeaders }) => {
      const { date: _date, "keep-alive": _keepAlive, connection: _connection, ...headers } = response.headers
      return { status: response.status, headers }
    }
    for (const [url, encoding] of [
      ["/", undefined],
      [`/sessions/${SESSION}`, undefined],
      [`/sessions/${SESSION}/versions/3`, undefined],
      ["/api/sessions", undefined],
      ["/api/sessions", "gzip"],
      [`/api/sessions/${SESSION}/window/3`, undefined],
      [`/api/sessions/${SESSION}/window/3/raw`, "br"],
      [`/api/sessions/${SESSION}/timeline`, undefined],
      ["/assets/app.js", "gzip"],
      // Errors too: a HEAD is answered as its GET would be, 404 and 400 included.
      ["/api/sessions/ses_nope", undefined],
      [`/api/sessions/${SESSION}/window/x`, undefined],
      ["/no/such/page", undefined],
    ] as const) {
      const headers = encoding === undefined ? {} : { "accept-encoding": encoding }
      const get = await raw("GET", url, server.port, headers)
      const head = await raw("HEAD", url, server.port, headers)
      expect(described(head), `HEAD ${url}`).toEqual(described(get))
      expect(head.body, `HEAD ${url}`).toBe("")
      expect(get.body.length, `GET ${url}`).toBeGreaterThan(0)
    }
    // The live stream: its GET never ends, so only its HEAD is read whole (the stream's status and type, no body).
    const live = await raw("HEAD", `/api/sessions/${SESSION}/live`)
    expect({ status: live.status, type: live.headers["content-type"], body: live.body }).toEqual({
      status: 200,
      type: "text/event-stream",
      body: "",
    })
  })

  it("serves the bundled assets by name and nothing else", async () => {
    for (const name of ["app.js", "style.css", "uPlot.iife.min.js", "uPlot.min.css"])
      expect((await raw("GET", `/assets/${name}`)).status, name).toBe(200)
    for (const url of [
      "/assets/../package.json",
      "/assets/..%2Fpackage.json",
      "/assets/%2e%2e%2f%2e%2e%2fpackage.json",
      "/assets/../../../../etc/passwd",
      "/assets/..\\..\\package.json",
      "/assets/node_modules/uplot/package.json",
      "/assets/",
      "/assets/hasOwnProperty",
      "/assets/__proto__",
    ]) {
      const response = await raw("GET", url)
      expect(response.status, url).toBe(404)
      expect(response.body, url).not.toContain('"name"')
    }
  })

  it("escapes every HTML special character", () => {
    expect(Pages.escapeHtml(`<a href="x" onclick='y'>&\`</a>`)).toBe(
      "&#60;a href=&#34;x&#34; onclick=&#39;y&#39;&#62;&#38;&#96;&#60;/a&#62;",
    )
  })

  it("binds 127.0.0.1 by default", () => {
    expect(server.host).toBe("127.0.0.1")
    expect(server.token).toBeUndefined()
  })

  it("needs the token when one is set: 401 without it, the cookie it sets afterwards", async () => {
    const guarded = await Serve.start({ source: db, port: 0, token: "s3cret-token" })
    try {
      const url = `http://127.0.0.1:${guarded.port}`
      const missing = await fetch(`${url}/api/sessions`)
      expect(missing.status).toBe(401)
      expect(await missing.json()).toEqual({ error: "an access token is required (?token=…)" })
      const wrong = await fetch(`${url}/api/sessions?token=wrong-token`)
      expect(wrong.status).toBe(401)
      expect(await wrong.json()).toEqual({
        error: "the access token is not this server's (use the URL `pivot serve` printed)",
      })
      const ok = await fetch(`${url}/api/sessions?token=s3cret-token`)
      expect(ok.status).toBe(200)
      const cookie = ok.headers.get("set-cookie")!
      expect(cookie).toContain("HttpOnly")
      const viaCookie = await fetch(`${url}/api/sessions`, { headers: { cookie: cookie.split(";")[0]! } })
      expect(viaCookie.status).toBe(200)
      const viaBearer = await fetch(`${url}/`, { headers: { authorization: "Bearer s3cret-token" } })
      expect(viaBearer.status).toBe(200)
      expect(guarded.url).toContain("?token=s3cret-token")
    } finally {
      await guarded.close()
    }
  })

  it("generates a token when asked to listen beyond loopback", async () => {
    const open = await Serve.start({ source: db, port: 0, host: "0.0.0.0" })
    try {
      expect(open.token).toMatch(/^[A-Za-z0-9_-]{32}$/)
      expect((await fetch(`http://127.0.0.1:${open.port}/api/sessions`)).status).toBe(401)
      expect((await fetch(`http://127.0.0.1:${open.port}/api/sessions?token=${open.token}`)).status).toBe(200)
    } finally {
      await open.close()
    }
  })

  it("answers only a Host naming this loopback server: another name (DNS rebinding) or port gets a 403", async () => {
    const port = server.port
    const get = (host: string, url = "/api/sessions") => raw("GET", url, port, { host })
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `127.8.9.10:${port}`,
      `[::1]:${port}`,
      `localhost.:${port}`,
    ]) {
      const response = await get(host)
      expect(response.status, host).toBe(200)
      expect(JSON.parse(response.body).sessions, host).toHaveLength(1)
    }
    for (const host of [
      `attacker.example:${port}`,
      "attacker.example",
      `127.0.0.1.attacker.example:${port}`,
      `localhost.attacker.example:${port}`,
      `128.0.0.1:${port}`,
      `127.0.0.256:${port}`,
      `[::2]:${port}`,
      `127.0.0.1:${port + 1}`,
      `127.0.0.1:${port - 1}`,
      "127.0.0.1",
      `localhost:${port}:${port}`,
    ]) {
      for (const url of ["/api/sessions", `/api/sessions/${SESSION}/window/3/raw`, "/", "/assets/app.js"]) {
        const response = await get(host, url)
        expect(response.status, `${host} ${url}`).toBe(403)
        expect(response.body, `${host} ${url}`).not.toContain(SESSION)
      }
      const api = await get(host)
      expect(JSON.parse(api.body).error, host).toMatch(
        /^[^\n]*loopback viewer answers only to localhost, 127\.0\.0\.0\/8 or \[::1\] on port \d+$/,
      )
    }
  })

  it("leaves the Host unchecked beyond loopback, where the token guards every request", async () => {
    const open = await Serve.start({ source: db, port: 0, host: "0.0.0.0", token: "s3cret-token" })
    try {
      const bearer = { authorization: "Bearer s3cret-token" }
      expect((await raw("GET", "/api/sessions", open.port, { host: "viewer.lan:80", ...bearer })).status).toBe(200)
      expect((await raw("GET", "/api/sessions", open.port, { host: "viewer.lan:80" })).status).toBe(401)
    } finally {
      await open.close()
    }
  })

  it("never modifies the store (the file hashes the same after every request above)", () => {
    expect(hash(db)).toBe(before)
  })
})

describe("startup", () => {
  it("fails clearly on a missing, corrupt or foreign store, a bad export, a bad port or a taken one", async () => {
    const garbage = path.join(dir, "garbage.db")
    fs.writeFileSync(garbage, "this is not a database, just text that is long enough to have a header".repeat(10))
    const empty = path.join(dir, "empty.db")
    fs.writeFileSync(empty, "")
    const badExport = path.join(dir, "bad.json")
    fs.writeFileSync(badExport, "{}")
    const cases: Array<[Serve.ServeOptions, RegExp]> = [
      [{ source: path.join(dir, "missing.db") }, /^no database at .*missing\.db/],
      // As the CLI's read commands say them.
      [{ source: dir }, /^.* is not a file$/],
      [{ source: empty }, /^.*empty\.db is empty \(0 bytes\): not a pivot database$/],
      // The path once: "cannot open X: X: …" said it twice.
      [{ source: garbage }, /^cannot open [^:]*garbage\.db: (?!.*garbage\.db).*not a SQLite database/],
      [{ source: badExport }, /bad\.json: /],
      [{ source: db, port: 70000 }, /port must be an integer/],
      [{ source: db, port: server.port }, /^cannot listen on 127\.0\.0\.1:\d+/],
      [{ source: db, token: "short" }, /token must be/],
      // A typed startup error that names what is wrong, without the password (it was "Invalid URL", a defect).
      [{ source: "postgres://me:hunter2@[::1/pivot" }, /^not a valid PostgreSQL URL: postgres:\/\/me:\*\*\*@/],
    ]
    for (const [options, message] of cases) await expect(Serve.start(options)).rejects.toThrow(message)
    await expect(Serve.start({ source: "postgres://me:hunter2@[::1/pivot" })).rejects.toSatisfy(
      (error: Error) => !error.message.includes("hunter2"),
    )
    expect(fs.existsSync(path.join(dir, "missing.db"))).toBe(false)
  })
})

describe("sources", () => {
  it("serves an OpenCode export imported into memory, leaving the file as it was", async () => {
    const file = path.resolve(import.meta.dirname, "../../opencode/test/fixtures/compaction-tail.json")
    const bytes = hash(file)
    const served = await Serve.start({ source: file, port: 0 })
    try {
      const response = await fetch(`http://127.0.0.1:${served.port}/api/sessions`)
      const { sessions } = (await response.json()) as { sessions: Array<{ sessionId: string; events: number }> }
      expect(sessions).toHaveLength(1)
      expect(sessions[0]!.events).toBeGreaterThan(0)
    } finally {
      await served.close()
    }
    expect(hash(file)).toBe(bytes)
  })
})

describe("live", () => {
  it("pushes the new head over server-sent events while a writer appends", async () => {
    const first = play({ sessionId: "ses_live", turns: 6 })
    await writeSqlite(liveDb, "ses_live", first)
    const served = await Serve.start({ source: liveDb, port: 0 })
    const controller = new AbortController()
    try {
      const response = await fetch(`http://127.0.0.1:${served.port}/api/sessions/ses_live/live`, {
        signal: controller.signal,
      })
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let text = ""
      const until = async (pattern: RegExp) => {
        while (!pattern.test(text)) {
          const { value, done } = await reader.read()
          if (done) throw new Error(`the stream ended before ${pattern}: ${text}`)
          text += decoder.decode(value)
        }
      }
      await until(new RegExp(`data: ${first.length}\\n`))
      // A writer appends a user message, as an agent would.
      const next: Events.Event = {
        _tag: "UserMessageAdded",
        at: 1_800_000_000_000,
        message: {
          role: "user",
          id: "msg_live_000001" as never,
          createdAt: 1_800_000_000_000,
          parts: [{ type: "text", id: "prt_live_000001" as never, text: "one more thing" }],
        },
      }
      await Effect.runPromise(
        SessionLog.append("ses_live", first.length, [{ id: "evt_live_extra", event: next }]).pipe(
          Effect.provide(ReadModels.layerSqlite({ filename: liveDb })),
        ),
      )
      await until(new RegExp(`data: ${first.length + 1}\\n`))
      const { body } = {
        body: (await (await fetch(`http://127.0.0.1:${served.port}/api/sessions/ses_live`)).json()) as { head: number },
      }
      expect(body.head).toBe(first.length + 1)
    } finally {
      controller.abort()
      await served.close()
    }
  })

  it("stops at once while a page follows a session: the live stream ends, it does not hold the shutdown", async () => {
    const served = await Serve.start({ source: db, port: 0 })
    const response = await fetch(`http://127.0.0.1:${served.port}/api/sessions/${SESSION}/live`)
    const reader = response.body!.getReader()
    await reader.read() // the head: the stream is open, as an open browser tab holds it
    // Without the stream ending first, the server waited for this connection (its graceful shutdown: 20 s).
    await served.close()
    let done = false
    while (!done) done = (await reader.read()).done
    expect(done).toBe(true)
  }, 10_000)
})
