import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { ApiFailure, api, type Me, rememberCsrfToken } from '../api.ts';
import { ErrorText } from '../ui/status.tsx';
import { Shell } from './Shell.tsx';

/** Its children once the session is known; the sign-in page otherwise. */
export function SignedIn({ children }: { children: ReactNode }) {
  const location = useLocation();
  const me = useQuery({ queryKey: ['me'], queryFn: () => api<Me>('GET', '/v1/me') });
  if (me.isPending) return <p>Loading…</p>;
  if (me.error instanceof ApiFailure && me.error.status === 401)
    return <Navigate to={`/login?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  if (me.error) return <ErrorText>{me.error.message}</ErrorText>;
  rememberCsrfToken(me.data.csrfToken);
  return <Shell me={me.data}>{children}</Shell>;
}
