/**
 * The HTML of the pages: a small shell per page that the viewer's script fills from the JSON API, and the error
 * pages. Every value put into HTML goes through `escapeHtml`; session text never does: the script inserts it as text
 * nodes only, so markup in a tool output stays text.
 */
import { HttpServerResponse } from "effect/http"

/** Escapes text for HTML element content and quoted attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`)

/** The pages the viewer has. */
export type PageName = "sessions" | "session" | "window" | "diff" | "pivot" | "events"

const shell = (title: string, body: string, data: Record<string, string | number | undefined>) => {
  const attributes = Object.entries(data)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => ` data-${key}="${escapeHtml(String(value))}"`)
    .join("")
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · pivot</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/uPlot.min.css">
<link rel="stylesheet" href="/assets/style.css">
</head>
<body${attributes}>
<header><a href="/" class="brand">pivot</a><nav id="crumbs"></nav><span id="live" class="live" hidden></span></header>
<main id="main">${body}</main>
<script src="/assets/uPlot.iife.min.js"></script>
<script src="/assets/app.js"></script>
</body>
</html>
`
}

/** A page: its shell, with the session and version it shows as data attributes for the script. */
export const page = (options: {
  readonly page: PageName
  readonly title: string
  readonly sessionId?: string | undefined
  readonly version?: number | undefined
}): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.html(
    shell(options.title, `<p class="loading">loading…</p>`, {
      page: options.page,
      session: options.sessionId,
      version: options.version,
    }),
  )

/** An error page: the status and one line saying what is wrong. */
export const errorPage = (status: number, message: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.setStatus(
    HttpServerResponse.html(
      shell(
        `${status}`,
        `<section class="error"><h1>${status}</h1><p id="error">${escapeHtml(message)}</p><p><a href="/">all sessions</a></p></section>`,
        { page: "error" },
      ),
    ),
    status,
  )
