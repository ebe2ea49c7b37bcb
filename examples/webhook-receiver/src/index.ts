/**
 * `@example/webhook-receiver`: receive the service's signed webhooks on `node:http` or through the
 * Fetch-API adapter, record every delivery and rejection, and script the answers (for the
 * server's end-to-end tests).
 *
 * @packageDocumentation
 */
export { startFetchReceiver } from './fetch-receiver.ts';
export { startNodeReceiver } from './node-receiver.ts';
export type {
  ReceivedDelivery,
  ReceiverOptions,
  ReceiverResponse,
  RejectedRequest,
  WebhookReceiver,
} from './receiver.ts';
