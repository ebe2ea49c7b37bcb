import { fileURLToPath } from 'node:url';

/** Where `vite build` puts the dashboard: index.html and assets/, served by @svc/api. */
export const dashboardDirectory = fileURLToPath(new URL('./dist/', import.meta.url));
