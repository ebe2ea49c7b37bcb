import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api.ts';
import { ErrorText } from '../ui/status.tsx';
import { field, useFormAction } from './use-action.ts';

/** A new account: name, e-mail and password; a verification link follows by e-mail. */
export function SignUp() {
  const [sentTo, setSentTo] = useState<string | undefined>();
  const { busy, error, onSubmit } = useFormAction(async (form) => {
    const name = field(form, 'name').trim();
    const email = field(form, 'email');
    await api('POST', '/auth/signup', {
      email,
      password: field(form, 'password'),
      ...(name === '' ? {} : { name }),
    });
    setSentTo(email);
  });
  if (sentTo !== undefined)
    return (
      <main>
        <section className="card" aria-labelledby="sign-up-title">
          <h1 id="sign-up-title">Check your e-mail</h1>
          <p>
            We sent a link to <strong>{sentTo}</strong>. Follow it to verify your address, then sign in.
          </p>
          <Link to="/login">Back to sign-in</Link>
        </section>
      </main>
    );
  return (
    <main>
      <form className="card" onSubmit={onSubmit} aria-labelledby="sign-up-title">
        <h1 id="sign-up-title">Create an account</h1>
        <label>
          Name
          <input name="name" autoComplete="name" />
        </label>
        <label>
          E-mail address
          <input name="email" type="email" autoComplete="email" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="new-password" minLength={8} required />
        </label>
        <p className="hint">At least 8 characters; a common password is refused.</p>
        {error === undefined ? null : <ErrorText>{error}</ErrorText>}
        <button type="submit" disabled={busy}>
          Create account
        </button>
        <p>
          Have an account? <Link to="/login">Sign in</Link>
        </p>
      </form>
    </main>
  );
}
