import { createHash, X509Certificate } from 'node:crypto';
import { z } from 'zod';
import type { SsoConnection } from '../../platform/database/tables/sso.table.ts';

export const ssoRoleSchema = z.enum(['admin', 'member', 'viewer']);

const certificateViewSchema = z.object({
  pem: z.string(),
  subject: z.string(),
  notAfter: z.iso.datetime(),
  sha256: z.string().describe('SHA-256 fingerprint of the DER, hex'),
});

export const connectionViewSchema = z.object({
  id: z.string(),
  type: z.enum(['saml', 'oidc']),
  name: z.string(),
  defaultRole: ssoRoleSchema,
  enabled: z.boolean(),
  /** Where a sign-in through this connection starts (`/auth/sso/{id}/start`). */
  startUrl: z.string(),
  saml: z
    .object({
      entityId: z.string(),
      ssoUrl: z.string(),
      certificates: z.array(certificateViewSchema),
      /** What the IdP's admin configures: this server as a service provider. */
      serviceProvider: z.object({ entityId: z.string(), acsUrl: z.string(), metadataUrl: z.string() }),
    })
    .optional(),
  oidc: z
    .object({
      issuer: z.string(),
      clientId: z.string(),
      /** The redirect URI to register at the provider. The client secret is never returned. */
      redirectUri: z.string(),
    })
    .optional(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export type ConnectionView = z.infer<typeof connectionViewSchema>;

function certificateView(pem: string): z.infer<typeof certificateViewSchema> {
  const certificate = new X509Certificate(pem);
  return {
    pem,
    subject: certificate.subject,
    notAfter: new Date(certificate.validTo).toISOString(),
    sha256: createHash('sha256').update(certificate.raw).digest('hex'),
  };
}

export function toConnectionView(
  connection: SsoConnection,
  publicUrl: string,
  serviceProvider: (connectionId: string) => { entityId: string; acsUrl: string },
): ConnectionView {
  const base = `${publicUrl}/auth/sso/${connection.id}`;
  return {
    id: connection.id,
    type: connection.type,
    name: connection.name,
    defaultRole: connection.default_role,
    enabled: connection.enabled,
    startUrl: `${base}/start`,
    ...(connection.type === 'saml'
      ? {
          saml: {
            entityId: connection.saml_idp_entity_id ?? '',
            ssoUrl: connection.saml_sso_url ?? '',
            certificates: connection.saml_certificates.map(certificateView),
            serviceProvider: { ...serviceProvider(connection.id), metadataUrl: `${base}/metadata` },
          },
        }
      : {
          oidc: {
            issuer: connection.oidc_issuer ?? '',
            clientId: connection.oidc_client_id ?? '',
            redirectUri: `${base}/callback`,
          },
        }),
    createdAt: connection.created_at.toISOString(),
    updatedAt: connection.updated_at.toISOString(),
  };
}
