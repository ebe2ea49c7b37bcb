/**
 * The result of `run(token)`, started once per token for the page's lifetime: a one-time link's
 * token must be posted once, even when an effect runs twice (React's StrictMode in development,
 * a remount).
 */
export function once<T>(run: (token: string) => Promise<T>): (token: string) => Promise<T> {
  const started = new Map<string, Promise<T>>();
  return (token) => {
    let promise = started.get(token);
    if (promise === undefined) {
      promise = run(token);
      started.set(token, promise);
    }
    return promise;
  };
}
