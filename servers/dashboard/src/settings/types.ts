// The API's answers the settings pages read (servers/api/README.md: Project settings, Accounts,
// Organizations and access).

import type { Organization } from '../api.ts';

export type Role = Organization['role'];

export interface ProjectSettings {
  webrtc: {
    enabled: boolean;
    sampleIntervalSec: number;
    captureSdp: boolean;
    emitOnThresholdCross: boolean;
    maxPeerConnections: number;
  };
  recording: {
    mode: 'always' | 'conditional';
    triggers: string[];
    monitorModeAfterMinutes: number | null;
    monitorTriggers: string[];
  };
  privacy: { mode: 'standard' | 'strict' };
  /** The project's overrides only; the full list with defaults is in the SDK config. */
  detectorThresholds: Record<string, number>;
  allowedOrigins: string[];
  ingest: { maxChunksPerSecond: number | null };
  calls: { inactivityTimeoutSec: number };
  insights: { routePatterns: string[] };
  traces: { retentionDays: number };
  assets: { archiveFonts: boolean; archiveImages: boolean };
}

/** `GET /v1/projects/{id}`. */
export interface ProjectDetails {
  id: string;
  organizationId: string;
  name: string;
  projectKey: string;
  previousProjectKey?: { key: string; expiresAt: string };
  settings: ProjectSettings;
  createdAt: string;
  updatedAt: string;
}

/** `GET /v1/config?key=`: what SDKs receive; `detectorThresholds` holds every threshold. */
export interface SdkConfig {
  projectId: string;
  detectorThresholds: Record<string, number>;
}

/** `GET /v1/orgs/{orgId}/members`. */
export interface Member {
  userId: string;
  email: string;
  name?: string;
  role: Role;
  joinedAt: string;
}

/** `GET /v1/orgs/{orgId}/invitations`. */
export interface Invitation {
  id: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  invitedBy?: string;
  expiresAt: string;
  expired: boolean;
  createdAt: string;
}

/** `GET /v1/orgs/{orgId}/tokens`. */
export interface ApiToken {
  id: string;
  name: string;
  projectId: string;
  scopes: string[];
  expiresAt?: string;
  createdBy?: string;
  createdAt: string;
}

/** `POST /v1/orgs/{orgId}/tokens`: the token and its secret, shown once. */
export interface CreatedApiToken extends ApiToken {
  token: string;
}

/** `GET /v1/orgs/{orgId}/audit`. */
export interface AuditEntry {
  id: string;
  action: string;
  actor: { type: 'user' | 'api_token' | 'system'; id?: string; label?: string };
  target?: { type: string; id: string };
  details: Record<string, unknown>;
  ip?: string;
  userAgent?: string;
  createdAt: string;
}

/** `GET /v1/me/sessions`. */
export interface SignedInSession {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  userAgent?: string;
  ip?: string;
  current: boolean;
}

/** The scopes an API token can hold (servers/api/README.md, Organizations and access). */
export const SCOPES = [
  'sessions:read',
  'sessions:write',
  'calls:read',
  'issues:read',
  'issues:write',
  'notifications:read',
  'notifications:write',
  'settings:read',
  'settings:write',
  'otlp:write',
  'sourcemaps:read',
  'sourcemaps:write',
  'ai:read',
  'ai:write',
] as const;
