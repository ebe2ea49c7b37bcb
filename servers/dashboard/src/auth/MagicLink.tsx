import { useEffect, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { api, rememberCsrfToken } from '../api.ts';
import { ErrorText } from '../ui/status.tsx';
import { once } from './once.ts';
import type { SignInAnswer } from './SignIn.tsx';

const signInWithToken = once((token) => api<SignInAnswer>('POST', '/auth/magic-link', { token }));

/** The page of an e-mailed (or printed) one-time sign-in link: posts its token once. */
export function MagicLink() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const token = params.get('token') ?? '';
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let cancelled = false;
    signInWithToken(token).then(
      (answer) => {
        if (cancelled) return;
        if ('mfaRequired' in answer) navigate('/login', { replace: true });
        else {
          rememberCsrfToken(answer.csrfToken);
          navigate('/sessions', { replace: true });
        }
      },
      (failure: unknown) => {
        if (!cancelled) setError(failure instanceof Error ? failure.message : String(failure));
      },
    );
    return () => {
      cancelled = true;
    };
  }, [token, navigate]);
  return (
    <main>
      <h1>Signing in…</h1>
      {error === undefined ? null : <ErrorText>{error}</ErrorText>}
    </main>
  );
}
