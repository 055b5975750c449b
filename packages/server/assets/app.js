// pivot's viewer in the browser: fills each page from the JSON API. Session text is only ever inserted as text
// nodes (`el` with string children, `textContent`), never as markup, so a tool output holding HTML stays text.
;(() => {
  const body = document.body
  const page = body.dataset.page
  const sessionId = body.dataset.session
  const main = document.getElementById("main")
  const api = (path) => `/api/sessions${path}`
  const enc = encodeURIComponent

  /** An element with attributes and children (strings become text nodes). */
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag)
    for (const [key, value] of Object.entries(attrs ?? {})) {
      if (value === undefined || value === null || value === false) continue
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value)
      else if (key === "dataset") Object.assign(node.dataset, value)
      else node.setAttribute(key, value === true ? "" : String(value))
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue
      node.append(typeof child === "string" || typeof child === "number" ? String(child) : child)
    }
    return node
  }

  const getJson = async (url) => {
    const response = await fetch(url, { credentials: "same-origin" })
    const data = await response.json()
    if (!response.ok) throw new Error(data.error ?? `${response.status}`)
    return data
  }

  const num = (n) => (n === undefined || n === null ? "—" : Math.round(n).toLocaleString("en-US"))
  const when = (ms) =>
    ms === undefined || ms === null ? "—" : new Date(ms).toISOString().replace("T", " ").slice(0, 19)
  const sessionHref = (suffix = "") => `/sessions/${enc(sessionId)}${suffix}`

  const crumbs = (...items) => {
    const nav = document.getElementById("crumbs")
    nav.replaceChildren(...items.flatMap((item) => [" / ", typeof item === "string" ? el("span", {}, item) : item]))
  }

  /** Replaces a node's children; nothing for null, undefined, false or "" (replaceChildren would print "null"). */
  const fill = (node, ...children) =>
    node.replaceChildren(...children.filter((c) => c !== undefined && c !== null && c !== false && c !== ""))

  const fail = (error) => fill(main, el("p", { class: "error", id: "error" }, String(error.message ?? error)))

  // ---------------------------------------------------------------------------------------------------------------
  // Sessions

  const sessionsPage = async () => {
    crumbs("sessions")
    const { sessions } = await getJson("/api/sessions")
    const columns = [
      ["sessionId", "session"],
      ["title", "title"],
      ["messages", "messages"],
      ["events", "events"],
      ["pivots", "pivots"],
      ["prunes", "prunes"],
      ["usage", "usage (tokens)"],
      ["lastActivity", "last activity"],
    ]
    let sortKey = "lastActivity"
    let descending = true
    const tbody = el("tbody")
    const render = () => {
      const sorted = [...sessions].sort((a, b) => {
        const x = a[sortKey] ?? ""
        const y = b[sortKey] ?? ""
        const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))
        return descending ? -c : c
      })
      tbody.replaceChildren(
        ...sorted.map((s) =>
          el(
            "tr",
            { dataset: { session: s.sessionId } },
            el("td", {}, el("a", { href: `/sessions/${enc(s.sessionId)}` }, s.sessionId)),
            el("td", {}, s.title ?? ""),
            el("td", { class: "n" }, num(s.messages)),
            el("td", { class: "n" }, num(s.events)),
            el("td", { class: "n" }, num(s.pivots)),
            el("td", { class: "n" }, num(s.prunes)),
            el("td", { class: "n" }, num(s.usage)),
            el("td", {}, when(s.lastActivity)),
          ),
        ),
      )
    }
    const head = el(
      "tr",
      {},
      columns.map(([key, label]) =>
        el(
          "th",
          {
            dataset: { sort: key },
            onclick: () => {
              descending = sortKey === key ? !descending : true
              sortKey = key
              render()
            },
          },
          label,
        ),
      ),
    )
    render()
    fill(
      main,
      el("h1", {}, `${sessions.length} session${sessions.length === 1 ? "" : "s"}`),
      sessions.length === 0
        ? el("p", {}, "the store holds no sessions")
        : el("table", { id: "sessions" }, el("thead", {}, head), tbody),
      await projectionsSection(),
    )
  }

  /** The read side: built-in read models and users' projections, their progress, and a stored state on demand. */
  const projectionsSection = async () => {
    const { projections } = await getJson("/api/projections")
    const shown = el("pre", { id: "projection-state", class: "state" })
    const progress = (s) =>
      s === undefined
        ? "inline with every append"
        : `${s.ready ? (s.lag === 0 ? "current" : `${num(s.lag)} events behind`) : "building"} at ${num(s.checkpoint)}/${num(s.head)}`
    const rows = projections.map((p) =>
      el(
        "tr",
        { dataset: { projection: p.name } },
        el(
          "td",
          {},
          p.kind === "projection"
            ? el(
                "a",
                {
                  href: "#",
                  onclick: async (event) => {
                    event.preventDefault()
                    const key = p.scope === "global" ? "" : `?key=${enc(prompt("session id") ?? "")}`
                    try {
                      const found = await getJson(`/api/projections/${enc(p.name)}${key}`)
                      shown.textContent = JSON.stringify(found.state, null, 2)
                    } catch (error) {
                      shown.textContent = String(error.message ?? error)
                    }
                  },
                },
                p.name,
              )
            : p.name,
        ),
        el("td", { class: "n" }, `v${p.version}`),
        el("td", {}, `${p.kind}, ${p.mode}, per ${p.scope === "global" ? "store" : "session"}`),
        el("td", {}, progress(p.status)),
        el("td", { class: "n" }, p.status === undefined ? "—" : num(p.status.lag)),
        el("td", { class: "error" }, p.status?.failures > 0 ? `${p.status.failures}× ${p.status.error ?? ""}` : ""),
      ),
    )
    const head = el(
      "tr",
      {},
      ["projection", "version", "kind", "status", "lag", "failures"].map((label) => el("th", {}, label)),
    )
    return el(
      "section",
      { id: "projections" },
      el("h2", {}, "read side"),
      el("table", { id: "projections-table" }, el("thead", {}, head), el("tbody", {}, rows)),
      shown,
    )
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Session: timeline, pivots, links

  const MARK_COLOURS = {
    pivot: "#7c3aed",
    prune: "#9ca3af",
    fallback: "#d97706",
    "provider-overflow": "#dc2626",
    "manual-compaction": "#2563eb",
  }

  /**
   * The chart's columns from a timeline answer, as the server made them (`SessionView.chart`: x over the whole range,
   * the overflow line from edge to edge), and the usable limit when given.
   */
  const chartData = (timeline) => {
    const c = timeline.chart
    const data = [c.version, c.total, c.input, c.cache, c.output, c.overflow]
    if (timeline.usable !== undefined && timeline.usable !== null) data.push(c.version.map(() => timeline.usable))
    return data
  }

  const timelineChart = (container, timeline, tooltip) => {
    const series = [
      { label: "version" },
      { label: "context (tokens)", stroke: "#111827", width: 2 },
      { label: "input", stroke: "#0ea5e9", width: 1 },
      { label: "cache", stroke: "#10b981", width: 1 },
      { label: "output", stroke: "#f59e0b", width: 1 },
      { label: "overflow line", stroke: "#dc2626", dash: [6, 4], width: 1 },
    ]
    if (timeline.usable !== undefined && timeline.usable !== null)
      series.push({ label: "usable limit", stroke: "#6b7280", dash: [2, 3], width: 1 })
    const data = chartData(timeline)
    // The overview holds at most a few thousand points; a zoomed range is fetched at full detail.
    const sampled = timeline.steps > timeline.points.version.length
    let detail = 0
    const loadDetail = (u) => {
      if (!sampled) return
      const ticket = ++detail
      setTimeout(async () => {
        if (ticket !== detail) return
        const { min, max } = u.scales.x
        const whole = min <= data[0][0] && max >= data[0][data[0].length - 1]
        if (whole) return u.setData(data, false)
        const range = await getJson(
          api(`/${enc(sessionId)}/timeline?from=${Math.max(0, Math.floor(min))}&to=${Math.ceil(max)}`),
        )
        if (ticket === detail) u.setData(chartData({ ...range, usable: timeline.usable }), false)
      }, 150)
    }
    const marks = timeline.marks
    const drawMarks = (u) => {
      const ctx = u.ctx
      const { top, height } = u.bbox
      ctx.save()
      for (const m of marks) {
        if (m.kind !== "prune") continue
        const x = Math.round(u.valToPos(m.version, "x", true))
        ctx.fillStyle = MARK_COLOURS.prune
        ctx.fillRect(x, top + height - 8 * devicePixelRatio, Math.max(1, devicePixelRatio), 8 * devicePixelRatio)
      }
      ctx.restore()
    }
    const overlay = el("div", { class: "marks" })
    const placeMarks = (u) => {
      // Read the width once: reading layout between writes would reflow once per mark.
      const width = u.over.clientWidth
      for (const node of overlay.children) {
        const x = u.valToPos(Number(node.dataset.version), "x")
        node.style.left = `${x}px`
        node.hidden = x < 0 || x > width
      }
    }
    const width = Math.max(480, container.clientWidth || 900)
    const chart = new uPlot(
      {
        width,
        height: 320,
        series,
        scales: { x: { time: false } },
        axes: [{ label: "stream version" }, { label: "tokens", size: 70 }],
        cursor: { drag: { x: true, y: false } },
        hooks: {
          draw: [drawMarks, placeMarks],
          setScale: [
            (u, key) => {
              if (key !== "x") return
              placeMarks(u)
              loadDetail(u)
            },
          ],
        },
      },
      data,
      container,
    )
    for (const m of marks) {
      if (m.kind === "prune") continue
      overlay.append(
        el("button", {
          class: `mark mark-${m.kind}`,
          title: `${m.label} · v${m.version} · ${m.eventType} ${m.eventId}`,
          "aria-label": m.label,
          dataset: { kind: m.kind, version: m.version, event: m.eventId },
          onmouseenter: () => {
            tooltip.textContent = `v${m.version} · ${m.eventType} · ${m.label}`
          },
          onclick: () => {
            location.href = sessionHref(`/versions/${m.version}`)
          },
        }),
      )
    }
    chart.over.append(overlay)
    placeMarks(chart)
    // Prunes are too many for buttons: the cursor names the nearest one.
    const prunes = marks.filter((m) => m.kind === "prune")
    chart.over.addEventListener("mousemove", (e) => {
      if (prunes.length === 0) return
      const v = chart.posToVal(e.offsetX, "x")
      let best
      for (const m of prunes) if (best === undefined || Math.abs(m.version - v) < Math.abs(best.version - v)) best = m
      if (best !== undefined && Math.abs(chart.valToPos(best.version, "x") - e.offsetX) <= 3)
        tooltip.textContent = `v${best.version} · ${best.eventType} · ${best.label}`
    })
    return { chart, data, marks }
  }

  /**
   * The cost chart beside usage: per conversation call, its input as billed (input-token equivalents at the model's
   * cache rates) and its stable prefix (estimated tokens identical to the previous call's input), with each pivot's
   * line where it formed (its ledger figures on hover) and each prune batch's tick; see docs/ledger.md.
   */
  const costChart = (container, ledger, numbers, tooltip) => {
    const steps = ledger.calls.filter((c) => c.kind === "step")
    const data = [steps.map((c) => c.version), steps.map((c) => c.billed), steps.map((c) => c.stablePrefix)]
    const overlay = el("div", { class: "marks" })
    const placeMarks = (u) => {
      const width = u.over.clientWidth
      for (const node of overlay.children) {
        const x = u.valToPos(Number(node.dataset.version), "x")
        node.style.left = `${x}px`
        node.hidden = x < 0 || x > width
      }
    }
    const chart = new uPlot(
      {
        width: Math.max(480, container.clientWidth || 900),
        height: 220,
        series: [
          { label: "version" },
          { label: "billed input (eq)", stroke: "#7c3aed", width: 2 },
          { label: "stable prefix (tokens)", stroke: "#10b981", width: 1 },
        ],
        // The same x axis as the usage chart above it: version 0 to the head.
        scales: { x: { time: false, range: () => [0, ledger.head] } },
        axes: [{ label: "stream version" }, { label: "tokens", size: 70 }],
        hooks: { draw: [placeMarks] },
      },
      data,
      container,
    )
    for (const e of ledger.entries) {
      const pivot = e.kind === "compaction"
      const name = pivot ? `pivot #${numbers.get(e.markerId) ?? "?"}` : `prune of ${num(e.parts)} outputs`
      const text = `${name} · v${e.version} · ${pivot ? ledgerLine(e) : `shed ~${num(e.shed)} · net saving ${num(e.net)} eq over ${num(e.calls)} calls`}`
      overlay.append(
        el(pivot ? "button" : "span", {
          class: `cost-mark cost-${pivot ? "pivot" : "prune"}`,
          title: text,
          "aria-label": name,
          dataset: { kind: pivot ? "pivot" : "prune", version: e.version, marker: e.markerId },
          onmouseenter: () => {
            tooltip.textContent = text
          },
        }),
      )
    }
    chart.over.append(overlay)
    placeMarks(chart)
    return chart
  }

  /** A compaction's probes, when a judge answered them: how many artifacts it named from the summary alone. */
  const probesText = (e) => {
    if (e.probes === undefined) return ""
    if (e.probes.error !== undefined) return ` · probes: no answer (${e.probes.error})`
    const expected = e.probes.probes.flatMap((p) => p.expected)
    return ` · probes: the judge named ${num(expected.filter((x) => x.found).length)}/${num(expected.length)} from the summary`
  }

  /** A compaction's ledger line: what it shed, cost, invalidated and saved, and what its summary kept. */
  const ledgerLine = (e) => {
    const kept =
      e.retention === undefined
        ? ""
        : ` · kept ${num(e.retention.artifacts.filter((a) => a.named).length)}/${num(e.retention.artifacts.length)} artifacts${e.retention.recorded ? "" : " (checked now)"}`
    return (
      `shed ~${num(e.shed)} · summary call ${num(e.summaryCost)} eq · cache ~${num(e.invalidated)} invalidated, ` +
      `~${num(e.rewritten)} re-written · net saving ${num(e.net)} eq over ${num(e.calls)} calls${kept}${probesText(e)}`
    )
  }

  const sessionPage = async () => {
    crumbs(sessionId)
    const [session, timeline, ledger] = await Promise.all([
      getJson(api(`/${enc(sessionId)}`)),
      getJson(api(`/${enc(sessionId)}/timeline`)),
      getJson(api(`/${enc(sessionId)}/ledger`)),
    ])
    const byMarker = new Map(ledger.entries.filter((e) => e.kind === "compaction").map((e) => [e.markerId, e]))
    const tooltip = el(
      "div",
      { id: "tooltip", class: "tooltip" },
      "hover a mark to name its event; drag to zoom; click a mark to open the window there",
    )
    const chartBox = el("div", { id: "chart", class: "chart" })
    const figures = el("p", { id: "figures" })
    const showFigures = (s) =>
      figures.replaceChildren(
        `${num(s.events)} events · ${num(s.messages)} messages · ${num(s.pivots.length)} pivots · ${num(s.prunes)} prunes · usage ${num(s.usage)} tokens · last activity ${when(s.lastActivity)}`,
      )
    showFigures(session)
    // A long session has hundreds of pivots: list the newest hundred (the events page has them all).
    const SHOWN = 100
    const listed = session.pivots.slice(-SHOWN)
    const pivots = el(
      "ol",
      { id: "pivots", start: listed[0]?.number ?? 1 },
      listed.map((p) =>
        el(
          "li",
          { dataset: { version: p.version } },
          el("a", { href: sessionHref(`/pivots/${p.number}`) }, `pivot #${p.number}`),
          ` at v${p.version} (${p.auto ? "auto" : "manual"}${p.overflow ? ", overflow" : ""}${p.fallback ? `, fallback: ${p.fallback}` : ""}) · `,
          el("a", { href: sessionHref(`/versions/${p.requestedVersion - 1}`) }, "window before"),
          " · ",
          el("a", { href: sessionHref(`/versions/${p.version}`) }, "window after"),
          " · ",
          el("a", { href: sessionHref(`/diff?from=${p.requestedVersion - 1}&to=${p.version}`) }, "diff"),
          byMarker.has(p.markerId)
            ? el("span", { class: "ledger" }, ` · ${ledgerLine(byMarker.get(p.markerId))}`)
            : null,
        ),
      ),
    )
    const costBox = el("div", { id: "cost", class: "chart" })
    const costFigures = el("p", { id: "cost-figures" })
    const costTooltip = el("div", { id: "cost-tooltip", class: "tooltip" }, "hover a pivot's line for its ledger")
    const showCost = (l) => {
      const t = l.totals
      costFigures.replaceChildren(
        `${num(t.calls)} calls (${num(t.summaryCalls)} summary${t.probeCalls > 0 ? `, ${num(t.probeCalls)} probe` : ""}) · billed input ${num(t.billed)} eq · ` +
          `cache hit ratio ${Math.round(t.hitRatio * 100)}% · prefix stability ~${Math.round(t.prefixStability * 100)}% · ` +
          `${num(t.compactions)} compactions, ${num(t.prunes)} prunes: net saving ${num(t.net)} eq`,
      )
    }
    showCost(ledger)
    const pivotNumbers = (s) => new Map(s.pivots.map((p) => [p.markerId, p.number]))
    const legend = el(
      "p",
      { class: "legend" },
      Object.entries(MARK_COLOURS).map(([kind, colour]) =>
        el("span", { class: "key" }, el("i", { style: `background:${colour}` }), ` ${kind}: ${timeline.legend[kind]} `),
      ),
    )
    const lineage =
      session.lineage.length === 0
        ? null
        : el(
            "p",
            { class: "lineage", id: "lineage" },
            "forked from ",
            ...session.lineage.flatMap((l, i) => [
              i === 0 ? "" : " → ",
              el(
                "a",
                { href: `/sessions/${enc(l.session)}/versions/${l.version}` },
                `${l.session} at version ${l.version}`,
              ),
            ]),
          )
    fill(
      main,
      el("h1", {}, session.title ?? sessionId),
      lineage,
      figures,
      el(
        "p",
        { class: "links" },
        el("a", { href: sessionHref(`/versions/${session.head}`), id: "latest" }, "window now"),
        " · ",
        el("a", { href: sessionHref("/events") }, "events"),
        " · ",
        el("a", { href: sessionHref(`/diff?from=0&to=${session.head}`) }, "diff"),
      ),
      el("h2", {}, "context usage per model step"),
      legend,
      chartBox,
      tooltip,
      el("h2", {}, "cost per model call (the ledger)"),
      costFigures,
      costBox,
      costTooltip,
      el("h2", {}, `pivots (${session.pivots.length})`),
      session.pivots.length === 0 ? el("p", {}, "no pivot yet") : pivots,
      session.pivots.length > SHOWN
        ? el(
            "p",
            {},
            `the newest ${SHOWN} of ${session.pivots.length} are listed; all: `,
            el("a", { href: sessionHref("/events?type=SummaryFinished") }, "the events that formed them"),
          )
        : "",
    )
    let view = timelineChart(chartBox, timeline, tooltip)
    let cost = costChart(costBox, ledger, pivotNumbers(session), costTooltip)
    // Live: the store's subscription pushes the new head; the page refetches what it shows, at most once a second.
    const live = document.getElementById("live")
    let pending = false
    let shown = session.head
    const refresh = async () => {
      pending = false
      const [s, t, l] = await Promise.all([
        getJson(api(`/${enc(sessionId)}`)),
        getJson(api(`/${enc(sessionId)}/timeline`)),
        getJson(api(`/${enc(sessionId)}/ledger`)),
      ])
      showFigures(s)
      showCost(l)
      cost.destroy()
      costBox.replaceChildren()
      cost = costChart(costBox, l, pivotNumbers(s), costTooltip)
      shown = s.head
      live.hidden = false
      live.textContent = `live · v${s.head}`
      live.dataset.head = String(s.head)
      view.chart.destroy()
      chartBox.replaceChildren()
      view = timelineChart(chartBox, t, tooltip)
    }
    const source = new EventSource(api(`/${enc(sessionId)}/live`))
    source.addEventListener("head", (e) => {
      const head = Number(e.data)
      live.hidden = false
      if (!live.dataset.head) {
        live.dataset.head = String(head)
        live.textContent = `live · v${head}`
      }
      if (head > shown && !pending) {
        pending = true
        setTimeout(refresh, 300)
      }
    })
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The window at a version

  const partText = (part) => {
    switch (part.type) {
      case "text":
        return part.text
      case "reasoning":
        return `(thinking) ${part.text}`
      case "file":
        return `[file ${part.mediaType}${part.filename ? ` ${part.filename}` : ""}]`
      case "tool-call":
        return `⇢ ${part.toolName} ${JSON.stringify(part.input)}`
      case "tool-result": {
        const o = part.output
        const value = o.type === "text" || o.type === "error-text" ? o.value : JSON.stringify(o.value)
        return `⇠ ${part.toolName}${o.type === "error-text" ? " ✗" : ""}: ${value}`
      }
      default:
        return JSON.stringify(part)
    }
  }

  const modelMessage = (m) =>
    el(
      "div",
      { class: `mm role-${m.role}` },
      el("span", { class: "role" }, m.role),
      typeof m.content === "string"
        ? el("pre", { class: "content" }, m.content)
        : m.content.map((part) => el("pre", { class: `content part-${part.type}` }, partText(part))),
    )

  const windowPage = async () => {
    let version = Number(body.dataset.version)
    let marks = []
    let head = version
    const header = el("div", { class: "stepper" })
    const list = el("div", { id: "window" })
    const raw = el("pre", { id: "raw", class: "raw" })
    fill(
      main,
      header,
      list,
      el(
        "details",
        { id: "raw-box" },
        el("summary", {}, "the exact model input (the bytes of pivot window --at … --format json)"),
        raw,
      ),
    )
    const go = (v) => {
      if (v < 0 || v > head || v === version) return
      version = v
      history.replaceState(null, "", sessionHref(`/versions/${v}`))
      load()
    }
    const load = async () => {
      const [data, rawText] = await Promise.all([
        getJson(api(`/${enc(sessionId)}/window/${version}`)),
        fetch(api(`/${enc(sessionId)}/window/${version}/raw`)).then((r) => r.text()),
      ])
      head = data.head
      marks = data.marks
      crumbs(el("a", { href: sessionHref() }, sessionId), `window at v${version}`)
      document.title = `${sessionId} at ${version} · pivot`
      body.dataset.version = String(version)
      header.replaceChildren(
        el("button", { id: "prev", onclick: () => go(version - 1) }, "← v-1"),
        el("strong", { id: "version" }, ` version ${version} of ${head} `),
        el("button", { id: "next", onclick: () => go(version + 1) }, "v+1 →"),
        el("span", { class: "hint" }, " keys: ← → one event · shift+← → previous/next mark · "),
        el("a", { href: sessionHref(`/diff?from=${Math.max(0, version - 1)}&to=${version}`) }, "diff with v-1"),
        ` · ${data.entries.length} stored messages`,
      )
      list.replaceChildren(
        ...(data.entries.length === 0 ? [el("p", {}, "the window is empty")] : []),
        ...data.entries.map((entry) =>
          el(
            "section",
            { class: `entry kind-${entry.kind}`, dataset: { message: entry.messageId, kind: entry.kind } },
            el("h3", {}, el("span", { class: "badge" }, entry.kind), ` ${entry.role} ${entry.messageId}`),
            entry.summary
              ? [
                  el("pre", { class: "summary-text" }, entry.summary.text),
                  entry.summary.facts ? el("pre", { class: "facts" }, entry.summary.facts) : null,
                ]
              : entry.model.map(modelMessage),
            entry.pruned.map((p) =>
              el(
                "details",
                { class: "pruned" },
                el("summary", {}, `✂ pruned ${p.tool} output ${p.partId} (click for the original, kept in storage)`),
                el("pre", {}, p.original),
              ),
            ),
            el("p", { class: "sources" }, `from events: ${entry.eventIds.join(", ")}`),
          ),
        ),
      )
      raw.textContent = rawText
    }
    document.addEventListener("keydown", (e) => {
      if (e.target instanceof HTMLInputElement) return
      if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return
      e.preventDefault()
      const forward = e.key === "ArrowRight"
      if (!e.shiftKey) return go(version + (forward ? 1 : -1))
      const next = forward
        ? marks.find((m) => m.version > version)
        : [...marks].reverse().find((m) => m.version < version)
      go(next ? next.version : forward ? head : 0)
    })
    await load()
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Diff

  const diffPage = async () => {
    const params = new URLSearchParams(location.search)
    const session = await getJson(api(`/${enc(sessionId)}`))
    const from = params.get("from") ?? String(Math.max(0, session.head - 1))
    const to = params.get("to") ?? String(session.head)
    crumbs(el("a", { href: sessionHref() }, sessionId), `diff v${from} → v${to}`)
    const data = await getJson(api(`/${enc(sessionId)}/diff?from=${enc(from)}&to=${enc(to)}`))
    const form = el(
      "form",
      { method: "get", id: "diff-form" },
      "from ",
      el("input", { name: "from", id: "from", value: from, size: 8 }),
      " to ",
      el("input", { name: "to", id: "to", value: to, size: 8 }),
      " ",
      el("button", { type: "submit", id: "run-diff" }, "diff"),
    )
    const c = data.counts
    fill(
      main,
      form,
      el(
        "p",
        { id: "diff-counts" },
        `${c.entered} entered · ${c.left} left · ${c.replaced} replaced by a placeholder · ${c.changed} changed · ${c.same} unchanged`,
      ),
      el(
        "div",
        { id: "diff" },
        data.rows
          .filter((r) => r.change !== "same")
          .map((r) =>
            el(
              "div",
              { class: `row change-${r.change}`, dataset: { change: r.change, key: r.key } },
              el("span", { class: "badge" }, r.change),
              ` ${r.sourceMessageId} `,
              r.before && r.change !== "entered" ? el("div", { class: "before" }, modelMessage(r.before)) : null,
              r.after && r.change !== "left" ? el("div", { class: "after" }, modelMessage(r.after)) : null,
            ),
          ),
      ),
    )
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Pivot report

  const pivotPage = async () => {
    const number = Number(body.dataset.version)
    const [r, ledger] = await Promise.all([
      getJson(api(`/${enc(sessionId)}/pivots/${number}`)),
      getJson(api(`/${enc(sessionId)}/ledger`)),
    ])
    crumbs(el("a", { href: sessionHref() }, sessionId), `pivot #${number}`)
    const row = (label, ...value) => el("tr", {}, el("th", {}, label), el("td", {}, ...value))
    const entry = ledger.entries.find((e) => e.kind === "compaction" && e.markerId === r.markerId)
    // What the summary kept (the retention check) and what a judge could answer from it (the probes), when recorded.
    const retention =
      entry?.retention === undefined
        ? []
        : [
            el(
              "h2",
              {},
              `what the summary kept${entry.retention.recorded ? "" : " (checked now: the log predates the check)"}`,
            ),
            el(
              "ul",
              { id: "retention" },
              entry.retention.artifacts.map((a) =>
                el("li", { dataset: { kind: a.kind, named: a.named } }, `${a.named ? "✓" : "✗"} ${a.kind}: ${a.text}`),
              ),
            ),
          ]
    const probes =
      entry?.probes === undefined
        ? []
        : [
            el(
              "h2",
              {},
              `probes${entry.probes.model ? ` (judge ${entry.probes.model.providerId}/${entry.probes.model.modelId})` : ""}`,
            ),
            entry.probes.error !== undefined
              ? el("p", { id: "probes" }, `the judge gave no answer: ${entry.probes.error}`)
              : el(
                  "dl",
                  { id: "probes" },
                  entry.probes.probes.flatMap((p) => [
                    el("dt", {}, p.question),
                    el(
                      "dd",
                      { dataset: { kind: p.kind } },
                      `answer: ${p.answer} · expected: `,
                      p.expected.map((x) => `${x.found ? "✓" : "✗"} ${x.text}`).join(", "),
                    ),
                  ]),
                ),
          ]
    fill(
      main,
      el("h1", {}, `pivot #${r.number} (${r.auto ? "auto" : "manual"}${r.overflow ? ", overflow" : ""})`),
      el(
        "table",
        { id: "report", class: "report" },
        row(
          "replaced",
          `${num(r.replaced.messages)} messages · ${num(r.replaced.tokens)} tokens · ${num(r.replaced.toolOutputs)} tool outputs`,
        ),
        row("tokens after", num(r.tokensAfter)),
        row(
          "summariser",
          r.summariser.fallback
            ? `extractive fallback (${r.summariser.fallback}); model was ${r.summariser.model ?? "?"}`
            : (r.summariser.model ?? "?"),
        ),
        row("duration", r.durationMs === undefined || r.durationMs === null ? "—" : `${num(r.durationMs)} ms`),
        row("tail kept verbatim", `${r.tail.length} messages: ${r.tail.join(", ")}`),
        r.pinned === undefined || r.pinned.length === 0
          ? null
          : row("pinned, kept verbatim", `${r.pinned.length} messages: ${r.pinned.join(", ")}`),
        entry === undefined ? null : row("ledger", ledgerLine(entry)),
        row(
          "replay",
          el("a", { href: sessionHref(`/versions/${r.before}`) }, `window before (v${r.before})`),
          " · ",
          el("a", { href: sessionHref(`/versions/${r.version}`) }, `window after (v${r.version})`),
          " · ",
          el("a", { href: sessionHref(`/diff?from=${r.before}&to=${r.version}`) }, "diff"),
        ),
      ),
      el("h2", {}, "summary"),
      el("pre", { class: "summary-text" }, r.summary.text),
      el("h2", {}, "facts block"),
      el("pre", { class: "facts" }, r.summary.facts ?? "(none)"),
      ...retention,
      ...probes,
    )
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Events

  const eventsPage = async () => {
    const params = new URLSearchParams(location.search)
    const type = params.get("type") || undefined
    const pageNo = Math.max(0, Number(params.get("page") ?? "0") || 0)
    const size = 50
    const session = await getJson(api(`/${enc(sessionId)}`))
    const data = await getJson(
      api(`/${enc(sessionId)}/events?offset=${pageNo * size}&limit=${size}${type ? `&type=${enc(type)}` : ""}`),
    )
    crumbs(el("a", { href: sessionHref() }, sessionId), "events")
    const select = el(
      "select",
      { name: "type", id: "type", onchange: (e) => e.target.form.submit() },
      el("option", { value: "" }, `all types (${num(session.events)})`),
      Object.entries(session.types).map(([t, n]) =>
        el("option", { value: t, selected: t === type }, `${t} (${num(n)})`),
      ),
    )
    const pages = Math.max(1, Math.ceil(data.total / size))
    const link = (p, label) =>
      p < 0 || p >= pages
        ? el("span", { class: "off" }, label)
        : el(
            "a",
            { href: `?${new URLSearchParams({ ...(type ? { type } : {}), page: String(p) })}`, class: "pager" },
            label,
          )
    fill(
      main,
      el("form", { method: "get", id: "filter" }, "type ", select),
      el(
        "p",
        { id: "pager" },
        link(pageNo - 1, "← earlier"),
        ` page ${pageNo + 1} of ${pages} (${num(data.total)} events) `,
        link(pageNo + 1, "later →"),
      ),
      el(
        "table",
        { id: "events" },
        el(
          "thead",
          {},
          el("tr", {}, el("th", {}, "version"), el("th", {}, "type"), el("th", {}, "event id"), el("th", {}, "data")),
        ),
        el(
          "tbody",
          {},
          data.events.map((e) =>
            el(
              "tr",
              { dataset: { type: e.type, version: e.version } },
              el("td", { class: "n" }, el("a", { href: sessionHref(`/versions/${e.version}`) }, String(e.version))),
              el("td", {}, e.type),
              el("td", {}, e.id),
              el(
                "td",
                {},
                el(
                  "details",
                  {},
                  el("summary", {}, JSON.stringify(e.data).slice(0, 120)),
                  el("pre", {}, JSON.stringify(e.data, null, 2)),
                ),
              ),
            ),
          ),
        ),
      ),
    )
  }

  const pages = {
    sessions: sessionsPage,
    session: sessionPage,
    window: windowPage,
    diff: diffPage,
    pivot: pivotPage,
    events: eventsPage,
  }
  const run = pages[page]
  if (run !== undefined)
    run()
      .then(() => {
        body.dataset.readyMs = String(Math.round(performance.now()))
        body.setAttribute("data-ready", "true")
      })
      .catch(fail)
})()
