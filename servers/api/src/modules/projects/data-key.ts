import { type DataKey, type MasterKey, unwrapDataKey } from '../../platform/crypto/index.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';

const dataKeys = new WeakMap<MasterKey, Map<string, DataKey>>();

/** The project's data key, unwrapped once per process and project (and per wrapped key). */
export function projectDataKey(
  masterKey: MasterKey,
  project: Pick<Project, 'id' | 'wrapped_data_key'>,
): DataKey {
  let byProject = dataKeys.get(masterKey);
  if (byProject === undefined) {
    byProject = new Map();
    dataKeys.set(masterKey, byProject);
  }
  const cacheKey = `${project.id}:${Buffer.from(project.wrapped_data_key).toString('base64')}`;
  let dataKey = byProject.get(cacheKey);
  if (dataKey === undefined) {
    dataKey = unwrapDataKey(masterKey, project.wrapped_data_key);
    if (byProject.size >= 10_000) byProject.clear();
    byProject.set(cacheKey, dataKey);
  }
  return dataKey;
}
