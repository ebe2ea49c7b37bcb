import { type ReactNode, useEffect, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ErrorText } from '../ui/status.tsx';

/**
 * A page of an e-mailed one-time link that acts as soon as it opens (`run` with the link's
 * token, once), then shows `done` or the API's error.
 */
export function TokenPage({
  title,
  run,
  done,
}: {
  title: string;
  run: (token: string) => Promise<void>;
  done: ReactNode;
}) {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [state, setState] = useState<{ error?: string; done?: true }>({});
  // biome-ignore lint/correctness/useExhaustiveDependencies: the link is used once, for its token
  useEffect(() => {
    let cancelled = false;
    run(token).then(
      () => !cancelled && setState({ done: true }),
      (failure: unknown) =>
        !cancelled && setState({ error: failure instanceof Error ? failure.message : String(failure) }),
    );
    return () => {
      cancelled = true;
    };
  }, [token]);
  return (
    <main>
      <section
        className="card"
        aria-labelledby="token-page-title"
        aria-busy={state.done === undefined && state.error === undefined}
      >
        <h1 id="token-page-title">{title}</h1>
        {state.error === undefined ? null : (
          <>
            <ErrorText>{state.error}</ErrorText>
            <Link to="/login">Back to sign-in</Link>
          </>
        )}
        {state.done ? done : null}
      </section>
    </main>
  );
}
