/**
 * Response compression: the encoding a request accepts (`Accept-Encoding`, brotli preferred over gzip at equal
 * weight) and the response's bytes encoded with it. Bodies under `MIN_BYTES` go as they are; large bodies that are
 * asked for again unchanged (a session's ledger, its timeline) are encoded once and kept in a small cache.
 */
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import { HttpBody, HttpServerResponse } from "effect/http"

/** An encoding the viewer sends. */
export type Encoding = "br" | "gzip"

/** Bodies smaller than this are sent unencoded (the headers would outweigh the saving). */
export const MIN_BYTES = 1024

/**
 * The encoding to answer a request with, from its `Accept-Encoding` header: `br` or `gzip` when accepted with a
 * weight above 0 (by name, or by `*` when not named), the higher weight winning and `br` on a tie; else none. A
 * malformed weight counts as 0.
 */
export const choose = (header: string | undefined): Encoding | undefined => {
  if (header === undefined) return undefined
  const weights = new Map<string, number>()
  for (const item of header.split(",")) {
    const [name, ...params] = item.trim().toLowerCase().split(";")
    if (name === undefined || name === "") continue
    let q = 1
    for (const param of params) {
      const m = /^\s*q\s*=\s*(.*?)\s*$/.exec(param)
      // A weight is 0 to 1 with at most three decimals (RFC 9110 §12.4.2); a malformed one accepts nothing.
      if (m !== null) q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(m[1]!) ? Number(m[1]) : 0
    }
    weights.set(name.trim(), q)
  }
  const weight = (name: Encoding) => weights.get(name) ?? weights.get("*") ?? 0
  const br = weight("br")
  const gzip = weight("gzip")
  if (br <= 0 && gzip <= 0) return undefined
  return br >= gzip ? "br" : "gzip"
}

const encode = (bytes: Uint8Array, encoding: Encoding): Uint8Array =>
  encoding === "br"
    ? brotliCompressSync(bytes, {
        params: {
          // Quality 5: about gzip's speed at a smaller size; 11 (the default) costs seconds on a 17 MB ledger.
          [constants.BROTLI_PARAM_QUALITY]: 5,
          [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
        },
      })
    : gzipSync(bytes, { level: 6 })

/**
 * Encoded bodies of 16 KiB or more, by encoding, keyed by the body's text (a cached ledger or timeline answers with
 * the same string object again) or its bytes (an asset), the least recently used dropped past 32 per encoding.
 */
const caches: Record<Encoding, Map<string | Uint8Array, Uint8Array>> = { br: new Map(), gzip: new Map() }
const CACHED_MIN = 16 * 1024
const CACHE_ENTRIES = 32

const encoded = (body: HttpBody.Uint8Array, encoding: Encoding): Uint8Array => {
  if (body.contentLength < CACHED_MIN) return encode(body.body, encoding)
  const cache = caches[encoding]
  const key = body.text ?? body.body
  const hit = cache.get(key)
  if (hit !== undefined) {
    cache.delete(key)
    cache.set(key, hit)
    return hit
  }
  const bytes = encode(body.body, encoding)
  cache.set(key, bytes)
  while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
  return bytes
}

/**
 * The response with its body encoded as the request accepts (`Content-Encoding`, `Vary: Accept-Encoding`); as it is
 * when the body is a stream, smaller than `MIN_BYTES`, or no encoding is accepted.
 */
export const response = (
  res: HttpServerResponse.HttpServerResponse,
  acceptEncoding: string | undefined,
): HttpServerResponse.HttpServerResponse => {
  const body = res.body
  if (body._tag !== "Uint8Array") return res
  const varied = HttpServerResponse.setHeader(res, "vary", "accept-encoding")
  const encoding = choose(acceptEncoding)
  if (encoding === undefined || body.contentLength < MIN_BYTES) return varied
  const bytes = encoded(body, encoding)
  return HttpServerResponse.setHeader(
    HttpServerResponse.setBody(varied, HttpBody.uint8Array(bytes, body.contentType)),
    "content-encoding",
    encoding,
  )
}
