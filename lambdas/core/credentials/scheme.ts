/**
 * The two tables every credential kind fills in, so that a new kind is one module the compiler checks:
 * - a credential scheme per credential mode: where consumers send the credential, how it is read and
 *   validated, API Gateway's identity sources, which request headers carry a secret, the 401 hint;
 * - a platform credential per kind of credential the platform knows (user key, application id): its
 *   authorize/authrep and report parameters, what to redact, what its credential id is made of, and
 *   how a sealed copy is read back.
 */
import type { AccessConfig } from '../config';
import type { Credential } from '../platform/types';
import type { CredentialRequest, MalformedReason } from './values';

export type PlatformCredentialKind = Credential['kind'];
export type CredentialOf<K extends PlatformCredentialKind> = Extract<Credential, { readonly kind: K }>;
export type ParameterPair = readonly [name: string, value: string];

/** What a scheme may read from the configuration: where each part of its credential travels. */
export type CredentialSettings = Pick<AccessConfig, 'credentialHeader' | 'appIdHeader' | 'appKeyHeader'>;

export type CredentialExtraction =
  | { readonly ok: true; readonly credential: Credential }
  | { readonly ok: false; readonly header: string; readonly reason: MalformedReason };

/** An application of the local platform, as a scheme shows it in a ready-to-paste curl command. */
export interface ExampleApplication {
  readonly id: string;
  readonly userKey?: string;
  readonly appKeys: readonly string[];
}

export interface CredentialScheme {
  /** The request's credential, or why it is malformed. */
  extract(request: CredentialRequest, settings: CredentialSettings): CredentialExtraction;
  /**
   * Headers API Gateway must see before it invokes the authorizer: a call missing one is refused with
   * 401 and never reaches the authorizer or its cache.
   */
  identitySources(settings: CredentialSettings): string[];
  /** How to send the credential, for the 401 answer: "send your key in the apikey header". */
  hint(settings: CredentialSettings): string;
  /** Headers of a curl command for the application, or placeholders without one. */
  exampleHeaders(settings: CredentialSettings, application?: ExampleApplication): [string, string][];
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
