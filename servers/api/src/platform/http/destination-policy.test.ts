import { describe, expect, it } from 'vitest';
import { createDestinationPolicy, parseAllowedHosts } from './destination-policy.ts';

const family = (address: string) => (address.includes(':') ? 6 : 4);

describe('createDestinationPolicy without an allow-list', () => {
  const policy = createDestinationPolicy();
  const refusal = (address: string) => policy.refusal('hooks.example.com', address, family(address));

  it.each([
    ['0.0.0.0', 'an unspecified'],
    ['0.255.255.255', 'an unspecified'],
    ['10.0.0.5', 'a private'],
    ['10.255.255.255', 'a private'],
    ['100.64.0.1', 'a shared (carrier-grade NAT)'],
    ['100.127.255.255', 'a shared (carrier-grade NAT)'],
    ['127.0.0.1', 'a loopback'],
    ['127.255.255.254', 'a loopback'],
    ['169.254.0.1', 'a link-local'],
    ['169.254.169.254', 'a cloud metadata'],
    ['172.16.0.1', 'a private'],
    ['172.31.255.255', 'a private'],
    ['192.0.0.8', 'a reserved (IETF protocol assignments)'],
    ['192.168.1.1', 'a private'],
    ['198.18.0.1', 'a benchmarking'],
    ['198.19.255.255', 'a benchmarking'],
    ['224.0.0.1', 'a multicast'],
    ['239.255.255.250', 'a multicast'],
    ['240.0.0.1', 'a reserved'],
    ['255.255.255.254', 'a reserved'],
    ['255.255.255.255', 'a broadcast'],
    ['::', 'an unspecified'],
    ['::1', 'a loopback'],
    ['0:0:0:0:0:0:0:1', 'a loopback'],
    ['fc00::1', 'a private'],
    ['fdff:ffff::1', 'a private'],
    ['fd00:ec2::254', 'a cloud metadata'],
    ['fe80::1', 'a link-local'],
    ['fe80::1%eth0', 'a link-local'],
    ['febf:ffff::1', 'a link-local'],
    ['ff02::1', 'a multicast'],
    ['64:ff9b:1::a00:1', 'a private'],
  ])('refuses %s as %s address', (address, description) => {
    expect(refusal(address)).toBe(
      `${address} is ${description} address; set SVC_WEBHOOK_ALLOWED_HOSTS to allow it`,
    );
  });

  it.each([
    ['::ffff:127.0.0.1', '127.0.0.1', 'a loopback'],
    ['::ffff:7f00:1', '127.0.0.1', 'a loopback'],
    ['0:0:0:0:0:ffff:7f00:0001', '127.0.0.1', 'a loopback'],
    ['::FFFF:A9FE:A9FE', '169.254.169.254', 'a cloud metadata'],
    ['::ffff:10.1.2.3', '10.1.2.3', 'a private'],
    ['::ffff:0:192.168.0.1', '192.168.0.1', 'a private'],
    ['::127.0.0.1', '127.0.0.1', 'a loopback'],
    ['::a00:5', '10.0.0.5', 'a private'],
    ['64:ff9b::127.0.0.1', '127.0.0.1', 'a loopback'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254', 'a cloud metadata'],
    ['2002:c0a8:101::1', '192.168.1.1', 'a private'],
  ])('judges %s as the IPv4 address it carries (%s)', (address, ipv4, description) => {
    expect(refusal(address)).toBe(
      `${address} (${ipv4}) is ${description} address; set SVC_WEBHOOK_ALLOWED_HOSTS to allow it`,
    );
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.1',
    '192.167.255.255',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows the public address %s', (address) => {
    expect(refusal(address)).toBeUndefined();
  });

  it('refuses what is not an IP address', () => {
    expect(policy.refusal('example.com', 'example.com', 4)).toBe('example.com is not an IP address');
  });
});

describe('createDestinationPolicy with an allow-list', () => {
  it('allows a listed hostname whatever it resolves to, matched exactly and case-insensitively', () => {
    const { allowed, problems } = parseAllowedHosts(' Hooks.Internal. ');
    expect(problems).toEqual([]);
    expect([...allowed.hosts]).toEqual(['hooks.internal']);
    const policy = createDestinationPolicy(allowed);
    expect(policy.refusal('HOOKS.internal', '10.0.0.5', 4)).toBeUndefined();
    expect(policy.refusal('hooks.internal.', '127.0.0.1', 4)).toBeUndefined();
    expect(policy.refusal('other.internal', '10.0.0.5', 4)).toMatch(/^10\.0\.0\.5 is a private address/);
    expect(policy.refusal('a.hooks.internal', '10.0.0.5', 4)).toBeDefined();
  });

  it('allows a listed IP address in any spelling, and nothing next to it', () => {
    const policy = createDestinationPolicy(parseAllowedHosts('127.0.0.1,[::1]').allowed);
    expect(policy.refusal('127.0.0.1', '127.0.0.1', 4)).toBeUndefined();
    expect(policy.refusal('localhost', '127.0.0.1', 4)).toBeUndefined();
    expect(policy.refusal('localhost', '::ffff:7f00:1', 6)).toBeUndefined();
    expect(policy.refusal('localhost', '::1', 6)).toBeUndefined();
    expect(policy.refusal('localhost', '0:0::1', 6)).toBeUndefined();
    expect(policy.refusal('localhost', '127.0.0.2', 4)).toBeDefined();
    expect(policy.refusal('metadata', '169.254.169.254', 4)).toBeDefined();
  });

  it('allows addresses inside a listed network', () => {
    const policy = createDestinationPolicy(parseAllowedHosts('10.0.0.0/8, fd00::/8').allowed);
    expect(policy.refusal('a', '10.200.3.4', 4)).toBeUndefined();
    expect(policy.refusal('a', '::ffff:10.200.3.4', 6)).toBeUndefined();
    expect(policy.refusal('a', 'fd12::1', 6)).toBeUndefined();
    expect(policy.refusal('a', 'fd00:ec2::254', 6)).toBeUndefined();
    expect(policy.refusal('a', '11.0.0.1', 4)).toBeUndefined();
    expect(policy.refusal('a', '192.168.0.1', 4)).toBeDefined();
    expect(policy.refusal('a', 'fc00::1', 6)).toBeDefined();
  });
});

describe('parseAllowedHosts', () => {
  it('allows nothing when blank', () => {
    for (const text of [undefined, '', ' , ,']) {
      const { allowed, problems } = parseAllowedHosts(text);
      expect(problems).toEqual([]);
      expect(allowed.hosts.size).toBe(0);
      expect(allowed.networks.rules).toEqual([]);
      expect(createDestinationPolicy(allowed).refusal('localhost', '127.0.0.1', 4)).toBeDefined();
    }
  });

  it('reports each bad entry and keeps the good ones', () => {
    const { allowed, problems } = parseAllowedHosts(
      'hooks.internal, 10.0.0.0/33, not a host, fd00::/129, 300.1.1.1, *.example.com, 10.0.0.0/x, ' +
        'example.com/8, hooks.internal:8080, fe80::1%eth0, -bad-.example, 192.168.0.0/16',
    );
    expect(problems).toEqual([
      '"10.0.0.0/33" is not a CIDR: the prefix length must be a whole number from 0 to 32',
      '"not a host" is not a hostname, an IP address or a CIDR',
      '"fd00::/129" is not a CIDR: the prefix length must be a whole number from 0 to 128',
      '"300.1.1.1" is not a hostname, an IP address or a CIDR',
      '"*.example.com" is a wildcard; list each hostname, or the network as a CIDR',
      '"10.0.0.0/x" is not a CIDR: the prefix length must be a whole number from 0 to 32',
      '"example.com/8" is not a CIDR: the part before "/" is not an IP address',
      '"hooks.internal:8080" is not a hostname, an IP address or a CIDR',
      '"fe80::1%eth0" is an IPv6 address with a zone; leave the zone out',
      '"-bad-.example" is not a hostname, an IP address or a CIDR',
    ]);
    expect([...allowed.hosts]).toEqual(['hooks.internal']);
    const policy = createDestinationPolicy(allowed);
    expect(policy.refusal('a', '192.168.4.4', 4)).toBeUndefined();
    expect(policy.refusal('a', '10.0.0.1', 4)).toBeDefined();
  });

  it('keeps the text it parsed', () => {
    expect(parseAllowedHosts('127.0.0.1').allowed.text).toBe('127.0.0.1');
  });
});
