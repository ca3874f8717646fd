/**
 * The direction of imports between the top-level folders (docs/architecture.md): the core decides on
 * neutral types and loads nothing of Lambda, the AWS SDK or the CDK; contract/ is plain data that imports
 * nothing of the core; the plugin loads nothing of the CDK or Lambda, and the SDK only on demand.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../..');

function sources(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.join(folder, file));
}

/** Each module a file loads when it runs: static imports and re-exports that are not type-only. */
function runtimeImports(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)';/gms)) {
    if (match[1] === undefined) found.push(match[2] as string);
  }
  return found;
}

/** Every module a file names: type imports and dynamic imports too. */
function allImports(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:from\s+|import\()'([^']+)'/g)].map((match) => match[1] as string);
}

function folderOf(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return path.relative(ROOT, path.resolve(path.join(ROOT, path.dirname(file)), specifier)).split(path.sep)[0];
}

const AWS_PACKAGES = /^(aws-lambda|aws-cdk-lib|constructs|@aws-sdk\/|@aws-lambda-powertools\/)/;

/** `file: specifier` for each import of the folder's files that `refused` refuses. */
function offending(
  folder: string,
  importsOf: (file: string) => string[],
  refused: (specifier: string, file: string) => boolean,
): string[] {
  return sources(folder).flatMap((file) =>
    importsOf(file)
      .filter((specifier) => refused(specifier, file))
      .map((specifier) => `${file}: ${specifier}`),
  );
}

describe('core/', () => {
  it('names nothing of Lambda, the AWS SDK, Powertools or the CDK, and no edge folder', () => {
    const found = offending('core', allImports, (specifier, file) => {
      const folder = folderOf(file, specifier);
      return AWS_PACKAGES.test(specifier) || (folder !== undefined && !['core', 'contract'].includes(folder));
    });
    expect(found).toEqual([]);
  });
});

describe('contract/', () => {
  it('imports nothing outside contract/', () => {
    expect(
      offending('contract', allImports, (specifier, file) => folderOf(file, specifier) !== 'contract'),
    ).toEqual([]);
  });
});

describe('plugin/', () => {
  it('loads nothing of Lambda, the CDK or the AWS SDK when it runs (the SDK is imported on demand)', () => {
    expect(offending('plugin', runtimeImports, (specifier) => AWS_PACKAGES.test(specifier))).toEqual([]);
  });

  it('names no framework at all: the adapters describe the little they use', () => {
    expect(
      offending('plugin', allImports, (specifier) => /^(express|fastify|hono|@hono\/)/.test(specifier)),
    ).toEqual([]);
  });
});
