/**
 * The DNS-rebinding guard of a loopback viewer: which `Host` headers name this server. A page on another site can
 * point its own host name at 127.0.0.1 (DNS rebinding) and then read a token-less loopback viewer as same-origin;
 * its requests still carry that host name in `Host`, so a loopback viewer answers only requests whose `Host` is a
 * loopback name (`localhost`, an address of 127.0.0.0/8, `[::1]`) or the address it was told to bind, on its own
 * port. A viewer bound beyond loopback needs its access token on every request, which such a page does not have.
 */

const IPV4_OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/

/** Whether a name is an IPv4 address of the loopback block 127.0.0.0/8, written in dotted decimal. */
const isLoopbackIpv4 = (name: string): boolean => {
  const octets = name.split(".")
  return octets.length === 4 && octets[0] === "127" && octets.every((octet) => IPV4_OCTET.test(octet))
}

/** Whether an address to bind (or a host name) is the loopback interface: `localhost`, 127.0.0.0/8 or `::1`. */
export const isLoopback = (host: string): boolean => {
  const name = host.toLowerCase()
  return name === "localhost" || name === "::1" || name === "[::1]" || isLoopbackIpv4(name)
}

/** A `Host` header split into its name (lower case, IPv6 in brackets, no trailing dot) and port (80 when absent). */
export const parse = (header: string): { readonly name: string; readonly port: number } | undefined => {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(header)
  if (match === null) return undefined
  const port = match[2] === undefined ? 80 : Number(match[2])
  if (port > 65535) return undefined
  return { name: match[1]!.toLowerCase().replace(/\.$/, ""), port }
}

/** The server a `Host` header must name: the address it was told to bind and the port it listens on. */
export interface Bound {
  readonly host: string
  readonly port: number
}

/** The bound address as a `Host` header writes it (IPv6 in brackets), lower case. */
const asName = (host: string): string => {
  const name = host.toLowerCase()
  return name.includes(":") && !name.startsWith("[") ? `[${name}]` : name
}

/**
 * Why a request whose `Host` header is `header` is refused by a loopback viewer bound to `bound`, in one line; or
 * `undefined` when the header names this server (a loopback name or the bound address, on the bound port).
 */
export const refusal = (header: string | undefined, bound: Bound): string | undefined => {
  const expected = `a loopback viewer answers only to localhost, 127.0.0.0/8 or [::1] on port ${bound.port}`
  if (header === undefined || header === "") return `the request names no host (Host header): ${expected}`
  const parsed = parse(header)
  const shown = JSON.stringify(header.slice(0, 100))
  if (parsed === undefined) return `malformed Host header ${shown}: ${expected}`
  if (!isLoopback(parsed.name) && parsed.name !== asName(bound.host))
    return `host ${shown} is not this server (DNS rebinding guard): ${expected}`
  if (parsed.port !== bound.port) return `host ${shown} names another port: ${expected}`
  return undefined
}
