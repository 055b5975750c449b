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

  const readJson = async (response) => {
    const data = await response.json()
    if (!response.ok) throw new Error(data.error ?? `${response.status}`)
    return data
  }
  const getJson = async (url) => readJson(await fetch(url, { credentials: "same-origin" }))
  /**
   * Asks for `url` now and reads its JSON only when the returned function is called: the answer's parse (hundreds of
   * kilobytes for a long session's ledger) stays off the main thread until the page wants it.
   */
  const askJson = (url) => {
    const asked = fetch(url, { credentials: "same-origin" })
    // Its failure is the page's, when it is read; not an unhandled rejection before that.
    asked.catch(() => undefined)
    return () => asked.then(readJson)
  }
  /** Resolves in a later task of the event loop: what is drawn before it is on screen without waiting for what after. */
  const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0))

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
      ["prunes", "outputs pruned"],
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
      await projectionsSection(sessions.map((x) => x.sessionId)),
    )
  }

  /** The read side: built-in read models and users' projections, their progress, and a stored state on demand. */
  const projectionsSection = async (sessionIds) => {
    const { projections } = await getJson("/api/projections")
    const shown = el("pre", { id: "projection-state", class: "state" })
    const show = async (name, key) => {
      try {
        const found = await getJson(`/api/projections/${enc(name)}${key}`)
        shown.textContent = JSON.stringify(found.state, null, 2)
      } catch (error) {
        shown.textContent = String(error.message ?? error)
      }
    }
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
          p.kind !== "projection"
            ? p.name
            : p.scope === "global"
              ? el(
                  "a",
                  {
                    href: "#",
                    onclick: (event) => {
                      event.preventDefault()
                      show(p.name, "")
                    },
                  },
                  p.name,
                )
              : // Per session: a choice of the store's sessions (the keys its state can have), never a free-text prompt.
                el(
                  "label",
                  {},
                  `${p.name} for `,
                  el(
                    "select",
                    {
                      class: "projection-key",
                      dataset: { projection: p.name },
                      onchange: (event) => {
                        if (event.target.value !== "") show(p.name, `?key=${enc(event.target.value)}`)
                        else shown.textContent = ""
                      },
                    },
                    el("option", { value: "" }, "a session…"),
                    sessionIds.map((id) => el("option", { value: id }, id)),
                  ),
                ),
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

  /** The width of a chart's columns of marks, in CSS pixels: marks closer than this share one element. */
  const COLUMN_PX = 6

  /**
   * Marks grouped per column of `COLUMN_PX` pixels of a chart's plot and per kind: one element per group however many
   * marks fall there, so a thousand pivots draw as separate bands with gaps between them instead of a solid block.
   * A group stands at its first mark; `group.marks` are in version order.
   */
  const perColumn = (marks, u, kindOf) => {
    const width = u.over.clientWidth
    const groups = new Map()
    for (const m of marks) {
      const x = u.valToPos(m.version, "x")
      if (!(x >= 0 && x <= width)) continue
      const key = `${kindOf(m)} ${Math.floor(x / COLUMN_PX)}`
      let group = groups.get(key)
      if (group === undefined) {
        group = { x: Math.round(x), kind: kindOf(m), marks: [] }
        groups.set(key, group)
      }
      group.marks.push(m)
    }
    return [...groups.values()]
  }

  /** Zooms a chart's x axis to a group of marks (a column holding several), with a version of margin. */
  const zoomTo = (u, group) =>
    u.setScale("x", { min: group.marks[0].version - 1, max: group.marks[group.marks.length - 1].version + 1 })

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
    // What the chart holds now: the overview, or a zoomed range's detail (setting data again calls this hook again).
    let showing = data
    const loadDetail = (u) => {
      if (!sampled) return
      const ticket = ++detail
      setTimeout(async () => {
        if (ticket !== detail) return
        const { min, max } = u.scales.x
        const whole = min <= data[0][0] && max >= data[0][data[0].length - 1]
        if (whole) {
          if (showing !== data) {
            showing = data
            u.setData(data, false)
          }
          return
        }
        const range = await getJson(
          api(`/${enc(sessionId)}/timeline?from=${Math.max(0, Math.floor(min))}&to=${Math.ceil(max)}`),
        )
        if (ticket === detail) {
          showing = chartData({ ...range, usable: timeline.usable })
          u.setData(showing, false)
        }
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
    const shownMarks = marks.filter((m) => m.kind !== "prune")
    // One button per pixel column and kind: a single mark names its event and opens its window; a column of several
    // names how many and zooms in on them.
    let placed = ""
    const placeMarks = (u) => {
      // Redrawn only when the x axis or the plot's width changed (a draw without either leaves the marks as they are).
      const at = `${u.scales.x.min} ${u.scales.x.max} ${u.over.clientWidth}`
      if (at === placed) return
      placed = at
      overlay.replaceChildren(
        ...perColumn(shownMarks, u, (m) => m.kind).map((group) => {
          const first = group.marks[0]
          const last = group.marks[group.marks.length - 1]
          const single = group.marks.length === 1
          const text = single
            ? `v${first.version} · ${first.eventType} · ${first.label}`
            : `${group.marks.length} ${group.kind} marks, v${first.version} to v${last.version}: click to zoom in`
          return el("button", {
            class: `mark mark-${group.kind}${single ? "" : " mark-many"}`,
            style: `left:${group.x}px`,
            title: single ? `${first.label} · v${first.version} · ${first.eventType} ${first.eventId}` : text,
            "aria-label": single ? first.label : text,
            dataset: { kind: group.kind, version: first.version, event: first.eventId, count: group.marks.length },
            onmouseenter: () => {
              tooltip.textContent = text
            },
            onclick: () => {
              if (single) location.href = sessionHref(`/versions/${first.version}`)
              else zoomTo(u, group)
            },
          })
        }),
      )
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
    const c = ledger.calls
    const data = [c.version, c.billed, c.stablePrefix]
    const marks = ledger.marks.version.map((version, i) => ({
      version,
      kind: ledger.marks.kind[i] === "compaction" ? "pivot" : "prune",
      markerId: ledger.marks.markerId[i],
    }))
    // A mark's ledger line is fetched when it is hovered (the page holds only where each entry stands).
    const lines = new Map()
    const describe = async (group) => {
      const first = group.marks[0]
      const last = group.marks[group.marks.length - 1]
      const key = `${group.kind} ${first.version} ${last.version}`
      let text = lines.get(key)
      if (text === undefined) {
        const kind = group.kind === "pivot" ? "compaction" : "prune"
        const { entries } = await getJson(
          api(`/${enc(sessionId)}/ledger/entries?kind=${kind}&from=${first.version}&to=${last.version}&limit=1`),
        )
        const e = entries[0]
        const line = (entry) =>
          entry.kind === "compaction"
            ? `pivot #${numbers.get(entry.markerId) ?? "?"} · v${entry.version} · ${ledgerLine(entry)}`
            : `prune of ${num(entry.parts)} outputs · v${entry.version} · shed ~${num(entry.shed)} · net saving ${num(entry.net)} eq over ${num(entry.calls)} calls`
        text =
          group.marks.length === 1
            ? e === undefined
              ? ""
              : line(e)
            : `${group.marks.length} ${group.kind === "pivot" ? "pivots" : "prunes"}, v${first.version} to v${last.version}; the first: ${e === undefined ? "—" : line(e)}`
        lines.set(key, text)
      }
      return text
    }
    const overlay = el("div", { class: "marks" })
    let placed = ""
    const placeMarks = (u) => {
      const at = `${u.scales.x.min} ${u.scales.x.max} ${u.over.clientWidth}`
      if (at === placed) return
      placed = at
      overlay.replaceChildren(
        ...perColumn(marks, u, (m) => m.kind).map((group) => {
          const first = group.marks[0]
          const single = group.marks.length === 1
          const name =
            group.kind === "pivot"
              ? single
                ? `pivot #${numbers.get(first.markerId) ?? "?"}`
                : `${group.marks.length} pivots`
              : single
                ? "prune"
                : `${group.marks.length} prunes`
          return el(group.kind === "pivot" ? "button" : "span", {
            class: `cost-mark cost-${group.kind}${single ? "" : " cost-many"}`,
            style: `left:${group.x}px`,
            title: `${name} · v${first.version}`,
            "aria-label": name,
            dataset: {
              kind: group.kind,
              version: first.version,
              marker: first.markerId ?? undefined,
              count: group.marks.length,
            },
            onmouseenter: async () => {
              tooltip.textContent = `${name} · v${first.version} …`
              const text = await describe(group).catch((error) => String(error.message ?? error))
              if (tooltip.textContent.startsWith(`${name} · v${first.version} `)) tooltip.textContent = text
            },
          })
        }),
      )
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

  /** Whether an artifact of a retention check is in view: the summary or a kept pinned message names it (`ArtifactCheck.inView`). */
  const inView = (a) => a.named || a.pinned === true
  /** Whether an artifact of a retention check is in view or recallable (`ArtifactCheck.reachable`). */
  const reachable = (a) => inView(a) || a.recallable === true

  /** A compaction's ledger line: what it shed, cost, invalidated and saved, and what its summary kept. */
  const ledgerLine = (e) => {
    const kept =
      e.retention === undefined
        ? ""
        : ` · kept ${num(e.retention.artifacts.filter(inView).length)}/${num(e.retention.artifacts.length)} artifacts in view, ${num(e.retention.artifacts.filter(reachable).length)} in view or recallable${e.retention.recorded ? "" : " (checked now)"}`
    return (
      `shed ~${num(e.shed)} · summary call ${num(e.summaryCost)} eq · cache ~${num(e.invalidated)} invalidated, ` +
      `~${num(e.rewritten)} re-written · net saving ${num(e.net)} eq over ${num(e.calls)} calls${kept}${probesText(e)}`
    )
  }

  /**
   * The strategy comparison: the session replayed under each built-in strategy (`/whatif`), as a table with a column
   * per strategy. Asked for on demand (a replay per strategy takes seconds); a model the catalog does not know needs
   * its context window.
   */
  const whatIfBox = () => {
    const context = el("input", { id: "whatif-context", type: "number", min: 1, placeholder: "catalog", size: 8 })
    const output = el("input", { id: "whatif-output", type: "number", min: 0, placeholder: "catalog", size: 8 })
    const result = el("div", { id: "whatif-result" })
    // The rows, labels and legend are the runtime's (`WhatIfTable`), the same `pivot whatif` prints.
    const show = (w) => {
      fill(
        result,
        el(
          "p",
          {},
          `${w.model.providerId}/${w.model.modelId}, context ${num(w.limits.context)} · system prompt and tools ~${num(w.overhead)} tokens per call · ${w.rules} cache rules at ${w.priced ? "the model's price" : "default multipliers"}`,
        ),
        el(
          "table",
          { id: "whatif" },
          el(
            "thead",
            {},
            el(
              "tr",
              {},
              el("th", {}, ""),
              w.runs.map((r) => el("th", {}, r.strategy)),
            ),
          ),
          el(
            "tbody",
            {},
            w.table.rows.map((row) =>
              el(
                "tr",
                row.detail ? { class: "detail" } : {},
                el("th", {}, row.label),
                row.cells.map((cell) => el("td", {}, cell)),
              ),
            ),
          ),
        ),
        el("p", { class: "legend" }, `Each strategy replays the recorded inputs. ${w.table.legend.join(" ")}`),
      )
    }
    const run = async () => {
      const query = new URLSearchParams()
      if (context.value !== "") query.set("context", context.value)
      if (output.value !== "") query.set("output", output.value)
      fill(result, el("p", {}, "replaying…"))
      try {
        show(await getJson(api(`/${enc(sessionId)}/whatif?${query}`)))
      } catch (error) {
        fill(result, el("p", { class: "error", id: "whatif-error" }, String(error.message ?? error)))
      }
    }
    return [
      el("h2", {}, "strategy comparison (what if)"),
      el(
        "p",
        { class: "links" },
        "context window ",
        context,
        " output ",
        output,
        " ",
        el("button", { id: "whatif-run", type: "button", onclick: run }, "compare strategies"),
      ),
      result,
    ]
  }

  const sessionPage = async () => {
    crumbs(sessionId)
    // What the page draws, not the whole ledger: the cost chart, and the ledger lines of the pivots it lists. The page
    // is drawn from the session and its timeline; the ledger (which a fresh server may still be folding: seconds at
    // 100k events) is filled in when it arrives.
    // Asked at once (a fresh server folds it meanwhile), read after the first render.
    const ledgerAsked = askJson(api(`/${enc(sessionId)}/ledger/chart`))
    const [session, timeline] = await Promise.all([
      getJson(api(`/${enc(sessionId)}`)),
      getJson(api(`/${enc(sessionId)}/timeline`)),
    ])
    const SHOWN = 100
    const listed = session.pivots.slice(-SHOWN)
    const entriesAsked =
      listed.length === 0
        ? () => Promise.resolve({ entries: [] })
        : askJson(
            api(
              `/${enc(sessionId)}/ledger/entries?kind=compaction&from=${listed[0].version}&to=${session.head}&limit=200`,
            ),
          )
    // Each listed pivot's item, by marker: its ledger line is added when the ledger arrives.
    const items = new Map()
    const tooltip = el(
      "div",
      { id: "tooltip", class: "tooltip" },
      "hover a mark to name its event; drag to zoom; click a mark to open the window there",
    )
    const chartBox = el("div", { id: "chart", class: "chart" })
    const figures = el("p", { id: "figures" })
    const showFigures = (s) =>
      figures.replaceChildren(
        `${num(s.events)} events · ${num(s.messages)} messages · ${num(s.pivots.length)} pivots · ${num(s.prunes)} tool outputs pruned · usage ${num(s.usage)} tokens · last activity ${when(s.lastActivity)}`,
      )
    showFigures(session)
    // A long session has hundreds of pivots: list the newest hundred (the events page has them all).
    const pivots = el(
      "ol",
      { id: "pivots", start: listed[0]?.number ?? 1 },
      listed.map((p) => {
        const item = el(
          "li",
          { dataset: { version: p.version } },
          el("a", { href: sessionHref(`/pivots/${p.number}`) }, `pivot #${p.number}`),
          ` at v${p.version} (${p.auto ? "auto" : "manual"}${p.overflow ? ", overflow" : ""}${p.fallback ? `, fallback: ${p.fallback}` : ""}) · `,
          el("a", { href: sessionHref(`/versions/${p.requestedVersion - 1}`) }, "window before"),
          " · ",
          el("a", { href: sessionHref(`/versions/${p.version}`) }, "window after"),
          " · ",
          el("a", { href: sessionHref(`/diff?from=${p.requestedVersion - 1}&to=${p.version}`) }, "diff"),
        )
        items.set(p.markerId, item)
        return item
      }),
    )
    const costBox = el("div", { id: "cost", class: "chart" })
    const costFigures = el("p", { id: "cost-figures" }, "reading the ledger…")
    const costTooltip = el("div", { id: "cost-tooltip", class: "tooltip" }, "hover a pivot's line for its ledger")
    const showCost = (l) => {
      const t = l.totals
      costFigures.replaceChildren(
        `${num(t.calls)} calls (${num(t.summaryCalls)} summary${t.probeCalls > 0 ? `, ${num(t.probeCalls)} probe` : ""}) · billed input ${num(t.billed)} eq · ` +
          `cache hit ratio ${Math.round(t.hitRatio * 100)}% · prefix stability ~${Math.round(t.prefixStability * 100)}% · ` +
          `${num(t.compactions)} compactions, ${num(t.prunes)} prune${t.prunes === 1 ? "" : "s"} (each clearing one or more tool outputs): net saving ${num(t.net)} eq`,
      )
    }
    const pivotNumbers = (s) => new Map(s.pivots.map((p) => [p.markerId, p.number]))
    const legend = el(
      "p",
      { class: "legend" },
      Object.entries(MARK_COLOURS).map(([kind, colour]) =>
        el(
          "span",
          { class: "key" },
          el("i", { style: `background:${colour}` }),
          ` ${kind === "prune" ? "pruned outputs" : kind}: ${timeline.legend[kind]} `,
        ),
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
      ...whatIfBox(),
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
    let cost
    // The ledger is read and drawn in a later task than the first render (which it is not part of).
    const ledgerFilled = nextTask()
      .then(() => Promise.all([ledgerAsked(), entriesAsked()]))
      .then(([ledger, listedEntries]) => {
        showCost(ledger)
        cost = costChart(costBox, ledger, pivotNumbers(session), costTooltip)
        for (const entry of listedEntries.entries)
          items.get(entry.markerId)?.append(el("span", { class: "ledger" }, ` · ${ledgerLine(entry)}`))
      })
    // Live: the store's subscription pushes the new head; the page refetches what it shows, at most once a second.
    const live = document.getElementById("live")
    let pending = false
    let shown = session.head
    const refresh = async () => {
      // The first ledger drawn before any redraw of it.
      await ledgerFilled
      pending = false
      const [s, t, l] = await Promise.all([
        getJson(api(`/${enc(sessionId)}`)),
        getJson(api(`/${enc(sessionId)}/timeline`)),
        getJson(api(`/${enc(sessionId)}/ledger/chart`)),
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
    return { complete: ledgerFilled }
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

  /** A model message of a diff, folded behind one line when long (a tool output of a hundred lines, a summary). */
  const LONG_TEXT = 600
  const diffMessage = (m, side) => {
    const shown = modelMessage(m)
    const length = shown.textContent.length
    if (length <= LONG_TEXT) return el("div", { class: side }, shown)
    return el(
      "details",
      { class: `${side} fold` },
      el(
        "summary",
        {},
        `${m.role}: ${shown.textContent.slice(0, 120).replace(/\s+/g, " ")}… (${num(length)} characters)`,
      ),
      shown,
    )
  }

  /** Rows in runs of the same change; a run of more than `RUN` rows is folded behind one line saying how many. */
  const RUN = 3
  const diffRows = (rows) => {
    const row = (r) =>
      el(
        "div",
        { class: `row change-${r.change}`, dataset: { change: r.change, key: r.key } },
        el("span", { class: "badge" }, r.change),
        ` ${r.sourceMessageId} `,
        r.before && r.change !== "entered" && r.change !== "same" ? diffMessage(r.before, "before") : null,
        r.after && r.change !== "left" ? diffMessage(r.after, "after") : null,
      )
    const out = []
    for (let i = 0; i < rows.length; ) {
      let j = i
      while (j < rows.length && rows[j].change === rows[i].change) j++
      const run = rows.slice(i, j)
      const change = rows[i].change
      // Unchanged messages are context: always folded, whatever their number.
      if (change === "same" || run.length > RUN)
        out.push(
          el(
            "details",
            { class: `fold run change-${change}`, dataset: { change, rows: run.length } },
            el(
              "summary",
              {},
              `${num(run.length)} ${change === "same" ? "unchanged" : change} message${run.length === 1 ? "" : "s"}`,
            ),
            run.map(row),
          ),
        )
      else out.push(...run.map(row))
      i = j
    }
    return out
  }

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
      el("div", { id: "diff" }, diffRows(data.rows)),
    )
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Pivot report

  const pivotPage = async () => {
    const number = Number(body.dataset.version)
    const r = await getJson(api(`/${enc(sessionId)}/pivots/${number}`))
    // Its own ledger line only, not the session's whole ledger.
    const { entries } = await getJson(
      api(`/${enc(sessionId)}/ledger/entries?kind=compaction&marker=${enc(r.markerId)}&limit=1`),
    )
    crumbs(el("a", { href: sessionHref() }, sessionId), `pivot #${number}`)
    const row = (label, ...value) => el("tr", {}, el("th", {}, label), el("td", {}, ...value))
    const entry = entries[0]
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
              "p",
              { id: "retention-counts" },
              `${num(entry.retention.artifacts.filter(inView).length)} of ${num(entry.retention.artifacts.length)} in view (the summary or a pinned message kept verbatim names them), ` +
                `${num(entry.retention.artifacts.filter(reachable).length)} in view or recallable (context_recall gives back a part that names them); ✓ in view · ↺ recallable · ✗ lost`,
            ),
            el(
              "ul",
              { id: "retention" },
              entry.retention.artifacts.map((a) =>
                el(
                  "li",
                  { dataset: { kind: a.kind, named: a.named, inView: inView(a), reachable: reachable(a) } },
                  `${inView(a) ? "✓" : reachable(a) ? "↺" : "✗"} ${a.kind}: ${a.text}${a.named || !inView(a) ? "" : " (pinned)"}`,
                ),
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
      ...droppedList(r.dropped),
      el("h2", {}, "summary"),
      el("pre", { class: "summary-text" }, r.summary.text),
      el("h2", {}, "facts block"),
      el("pre", { class: "facts" }, r.summary.facts ?? "(none)"),
      ...retention,
      ...probes,
    )
  }

  // What a pivot's summary replaced, as context_recall lists it for the model: each message, its parts' recall ids
  // and sizes, then the facts in them.
  const droppedList = (d) => {
    if (d === undefined) return []
    const facts = [
      ["files read", d.facts.filesRead],
      ["files edited", d.facts.filesEdited],
      ["commands", d.facts.commands.map((c) => `${c.command}${c.failed ? " (failed)" : ""}`)],
      ["errors", d.facts.errors],
    ].filter(([, items]) => items.length > 0)
    return [
      el("h2", {}, `what it replaced (${num(d.messages.length)} messages · ${num(d.chars)} chars, recallable by id)`),
      el(
        "table",
        { id: "dropped", class: "report" },
        el(
          "thead",
          {},
          el("tr", {}, el("th", {}, "message"), el("th", {}, "role"), el("th", {}, "chars"), el("th", {}, "parts")),
        ),
        el(
          "tbody",
          {},
          d.messages.map((m) =>
            el(
              "tr",
              {},
              el("td", {}, m.id),
              el("td", {}, m.role),
              el("td", {}, num(m.chars)),
              el(
                "td",
                {},
                m.documents.map((p) => `${p.id} (${p.kind}${p.tool ? ` ${p.tool}` : ""}, ${num(p.chars)})`).join(", "),
              ),
            ),
          ),
        ),
      ),
      facts.length === 0
        ? null
        : el(
            "ul",
            { id: "dropped-facts" },
            facts.map(([label, items]) => el("li", {}, `${label}: ${items.join(", ")}`)),
          ),
    ]
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
  // `data-drawn`: the page is drawn (its first render); `data-ready`: and what it fills in later (the session page's
  // ledger) is in place too. Each with its time from navigation start (`data-drawn-ms`, `data-ready-ms`).
  const mark = (name) => {
    body.dataset[`${name}Ms`] = String(Math.round(performance.now()))
    body.setAttribute(`data-${name}`, "true")
  }
  if (run !== undefined)
    run()
      .then((drawn) => {
        mark("drawn")
        return drawn?.complete
      })
      .then(() => mark("ready"))
      .catch(fail)
})()
