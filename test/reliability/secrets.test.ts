/**
 * Invariant 5: raw credentials appear nowhere but in the request to the platform. A realistic run per
 * credential mode (first calls, cached calls, denials, invalid and malformed keys, the platform down on
 * a first call, a failed report, SNS throttling, a Redis drop, reports and the sweep), with the real
 * Powertools logger and metrics at DEBUG level, then a scan of every log and metric line the process
 * wrote, every SNS message, every Redis key and value, and every authorizer answer (principal, policy,
 * context) for the consumer keys, the app keys and the provider key: zero hits. In oauth mode the same
 * for access tokens (and their signatures alone) and client secrets sent to the token endpoint in the
 * query string, the body and HTTP Basic, with the token endpoint's error answers scanned too.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, createMetrics } from '../../adapters/powertools/observability';
import type { CredentialMode } from '../../core/settings/config';
import { parseSoapSettings } from '../../core/soap/settings';
import { freePort } from '../../local/redis';
import { THROTTLING } from '../../local/sns-endpoint';
import { startSoapEcho } from '../../local/soap-echo';
import { envelope, NS, proxyEvent } from '../unit/core/soap/fixtures';
import { type Answer, answerOf } from './support/answers';
import { captureProcessOutput, type OutputCapture } from './support/capture';
import { type Harness, startHarness } from './support/harness';
import { dumpKeys, type StoredEntry } from './support/redis-server';
import { routeEvent } from './support/request-events';
import { findSecrets } from './support/secret-scan';
import type { ClientPlace, TokenAnswer } from './support/token-issuer';

let harness: Harness | undefined;
let capture: OutputCapture | undefined;
const savedLogLevel = process.env.POWERTOOLS_LOG_LEVEL;
/** The modes whose consumers send keys (tokens are scanned apart, below). */
type KeyMode = Exclude<CredentialMode, 'oauth'>;

afterEach(async () => {
  capture?.restore();
  capture = undefined;
  if (savedLogLevel === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
  else process.env.POWERTOOLS_LOG_LEVEL = savedLogLevel;
  await harness?.stop();
  harness = undefined;
});

const random = (prefix: string) => `${prefix}-${randomBytes(8).toString('hex')}`;

interface Run {
  readonly harness: Harness;
  readonly answers: Answer[];
  /** Every key a consumer sent in the run, well-formed or not. */
  readonly consumerSecrets: string[];
  readonly stored: StoredEntry[];
}

/** The credential headers of a call in this mode; `key` is the user key or the app key. */
function credentialHeaders(mode: KeyMode, key: string, appId = 'app-0'): Record<string, string> {
  return mode === 'user_key' ? { apikey: key } : { app_id: appId, app_key: key };
}

/** Redis mid-run (usage pending and in flight, window flags, sealed credentials), then after the flush. */
async function storedAroundFlush(h: Harness): Promise<StoredEntry[]> {
  const beforeFlush = await dumpKeys(h.redisServer.inspector);
  expect(await h.flush()).toEqual([]);
  return [...beforeFlush, ...(await dumpKeys(h.redisServer.inspector))];
}

async function realisticRun(mode: KeyMode): Promise<Run> {
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
  const h = await startHarness({
    apps: 4,
    mode,
    logger: createLogger('access-reliability'),
    metrics: createMetrics('access-reliability'),
    overrides: { reportWindowSeconds: 0, platformTimeoutMs: 300, reportTimeoutMs: 500 },
  });
  harness = h;
  const answers: Answer[] = [];
  const consumerSecrets: string[] = [];
  const call = async (key: string, word?: string, collection?: 'words' | 'sentences', appId?: string) => {
    const answer = await h.call(key, word, collection, appId);
    answers.push(answer);
    return answer;
  };
  const callEvent = async (event: APIGatewayRequestAuthorizerEvent) => {
    const answer = await answerOf(h.authorizer, event);
    answers.push(answer);
    return answer;
  };
  const [first, second, third, fourth] = h.fixture.active;
  const [suspended] = h.fixture.suspended;
  if (!first || !second || !third || !fourth || !suspended) throw new Error('fixture too small');

  // First calls, then cached calls, on both routes.
  for (const app of [first, second, third]) {
    for (let i = 0; i < 4; i++) expect((await call(app.userKey, `w${i}`)).kind).toBe('allow');
    expect((await call(app.userKey, 's', 'sentences')).kind).toBe('allow');
  }
  // A denial, then the negative cache.
  for (let i = 0; i < 2; i++) expect((await call(suspended.userKey)).kind).toBe('deny');
  // Keys the platform never issued (the app id exists in app_id mode: only the key is wrong).
  const forged = [random('forged:{key}'), random('forged*key')];
  consumerSecrets.push(...forged);
  for (const key of forged) {
    for (let i = 0; i < 2; i++) expect((await call(key, 'w', 'words', first.id)).kind).toBe('unauthorized');
  }
  // Malformed keys: a space, too long, two values.
  const spaced = `${random('spaced')} ${random('tail')}`;
  const tooLong = random('long').repeat(20);
  const repeated = random('repeated');
  consumerSecrets.push(spaced, tooLong, repeated);
  expect((await callEvent(routeEvent(credentialHeaders(mode, spaced)))).kind).toBe('unauthorized');
  expect((await callEvent(routeEvent(credentialHeaders(mode, tooLong)))).kind).toBe('unauthorized');
  const twice = routeEvent(credentialHeaders(mode, repeated));
  const keyHeader = mode === 'user_key' ? 'apikey' : 'app_key';
  expect(
    (
      await callEvent({
        ...twice,
        multiValueHeaders: { ...twice.multiValueHeaders, [keyHeader]: [repeated, repeated] },
      })
    ).kind,
  ).toBe('unauthorized');

  // The platform down on a first call (strict): refused.
  h.platformLine.setFault('unavailable', 'auth');
  expect(await call(fourth.userKey)).toMatchObject({ kind: 'deny', reason: 'platform_unavailable' });
  h.platformLine.setFault('pass');

  // A report refused by the platform, then delivered again.
  h.platformLine.setFault('unavailable', 'report');
  await h.queue.deliverNow();
  h.platformLine.setFault('pass');
  await h.queue.drain();

  // SNS throttles a publish: the usage waits for the sweep.
  h.sns.failNextPublishes(3, THROTTLING);
  expect((await call(first.userKey, 'throttled')).kind).toBe('allow');

  // Redis drops the connection for a call: the platform answers.
  h.redisLine.cut();
  expect((await call(second.userKey, 'cut')).kind).toBe('allow');
  h.redisLine.restore();
  await sleep(1500);
  expect((await call(second.userKey, 'back')).kind).toBe('allow');

  const stored = await storedAroundFlush(h);
  consumerSecrets.push(...[...h.fixture.active, ...h.fixture.suspended].map((app) => app.userKey));
  return { harness: h, answers, consumerSecrets, stored };
}

describe('no raw credential leaves the request to the platform', () => {
  for (const mode of ['user_key', 'app_id'] as const) {
    it(`${mode}: logs, metrics, SNS messages, Redis and authorizer answers hold no key`, {
      timeout: 60_000,
    }, async () => {
      capture = captureProcessOutput();
      const run = await realisticRun(mode);
      const output = capture.text();
      if (process.env.SHOW_LINES) console.log(output);
      capture.restore();
      const h = run.harness;
      const { stored } = run;
      const sources = {
        'log and metric lines': output,
        'SNS messages': h.delivered.join('\n'),
        'Redis keys and values': stored.map((entry) => [entry.key, ...entry.texts].join('\n')).join('\n'),
        'authorizer answers': run.answers.map((answer) => JSON.stringify(answer)).join('\n'),
      };
      const secrets = [...run.consumerSecrets, h.fixture.providerKey];

      // The scan sees what it looks for: the run logged, published, cached and answered.
      const lines = output.split('\n').filter((line) => line.startsWith('{'));
      expect(
        lines.filter((line) => line.includes('"level":"DEBUG"') || line.includes('"level":"INFO"')).length,
      ).toBeGreaterThan(0);
      expect(lines.filter((line) => line.includes('"level":"WARN"')).length).toBeGreaterThan(0);
      expect(lines.filter((line) => line.includes('_aws')).length).toBeGreaterThan(0);
      expect(h.delivered.length).toBeGreaterThan(0);
      expect(stored.length).toBeGreaterThan(0);
      expect(findSecrets({ control: `x${encodeURIComponent(secrets[0] ?? '')}y` }, secrets)).toHaveLength(1);

      const hits = findSecrets(sources, secrets);
      console.log(
        `[secrets, ${mode}] scanned ${lines.length} log/metric lines, ${h.delivered.length} SNS messages, ` +
          `${stored.length} Redis keys, ${run.answers.length} answers for ${secrets.length} secrets: ${hits.length} hits`,
      );
      expect(hits).toEqual([]);
    });
  }
});

/** A call with the token in the access_token query parameter. */
function queryTokenEvent(token: string, word = 'q'): APIGatewayRequestAuthorizerEvent {
  return {
    ...routeEvent({}, word),
    queryStringParameters: { access_token: token },
    multiValueQueryStringParameters: { access_token: [token] },
  };
}

describe('no raw access token or client secret leaves the token endpoint or the authorizer', () => {
  it('oauth: logs, metrics, SNS messages, Redis, authorizer answers and token errors hold no token or secret', {
    timeout: 60_000,
  }, async () => {
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    capture = captureProcessOutput();
    const h = await startHarness({
      apps: 4,
      mode: 'oauth',
      logger: createLogger('access-reliability'),
      metrics: createMetrics('access-reliability'),
      overrides: { reportWindowSeconds: 0, platformTimeoutMs: 300, reportTimeoutMs: 500 },
    });
    harness = h;
    const issuer = h.issuer;
    const [first, second, third, fourth] = h.fixture.active;
    const [suspended] = h.fixture.suspended;
    if (!issuer || !first || !second || !third || !fourth || !suspended) throw new Error('fixture too small');
    const tokenErrors: string[] = [];
    const answers: Answer[] = [];
    const places: ClientPlace[] = ['query', 'body', 'basic'];
    const requestToken = async (
      clientId: string,
      secret: string,
      place: ClientPlace,
    ): Promise<TokenAnswer> => {
      const answer = await issuer.requestToken(clientId, secret, place);
      if (answer.status !== 200) tokenErrors.push(JSON.stringify(answer));
      return answer;
    };
    const judged = async (event: APIGatewayRequestAuthorizerEvent) => {
      const answer = await answerOf(h.authorizer, event);
      answers.push(answer);
      return answer;
    };
    const call = async (token: string, word?: string) => {
      const answer = await h.call(token, word);
      answers.push(answer);
      return answer;
    };

    // Tokens for three applications, the secret in each place a client may put it.
    const tokens: string[] = [];
    for (const [i, app] of [first, second, third].entries()) {
      const answer = await requestToken(app.id, app.userKey, places[i] as ClientPlace);
      expect(answer.status).toBe(200);
      tokens.push(answer.accessToken ?? '');
    }
    // Wrong secrets in every place (a colon in the Basic one), twice: the second from the failed-check cache.
    const wrongSecrets = [random('wrong:secret'), random('wrong secret'), random('wrong:{secret}')];
    for (const [i, secret] of wrongSecrets.entries()) {
      for (let n = 0; n < 2; n++) {
        expect((await requestToken(first.id, secret, places[i] as ClientPlace)).status).toBe(401);
      }
    }
    // An unknown client, a suspended one with its genuine secret, and the platform down.
    expect((await requestToken(random('ghost'), random('ghost-secret'), 'basic')).status).toBe(401);
    expect((await requestToken(suspended.id, suspended.userKey, 'body')).status).toBe(401);
    h.platformLine.setFault('unavailable', 'auth');
    expect((await requestToken(fourth.id, fourth.userKey, 'query')).status).toBe(503);
    h.platformLine.setFault('pass');

    // Calls with each token, in the header and in the query string, first and cached.
    for (const [i, token] of tokens.entries()) {
      for (let n = 0; n < 3; n++) expect((await call(token, `w${i}${n}`)).kind).toBe('allow');
      expect((await judged(queryTokenEvent(token))).kind).toBe('allow');
    }
    // Refused tokens: tampered, expired, another audience; a suspended application's genuine token.
    const [header, payload, signature = ''] = (tokens[0] as string).split('.');
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: issuer.url, aud: issuer.url, iat: now, exp: now + 600, client_id: first.id };
    const refused = [
      `${header}.${payload}.${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`,
      await issuer.sign({ ...claims, iat: now - 900, exp: now - 300 }),
      await issuer.sign({ ...claims, aud: 'https://elsewhere.invalid' }),
    ];
    for (const token of refused) {
      expect((await call(token)).kind).toBe('unauthorized');
      expect((await judged(queryTokenEvent(token))).kind).toBe('unauthorized');
    }
    const suspendedToken = await issuer.sign({ ...claims, client_id: suspended.id });
    expect((await call(suspendedToken)).kind).toBe('deny');
    // The platform down on a first call.
    const fourthToken = await issuer.sign({ ...claims, client_id: fourth.id });
    h.platformLine.setFault('unavailable', 'auth');
    expect(await call(fourthToken)).toMatchObject({ kind: 'deny', reason: 'platform_unavailable' });
    h.platformLine.setFault('pass');
    // A report refused by the platform, then delivered again.
    h.platformLine.setFault('unavailable', 'report');
    await h.queue.deliverNow();
    h.platformLine.setFault('pass');

    const stored = await storedAroundFlush(h);
    const output = capture.text();
    capture.restore();
    const everyToken = [...tokens, ...refused, suspendedToken, fourthToken];
    const secrets = [
      ...everyToken,
      // A signature alone turns a logged header and payload back into the token.
      ...everyToken.map((token) => token.split('.')[2] ?? ''),
      ...[...h.fixture.active, ...h.fixture.suspended].flatMap((app) => app.keys),
      ...wrongSecrets,
      h.fixture.providerKey,
    ];

    // The scan sees what it looks for: the run logged (refusals too), published, cached and answered.
    const lines = output.split('\n').filter((line) => line.startsWith('{'));
    expect(lines.some((line) => line.includes('token refused: client authentication failed'))).toBe(true);
    expect(lines.some((line) => line.includes('token refused: the platform cannot check the client'))).toBe(
      true,
    );
    expect(lines.filter((line) => line.includes('"level":"WARN"')).length).toBeGreaterThan(0);
    expect(stored.some((entry) => entry.key.startsWith('tokfail:'))).toBe(true);
    expect(h.delivered.length).toBeGreaterThan(0);
    expect(tokenErrors).toHaveLength(9);
    // A token found whole, and its signature in it.
    expect(findSecrets({ control: `x${encodeURIComponent(secrets[0] ?? '')}y` }, secrets)).toHaveLength(2);
    // 12 allowed calls (three tokens, four calls each), reported against the applications.
    expect([first, second, third].map((app) => h.reportedHits(app.id))).toEqual([4, 4, 4]);

    const hits = findSecrets(
      {
        'log and metric lines': output,
        'SNS messages': h.delivered.join('\n'),
        'Redis keys and values': stored.map((entry) => [entry.key, ...entry.texts].join('\n')).join('\n'),
        'authorizer answers': answers.map((answer) => JSON.stringify(answer)).join('\n'),
        'token endpoint errors': tokenErrors.join('\n'),
      },
      secrets,
    );
    console.log(
      `[secrets, oauth] scanned ${lines.length} log/metric lines, ${h.delivered.length} SNS messages, ` +
        `${stored.length} Redis keys, ${answers.length} answers, ${tokenErrors.length} token errors for ` +
        `${secrets.length} secrets: ${hits.length} hits`,
    );
    expect(hits).toEqual([]);
  });
});

const SOAP_RULE = { method: 'POST', pattern: '/GetQuote$', metric: 'hits', delta: 1 } as const;

/** A SOAP 1.1 call whose header carries the credential elements given (several of a name when repeated). */
function soapEvent(elements: readonly [string, string][]): APIGatewayProxyEvent {
  const header = [...elements, ['method', 'GetQuote']]
    .map(([name, value]) => `<t:${name}>${value}</t:${name}>`)
    .join('');
  return proxyEvent(envelope({ header, body: '<q:GetQuote xmlns:q="urn:q"/>' }));
}

describe('no raw credential from a SOAP envelope leaves the request to the platform', () => {
  for (const mode of ['user_key', 'app_id'] as const) {
    it(`${mode}: logs, metrics, SNS messages, Redis and the proxy's answers hold no key`, {
      timeout: 60_000,
    }, async () => {
      process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
      capture = captureProcessOutput();
      const echo = await startSoapEcho();
      try {
        const h = await startHarness({
          apps: 3,
          mode,
          logger: createLogger('access-reliability'),
          metrics: createMetrics('access-reliability'),
          overrides: {
            reportWindowSeconds: 0,
            platformTimeoutMs: 300,
            mappingRules: [SOAP_RULE],
          },
        });
        harness = h;
        const settings = parseSoapSettings({ soapNamespace: NS, soapBackendUrl: echo.url });
        const proxy = h.soapProxy(settings);
        const downProxy = h.soapProxy({
          ...settings,
          soapBackendUrl: `http://127.0.0.1:${await freePort()}/`,
        });
        const elements = (key: string, appId = 'app-0'): [string, string][] =>
          mode === 'user_key'
            ? [['ApiKey', key]]
            : [
                ['AppId', appId],
                ['AppKey', key],
              ];
        const answers: string[] = [];
        const send = async (event: APIGatewayProxyEvent, through = proxy) => {
          const answer = await through(event);
          answers.push(JSON.stringify(answer));
          return answer.statusCode;
        };
        const [first, second] = h.fixture.active;
        const [suspended] = h.fixture.suspended;
        if (!first || !second || !suspended) throw new Error('fixture too small');
        const forged = random('forged');
        const spaced = `${random('spaced')} ${random('tail')}`;
        const tooLong = random('long').repeat(20);
        const repeated = random('repeated');

        // First and cached calls, a suspended application, a forged key, malformed and repeated keys.
        for (const app of [first, second]) {
          for (let i = 0; i < 3; i++) expect(await send(soapEvent(elements(app.userKey, app.id)))).toBe(200);
        }
        expect(await send(soapEvent(elements(suspended.userKey, suspended.id)))).toBe(500);
        expect(await send(soapEvent(elements(forged, first.id)))).toBe(500);
        expect(await send(soapEvent(elements(spaced)))).toBe(500);
        expect(await send(soapEvent(elements(tooLong)))).toBe(500);
        const keyElement = mode === 'user_key' ? 'ApiKey' : 'AppKey';
        expect(await send(soapEvent([...elements(repeated), [keyElement, repeated]]))).toBe(500);
        // The backend down, and the platform down on a first call.
        expect(await send(soapEvent(elements(first.userKey, first.id)), downProxy)).toBe(502);
        h.platformLine.setFault('unavailable', 'auth');
        const [, , third] = h.fixture.active;
        if (third) expect(await send(soapEvent(elements(third.userKey, third.id)))).toBe(500);
        h.platformLine.setFault('pass');

        const stored = await storedAroundFlush(h);
        const output = capture.text();
        capture.restore();
        const secrets = [
          ...[...h.fixture.active, ...h.fixture.suspended].map((app) => app.userKey),
          forged,
          spaced,
          tooLong,
          repeated,
          h.fixture.providerKey,
        ];
        const lines = output.split('\n').filter((line) => line.startsWith('{'));
        expect(lines.some((line) => line.includes('soap call refused'))).toBe(true);
        expect(lines.some((line) => line.includes('soap backend failed'))).toBe(true);
        expect(h.delivered.length).toBeGreaterThan(0);
        // Three allowed calls; the fourth, whose backend was down, gave its usage back.
        expect(h.reportedHits(first.id)).toBe(3);
        const hits = findSecrets(
          {
            'log and metric lines': output,
            'SNS messages': h.delivered.join('\n'),
            'Redis keys and values': stored.map((entry) => [entry.key, ...entry.texts].join('\n')).join('\n'),
            'SOAP answers': answers.join('\n'),
          },
          secrets,
        );
        console.log(
          `[secrets, SOAP ${mode}] scanned ${lines.length} log/metric lines, ${h.delivered.length} SNS messages, ` +
            `${stored.length} Redis keys, ${answers.length} answers for ${secrets.length} secrets: ${hits.length} hits`,
        );
        expect(hits).toEqual([]);
      } finally {
        await echo.stop();
      }
    });
  }
});
