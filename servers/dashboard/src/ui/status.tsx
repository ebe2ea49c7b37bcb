import type { ReactNode } from 'react';

/** An error message read out by screen readers. */
export function ErrorText({ children }: { children: ReactNode }) {
  return (
    <p className="error" role="alert">
      {children}
    </p>
  );
}

/** Loading and error states of a query; `children` once there is data. */
export function QueryState<T>({
  query,
  children,
}: {
  query: { isPending: boolean; error: Error | null; data: T | undefined };
  children: (data: T) => ReactNode;
}) {
  if (query.error) return <ErrorText>{query.error.message}</ErrorText>;
  if (query.isPending || query.data === undefined) return <p aria-busy="true">Loading…</p>;
  return <>{children(query.data)}</>;
}
