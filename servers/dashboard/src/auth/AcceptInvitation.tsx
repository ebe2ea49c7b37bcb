import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { ApiFailure, api, type Me, type Organization, rememberCsrfToken } from '../api.ts';
import { ErrorText } from '../ui/status.tsx';
import { field, useFormAction } from './use-action.ts';

interface Accepted {
  csrfToken: string;
  organization: Organization;
}

/**
 * The page of an invitation link (`/accept-invitation?token=…`). Signed in: join with this
 * account (it must have the invited address). Signed out: choose a password for a new account
 * with the invited address, or sign in first when the address has an account already.
 */
export function AcceptInvitation() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const me = useQuery({ queryKey: ['me'], queryFn: () => api<Me>('GET', '/v1/me') });
  const signedIn = me.data !== undefined;
  if (me.data !== undefined) rememberCsrfToken(me.data.csrfToken);
  const here = `/accept-invitation?token=${encodeURIComponent(token)}`;

  const { busy, error, onSubmit } = useFormAction(async (form) => {
    const name = field(form, 'name').trim();
    const answer = await api<Accepted>(
      'POST',
      `/auth/invitations/${encodeURIComponent(token)}/accept`,
      signedIn ? undefined : { password: field(form, 'password'), ...(name === '' ? {} : { name }) },
    ).catch((failure: unknown) => {
      if (failure instanceof ApiFailure && failure.status === 409)
        throw new Error('This address has an account already: sign in, then open the invitation again');
      throw failure;
    });
    rememberCsrfToken(answer.csrfToken);
    await queryClient.invalidateQueries();
    navigate(`/sessions?org=${encodeURIComponent(answer.organization.id)}`, { replace: true });
  });

  if (me.isPending) return <p aria-busy="true">Loading…</p>;
  // An account exists, or the organization requires SSO for the address (SSO then makes the
  // account and takes this invitation): the way on is the sign-in page.
  const needsSignIn =
    error !== undefined &&
    (error.startsWith('This address has an account already') || error.includes('single sign-on (SSO)'));
  return (
    <main>
      <form className="card" onSubmit={onSubmit} aria-labelledby="invitation-title">
        <h1 id="invitation-title">Join the organization</h1>
        {signedIn ? (
          <p>
            You are signed in as <strong>{me.data.user.email}</strong>. The invitation must be for this
            address.
          </p>
        ) : (
          <>
            <p>
              You were invited by e-mail. Choose a password for your new account, or sign in if you have one.
            </p>
            <label>
              Name
              <input name="name" autoComplete="name" />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="new-password" minLength={8} required />
            </label>
          </>
        )}
        {error === undefined ? null : <ErrorText>{error}</ErrorText>}
        <button type="submit" disabled={busy}>
          {signedIn ? 'Join' : 'Create account and join'}
        </button>
        {signedIn ? null : (
          <p>
            Have an account?{' '}
            <Link
              to={`/login?next=${encodeURIComponent(here)}`}
              className={needsSignIn ? 'emphasis' : undefined}
            >
              Sign in to accept
            </Link>
          </p>
        )}
      </form>
    </main>
  );
}
