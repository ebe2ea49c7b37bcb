/** Everything both builds export besides `verifyWebhook` and `signWebhook`. */
export {
  describeErrorCode,
  WEBHOOK_VERIFICATION_ERROR_CODES,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from './errors.ts';
export { SIGNATURE_HEADER_LIMITS, SIGNATURE_HEADER_NAME } from './header.ts';
export {
  CLUSTER_WEBHOOK_EVENT_TYPES,
  type ClusterWebhookData,
  type ClusterWebhookEvent,
  type ClusterWebhookEventType,
  type HeadersLike,
  isKnownWebhookEventType,
  type NotificationWebhookEvent,
  OTHER_WEBHOOK_EVENT_TYPES,
  type RawBody,
  type SignatureHeader,
  type SignWebhook,
  type SignWebhookOptions,
  type UnknownWebhookEvent,
  type VerifyWebhook,
  type VerifyWebhookOptions,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_VERSION,
  type WebhookCluster,
  type WebhookData,
  type WebhookEnvelope,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookSecrets,
  type WebhookSeverity,
} from './types.ts';
export { DEFAULT_TOLERANCE_SEC } from './verify.ts';
