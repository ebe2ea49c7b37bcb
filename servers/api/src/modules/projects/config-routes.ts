import { DEFAULT_THRESHOLDS } from '@svc/detectors';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { unauthorized } from '../../platform/http/errors.ts';
import { readSettings } from './settings.ts';

/** How long the SDK config is cached, in the server and in browsers (service-spec: 60 s). */
const CONFIG_CACHE_SECONDS = 60;

const sdkConfigSchema = z.object({
  projectId: z.string(),
  webrtc: z.object({
    enabled: z.boolean(),
    sampleIntervalSec: z.number(),
    captureSdp: z.boolean(),
    emitOnThresholdCross: z.boolean(),
    maxPeerConnections: z.number(),
  }),
  recording: z.object({
    mode: z.string(),
    triggers: z.array(z.string()),
    monitorModeAfterMinutes: z.number().nullable(),
    monitorTriggers: z.array(z.string()),
    /**
     * The organization reached a monthly cap (sessions, stored bytes): start no new session (one
     * in progress goes on). Absent from servers before caps.
     */
    paused: z.boolean(),
  }),
  privacy: z.object({ mode: z.string() }),
  /** Every detector threshold: the defaults with the project's overrides applied. */
  detectorThresholds: z.record(z.string(), z.number()),
});

type SdkConfig = z.infer<typeof sdkConfigSchema>;

/** `GET /v1/config?key=&sdk=`: public remote configuration for the SDK, by project key. */
/** Options of {@link configRoutes}. */
export interface ConfigRoutesOptions {
  /** Whether SDKs of the project's organization should start no new session (a monthly cap). */
  recordingPaused: (project: Project) => Promise<boolean>;
}

export default async function configRoutes(fastify: FastifyInstance, options: ConfigRoutesOptions) {
  fastify.withTypeProvider<ZodTypeProvider>().get(
    '/config',
    {
      schema: {
        summary: 'SDK remote configuration (public, by project key)',
        querystring: z.object({
          key: z.string().min(1).max(128),
          sdk: z.string().max(128).optional(),
        }),
        response: { 200: sdkConfigSchema },
      },
    },
    async (request, reply): Promise<SdkConfig> => {
      // Projects by key are cached 60 s in the server (fastify.projectKeys).
      const project = await fastify.projectKeys.find(request.query.key);
      if (project === undefined) throw unauthorized('Unknown project key');
      const settings = readSettings(project.settings);
      reply.header('Cache-Control', `public, max-age=${CONFIG_CACHE_SECONDS}`);
      reply.header('Access-Control-Allow-Origin', '*');
      return {
        projectId: project.id,
        webrtc: settings.webrtc,
        recording: { ...settings.recording, paused: await options.recordingPaused(project) },
        privacy: { mode: settings.privacy.mode },
        detectorThresholds: { ...DEFAULT_THRESHOLDS, ...settings.detectorThresholds },
      };
    },
  );
}
