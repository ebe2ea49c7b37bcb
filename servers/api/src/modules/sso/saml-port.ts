import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';

// What the sso routes need of the SAML library (`./saml/index.ts`): its functions, passed in by
// the composition, so the routes stay testable with the library as it is.

export interface SamlIdentityProvider {
  entityId: string;
  ssoUrl: string;
  /** PEM. */
  certificates: string[];
}

export interface SamlServiceProvider {
  entityId: string;
  acsUrl: string;
}

export interface SamlAssertion {
  nameId: string;
  email?: string | undefined;
  name?: string | undefined;
  assertionId: string;
  sessionIndex?: string | undefined;
}

/** The SAML library's functions the routes use. */
export interface SamlLibrary {
  parseIdpMetadata(xml: string): SamlIdentityProvider;
  serviceProviderMetadata(sp: SamlServiceProvider): string;
  samlServiceProvider(publicUrl: string, connectionId: string): SamlServiceProvider;
  startSamlSignIn(
    database: Kysely<Database>,
    connectionId: string,
    idp: SamlIdentityProvider,
    sp: SamlServiceProvider,
    now: Date,
  ): Promise<{ redirectUrl: string }>;
  verifySamlResponse(
    database: Kysely<Database>,
    connectionId: string,
    idp: SamlIdentityProvider,
    sp: SamlServiceProvider,
    samlResponse: string,
    now: Date,
  ): Promise<SamlAssertion>;
  /** The library's refusal (`SamlRefusal.isInstance`), with why. */
  refusalOf(error: unknown): { reason: string; message: string } | undefined;
}
