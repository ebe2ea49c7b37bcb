import type { Severity } from '../issues/types.ts';
import {
  type ClusterRuleEvent,
  type PropertyValue,
  type Rule,
  type RuleSource,
  type SecurityEvent,
  THRESHOLD_EVENTS,
} from './types.ts';

/** A rule as its form edits it: text fields as typed, choices as lists. */
export interface RuleDraft {
  name: string;
  enabled: boolean;
  type: RuleSource['type'];
  clusterEvents: ClusterRuleEvent[];
  kinds: string[];
  minSeverity: Severity | '';
  environment: string;
  release: string;
  threshold: string;
  customName: string;
  /** One `name=value` a line. */
  properties: string;
  securityEvents: SecurityEvent[];
  channelIds: string[];
  throttleMinutes: string;
}

/** The form's starting point: a new rule (new issues, every channel), or `rule` as it is. */
export function toDraft(rule: Rule | undefined, channelIds: string[]): RuleDraft {
  const draft: RuleDraft = {
    name: rule?.name ?? '',
    enabled: rule?.enabled ?? true,
    type: rule?.source.type ?? 'cluster',
    clusterEvents: ['cluster.created', 'cluster.regressed'],
    kinds: [],
    minSeverity: '',
    environment: '',
    release: '',
    threshold: '',
    customName: '',
    properties: '',
    securityEvents: [],
    channelIds: rule?.channelIds ?? channelIds,
    throttleMinutes: String(rule?.throttleMinutes ?? 60),
  };
  const source = rule?.source;
  if (source === undefined) return draft;
  if (source.type === 'security') return { ...draft, securityEvents: source.events ?? [] };
  const common = {
    minSeverity: source.minSeverity ?? ('' as const),
    environment: source.environment ?? '',
    release: source.release ?? '',
  };
  if (source.type === 'custom')
    return {
      ...draft,
      ...common,
      customName: source.name,
      properties: Object.entries(source.properties ?? {})
        .map(
          ([name, value]) =>
            `${name}=${typeof value === 'string' && /^(true|false|-?\d+(\.\d+)?)$/.test(value) ? JSON.stringify(value) : String(value)}`,
        )
        .join('\n'),
    };
  return {
    ...draft,
    ...common,
    clusterEvents: source.events,
    kinds: source.kinds ?? [],
    threshold: source.threshold === undefined ? '' : String(source.threshold),
  };
}

/**
 * `name=value` lines as properties: `true`/`false` are booleans, numbers are numbers, a value in
 * double quotes is the string inside them (`"42"`), anything else the string as written.
 */
export function parseProperties(text: string): Record<string, PropertyValue> | string {
  const properties: Record<string, PropertyValue> = {};
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const equals = line.indexOf('=');
    if (equals <= 0) return `Property line ${index + 1} must be name=value`;
    const name = line.slice(0, equals).trim();
    const value = line.slice(equals + 1).trim();
    if (value === 'true' || value === 'false') properties[name] = value === 'true';
    else if (/^-?\d+(\.\d+)?$/.test(value)) properties[name] = Number(value);
    else if (value.length >= 2 && value.startsWith('"') && value.endsWith('"'))
      properties[name] = value.slice(1, -1);
    else properties[name] = value;
  }
  return properties;
}

const optionalText = (value: string) => (value.trim() === '' ? undefined : value.trim());

/** The API body of a draft (`POST`/`PATCH /v1/notifications/rules`), or what is wrong with it. */
export function toRuleBody(
  draft: RuleDraft,
): { body: Omit<Rule, 'id' | 'createdAt' | 'updatedAt'> } | { problem: string } {
  const throttleMinutes = Number(draft.throttleMinutes);
  if (!Number.isInteger(throttleMinutes) || throttleMinutes < 0)
    return { problem: 'The throttle is a whole number of minutes (0 for none)' };
  let source: RuleSource;
  const filters = {
    ...(draft.minSeverity === '' ? {} : { minSeverity: draft.minSeverity }),
    ...(optionalText(draft.environment) === undefined
      ? {}
      : { environment: optionalText(draft.environment) }),
    ...(optionalText(draft.release) === undefined ? {} : { release: optionalText(draft.release) }),
  };
  if (draft.type === 'cluster') {
    if (draft.clusterEvents.length === 0) return { problem: 'Choose at least one issue event' };
    const needsThreshold = draft.clusterEvents.some((event) => THRESHOLD_EVENTS.has(event));
    const threshold = Number(draft.threshold);
    if (needsThreshold && (draft.threshold.trim() === '' || !Number.isInteger(threshold) || threshold < 1))
      return { problem: 'A threshold (occurrences in 24 hours, at least 1) is needed for threshold events' };
    source = {
      type: 'cluster',
      events: draft.clusterEvents,
      ...(draft.kinds.length === 0 ? {} : { kinds: draft.kinds }),
      ...filters,
      ...(needsThreshold ? { threshold } : {}),
    };
  } else if (draft.type === 'custom') {
    const properties = parseProperties(draft.properties);
    if (typeof properties === 'string') return { problem: properties };
    source = {
      type: 'custom',
      name: draft.customName.trim(),
      ...(Object.keys(properties).length === 0 ? {} : { properties }),
      ...filters,
    };
  } else {
    source = {
      type: 'security',
      ...(draft.securityEvents.length === 0 ? {} : { events: draft.securityEvents }),
    };
  }
  return {
    body: {
      name: draft.name.trim(),
      enabled: draft.enabled,
      source,
      channelIds: draft.channelIds,
      throttleMinutes,
    },
  };
}

/** A rule's source in words, for the list. */
export function describeSource(source: RuleSource, kindLabel: (kind: string) => string): string {
  if (source.type === 'security')
    return `Security: ${source.events === undefined ? 'every security event' : source.events.join(', ')}`;
  const filters = [
    source.minSeverity === undefined ? undefined : `severity ≥ ${source.minSeverity}`,
    source.environment === undefined ? undefined : `environment ${source.environment}`,
    source.release === undefined ? undefined : `release ${source.release}`,
  ].filter((part) => part !== undefined);
  if (source.type === 'custom') {
    const properties = Object.entries(source.properties ?? {}).map(
      ([name, value]) => `${name}=${JSON.stringify(value)}`,
    );
    return `Custom event “${source.name}”${[...properties, ...filters].length === 0 ? '' : ` (${[...properties, ...filters].join(', ')})`}`;
  }
  const kinds = source.kinds === undefined ? 'every kind' : source.kinds.map(kindLabel).join(', ');
  const threshold = source.threshold === undefined ? [] : [`threshold ${source.threshold} in 24 h`];
  return `Issues: ${source.events.join(', ')} — ${kinds}${[...threshold, ...filters].length === 0 ? '' : ` (${[...threshold, ...filters].join(', ')})`}`;
}
