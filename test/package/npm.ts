/** What the package tests run: npm, the CDK CLI, the consumer's compiler, each with its output kept for the error. */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

export const ROOT = path.join(__dirname, '..', '..');

/**
 * The version of a package this repository develops with, as installed here (so npm has it in its cache).
 * Read from the file: some packages' exports do not expose their package.json.
 */
export function developedWith(name: string): string {
  const manifest = path.join(ROOT, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** Runs a command; on failure the error carries its stdout and stderr. */
export async function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>> = {},
): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}

export interface Packed {
  /** The tarball's path. */
  readonly tarball: string;
  /** The files it holds, as `npm pack` lists them. */
  readonly files: readonly string[];
}

/** `npm pack` (which builds through prepack) of the root package, or of a workspace, into `destination`. */
export async function pack(destination: string, workspace?: string): Promise<Packed> {
  const [packed] = JSON.parse(
    await run(
      'npm',
      ['pack', '--json', '--pack-destination', destination, ...(workspace ? ['--workspace', workspace] : [])],
      ROOT,
    ),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  if (!packed) throw new Error('npm pack made no tarball');
  return {
    tarball: path.join(destination, path.basename(packed.filename)),
    files: packed.files.map((file) => file.path),
  };
}

/** `npm install` of `specs` into the app at `directory`, from the npm cache first. */
export function installInto(directory: string, specs: readonly string[]): Promise<string> {
  return run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...specs],
    directory,
  );
}
