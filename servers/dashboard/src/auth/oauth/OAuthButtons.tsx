import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../../api.ts';
import { ErrorText } from '../../ui/status.tsx';
import { useNextPage } from '../SignIn.tsx';
import './oauth.css';

// Sign-in with Google, Microsoft and GitHub on the sign-in page (servers/api/README.md, Sign-in
// with Google, Microsoft and GitHub): a button for each provider the server offers, the message of
// a sign-in that came back refused (`?error=`), and the hand-off of a person with two-factor
// sign-in on (`#mfaToken=`, which the sign-in page continues with).

interface OAuthProvider {
  id: 'google' | 'microsoft' | 'github';
  name: string;
  startUrl: string;
}

/**
 * The provider buttons. `onMfaToken` receives the `mfaToken` the server put in the URL's fragment
 * after a provider signed in a person with two-factor sign-in on.
 */
export function OAuthButtons({ onMfaToken }: { onMfaToken: (mfaToken: string) => void }) {
  const next = useNextPage();
  const [params] = useSearchParams();
  const error = params.get('error');
  const providers = useQuery({
    queryKey: ['oauth-providers'],
    queryFn: () => api<{ providers: OAuthProvider[] }>('GET', '/auth/oauth/providers'),
    staleTime: Number.POSITIVE_INFINITY,
  });

  useEffect(() => {
    const mfaToken = new URLSearchParams(window.location.hash.slice(1)).get('mfaToken');
    if (mfaToken === null) return;
    // Out of the address bar (and the history) before anything else happens.
    window.history.replaceState(
      window.history.state,
      '',
      `${window.location.pathname}${window.location.search}`,
    );
    onMfaToken(mfaToken);
  }, [onMfaToken]);

  const offered = providers.data?.providers ?? [];
  return (
    <>
      {error === null ? null : <ErrorText>{error}</ErrorText>}
      {offered.length === 0 ? null : (
        <nav aria-label="Sign in with another account" className="oauth-providers">
          {offered.map((provider) => (
            <a key={provider.id} href={`${provider.startUrl}?${new URLSearchParams({ returnTo: next })}`}>
              Continue with {provider.name}
            </a>
          ))}
        </nav>
      )}
    </>
  );
}
