import type { ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';

// The organization and project live in the URL (`?org=&project=`), so every link inside the app
// carries them: a copied link opens the same view for a teammate.

/** The `org` and `project` of the current URL, as a query string to append (`?org=…&project=…`). */
export function useScopeQuery(): URLSearchParams {
  const [params] = useSearchParams();
  const scope = new URLSearchParams();
  for (const name of ['org', 'project']) {
    const value = params.get(name);
    if (value !== null) scope.set(name, value);
  }
  return scope;
}

/** `to` with the current organization and project added to its query string. */
export function useScopedHref(): (to: string) => string {
  const scope = useScopeQuery();
  return (to) => {
    const url = new URL(to, 'http://app.invalid');
    for (const [name, value] of scope) if (!url.searchParams.has(name)) url.searchParams.set(name, value);
    return `${url.pathname}${url.search}${url.hash}`;
  };
}

/** A link inside the app that keeps the selected organization and project. */
export function AppLink({
  to,
  children,
  ...rest
}: {
  to: string;
  children: ReactNode;
  className?: string;
  'aria-label'?: string;
}) {
  const scoped = useScopedHref();
  return (
    <Link to={scoped(to)} {...rest}>
      {children}
    </Link>
  );
}
