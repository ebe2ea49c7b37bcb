import { type MasterKey, openBlob, sealBlob } from '../../platform/crypto/index.ts';
import type { NotificationChannel } from '../../platform/database/tables/notifications.table.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { projectDataKey } from '../projects/index.ts';

/** How long the secret before a rotation keeps signing (PROTOCOL.md §6: 24 h). */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

type ProjectKeys = Pick<Project, 'id' | 'wrapped_data_key'>;

/** What the sealed secret is bound to: a sealed secret moved to another channel does not open. */
function associatedData(projectId: string, channelId: string): string {
  return `${projectId}/channels/${channelId}/webhook-secret`;
}

/**
 * Seals a channel's webhook secret with the project's data key (AES-256-GCM), bound to the
 * channel.
 *
 * @example
 * ```ts
 * const sealed = sealChannelSecret(masterKey, project, 'ch_01...', createWebhookSecret());
 * ```
 */
export function sealChannelSecret(
  masterKey: MasterKey,
  project: ProjectKeys,
  channelId: string,
  secret: string,
): Uint8Array {
  return sealBlob(
    projectDataKey(masterKey, project),
    Buffer.from(secret, 'utf8'),
    associatedData(project.id, channelId),
  );
}

/** Opens what {@link sealChannelSecret} sealed. */
function openChannelSecret(
  masterKey: MasterKey,
  project: ProjectKeys,
  channelId: string,
  sealed: Uint8Array,
): string {
  const bytes = openBlob(projectDataKey(masterKey, project), sealed, associatedData(project.id, channelId));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * The secrets a delivery is signed with at `now`: the current one first, then the previous one
 * while its 24 h overlap lasts (so the header carries two `v1` values then).
 *
 * @example
 * ```ts
 * const secrets = activeSecrets(masterKey, project, channel, Date.now());
 * ```
 */
export function activeSecrets(
  masterKey: MasterKey,
  project: ProjectKeys,
  channel: Pick<
    NotificationChannel,
    'id' | 'sealed_secret' | 'sealed_previous_secret' | 'previous_secret_expires_at'
  >,
  now: number,
): string[] {
  const secrets = [openChannelSecret(masterKey, project, channel.id, channel.sealed_secret)];
  if (
    channel.sealed_previous_secret !== null &&
    channel.previous_secret_expires_at !== null &&
    new Date(channel.previous_secret_expires_at).getTime() > now
  ) {
    secrets.push(openChannelSecret(masterKey, project, channel.id, channel.sealed_previous_secret));
  }
  return secrets;
}
