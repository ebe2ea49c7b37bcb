import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api.ts';
import { ErrorText } from '../ui/status.tsx';
import { field, useFormAction } from './use-action.ts';

/** Sign in without a password: a one-time link by e-mail (valid 15 minutes). */
export function MagicLinkRequest() {
  const [sentTo, setSentTo] = useState<string | undefined>();
  const { busy, error, onSubmit } = useFormAction(async (form) => {
    const email = field(form, 'email');
    await api('POST', '/auth/magic-link', { email });
    setSentTo(email);
  });
  return (
    <main>
      <form className="card" onSubmit={onSubmit} aria-labelledby="magic-title">
        <h1 id="magic-title">E-mail me a sign-in link</h1>
        {sentTo === undefined ? (
          <>
            <label>
              E-mail address
              <input name="email" type="email" autoComplete="email" required />
            </label>
            {error === undefined ? null : <ErrorText>{error}</ErrorText>}
            <button type="submit" disabled={busy}>
              Send the link
            </button>
          </>
        ) : (
          <p role="status">
            If <strong>{sentTo}</strong> has an account, a sign-in link is on its way. It works once, within
            15 minutes.
          </p>
        )}
        <Link to="/login">Sign in with a password</Link>
      </form>
    </main>
  );
}
