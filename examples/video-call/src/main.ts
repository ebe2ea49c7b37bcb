// Usage: SVC_PROJECT_KEY=pk_... [SVC_ENDPOINT=http://127.0.0.1:8080] [PORT=5173]
//        [TURN_URL=turn:127.0.0.1:3478 TURN_USERNAME=test TURN_CREDENTIAL=test RELAY_ONLY=1]
//        pnpm --filter @example/video-call start
// Serves the example call page (two peers in one page, the browser SDK with its collector on)
// pointed at the server; open the printed address, press "Start call", then "Hang up".
import { startCallPage } from './serve.ts';

const projectKey = process.env.SVC_PROJECT_KEY ?? '';
const endpoint = process.env.SVC_ENDPOINT ?? 'http://127.0.0.1:8080';
const port = Number(process.env.PORT ?? 5173);
if (!projectKey.startsWith('pk_')) {
  console.error(
    'Set SVC_PROJECT_KEY to the project key (pk_…) that `pnpm start` printed on its first start.',
  );
  process.exit(1);
}
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT is a port number, not '${process.env.PORT}'.`);
  process.exit(1);
}
const turn = process.env.TURN_URL;
const page = await startCallPage({
  port,
  sdk: { projectKey, endpoint, release: process.env.RELEASE ?? 'example' },
  ...(turn === undefined
    ? {}
    : {
        call: {
          iceServers: [
            { urls: turn, username: process.env.TURN_USERNAME, credential: process.env.TURN_CREDENTIAL },
          ],
          ...(process.env.RELAY_ONLY === '1' ? { iceTransportPolicy: 'relay' as const } : {}),
        },
      }),
});
console.error(`The call page is at ${page.url} (sending to ${endpoint}). Ctrl-C stops it.`);
process.once('SIGINT', () => void page.close().then(() => process.exit(0)));
process.once('SIGTERM', () => void page.close().then(() => process.exit(0)));
