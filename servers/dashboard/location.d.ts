/** Where `vite build` puts the dashboard: index.html and assets/, served by @svc/api. */
export declare const dashboardDirectory: string;
