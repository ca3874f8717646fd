/**
 * The OAuth 2.0 token endpoint (RFC 6749 4.4, client credentials): the client's id and secret are the
 * platform application's id and one of its keys, checked with the platform's authorize on an OIDC service
 * (which checks a key when one is given). The answer is an ES256 JWT the authorizer verifies on its own.
 *
 * - Credentials in the query string, an x-www-form-urlencoded body or HTTP Basic (2.3.1); two places at
 *   once, or a parameter repeated, is invalid_request. An id or secret the authorizer would not take as a
 *   credential value (too long, empty, a comma, anything but printable ASCII) is invalid_client at once.
 * - A wrong secret, an unknown client or a suspended application is invalid_client (401, Basic challenge);
 *   a failed check is remembered briefly (by a hash, never the secret), so a flood of the same wrong
 *   secret does not reach the platform, and failed checks per source address and per client are bounded
 *   in a window (guess-limit.ts): past a bound, 429 slow_down with Retry-After, without the platform.
 * - An application over its usage limits still gets a token: limits count calls, and the authorizer
 *   refuses its calls until the period resets, exactly as for a key.
 * - The platform unreachable or refusing our configuration: 503 temporarily_unavailable, never a 500.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  checkedValue,
  credentialIdPrefix,
  MALFORMED_PROBLEM,
  MAX_CREDENTIAL_BYTES,
} from '../../core/credentials';
import type { LogPort } from '../../core/observability/observability';
import type { AuthOutcome, PlatformPort } from '../../core/platform/types';
import type { AccessConfig } from '../../core/settings/config';
import { type Admission, type GuessBounds, type GuessCounter, GuessLimit } from './guess-limit';
import { DISCOVERY_PATH, JWKS_PATH, TOKEN_PATH } from './routes';
import { TOKEN_ALGORITHM, type TokenSigner } from './signer';

export { DISCOVERY_PATH, JWKS_PATH, TOKEN_PATH };

/** How long a failed client check is answered from memory before the platform is asked again. */
export const FAILED_CLIENT_TTL_SECONDS = 30;

/** Grants that need a user login or a user directory: an external identity provider's business. */
const USER_GRANTS = new Set(['authorization_code', 'refresh_token', 'password', 'implicit']);

export interface TokenHttpRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** Every value of each query parameter. */
  readonly query: Readonly<Record<string, readonly string[] | undefined>>;
  /** The body as text; undefined when there is none. */
  readonly body?: string;
  /** The client's IP address as API Gateway saw it (`requestContext.identity.sourceIp`). */
  readonly sourceAddress?: string;
}

export interface TokenHttpResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Failed client checks, by a hash of the client id and secret. */
export interface FailedClients {
  has(hash: string): Promise<boolean>;
  add(hash: string, ttlSeconds: number): Promise<void>;
}

export interface TokenEndpointDeps {
  readonly config: Pick<AccessConfig, 'serviceId' | 'tokenTtlSeconds' | 'oidcAudience'> &
    GuessBounds & {
      readonly oidcIssuer: string;
    };
  readonly platform: PlatformPort;
  readonly signer: TokenSigner;
  readonly failedClients: FailedClients;
  /** Attempts per source address and per client (guess-limit.ts). */
  readonly guesses: GuessCounter;
  readonly logger: LogPort;
  /** Epoch ms. */
  readonly now: () => number;
}

type OAuthError =
  | 'invalid_request'
  | 'invalid_client'
  | 'unsupported_grant_type'
  | 'temporarily_unavailable'
  | 'slow_down';

const STATUS: Readonly<Record<OAuthError, number>> = {
  invalid_request: 400,
  invalid_client: 401,
  unsupported_grant_type: 400,
  temporarily_unavailable: 503,
  // RFC 8628 registers slow_down for token endpoint answers; RFC 6585 gives it 429 and Retry-After.
  slow_down: 429,
};

/** RFC 6749 5.1: token answers are never cached. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): TokenHttpResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json;charset=UTF-8', ...NO_STORE, ...headers },
    body: JSON.stringify(body),
  };
}

class RequestError extends Error {
  constructor(
    readonly error: OAuthError,
    readonly description: string,
  ) {
    super(description);
  }
}

interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

type Parameters = ReadonlyMap<string, string>;

/** Each parameter once, or invalid_request (RFC 6749 3.2: parameters must not be repeated). */
function singleValued(entries: Iterable<readonly [string, string]>, where: string): Parameters {
  const values = new Map<string, string>();
  for (const [name, value] of entries) {
    if (values.has(name)) throw new RequestError('invalid_request', `${name} is repeated in the ${where}`);
    values.set(name, value);
  }
  return values;
}

function headerOf(request: TokenHttpRequest, name: string): string | undefined {
  const entry = Object.entries(request.headers).find(([key]) => key.toLowerCase() === name);
  return entry?.[1];
}

function formBody(request: TokenHttpRequest): Parameters {
  if (request.body === undefined || request.body === '') return new Map();
  const type = headerOf(request, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new RequestError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  return singleValued(new URLSearchParams(request.body), 'body');
}

function queryOf(request: TokenHttpRequest): Parameters {
  return singleValued(
    Object.entries(request.query).flatMap(([name, values]) => (values ?? []).map((v) => [name, v] as const)),
    'query string',
  );
}

/** RFC 6749 2.3.1: Basic with the form-encoded client id and secret; the secret may hold ':'. */
function basicCredentials(request: TokenHttpRequest): ClientCredentials | undefined {
  const header = headerOf(request, 'authorization');
  if (header === undefined) return undefined;
  const match = /^basic +([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (!match) throw new RequestError('invalid_request', 'the Authorization header must be Basic');
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new RequestError('invalid_request', 'the Basic credentials lack a colon');
  const formDecode = (text: string) => {
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      throw new RequestError('invalid_request', 'the Basic credentials are not form-encoded');
    }
  };
  return {
    clientId: formDecode(decoded.slice(0, colon)),
    clientSecret: formDecode(decoded.slice(colon + 1)),
  };
}

function parametersClient(parameters: Parameters): ClientCredentials | 'partial' | undefined {
  const clientId = parameters.get('client_id');
  const clientSecret = parameters.get('client_secret');
  if (clientId === undefined && clientSecret === undefined) return undefined;
  if (clientId === undefined || clientSecret === undefined) return 'partial';
  return { clientId, clientSecret };
}

/**
 * The id and secret must be credential values as the authorizer reads them (credentials/values.ts): the
 * id becomes the token's client id, which the authorizer checks so, and a secret no key can be is a
 * failed authentication (invalid_client) decided before the platform, whose answer to an oversized value
 * is no judgement of the client.
 */
function checkCredentialValues(client: ClientCredentials): void {
  for (const [part, value] of [
    ['client_id', client.clientId],
    ['client_secret', client.clientSecret],
  ] as const) {
    const checked = checkedValue(value);
    if (checked.ok) continue;
    const bound = checked.reason === 'too_long' ? ` (at most ${MAX_CREDENTIAL_BYTES} bytes)` : '';
    throw new RequestError('invalid_client', `${part} ${MALFORMED_PROBLEM[checked.reason]}${bound}`);
  }
}

interface TokenRequest {
  readonly grantType: string | undefined;
  readonly client: ClientCredentials | undefined;
}

/** The grant type and the client's credentials, from wherever the client put them (one place only). */
export function readTokenRequest(request: TokenHttpRequest): TokenRequest {
  const query = queryOf(request);
  const body = formBody(request);
  const places = [
    ['query string', parametersClient(query)],
    ['body', parametersClient(body)],
    ['Authorization header', basicCredentials(request)],
  ] as const;
  const given = places.filter(([, client]) => client !== undefined);
  if (given.length > 1) {
    throw new RequestError(
      'invalid_request',
      `client credentials are given in several places (${given.map(([where]) => where).join(', ')})`,
    );
  }
  const [where, client] = given[0] ?? ['', undefined];
  if (client === 'partial') {
    throw new RequestError(
      'invalid_request',
      `client_id and client_secret must come together in the ${where}`,
    );
  }
  if (client !== undefined) checkCredentialValues(client);
  const grantTypes = [query.get('grant_type'), body.get('grant_type')].filter((v) => v !== undefined);
  if (grantTypes.length > 1) throw new RequestError('invalid_request', 'grant_type is given twice');
  return { grantType: grantTypes[0], client };
}

/** What the platform's answer on the client's id and secret means for a token. */
type ClientCheck = 'valid' | 'invalid' | 'unavailable';

function clientCheckOf(outcome: AuthOutcome): ClientCheck {
  switch (outcome.kind) {
    case 'authorized':
      return 'valid';
    case 'denied':
      // Over its limits the client is still genuine: its calls are refused by the authorizer, not its token.
      return outcome.reason === 'limits_exceeded' ? 'valid' : 'invalid';
    case 'invalid_credential':
      return 'invalid';
    default:
      return 'unavailable';
  }
}

/** Whose attempts ran out, as the refusal says it. */
const RAN_OUT: Readonly<Record<Extract<Admission, { ok: false }>['subject'], string>> = {
  address: 'too many failed client authentications from this address',
  client: 'too many failed authentications of this client',
};

export class TokenEndpoint {
  private readonly guesses: GuessLimit;

  constructor(private readonly deps: TokenEndpointDeps) {
    this.guesses = new GuessLimit(deps.config.serviceId, deps.config, deps.guesses, deps.logger);
  }

  async handle(request: TokenHttpRequest, path: string): Promise<TokenHttpResponse> {
    if (path === JWKS_PATH && request.method === 'GET') {
      return json(200, { keys: [await this.deps.signer.publicJwk()] }, { 'cache-control': 'max-age=300' });
    }
    if (path === DISCOVERY_PATH && request.method === 'GET') return json(200, this.discovery());
    if (path === TOKEN_PATH && request.method === 'POST') return this.token(request);
    return json(404, { error: 'not_found', error_description: `no ${request.method} ${path} here` });
  }

  /** OpenID Connect Discovery 1.0: what a client or an API gateway needs to find the keys and the endpoint. */
  private discovery() {
    const { oidcIssuer } = this.deps.config;
    return {
      issuer: oidcIssuer,
      token_endpoint: `${oidcIssuer}${TOKEN_PATH}`,
      jwks_uri: `${oidcIssuer}${JWKS_PATH}`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      response_types_supported: ['token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [TOKEN_ALGORITHM],
    };
  }

  private error(
    error: OAuthError,
    description: string,
    headers: Record<string, string> = {},
  ): TokenHttpResponse {
    const challenge: Record<string, string> =
      error === 'invalid_client'
        ? { 'www-authenticate': `Basic realm="${this.deps.config.oidcIssuer}"` }
        : {};
    return json(STATUS[error], { error, error_description: description }, { ...challenge, ...headers });
  }

  private async token(request: TokenHttpRequest): Promise<TokenHttpResponse> {
    let parsed: TokenRequest;
    try {
      parsed = readTokenRequest(request);
    } catch (error) {
      if (error instanceof RequestError) return this.error(error.error, error.description);
      throw error;
    }
    if (parsed.grantType === undefined) return this.error('invalid_request', 'grant_type is missing');
    if (parsed.grantType !== 'client_credentials') {
      const why = USER_GRANTS.has(parsed.grantType)
        ? 'it needs a user login, which belongs to an external identity provider'
        : 'only client_credentials is supported';
      return this.error('unsupported_grant_type', `grant_type ${parsed.grantType} is not supported: ${why}`);
    }
    if (parsed.client === undefined) return this.error('invalid_client', 'client authentication is missing');
    const check = await this.checkClient(parsed.client, request.sourceAddress);
    if (typeof check === 'object') {
      return this.error('slow_down', `${RAN_OUT[check.subject]}; try again in ${check.retryAfterSeconds} s`, {
        'retry-after': String(check.retryAfterSeconds),
      });
    }
    if (check === 'unavailable') {
      return this.error('temporarily_unavailable', 'the client cannot be checked now; try again later');
    }
    if (check === 'invalid') return this.error('invalid_client', 'client authentication failed');
    return json(200, {
      access_token: await this.issue(parsed.client.clientId),
      token_type: 'Bearer',
      expires_in: this.deps.config.tokenTtlSeconds,
    });
  }

  /** SHA-256 of the service, client id and secret: the only name a failed check has in the cache. */
  private failureHash(client: ClientCredentials): string {
    const { serviceId } = this.deps.config;
    return createHash('sha256')
      .update(
        [serviceId, client.clientId, client.clientSecret].map((f) => `${Buffer.byteLength(f)}:${f}`).join(''),
      )
      .digest('hex');
  }

  /** The platform's judgement of the client, unless a failure is remembered or attempts ran out. */
  private async checkClient(
    client: ClientCredentials,
    sourceAddress: string | undefined,
  ): Promise<ClientCheck | Extract<Admission, { ok: false }>> {
    const { logger, platform, failedClients } = this.deps;
    const hash = this.failureHash(client);
    if (await failedClients.has(hash).catch(() => false)) return 'invalid';
    const admission = await this.guesses.admit(client.clientId, sourceAddress);
    if (!admission.ok) return admission;
    const outcome = await platform.authorize({
      kind: 'app_id',
      appId: client.clientId,
      appKey: client.clientSecret,
    });
    const check = clientCheckOf(outcome);
    // Only a failed check spends an attempt: a genuine client, or one the platform could not judge, did not guess.
    if (check !== 'invalid') await admission.giveBack();
    if (check === 'invalid') {
      await failedClients.add(hash, FAILED_CLIENT_TTL_SECONDS).catch((error: unknown) => {
        logger.warn('failed client check not remembered', { error: String(error) });
      });
      logger.info('token refused: client authentication failed', { client: credentialIdPrefix(hash) });
    }
    if (check === 'unavailable') {
      logger.warn('token refused: the platform cannot check the client', {
        outcome: outcome.kind,
        ...('message' in outcome && { detail: outcome.message }),
      });
    }
    return check;
  }

  /** The signed JWT: header and claims base64url-encoded, the signing input signed by the signer port. */
  private async issue(clientId: string): Promise<string> {
    const { config, signer, now } = this.deps;
    const iat = Math.floor(now() / 1000);
    const header = { alg: TOKEN_ALGORITHM, typ: 'JWT', kid: await signer.keyId() };
    const claims = {
      iss: config.oidcIssuer,
      sub: clientId,
      client_id: clientId,
      aud: config.oidcAudience ?? config.oidcIssuer,
      iat,
      exp: iat + config.tokenTtlSeconds,
      jti: randomUUID(),
    };
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const signingInput = `${encode(header)}.${encode(claims)}`;
    const signature = await signer.sign(Buffer.from(signingInput, 'ascii'));
    return `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
  }
}

/** Failed client checks in Redis, under the hash, expiring on their own. */
export function redisFailedClients(redis: {
  exists(key: string): Promise<number>;
  set(key: string, value: string, mode: 'EX', seconds: number): Promise<unknown>;
}): FailedClients {
  const key = (hash: string) => `tokfail:${hash}`;
  return {
    has: async (hash) => (await redis.exists(key(hash))) > 0,
    add: async (hash, ttlSeconds) => {
      await redis.set(key(hash), '1', 'EX', ttlSeconds);
    },
  };
}
