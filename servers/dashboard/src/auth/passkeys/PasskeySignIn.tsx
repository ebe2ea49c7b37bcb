import { useState } from 'react';
import { api } from '../../api.ts';
import { ErrorText } from '../../ui/status.tsx';

/** What `POST /auth/passkeys/login/verify` answers: as a password sign-in. */
interface SignedIn {
  user: { id: string; email: string; name?: string; createdAt: string };
  csrfToken: string;
}

/**
 * Sign-in with a passkey ("Use a passkey", under the password form: its button's name must not
 * contain "Sign in", the password form's): the browser offers the passkeys it has for this
 * site (no e-mail address asked), the authenticator verifies the person, the server starts the
 * session. No second factor follows. The WebAuthn helper is loaded on the first press only.
 * Not offered on a page at an IP address (no valid relying party id).
 */
export function PasskeySignIn({ onSignedIn }: { onSignedIn: (answer: SignedIn) => Promise<void> }) {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  // WebAuthn needs a domain name: on an IP address (http://127.0.0.1:…) no passkey can work, so
  // none is offered (http://localhost:… works).
  if (/^(\d{1,3}\.){3}\d{1,3}$|^\[/.test(window.location.hostname)) return null;

  async function signIn() {
    setBusy(true);
    setError(undefined);
    try {
      const { startAuthentication } = await import('@simplewebauthn/browser');
      const optionsJSON = await api<Parameters<typeof startAuthentication>[0]['optionsJSON']>(
        'POST',
        '/auth/passkeys/login/options',
      );
      const response = await startAuthentication({ optionsJSON });
      await onSignedIn(await api<SignedIn>('POST', '/auth/passkeys/login/verify', { response }));
    } catch (failure) {
      setError(
        failure instanceof Error && failure.name === 'NotAllowedError'
          ? 'No passkey was used: the request was cancelled or timed out.'
          : failure instanceof Error
            ? failure.message
            : String(failure),
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-label="Sign in with a passkey">
      {error === undefined ? null : <ErrorText>{error}</ErrorText>}
      <p>No password needed: your device's screen lock or a security key signs you in.</p>
      <button type="button" onClick={signIn} disabled={busy}>
        Use a passkey
      </button>
    </section>
  );
}
