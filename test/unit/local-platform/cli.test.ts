/** `npm run platform`: local/platform/main.ts started as its own process. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CONFIG } from './fixture';

const MAIN = join(__dirname, '../../../local/platform/main.ts');
const directory = mkdtempSync(join(tmpdir(), 'local-platform-cli-'));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

afterAll(() => rmSync(directory, { recursive: true, force: true }));

function configFile(name: string, content: unknown): string {
  const path = join(directory, name);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

interface Run {
  readonly child: ChildProcess;
  output(): string;
  errors(): string;
  /** Resolves with the first match of the pattern in stdout. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  exit(): Promise<number | null>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => stdout,
    errors: () => stderr,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${stdout} ${stderr}`)), 20_000);
        const check = () => {
          const match = stdout.match(pattern);
          if (match === null) return;
          clearTimeout(timer);
          child.stdout?.off('data', check);
          resolve(match);
        };
        child.stdout?.on('data', check);
        check();
      }),
    exit: () => exited,
  };
}

describe('npm run platform', () => {
  it('starts alone, prints its URL, answers, and stops cleanly on SIGTERM', async () => {
    const platform = run(['--config', configFile('stack.json', CONFIG), '--port', '0']);
    const [, url] = await platform.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const response = await fetch(`${url}/transactions/authrep.xml?provider_key=pk-demo&user_key=demo-key-1`, {
      signal: AbortSignal.timeout(5000),
    });
    expect(response.status).toBe(200);
    platform.child.kill('SIGTERM');
    expect(await platform.exit()).toBe(0);
    expect(platform.output()).toContain('SIGTERM: stopping the local platform');
  });

  it('serves TLS with a generated certificate it writes for clients to trust, and stops on SIGINT', async () => {
    const platform = run(['--config', configFile('tls.json', CONFIG), '--tls']);
    const [, url] = await platform.waitFor(/listening on (https:\/\/127\.0\.0\.1:\d+)/);
    const [, certificate] = await platform.waitFor(/self-signed certificate: (\S+\.pem)/);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const request = httpsGet(
        `${url}/status`,
        { ca: readFileSync(certificate as string), timeout: 5000 },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      request.on('timeout', () => request.destroy(new Error('timeout')));
      request.on('error', reject);
    });
    expect(status).toBe(200);
    platform.child.kill('SIGINT');
    expect(await platform.exit()).toBe(0);
    rmSync(certificate as string, { force: true });
  });

  it.each([
    [
      'an invalid config',
      () => ['--config', configFile('bad.json', { platform: { services: [{ id: 's', providerKey: 'p' }] } })],
      'local platform: Invalid configuration: platform.services[0].authentication must be one of user_key, app_id',
    ],
    [
      'a missing config file',
      () => ['--config', join(directory, 'missing.json')],
      'cannot read the config file',
    ],
    ['no --config', () => [], '--config is required'],
    [
      'a bad port',
      () => ['--config', configFile('ok.json', CONFIG), '--port', 'http'],
      '--port must be an integer',
    ],
  ])('exits non-zero with the message on %s', async (_name, args, expected) => {
    const platform = run(args());
    expect(await platform.exit()).toBe(1);
    expect(platform.errors()).toContain(expected);
  });
});
