/** What the SDK learns about the browser from its user agent (PROTOCOL.md SessionMeta). */
export interface BrowserFacts {
  browser: { name: string; version: string };
  os: { name: string; version: string };
  device: 'desktop' | 'mobile' | 'tablet';
}

const BROWSERS: ReadonlyArray<[string, RegExp]> = [
  ['Edge', /Edg(?:e|A|iOS)?\/([\d.]+)/],
  ['Opera', /OPR\/([\d.]+)/],
  ['Samsung Internet', /SamsungBrowser\/([\d.]+)/],
  ['Firefox', /(?:Firefox|FxiOS)\/([\d.]+)/],
  ['Chrome', /(?:Chrome|CriOS)\/([\d.]+)/],
  ['Safari', /Version\/([\d.]+).*Safari/],
];

const SYSTEMS: ReadonlyArray<[string, RegExp]> = [
  ['Windows', /Windows NT ([\d.]+)/],
  ['iOS', /(?:iPhone|iPad|iPod).*? OS ([\d_]+)/],
  ['Android', /Android ([\d.]+)/],
  ['macOS', /Mac OS X ([\d_.]+)/],
  ['ChromeOS', /CrOS \S+ ([\d.]+)/],
  ['Linux', /Linux()/],
];

/**
 * Browser, OS and device class from a user agent string: the major browsers and systems by
 * name, `Unknown` (version `unknown`) otherwise (a few lines of patterns instead of a UA library in the bundle).
 *
 * @example
 * ```ts
 * browserFacts(navigator.userAgent).browser.name; // 'Chrome'
 * ```
 */
export function browserFacts(userAgent: string): BrowserFacts {
  const find = (table: ReadonlyArray<[string, RegExp]>) => {
    for (const [name, pattern] of table) {
      const match = pattern.exec(userAgent);
      if (match !== null) return { name, version: (match[1] ?? '').replace(/_/g, '.') || 'unknown' };
    }
    return { name: 'Unknown', version: 'unknown' };
  };
  const tablet = /iPad|Tablet|(?=.*Android)(?!.*Mobile)/.test(userAgent);
  const mobile = /Mobi|iPhone|iPod|Android/.test(userAgent);
  return {
    browser: find(BROWSERS),
    os: find(SYSTEMS),
    device: tablet && /iPad|Android|Tablet/.test(userAgent) ? 'tablet' : mobile ? 'mobile' : 'desktop',
  };
}
