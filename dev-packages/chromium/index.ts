/**
 * Chromium for the workspace's browser tests and benchmarks (INFRA.md): Debian's package, never
 * a download.
 */

/** Where apt puts Chromium (`pnpm test:setup` installs it, as `pnpm test` does first), or `SVC_CHROMIUM`. */
export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Headless, quiet, with a fake camera and microphone; peers of one page may connect over
 * loopback. Without {@link GRANT_MEDIA}, `getUserMedia` is a real permission denial.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--use-fake-device-for-media-stream',
  '--allow-loopback-in-peer-connection',
];

/** Grants the camera and microphone without a prompt. */
export const GRANT_MEDIA = '--use-fake-ui-for-media-stream';
