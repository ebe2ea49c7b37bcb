import dns from 'node:dns';
import net from 'node:net';
import { domainToASCII } from 'node:url';

/** The operator's exceptions to the destination policy, parsed from `SVC_WEBHOOK_ALLOWED_HOSTS`. */
export interface AllowedHosts {
  /** Lowercase ASCII hostnames without a trailing dot, and the IP literals as written (unbracketed). */
  hosts: ReadonlySet<string>;
  /** The allowed CIDRs and single IP addresses; an address allowed here is allowed in any spelling. */
  networks: net.BlockList;
  /** The text the entries were parsed from. */
  text: string;
}

/** Decides whether a webhook may connect to an address, at the moment of connecting. */
export interface DestinationPolicy {
  /** Why connecting to `address` (resolved from `hostname`) is refused, or undefined when allowed. */
  refusal(hostname: string, address: string, family: 4 | 6): string | undefined;
}

const allowedHostsVariable = 'SVC_WEBHOOK_ALLOWED_HOSTS';

/** Default-refused ranges, most specific first: the first range that holds an address names it. */
const refusedRanges: ReadonlyArray<{ description: string; networks: net.BlockList }> = [
  // Inside link-local, unique-local and CGNAT below; named apart because they are the usual target.
  range('a cloud metadata address', [
    '169.254.169.254/32',
    '169.254.170.2/32',
    '100.100.100.200/32',
    'fd00:ec2::254/128',
  ]),
  range('an unspecified address', ['0.0.0.0/8', '::/128']),
  range('a loopback address', ['127.0.0.0/8', '::1/128']),
  range('a private address', [
    '10.0.0.0/8',
    '172.16.0.0/12',
    '192.168.0.0/16',
    'fc00::/7',
    // Deprecated site-local, and local-use NAT64 (its embedded IPv4 position is the operator's choice).
    'fec0::/10',
    '64:ff9b:1::/48',
  ]),
  range('a shared (carrier-grade NAT) address', ['100.64.0.0/10']),
  range('a link-local address', ['169.254.0.0/16', 'fe80::/10']),
  range('a reserved (IETF protocol assignments) address', ['192.0.0.0/24']),
  range('a benchmarking address', ['198.18.0.0/15']),
  range('a multicast address', ['224.0.0.0/4', 'ff00::/8']),
  range('a broadcast address', ['255.255.255.255/32']),
  range('a reserved address', ['240.0.0.0/4']),
];

function range(description: string, cidrs: string[]): { description: string; networks: net.BlockList } {
  const networks = new net.BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefix = ''] = cidr.split('/');
    networks.addSubnet(address, Number(prefix), net.isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
  return { description, networks };
}

/**
 * Parses `SVC_WEBHOOK_ALLOWED_HOSTS`: comma-separated hostnames (`hooks.internal`, matched exactly
 * and case-insensitively against a URL's hostname), IPv4/IPv6 addresses (`127.0.0.1`, `[::1]`) and
 * CIDRs (`10.0.0.0/8`, `fd00::/8`). Blank or undefined allows nothing. A bad entry is left out
 * and described in `problems` instead of throwing, so the caller decides whether to refuse to start.
 *
 * @example
 * ```ts
 * const { allowed, problems } = parseAllowedHosts(process.env.SVC_WEBHOOK_ALLOWED_HOSTS);
 * if (problems.length > 0) throw new Error(`SVC_WEBHOOK_ALLOWED_HOSTS: ${problems.join('; ')}`);
 * const policy = createDestinationPolicy(allowed);
 * ```
 */
export function parseAllowedHosts(text: string | undefined): { allowed: AllowedHosts; problems: string[] } {
  const hosts = new Set<string>();
  const networks = new net.BlockList();
  const problems: string[] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const problem = addEntry(entry, hosts, networks);
    if (problem !== undefined) problems.push(`"${entry}" ${problem}`);
  }
  return { allowed: { hosts, networks, text: text ?? '' }, problems };
}

/** Adds one allow-list entry; returns what is wrong with it instead. */
function addEntry(entry: string, hosts: Set<string>, networks: net.BlockList): string | undefined {
  const slash = entry.indexOf('/');
  if (slash !== -1) {
    const address = unbracket(entry.slice(0, slash));
    const prefixText = entry.slice(slash + 1);
    const family = net.isIP(address);
    if (family === 0) return 'is not a CIDR: the part before "/" is not an IP address';
    const maximum = family === 4 ? 32 : 128;
    const prefix = Number(prefixText);
    if (!/^\d{1,3}$/.test(prefixText) || prefix > maximum) {
      return `is not a CIDR: the prefix length must be a whole number from 0 to ${maximum}`;
    }
    networks.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
    return undefined;
  }
  const address = unbracket(entry);
  const family = net.isIP(address);
  if (family !== 0) {
    if (address.includes('%')) return 'is an IPv6 address with a zone; leave the zone out';
    networks.addAddress(address, family === 4 ? 'ipv4' : 'ipv6');
    hosts.add(address.toLowerCase());
    return undefined;
  }
  if (entry.includes('*')) return 'is a wildcard; list each hostname, or the network as a CIDR';
  const hostname = normalizeHostname(domainToASCII(entry));
  if (!isHostname(hostname)) return 'is not a hostname, an IP address or a CIDR';
  hosts.add(hostname);
  return undefined;
}

/** Letters, digits, `-` and `_` in dot-separated labels of 1..63; the last label is not all digits (that would be an IPv4 address). */
function isHostname(hostname: string): boolean {
  if (hostname.length === 0 || hostname.length > 253) return false;
  const labels = hostname.split('.');
  const label = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
  return labels.every((part) => label.test(part)) && !/^\d+$/.test(labels[labels.length - 1] ?? '');
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function normalizeHostname(hostname: string): string {
  const lower = unbracket(hostname).toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * The policy webhook deliveries connect under: private, loopback, link-local, metadata, multicast
 * and reserved addresses are refused unless `allowed` lists the hostname or holds the address.
 * IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, also as `::ffff:7f00:1`;
 * compatible `::a.b.c.d`; translated `::ffff:0:a.b.c.d`; NAT64 `64:ff9b::/96`; 6to4 `2002::/16`)
 * are judged as that IPv4 address. Meant to be asked about the address actually connected to,
 * so a name that resolves differently later (DNS rebinding) is judged on what it resolved to.
 *
 * @example
 * ```ts
 * const policy = createDestinationPolicy(parseAllowedHosts('hooks.internal, 10.1.0.0/16').allowed);
 * policy.refusal('example.com', '10.0.0.5', 4);
 * // '10.0.0.5 is a private address; set SVC_WEBHOOK_ALLOWED_HOSTS to allow it'
 * policy.refusal('hooks.internal', '10.0.0.5', 4); // undefined
 * ```
 */
export function createDestinationPolicy(allowed?: AllowedHosts): DestinationPolicy {
  return {
    refusal(hostname, address) {
      if (allowed?.hosts.has(normalizeHostname(hostname)) === true) return undefined;
      // A zone (`fe80::1%eth0`) names the interface, not the address; BlockList does not match it.
      const ip = unbracket(address).split('%')[0] ?? '';
      const family = net.isIP(ip);
      if (family === 0) return `${address} is not an IP address`;
      const embedded = family === 6 ? embeddedIpv4(ip) : undefined;
      if (allowed !== undefined) {
        if (allowed.networks.check(ip, family === 4 ? 'ipv4' : 'ipv6')) return undefined;
        if (embedded !== undefined && allowed.networks.check(embedded, 'ipv4')) return undefined;
      }
      const judged = embedded ?? ip;
      const judgedType = embedded !== undefined || family === 4 ? 'ipv4' : 'ipv6';
      const refused = refusedRanges.find((candidate) => candidate.networks.check(judged, judgedType));
      if (refused === undefined) return undefined;
      const named = embedded === undefined ? address : `${address} (${embedded})`;
      return `${named} is ${refused.description}; set ${allowedHostsVariable} to allow it`;
    },
  };
}

/** The IPv4 address an IPv6 address carries, in the forms that deliver to it; undefined otherwise. */
function embeddedIpv4(address: string): string | undefined {
  const groups = ipv6Groups(address);
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  const zeroUpTo = (count: number) => groups.slice(0, count).every((group) => group === 0);
  const dotted = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  // ::ffff:a.b.c.d (mapped)
  if (zeroUpTo(5) && g5 === 0xffff) return dotted(g6, g7);
  // ::ffff:0:a.b.c.d (SIIT translated)
  if (zeroUpTo(4) && g4 === 0xffff && g5 === 0) return dotted(g6, g7);
  // ::a.b.c.d (compatible, deprecated); :: and ::1 are IPv6's own unspecified and loopback.
  if (zeroUpTo(6) && !(g6 === 0 && (g7 === 0 || g7 === 1))) return dotted(g6, g7);
  // 64:ff9b::a.b.c.d (well-known NAT64 prefix)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return dotted(g6, g7);
  // 2002:AABB:CCDD::/48 (6to4)
  if (g0 === 0x2002 && g1 !== undefined && g2 !== undefined) return dotted(g1, g2);
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address that `net.isIP` accepted (no zone). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string) =>
    part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  const headGroups = parse(head);
  if (rest === undefined) return headGroups;
  const tailGroups = parse(rest);
  return [
    ...headGroups,
    ...new Array<number>(8 - headGroups.length - tailGroups.length).fill(0),
    ...tailGroups,
  ];
}

/**
 * The `lookup` of an outgoing connection under `policy`: resolves as the connection asks (one
 * address, or all for happy eyeballs) and refuses the lookup, with an error of `code`, when the
 * policy refuses any address it could connect to (`onRefused` gets the reason first). Node calls
 * it only for names; IP literals are checked by the caller before connecting.
 *
 * @example
 * ```ts
 * const lookup = policyLookup(policy, 'ERR_WEBHOOK_DESTINATION_REFUSED', (reason) => { refusal = reason; });
 * http.request(url, { lookup, agent: false });
 * ```
 */
export function policyLookup(
  policy: DestinationPolicy,
  code: string,
  onRefused: (reason: string) => void,
): net.LookupFunction {
  return (name, options, callback) => {
    dns.lookup(name, { all: true, family: options.family ?? 0, hints: options.hints }, (error, addresses) => {
      if (error !== null) return callback(error, '', 0);
      for (const { address, family } of addresses) {
        const reason = policy.refusal(name, address, family === 4 ? 4 : 6);
        if (reason !== undefined) {
          onRefused(reason);
          return callback(Object.assign(new Error(reason), { code }), '', 0);
        }
      }
      if (options.all === true) return callback(null, addresses);
      const [first] = addresses;
      if (first !== undefined) return callback(null, first.address, first.family);
      callback(Object.assign(new Error(`no address for ${name}`), { code: 'ENOTFOUND' }), '', 0);
    });
  };
}
