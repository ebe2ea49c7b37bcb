import { type ComponentType, type LazyExoticComponent, lazy } from 'react';

/**
 * A page component loaded as its own chunk when first shown: `lazyPage(() => import('./X.tsx'),
 * 'X')` for a named export. Keeps the first load small (`pnpm --filter @svc/dashboard size`).
 */
export function lazyPage<Module, Name extends keyof Module>(
  load: () => Promise<Module>,
  name: Name,
): LazyExoticComponent<ComponentType> {
  return lazy(async () => ({ default: (await load())[name] as ComponentType }));
}
