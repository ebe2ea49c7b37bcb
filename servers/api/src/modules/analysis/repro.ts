// Reproduction of a session: the steps a person would follow, and a Playwright test script that
// walks the session's navigation, clicks and typing with robust locators (elements.ts), typing
// placeholder values where the SDK masked what was typed. The script ends by expecting the
// uncaught errors the session had, so it passes when it reproduces them (and, once the bug is
// fixed, turning that expectation around makes it a regression test).

import { literal } from './elements.ts';
import type { TimelineItem, TypedValue } from './timeline.ts';
import { describeTarget, formatOffset, originOf } from './transcript.ts';

/** What `POST /v1/sessions/{id}/repro` answers. */
export interface Reproduction {
  sessionId: string;
  /** The page the session started on. */
  startUrl: string | null;
  /** Numbered steps in words. */
  steps: string[];
  /** A Playwright test (TypeScript, `@playwright/test`); `BASE_URL` points it at another deployment. */
  script: string;
  /** What the script could not do as recorded (masked values typed as placeholders, actions left out). */
  notes: string[];
}

/** What a reproduction is made from: the session's row and its timeline with locators. */
export interface ReproductionSources {
  session: {
    id: string;
    startedAt: number;
    url: string | null;
    viewportWidth: number | null;
    viewportHeight: number | null;
    browserName: string | null;
  };
  items: readonly TimelineItem[];
}

/** A navigation this soon after an action is what the action did, not a new visit. */
const CAUSED_NAVIGATION_MS = 3_000;

/** A value a masked field gets, by its type. */
function placeholderValue(fieldType: string | undefined): string {
  switch (fieldType) {
    case 'email':
      return 'user@example.com';
    case 'password':
      return 'Password-123!';
    case 'tel':
      return '+15550100';
    case 'number':
    case 'range':
      return '1';
    case 'url':
      return 'https://example.com';
    case 'date':
      return '2026-01-01';
    case 'time':
      return '12:00';
    case 'search':
      return 'search';
    default:
      return 'text';
  }
}

function pathAndQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}

/** `new URL('/cart', BASE_URL).href` for the session's own origin, the URL itself for another. */
function urlExpression(url: string, origin: string | undefined): string {
  const other = originOf(url);
  return other !== undefined && other !== origin
    ? literal(url)
    : `new URL(${literal(pathAndQuery(url))}, BASE_URL).href`;
}

function typed(value: TypedValue, fieldType: string | undefined): { text: string; masked: boolean } {
  return value.kind === 'text'
    ? { text: value.text, masked: false }
    : { text: placeholderValue(fieldType), masked: true };
}

/**
 * The reproduction of a session from its timeline (built with locators).
 *
 * @example
 * ```ts
 * const reproduction = buildReproduction({ session, items });
 * reproduction.script; // "import { expect, test } from '@playwright/test'; …"
 * ```
 */
export function buildReproduction(sources: ReproductionSources): Reproduction {
  const { session } = sources;
  const origin = originOf(session.url);
  const steps: string[] = [];
  const body: string[] = [];
  const notes: string[] = [];
  const errors: string[] = [];
  let maskedInputs = 0;
  let unplaced = 0;
  let lastActionAt: number | undefined;
  let opened = false;

  const step = (text: string) => steps.push(`${steps.length + 1}. ${text}`);
  const at = (t: number) => `${formatOffset(t - session.startedAt)}`;

  for (const item of sources.items) {
    switch (item.kind) {
      case 'page': {
        const caused = lastActionAt !== undefined && item.t - lastActionAt <= CAUSED_NAVIGATION_MS;
        const target = urlExpression(item.url, origin);
        if (!opened || (item.load && !caused)) {
          step(`Open ${item.url}`);
          body.push(`  // ${at(item.t)} [${item.id}]`, `  await page.goto(${target});`);
          opened = true;
        } else {
          step(`See the page go to ${item.url}`);
          body.push(
            `  // ${at(item.t)} [${item.id}] the action above leads here`,
            `  await expect(page).toHaveURL(${target});`,
          );
        }
        lastActionAt = undefined;
        continue;
      }
      case 'click':
      case 'rage_click': {
        const times = item.kind === 'rage_click' ? item.count : 1;
        const what = describeTarget(item.element);
        if (item.locator === undefined || item.locator === null) {
          unplaced += 1;
          body.push(
            `  // ${at(item.t)} [${item.id}] a click on ${what}: left out, the recording does not place it`,
          );
          continue;
        }
        step(times > 1 ? `Click ${what} ${times} times quickly` : `Click ${what}`);
        body.push(`  // ${at(item.t)} [${item.id}] ${times > 1 ? `rage click, ${times} clicks` : 'click'}`);
        if (times > 1)
          body.push(`  for (let click = 0; click < ${times}; click += 1) await ${item.locator}.click();`);
        else body.push(`  await ${item.locator}.click();`);
        lastActionAt = item.kind === 'rage_click' ? item.endT : item.t;
        continue;
      }
      case 'input': {
        const what = describeTarget(item.element);
        if (item.locator === undefined || item.locator === null) {
          unplaced += 1;
          body.push(
            `  // ${at(item.t)} [${item.id}] typing into ${what}: left out, the recording does not place it`,
          );
          continue;
        }
        const fieldType = item.element?.fieldType;
        body.push(`  // ${at(item.t)} [${item.id}]`);
        if (item.value.kind === 'checked') {
          step(`${item.value.checked ? 'Check' : 'Uncheck'} ${what}`);
          body.push(`  await ${item.locator}.${item.value.checked ? 'check' : 'uncheck'}();`);
        } else if (fieldType === 'select') {
          if (item.value.kind === 'text') {
            step(`Choose "${item.value.text}" in ${what}`);
            body.push(`  await ${item.locator}.selectOption(${literal(item.value.text)});`);
          } else {
            maskedInputs += 1;
            step(`Choose an option in ${what} (the choice was masked)`);
            body.push(
              `  // the option chosen was masked: pick the one to test`,
              `  await ${item.locator}.selectOption({ index: 1 });`,
            );
          }
        } else {
          const value = typed(item.value, fieldType);
          if (value.masked) maskedInputs += 1;
          step(
            `Type ${value.masked ? `a ${fieldType ?? 'text'} value (masked in the recording)` : `"${value.text}"`} into ${what}`,
          );
          body.push(
            `  await ${item.locator}.fill(${literal(value.text)});${value.masked ? ' // placeholder: the value was masked' : ''}`,
          );
        }
        lastActionAt = item.t;
        continue;
      }
      case 'error':
        if (item.source === 'onerror' || item.source === 'unhandledrejection') {
          const text = `${item.name}: ${item.message ?? ''}`;
          step(`See the error "${text}"`);
          body.push(`  // ${at(item.t)} [${item.id}] the session threw here: ${text.replace(/\n/g, ' ')}`);
          if (!errors.includes(text)) errors.push(text);
        }
        continue;
      default:
        continue;
    }
  }

  if (maskedInputs > 0)
    notes.push(
      `${maskedInputs} value${maskedInputs === 1 ? ' was' : 's were'} masked in the recording: the script types placeholders.`,
    );
  if (unplaced > 0)
    notes.push(
      `${unplaced} action${unplaced === 1 ? '' : 's'} on elements the recording does not hold ${unplaced === 1 ? 'is' : 'are'} left out.`,
    );
  if (!opened) notes.push('The session names no page: set BASE_URL and add the first page.');

  const viewport =
    session.viewportWidth !== null && session.viewportHeight !== null
      ? [
          `  await page.setViewportSize({ width: ${session.viewportWidth}, height: ${session.viewportHeight} });`,
        ]
      : [];
  const expectation =
    errors.length === 0
      ? []
      : [
          '',
          `  // The session had ${errors.length === 1 ? 'this uncaught error' : 'these uncaught errors'}: the script passes when it reproduces ${
            errors.length === 1 ? 'it' : 'them'
          }.`,
          '  // Once fixed, expect the opposite (`expect(errors).toEqual([])`) to keep it fixed.',
          `  await expect.poll(() => errors).toEqual(expect.arrayContaining(${JSON.stringify(errors)}));`,
        ];
  const script = [
    "import { expect, test } from '@playwright/test';",
    '',
    `// Reproduction of session ${session.id}, recorded ${new Date(session.startedAt).toISOString()}${
      session.browserName === null ? '' : ` in ${session.browserName}`
    }.`,
    '// Generated from its navigation, clicks and typing; masked values are typed as placeholders.',
    `const BASE_URL = process.env.BASE_URL ?? ${literal(origin ?? 'http://localhost')};`,
    '',
    `test(${literal(`reproduces session ${session.id}`)}, async ({ page }) => {`,
    '  const errors: string[] = [];',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the generated script's own template literal
    "  page.on('pageerror', (error) => errors.push(`${error.name}: ${error.message}`));",
    ...viewport,
    ...body,
    ...expectation,
    '});',
    '',
  ].join('\n');
  return { sessionId: session.id, startUrl: session.url, steps, script, notes };
}
