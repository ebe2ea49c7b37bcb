import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../../api.ts';
import { ErrorText } from '../../ui/status.tsx';

// Organization SSO's e-mail-first sign-in (servers/api/README.md, Organization SSO): the address,
// then `GET /auth/sso/lookup`, then the browser goes to the connection's `/start` (the identity
// provider, then back to the dashboard signed in). The answer depends on the domain only.

interface Lookup {
  connectionId: string | null;
  startUrl?: string;
}

/** `/sso`: "Sign in with SSO". */
export function SsoSignIn() {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const email = String(new FormData(event.currentTarget).get('email'));
    setBusy(true);
    setError(undefined);
    try {
      const found = await api<Lookup>('GET', `/auth/sso/lookup?email=${encodeURIComponent(email)}`);
      if (found.connectionId === null || found.startUrl === undefined) {
        setError('No single sign-on is set up for this address: sign in with your password or a link.');
        setBusy(false);
        return;
      }
      window.location.assign(found.startUrl);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
      setBusy(false);
    }
  }

  return (
    <main>
      <form className="card" onSubmit={submit} aria-labelledby="sso-title">
        <h1 id="sso-title">Sign in with SSO</h1>
        <p>Your organization's identity provider signs you in. Enter your work e-mail address.</p>
        <label>
          Work e-mail address
          <input name="email" type="email" autoComplete="username" required />
        </label>
        {error === undefined ? null : <ErrorText>{error}</ErrorText>}
        <button type="submit" disabled={busy}>
          Continue
        </button>
        <nav aria-label="Other ways in" className="auth-links">
          <Link to="/login">Sign in with a password</Link>
        </nav>
      </form>
    </main>
  );
}

/** Why the server refused an SSO sign-in (`/login?error=sso&reason=…`), in words. */
const REASONS: Record<string, string> = {
  domain: 'your identity provider sent an address outside your organization’s verified domains',
  flow: 'the sign-in was started in another browser, expired or was already used',
  seats: 'your organization’s plan has no seat left',
  replay: 'that sign-in response was already used',
};

/** The SSO refusal the login page was sent back with, if any, and the way to try again. */
export function SsoRefusal() {
  const [params] = useSearchParams();
  if (params.get('error') !== 'sso') return null;
  const reason =
    REASONS[params.get('reason') ?? ''] ?? 'your identity provider’s answer could not be accepted';
  return (
    <ErrorText>
      Single sign-on failed: {reason}. <Link to="/sso">Try again</Link>
    </ErrorText>
  );
}
