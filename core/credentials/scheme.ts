/**
 * The two tables every credential kind fills in, so that a new kind is one module the compiler checks:
 * - a credential scheme per credential mode: where consumers send the credential, how it is read and
 *   validated, API Gateway's identity sources, which request headers carry a secret, the 401 hint;
 * - a platform credential per kind of credential the platform knows (user key, application id): its
 *   authorize/authrep and report parameters, what to redact, what its credential id is made of, and
 *   how a sealed copy is read back.
 */

import type { Credential } from '../platform/types';
import type { AccessConfig, CredentialLocation } from '../settings/config';
import type { TokensNotBefore } from './token-revocation';
import type { CredentialRequest, MalformedReason } from './values';

export type PlatformCredentialKind = Credential['kind'];
export type CredentialOf<K extends PlatformCredentialKind> = Extract<Credential, { readonly kind: K }>;
export type ParameterPair = readonly [name: string, value: string];

/**
 * What a scheme may read from the configuration: where each part of its credential travels, and for
 * access tokens who issues them, for which audience, with which algorithms.
 */
export type CredentialSettings = Pick<
  AccessConfig,
  | 'credentialHeader'
  | 'appIdHeader'
  | 'appKeyHeader'
  | 'credentialLocation'
  | 'oidcIssuer'
  | 'oidcJwksUrl'
  | 'oidcAudience'
  | 'oidcAlgorithms'
  | 'oidcClientIdClaim'
  | 'platformTimeoutMs'
>;

export type CredentialExtraction =
  | { readonly ok: true; readonly credential: Credential }
  /** `header` names where the bad part travels (a header or query parameter name). */
  | { readonly ok: false; readonly header: string; readonly reason: MalformedReason };

/**
 * Reads one request's credential. Built once per container: a token scheme keeps its issuer's keys
 * between calls. Key and id schemes answer synchronously.
 */
export type CredentialReader = (
  request: CredentialRequest,
) => CredentialExtraction | Promise<CredentialExtraction>;

/** What a reader may consult besides the request: Redis-backed facts, where a cache is configured. */
export interface ReaderPorts {
  /** Access tokens refused by their issue time (token schemes only). */
  readonly tokensNotBefore?: TokensNotBefore;
}

/** A request parameter API Gateway must see before it invokes the authorizer. */
export interface IdentitySource {
  readonly location: CredentialLocation;
  readonly name: string;
}

/** How a consumer sends the credential, for a ready-to-paste curl command. */
export interface CredentialExample {
  readonly headers: readonly (readonly [string, string])[];
  readonly query: readonly (readonly [string, string])[];
}

/** An application of the local platform, as a scheme shows it in a ready-to-paste curl command. */
export interface ExampleApplication {
  readonly id: string;
  readonly userKey?: string;
  readonly appKeys: readonly string[];
}

export interface CredentialScheme {
  /** The reader of the request's credential (or of why it is malformed) for these settings. */
  reader(settings: CredentialSettings, ports?: ReaderPorts): CredentialReader;
  /**
   * Parameters API Gateway must see before it invokes the authorizer: a call missing one is refused with
   * 401 and never reaches the authorizer or its cache. Only parts every call must carry: an optional
   * app key, or a token that may travel in either of two places, is not one.
   */
  identitySources(settings: CredentialSettings): IdentitySource[];
  /** How to send the credential, for the 401 answer: "send your key in the apikey header". */
  hint(settings: CredentialSettings): string;
  /** Header and query parameters of a curl command for the application, or placeholders without one. */
  example(settings: CredentialSettings, application?: ExampleApplication): CredentialExample;
  /**
   * The `WWW-Authenticate` challenge of the 401 answer, when the scheme's standard defines one (RFC 6750
   * for bearer tokens); a static value, as a gateway response header mapping must be.
   */
  challenge?(settings: CredentialSettings): string;
}

export interface PlatformCredential<K extends PlatformCredentialKind> {
  /** Parameters of authorize.xml and authrep.xml. */
  authParams(credential: CredentialOf<K>): ParameterPair[];
  /** The fields of a report transaction (`transactions[i][...]`): the application only. */
  reportParams(credential: CredentialOf<K>): ParameterPair[];
  /** Values that must never reach a log or an error message. */
  secrets(credential: CredentialOf<K>): string[];
  /**
   * What the credential id is made of, after the service id and the kind: the budget, that is the
   * application, whatever key presents it (one application, one budget).
   */
  idFields(credential: CredentialOf<K>): string[];
  /**
   * What the key id is made of, for a kind whose application can present several keys: each key is a
   * fact checked with the platform and kept under the application's budget. Undefined: nothing to check.
   */
  keyFields(credential: CredentialOf<K>): string[] | undefined;
  /** A credential read back from its sealed copy, or undefined when the value is not one. */
  parse(value: Readonly<Record<string, unknown>>): CredentialOf<K> | undefined;
}

export type PlatformCredentials = { readonly [K in PlatformCredentialKind]: PlatformCredential<K> };
