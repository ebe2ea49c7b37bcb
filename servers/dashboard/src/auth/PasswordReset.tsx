import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { ErrorText } from '../ui/status.tsx';
import { field, useFormAction } from './use-action.ts';

/** "Forgot your password?": asks for a reset link by e-mail. */
export function ForgotPassword() {
  const [sentTo, setSentTo] = useState<string | undefined>();
  const { busy, error, onSubmit } = useFormAction(async (form) => {
    const email = field(form, 'email');
    await api('POST', '/auth/password/forgot', { email });
    setSentTo(email);
  });
  return (
    <main>
      <form className="card" onSubmit={onSubmit} aria-labelledby="forgot-title">
        <h1 id="forgot-title">Reset your password</h1>
        {sentTo === undefined ? (
          <>
            <label>
              E-mail address
              <input name="email" type="email" autoComplete="email" required />
            </label>
            {error === undefined ? null : <ErrorText>{error}</ErrorText>}
            <button type="submit" disabled={busy}>
              E-mail me a reset link
            </button>
          </>
        ) : (
          <p role="status">
            If <strong>{sentTo}</strong> has an account, a link to choose a new password is on its way. It
            works once, within an hour.
          </p>
        )}
        <Link to="/login">Back to sign-in</Link>
      </form>
    </main>
  );
}

/** The page of a reset link (`/reset-password?token=…`): choose the new password. */
export function ResetPassword() {
  const [params] = useSearchParams();
  const [done, setDone] = useState(false);
  const { busy, error, onSubmit } = useFormAction(async (form) => {
    await api('POST', '/auth/password/reset', {
      token: params.get('token') ?? '',
      password: field(form, 'password'),
    });
    setDone(true);
  });
  return (
    <main>
      <form className="card" onSubmit={onSubmit} aria-labelledby="reset-title">
        <h1 id="reset-title">Choose a new password</h1>
        {done ? (
          <p role="status">
            Your password is changed, and every session of your account has ended.{' '}
            <Link to="/login">Sign in</Link> with the new password.
          </p>
        ) : (
          <>
            <label>
              New password
              <input name="password" type="password" autoComplete="new-password" minLength={8} required />
            </label>
            {error === undefined ? null : <ErrorText>{error}</ErrorText>}
            <button type="submit" disabled={busy}>
              Change password
            </button>
          </>
        )}
      </form>
    </main>
  );
}
