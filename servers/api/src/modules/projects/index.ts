// Projects: projects and their keys, API tokens, settings, the first start.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { projectDataKey } from './data-key.ts';
export { findProjectById } from './projects.ts';
export { type ProjectSettings, readSettings, readSettingsText } from './settings.ts';
