// Notifications: channels, rules, the outbox, webhook deliveries and the inbox.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { CUSTOM_EVENTS_INPUT, notifyCustomEvents } from './custom-events.ts';
export {
  type AccountEvent,
  type NotificationDraft,
  type NotifyResult,
  notify,
  notifyAccountEvent,
  notifySecurityEvent,
  type OccurrenceSession,
  routeOf,
  type SecurityEvent,
  type SecurityNotifyResult,
} from './notify.ts';
export { CLUSTER_KINDS, type ClusterRuleEvent, type RegressionMetric } from './rules.ts';
