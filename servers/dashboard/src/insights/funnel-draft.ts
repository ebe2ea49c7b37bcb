import type { CountBy, FunnelDraft, FunnelStep, PropertyValue } from './types.ts';

// The funnel builder's form state and its conversion to and from the API's body.

export interface StepDraft {
  key: number;
  type: FunnelStep['type'];
  route: string;
  name: string;
  /** One `name=value` a line: `true`/`false` and numbers typed, `"42"` kept as text. */
  properties: string;
  selector: string;
}

export const WINDOW_UNITS: Array<[string, string, number]> = [
  ['minutes', 'Minutes', 60_000],
  ['hours', 'Hours', 3_600_000],
  ['days', 'Days', 86_400_000],
];

export interface FormDraft {
  name: string;
  steps: StepDraft[];
  windowValue: number;
  windowUnit: string;
  countBy: CountBy;
}

let nextKey = 1;

export function emptyStep(type: FunnelStep['type'] = 'pageview'): StepDraft {
  return { key: nextKey++, type, route: '', name: '', properties: '', selector: '' };
}

function formatValue(value: PropertyValue): string {
  return typeof value === 'string' &&
    (/^(true|false)$/.test(value) || (value.trim() !== '' && Number.isFinite(Number(value))))
    ? JSON.stringify(value)
    : String(value);
}

/** The form of a saved funnel or a draft (a new one: two page views, a day, per session). */
export function toForm(funnel: FunnelDraft | undefined): FormDraft {
  if (funnel === undefined)
    return {
      name: '',
      steps: [emptyStep(), emptyStep()],
      windowValue: 1,
      windowUnit: 'days',
      countBy: 'session',
    };
  const unit = [...WINDOW_UNITS].reverse().find(([, , ms]) => funnel.windowMs % ms === 0) ?? WINDOW_UNITS[0];
  const [unitId, , unitMs] = unit as [string, string, number];
  return {
    name: funnel.name,
    steps: funnel.steps.map((step) => ({
      ...emptyStep(step.type),
      ...(step.type === 'pageview' ? { route: step.route } : {}),
      ...(step.type === 'click' ? { selector: step.selector } : {}),
      ...(step.type === 'event'
        ? {
            name: step.name,
            properties: Object.entries(step.properties ?? {})
              .map(([name, value]) => `${name}=${formatValue(value)}`)
              .join('\n'),
          }
        : {}),
    })),
    windowValue: funnel.windowMs / unitMs,
    windowUnit: unitId,
    countBy: funnel.countBy,
  };
}

/** `name=value` lines as typed properties, or the message of the first bad line. */
export function parseProperties(text: string): Record<string, PropertyValue> | string {
  const properties: Record<string, PropertyValue> = {};
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const equals = line.indexOf('=');
    if (equals <= 0) return `Line ${index + 1} of the properties is not name=value.`;
    const name = line.slice(0, equals).trim();
    const value = line.slice(equals + 1).trim();
    if (value === 'true' || value === 'false') properties[name] = value === 'true';
    else if (/^".*"$/.test(value)) properties[name] = value.slice(1, -1);
    else if (value !== '' && Number.isFinite(Number(value))) properties[name] = Number(value);
    else properties[name] = value;
  }
  return properties;
}

/** The API's body of the form, or what is missing in words. */
export function toBody(form: FormDraft): FunnelDraft | string {
  if (form.name.trim() === '') return 'Name the funnel.';
  if (form.steps.length < 2) return 'A funnel needs at least 2 steps.';
  const steps: FunnelStep[] = [];
  for (const [index, step] of form.steps.entries()) {
    const which = `Step ${index + 1}`;
    if (step.type === 'pageview') {
      const route = step.route.trim();
      if (!route.startsWith('/')) return `${which}: a route starts with / (such as /pricing).`;
      steps.push({ type: 'pageview', route });
    } else if (step.type === 'click') {
      if (step.selector.trim() === '') return `${which}: give the clicked element's selector.`;
      steps.push({ type: 'click', selector: step.selector.trim() });
    } else {
      if (step.name.trim() === '') return `${which}: give the event's name.`;
      const properties = parseProperties(step.properties);
      if (typeof properties === 'string') return `${which}: ${properties}`;
      steps.push({
        type: 'event',
        name: step.name.trim(),
        ...(Object.keys(properties).length === 0 ? {} : { properties }),
      });
    }
  }
  const unit = WINDOW_UNITS.find(([id]) => id === form.windowUnit) ?? WINDOW_UNITS[2];
  const windowMs = Math.round(form.windowValue * (unit?.[2] ?? 86_400_000));
  if (!Number.isFinite(windowMs) || windowMs < 1) return 'The conversion window must be more than 0.';
  return { name: form.name.trim(), steps, windowMs, countBy: form.countBy };
}

/** A step in words: "Page view of /cart", "Event purchase (plan = pro)", "Click on main > a". */
export function describeStep(step: FunnelStep): string {
  if (step.type === 'pageview') return `Page view of ${step.route}`;
  if (step.type === 'click') return `Click on ${step.selector}`;
  const properties = Object.entries(step.properties ?? {})
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    .join(', ');
  return `Event ${step.name}${properties === '' ? '' : ` (${properties})`}`;
}
