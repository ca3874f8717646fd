/**
 * What a provider turns on in the portal, with its defaults (docs/portal.md). The construct's `portal`
 * prop and the local stack file give these; the handler gets them as one JSON environment variable.
 */
import { ConfigError } from '../settings/config';

/** Whether a secret is filled into the docs only in the tab that created it, or always (as porta does). */
export type KeyReveal = 'creating-tab' | 'always';
/** Who may sign up: anyone (within the allow-list and limits), or only an address the provider invited. */
export type SignupMode = 'open' | 'invite';

export interface PortalSettings {
  /** Default 'creating-tab'. */
  readonly keyReveal: KeyReveal;
  /** Whether an account may have more than one application; default false (porta's base plans). */
  readonly multipleApplications: boolean;
  /** E-mail domains that may sign up; empty (default): any. */
  readonly allowedEmailDomains: readonly string[];
  /** Default 'open'. */
  readonly signups: SignupMode;
  /** How long an old app key keeps working after a roll (app id and OAuth modes); default 24 h. */
  readonly rollGraceSeconds: number;
  /** Sign-ups in all, an hour (the fourth limit; 5 per address, 3 per e-mail a day, 20 per domain fixed). */
  readonly signupsPerHour: number;
  /** The sender of the portal's e-mails. */
  readonly mailFrom: string;
}

export const DEFAULT_PORTAL_SETTINGS: PortalSettings = {
  keyReveal: 'creating-tab',
  multipleApplications: false,
  allowedEmailDomains: [],
  signups: 'open',
  rollGraceSeconds: 24 * 3600,
  signupsPerHour: 100,
  mailFrom: 'portal@localhost',
};

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

function field<T>(
  at: string,
  value: unknown,
  name: string,
  check: (value: unknown) => value is T,
  rule: string,
): T {
  if (!check(value)) throw new ConfigError(`${at}.${name}`, rule);
  return value;
}

/** Settings from their JSON form (absent fields take their default); throws ConfigError naming a bad one. */
export function parsePortalSettings(input: unknown, at = 'portal'): PortalSettings {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConfigError(at, 'must be an object');
  }
  const given = { ...DEFAULT_PORTAL_SETTINGS, ...(input as Partial<PortalSettings>) };
  const known = new Set(Object.keys(DEFAULT_PORTAL_SETTINGS));
  for (const name of Object.keys(input)) {
    if (!known.has(name)) throw new ConfigError(`${at}.${name}`, 'is not a portal setting');
  }
  const isCount =
    (max: number) =>
    (v: unknown): v is number =>
      typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;
  return {
    keyReveal: field(
      at,
      given.keyReveal,
      'keyReveal',
      (v): v is KeyReveal => v === 'creating-tab' || v === 'always',
      "must be 'creating-tab' or 'always'",
    ),
    multipleApplications: field(
      at,
      given.multipleApplications,
      'multipleApplications',
      (v): v is boolean => typeof v === 'boolean',
      'must be true or false',
    ),
    allowedEmailDomains: field(
      at,
      given.allowedEmailDomains,
      'allowedEmailDomains',
      (v): v is string[] => Array.isArray(v) && v.every((d) => typeof d === 'string' && DOMAIN.test(d)),
      'must be a list of lower-case domain names',
    ),
    signups: field(
      at,
      given.signups,
      'signups',
      (v): v is SignupMode => v === 'open' || v === 'invite',
      "must be 'open' or 'invite'",
    ),
    rollGraceSeconds: field(
      at,
      given.rollGraceSeconds,
      'rollGraceSeconds',
      isCount(30 * 24 * 3600),
      'must be an integer from 0 to 2592000 (30 days)',
    ),
    signupsPerHour: field(
      at,
      given.signupsPerHour,
      'signupsPerHour',
      isCount(1_000_000),
      'must be an integer from 0 to 1000000',
    ),
    mailFrom: field(
      at,
      given.mailFrom,
      'mailFrom',
      (v): v is string => typeof v === 'string' && /^[^\s@<>]+@[^\s@<>]+$/.test(v),
      'must be an e-mail address',
    ),
  };
}
