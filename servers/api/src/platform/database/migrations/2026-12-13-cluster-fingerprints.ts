import { type Kysely, sql } from 'kysely';

// Symbolicated fingerprints (servers/api/docs/fingerprints.md, "Source maps"): an error from a
// minified bundle is fingerprinted by its original frames once the bundle's source map is
// uploaded, so one bug in two builds is one cluster. A cluster made before (by its minified
// fingerprint) keeps its id: the first symbolicated occurrence that falls back to it adds its
// symbolicated fingerprint here, and later occurrences of any build find the cluster by it.
//
// - `cluster_fingerprints`: more fingerprints of a cluster, besides its own
//   (`issue_clusters.fingerprint`), one cluster per fingerprint and project.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table cluster_fingerprints (
      project_id text not null,
      fingerprint text not null,
      cluster_id text not null,
      created_at timestamptz not null default now(),
      primary key (project_id, fingerprint),
      foreign key (project_id, cluster_id) references issue_clusters (project_id, id) on delete cascade
    )`.execute(database);
  await sql`create index cluster_fingerprints_cluster on cluster_fingerprints (project_id, cluster_id)`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table cluster_fingerprints`.execute(database);
}
