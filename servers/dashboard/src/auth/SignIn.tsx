import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, type Me, rememberCsrfToken } from '../api.ts';
import { ErrorText } from '../ui/status.tsx';
import { OAuthButtons } from './oauth/OAuthButtons.tsx';
import { PasskeySignIn } from './passkeys/PasskeySignIn.tsx';
import { SsoRefusal } from './sso/SsoSignIn.tsx';

/** Where to go after signing in: the page that asked for it, else the sessions. */
export function useNextPage(): string {
  const [params] = useSearchParams();
  const next = params.get('next');
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/sessions';
}

export type SignInAnswer = { user: Me['user']; csrfToken: string } | { mfaRequired: true; mfaToken: string };

/** Password sign-in, then the second factor when the account has it on. */
export function SignIn() {
  const navigate = useNavigate();
  const next = useNextPage();
  const queryClient = useQueryClient();
  const [mfaToken, setMfaToken] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function finish(answer: SignInAnswer) {
    if ('mfaRequired' in answer) {
      setMfaToken(answer.mfaToken);
      return;
    }
    rememberCsrfToken(answer.csrfToken);
    await queryClient.invalidateQueries();
    navigate(next, { replace: true });
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      if (mfaToken === undefined) {
        await finish(
          await api<SignInAnswer>('POST', '/auth/login', {
            email: String(form.get('email')),
            password: String(form.get('password')),
          }),
        );
      } else {
        await finish(
          await api<SignInAnswer>('POST', '/auth/mfa/verify', { mfaToken, code: String(form.get('code')) }),
        );
      }
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main>
      <form className="card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in</h1>
        {mfaToken === undefined ? (
          <>
            <label>
              E-mail address
              <input name="email" type="email" autoComplete="username" required />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="current-password" required />
            </label>
          </>
        ) : (
          <label>
            Code from your authenticator app, or a recovery code
            <input name="code" autoComplete="one-time-code" required />
          </label>
        )}
        {error === undefined ? <SsoRefusal /> : <ErrorText>{error}</ErrorText>}
        <button type="submit" disabled={busy}>
          {mfaToken === undefined ? 'Sign in' : 'Verify'}
        </button>
        {mfaToken === undefined ? <OAuthButtons onMfaToken={setMfaToken} /> : null}
        {mfaToken === undefined ? (
          <nav aria-label="Other ways in" className="auth-links">
            <Link to="/forgot-password">Forgot your password?</Link>
            <Link to="/sign-in-link">E-mail me a sign-in link</Link>
            <Link to="/sso">Sign in with SSO</Link>
            <Link to="/signup">Create an account</Link>
          </nav>
        ) : null}
      </form>
      {mfaToken === undefined ? <PasskeySignIn onSignedIn={finish} /> : null}
    </main>
  );
}
