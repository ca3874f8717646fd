/**
 * The path without the stage: mapping rules match the API's own paths, never the stage a call came
 * through. A stage prefix is removed when present, unless the route's own template starts with it.
 */
export function withoutStage(path: string, stage: string | undefined, template: string): string {
  if (!stage || stage === '$default') return path;
  const prefix = `/${stage}`;
  if (template === prefix || template.startsWith(`${prefix}/`)) return path;
  if (path === prefix) return '/';
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : path;
}
